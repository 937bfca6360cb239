//! Going back (`Op::Rewind`) and switching sessions (`Op::Resume`) in the agent over real HTTP
//! against the mock server, and the cut in the session journal: the part cut off stays in the
//! file, loading gives the conversation after the cut (also with a cut-off last line).

use std::time::Duration;

use kimi_client::{Backend, Endpoint};
use kimi_core::engine::{Agent, AgentHandle, AgentInit, EngineEvent, Op};
use kimi_core::session::journal::{self, Header, Record};
use kimi_core::session::{Session, SessionStore};
use kimi_core::tools::Toolbox;
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Message, Mode, Trace};

async fn start() -> (MockServer, AgentHandle) {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock starts");
    let ep = Endpoint::new(Mode::Raw, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    let agent = Agent::spawn(
        AgentInit {
            backend: Backend::new(ep).expect("client"),
            toolbox: Toolbox::new(Vec::new()).expect("tools"),
            max_rounds: 4,
            system_prompt: Some("You are Kimi.".into()),
            conversation: Vec::new(),
            traces: Vec::new(),
        },
        64,
    );
    (server, agent)
}

async fn next(agent: &mut AgentHandle) -> EngineEvent {
    tokio::time::timeout(Duration::from_secs(20), agent.events.recv())
        .await
        .expect("an event within 20 s")
        .expect("the agent runs")
}

async fn turn(agent: &mut AgentHandle, text: &str) {
    assert!(agent.send(Op::UserTurn { text: text.into() }));
    while !matches!(next(agent).await, EngineEvent::TurnDone { .. }) {}
}

async fn snapshot(agent: &mut AgentHandle) -> (Vec<Message>, Vec<(usize, Trace)>) {
    assert!(agent.send(Op::Snapshot));
    loop {
        if let EngineEvent::Snapshot { messages, traces } = next(agent).await {
            return (messages, traces);
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn rewind_cuts_before_the_chosen_user_message_and_its_traces_go() {
    let (server, mut agent) = start().await;
    turn(&mut agent, "first question").await;
    turn(&mut agent, "second question").await;
    turn(&mut agent, "third question").await;
    let (messages, traces) = snapshot(&mut agent).await;
    assert_eq!(messages.len(), 7, "system + 3 × (user, answer)");
    assert_eq!(traces.len(), 3);
    // Back to the second question: the system prompt, the first exchange stay.
    assert!(agent.send(Op::Rewind { user_index: 1 }));
    match next(&mut agent).await {
        EngineEvent::Truncated { messages, traces } => {
            assert_eq!((messages, traces), (3, 1));
        }
        other => panic!("expected Truncated, got {other:?}"),
    }
    let (messages, traces) = snapshot(&mut agent).await;
    let texts: Vec<String> = messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts[..2], ["You are Kimi.", "first question"]);
    assert_eq!(messages.len(), 3);
    assert_eq!(traces.len(), 1);
    // The edited message is sent on the cut conversation.
    turn(&mut agent, "second question, edited").await;
    let (messages, _) = snapshot(&mut agent).await;
    assert_eq!(messages[3].text(), "second question, edited");
    assert_eq!(messages.len(), 5);
    let last = server.requests().last().cloned().expect("a request");
    let prompt = last.to_string();
    assert!(prompt.contains("second question, edited"), "{prompt}");
    assert!(!prompt.contains("third question"), "{prompt}");
    // An index past the last user message cuts nothing and says so.
    assert!(agent.send(Op::Rewind { user_index: 9 }));
    match next(&mut agent).await {
        EngineEvent::Notice { text, error } => {
            assert!(error && text.contains("nothing was cut"), "{text}");
        }
        other => panic!("expected a notice, got {other:?}"),
    }
    assert_eq!(snapshot(&mut agent).await.0.len(), 5);
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn resume_replaces_the_conversation_with_a_saved_sessions_and_records_on_into_it() {
    let (server, mut agent) = start().await;
    turn(&mut agent, "before the switch").await;
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut saved = Session::new("p", Mode::Raw, "m", "http://127.0.0.1:1/v1");
    saved.messages = vec![
        Message::system("Saved prompt."),
        Message::user("saved question"),
        Message::assistant("saved answer"),
    ];
    saved.push_trace(2, Trace::default());
    store.save(&saved).expect("saved");
    assert!(agent.send(Op::Resume {
        store: store.clone(),
        id: saved.id.clone(),
    }));
    // The history comes as the events a live turn produces, between these two.
    let mut appended = Vec::new();
    loop {
        match next(&mut agent).await {
            EngineEvent::Resuming { meta, .. } => assert_eq!(meta.id, saved.id),
            EngineEvent::MessageAppended { message, .. } => appended.push(*message),
            EngineEvent::Resumed { turns, .. } => {
                assert_eq!(turns, 1);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(appended, saved.messages);
    let (messages, traces) = snapshot(&mut agent).await;
    assert_eq!(messages, saved.messages);
    assert_eq!(traces.len(), 1);
    turn(&mut agent, "and now?").await;
    let prompt = server
        .requests()
        .last()
        .cloned()
        .expect("a request")
        .to_string();
    assert!(
        prompt.contains("saved answer") && prompt.contains("Saved prompt."),
        "{prompt}"
    );
    assert!(!prompt.contains("before the switch"), "{prompt}");
    // The saved session's journal was continued: it holds the new exchange.
    assert!(agent.send(Op::Shutdown));
    (&mut agent.task).await.expect("the agent ends");
    let back = store.load(&saved.id).expect("loads");
    assert_eq!(back.messages.len(), 5);
    assert_eq!(back.messages[3].text(), "and now?");
    assert_eq!(back.traces.len(), 2);
    server.shutdown().await;
}

fn line(r: &mut Record, out: &mut Vec<u8>) {
    journal::encode(r, out).expect("encode");
}

/// A journal of two exchanges, cut back to before the second question, then answered again.
fn journal_with_a_cut(session: &Session) -> Vec<u8> {
    let mut bytes = Vec::new();
    line(&mut Record::Header(Header::of(session)), &mut bytes);
    let msgs = [
        Message::user("first question"),
        Message::assistant("first answer"),
        Message::user("second question: the one cut off"),
        Message::assistant("an answer cut off with it"),
    ];
    for (index, message) in msgs.into_iter().enumerate() {
        line(
            &mut Record::Message {
                at: 10,
                index,
                message,
            },
            &mut bytes,
        );
    }
    line(
        &mut Record::Truncate {
            at: 11,
            messages: 2,
            traces: 0,
        },
        &mut bytes,
    );
    line(
        &mut Record::Message {
            at: 12,
            index: 2,
            message: Message::user("second question, edited"),
        },
        &mut bytes,
    );
    bytes
}

#[test]
fn a_cut_journal_loads_as_the_conversation_after_the_cut_and_keeps_the_cut_part() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    std::fs::create_dir_all(&store.dir).expect("dir");
    let session = Session::new("p", Mode::Raw, "m", "http://127.0.0.1:1/v1");
    let mut bytes = journal_with_a_cut(&session);
    let path = store.journal_path(&session.id);
    std::fs::write(&path, &bytes).expect("write");
    let loaded = store.load(&session.id).expect("loads");
    let texts: Vec<String> = loaded.messages.iter().map(|m| m.text()).collect();
    assert_eq!(
        texts,
        ["first question", "first answer", "second question, edited"]
    );
    let file = std::fs::read_to_string(&path).expect("read");
    assert!(file.contains("second question: the one cut off"), "{file}");
    assert!(file.contains("an answer cut off with it"), "{file}");
    // The listing and exports show the current branch.
    let list = store.list();
    assert_eq!(list.sessions[0].turns, 2);
    assert!(list.sessions[0].bytes > 0);
    assert_eq!(list.sessions[0].model, "m");
    let md = kimi_core::session::to_markdown(&loaded);
    assert!(md.contains("second question, edited"), "{md}");
    assert!(!md.contains("cut off"), "{md}");

    // A crash mid-write after the cut: the cut-off last line is dropped with a notice; the
    // cut itself holds.
    let mut torn = Vec::new();
    line(
        &mut Record::Message {
            at: 13,
            index: 3,
            message: Message::assistant("the edited question's answer"),
        },
        &mut torn,
    );
    bytes.extend_from_slice(&torn[..torn.len() / 2]);
    std::fs::write(&path, &bytes).expect("write");
    let opened = store.open(&session.id).expect("loads");
    assert!(
        opened
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("cut off")),
        "{:?}",
        opened.notice
    );
    let texts: Vec<String> = opened.session.messages.iter().map(|m| m.text()).collect();
    assert_eq!(
        texts,
        ["first question", "first answer", "second question, edited"]
    );
}

#[test]
fn a_cut_to_nothing_leaves_an_empty_conversation_that_grows_again() {
    let session = Session::new("p", Mode::Raw, "m", "http://127.0.0.1:1/v1");
    let mut bytes = Vec::new();
    line(&mut Record::Header(Header::of(&session)), &mut bytes);
    for (index, message) in [Message::user("only"), Message::assistant("answer")]
        .into_iter()
        .enumerate()
    {
        line(
            &mut Record::Message {
                at: 1,
                index,
                message,
            },
            &mut bytes,
        );
    }
    line(
        &mut Record::Truncate {
            at: 2,
            messages: 0,
            traces: 0,
        },
        &mut bytes,
    );
    line(
        &mut Record::Message {
            at: 3,
            index: 0,
            message: Message::user("only, edited"),
        },
        &mut bytes,
    );
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("j.jsonl");
    std::fs::write(&path, &bytes).expect("write");
    let s = SessionStore::load_path(&path).expect("loads");
    assert_eq!(s.messages, [Message::user("only, edited")]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_rewind_sent_while_a_turn_runs_waits_for_the_turn_to_end() {
    let (server, mut agent) = start().await;
    turn(&mut agent, "first question").await;
    assert!(agent.send(Op::UserTurn {
        text: "second question".into()
    }));
    assert!(agent.send(Op::Rewind { user_index: 1 }));
    let mut order = Vec::new();
    loop {
        match next(&mut agent).await {
            EngineEvent::TurnDone { .. } => order.push("done"),
            EngineEvent::Truncated { messages, .. } => {
                order.push("cut");
                assert_eq!(messages, 3, "cut before the second question");
                break;
            }
            _ => {}
        }
    }
    assert_eq!(order, ["done", "cut"], "the turn ended whole first");
    assert_eq!(snapshot(&mut agent).await.0.len(), 3);
    server.shutdown().await;
}
