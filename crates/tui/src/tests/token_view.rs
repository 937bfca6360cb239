//! The inspector's token view drawn from real data: the client asks the mock server
//! for logprobs over loopback, the trace is built from the stream's events, and the view is
//! driven by key events through `update`, as the app does.

use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::state::{App, Connection};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::config::Profile;
use kimi_core::engine::{EngineEvent, Op, Supervisor, SupervisorInit, Switchboard};
use kimi_core::tools::{ToolSpec, Toolbox};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Mode, Trace};
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use serde_json::json;

fn app(mode: Mode) -> App {
    let connection = Connection {
        profile: "local".into(),
        mode,
        model: "moonshotai/Kimi-K2-Instruct".into(),
        host: "127.0.0.1:8000".into(),
    };
    App::new(connection, Toolbox::new(Vec::new()).expect("tools"), None)
}

/// A raw-mode answer with a weather call from the mock, with `logprobs = 3`, as the core's
/// agent records it.
async fn mock_trace(opts: MockOptions, prompt: &str) -> Trace {
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut profile = Profile::new(Mode::Raw, &server.base_url());
    profile.model = "moonshotai/Kimi-K2-Instruct".into();
    profile.logprobs = 3;
    agent_trace(profile, prompt).await
}

/// The trace of the first request the core's agent makes for `prompt` with `profile` (a
/// weather tool offered), its arrival times fixed.
pub(super) async fn agent_trace(profile: Profile, prompt: &str) -> Trace {
    let board =
        Switchboard::new("local".into(), profile, Default::default(), None).expect("no key needed");
    let tool = ToolSpec {
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        ..ToolSpec::new("get_weather", vec!["true".into()])
    };
    let init = SupervisorInit {
        toolbox: Toolbox::new(vec![tool]).expect("tools"),
        system_prompt: None,
        conversation: Vec::new(),
        traces: Vec::new(),
    };
    let mut agent = Supervisor::spawn(board, init, 64).expect("client");
    assert!(agent.send(Op::UserTurn {
        text: prompt.into()
    }));
    let mut shared = None;
    let mut trace = loop {
        let e = tokio::time::timeout(std::time::Duration::from_secs(20), agent.recv())
            .await
            .expect("an event within 20 s")
            .expect("the agent runs");
        match e {
            EngineEvent::TraceStarted { trace, .. } => shared = Some(trace),
            EngineEvent::TraceFinished { .. } => {
                break shared.expect("started before finished").read().clone();
            }
            _ => {}
        }
    };
    assert!(agent.send(Op::Shutdown));
    while agent.recv().await.is_some() {}
    // Arrival times vary from run to run: fixed, for the snapshot.
    for k in 0..trace.chunks.len() {
        let c = trace.chunks.get(k).expect("a chunk");
        let fixed = kimi_protocol::trace::ChunkMark {
            at_us: 1_000 * (k as u64 + 1),
            ..c
        };
        assert!(trace.chunks.set(k, fixed));
    }
    trace
}

fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    update(
        app,
        AppEvent::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))),
    )
}

/// The screen, each row followed by a row of style codes per column: `!` unlikely (red
/// background), `~` unsure (underlined), `#` marker badge, `x` split marker, `@` the selected
/// token, `.` anything else styled, blank unstyled.
fn styled(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut codes = String::new();
        let mut skip = 0;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let c = &buf[(x, y)];
            let sym = c.symbol();
            let w = unicode_width::UnicodeWidthStr::width(sym).max(1);
            skip = w - 1;
            row.push_str(sym);
            let code = match (c.fg, c.bg) {
                (_, Color::Blue) => '@',
                (_, Color::Red) if c.fg == Color::White && c.modifier.contains(Modifier::BOLD) => {
                    'x'
                }
                (_, Color::Red) => '!',
                (_, Color::Yellow) => '#',
                (Color::Yellow, _) if c.modifier.contains(Modifier::UNDERLINED) => '~',
                (Color::Reset, Color::Reset) if c.modifier.is_empty() => ' ',
                _ => '.',
            };
            codes.extend(std::iter::repeat_n(code, w));
        }
        out.push_str(row.trim_end());
        out.push('\n');
        let codes = codes.trim_end();
        if !codes.is_empty() {
            out.push_str(codes);
            out.push('\n');
        }
    }
    out
}

fn text(buf: &Buffer) -> String {
    styled(buf)
}

#[tokio::test]
async fn the_token_view_shows_ids_shades_and_alternatives_of_mock_tokens() {
    let trace = mock_trace(MockOptions::default(), "Weather in Paris?").await;
    let tokens = trace.tokens.len();
    assert!(tokens > 10);
    let mut a = app(Mode::Raw);
    a.traces.push(trace.into());
    a.layers.inspector.open = true;
    // `t` in the inspector opens the token view; the first token is selected.
    assert!(press(&mut a, KeyCode::Char('t')).is_empty());
    assert!(a.layers.inspector.tokens.open);
    let screen = text(&super::drawn(&mut a, 100, 30));
    assert!(screen.contains("Inspector · tokens"), "{screen}");
    assert!(screen.contains(&format!("{tokens} tokens")), "{screen}");
    // Markers as produced: one token each, with the special id.
    for id in ["163595", "163597", "163598", "163599", "163596"] {
        assert!(screen.contains(id), "{id}: {screen}");
    }
    assert!(screen.contains("token #0 · id "), "{screen}");
    assert!(screen.contains("◀ chosen"), "{screen}");
    // → moves the selection, End goes to the last token: its alternatives show.
    press(&mut a, KeyCode::Right);
    assert_eq!(a.layers.inspector.tokens.selected, 1);
    press(&mut a, KeyCode::End);
    assert_eq!(a.layers.inspector.tokens.selected, tokens - 1);
    let screen = text(&super::drawn(&mut a, 100, 30));
    assert!(
        screen.contains(&format!("token #{} · id 163596", tokens - 1)),
        "the last token is the section end: {screen}"
    );
    assert!(
        screen.contains("marker <|tool_calls_section_end|>"),
        "{screen}"
    );
    // `u` jumps to an unlikely token from the start.
    press(&mut a, KeyCode::Home);
    press(&mut a, KeyCode::Char('u'));
    let sel = a.layers.inspector.tokens.selected;
    let (_, t) = a.inspected_trace().expect("trace");
    let lp = t
        .tokens
        .get(sel)
        .and_then(|t| t.logprob)
        .expect("a logprob");
    assert!(lp.exp() < 0.25 && sel > 0, "{sel}: {lp}");
    drop(t);
    // The styled screen, with the selection on the first token.
    press(&mut a, KeyCode::Home);
    insta::assert_snapshot!(styled(&super::drawn(&mut a, 100, 24)));
    // `t` again: back to the chunks.
    press(&mut a, KeyCode::Char('t'));
    assert!(!a.layers.inspector.tokens.open);
    let screen = text(&super::drawn(&mut a, 100, 30));
    assert!(screen.contains("Inspector · [ ] request"), "{screen}");
}

#[tokio::test]
async fn a_split_marker_is_badged_and_explained() {
    let trace = mock_trace(
        MockOptions {
            split_markers: true,
            ..MockOptions::default()
        },
        "Weather in Paris?",
    )
    .await;
    let mut a = app(Mode::Raw);
    a.traces.push(trace.into());
    a.layers.inspector.open = true;
    press(&mut a, KeyCode::Char('t'));
    let buf = super::drawn(&mut a, 100, 30);
    let screen = styled(&buf);
    assert!(
        screen.contains("⚠ 5 marker(s) arrived as several ordinary tokens"),
        "{screen}"
    );
    assert!(screen.contains("skip_special_tokens=false"), "{screen}");
    assert!(screen.contains("⚠ split"), "{screen}");
    assert!(
        screen.contains('x'),
        "split tokens are styled apart: {screen}"
    );
    // No special id shows: none was produced.
    assert!(!screen.contains("163597 "), "{screen}");
    // `u` stops on a split marker's first token and says what it is part of.
    for _ in 0..40 {
        press(&mut a, KeyCode::Char('u'));
        let s = text(&super::drawn(&mut a, 100, 30));
        if s.contains("⚠ part of <|tool_call_begin|> (5 tokens; the special token is 163597)") {
            return;
        }
    }
    panic!("u never reached the split <|tool_call_begin|>");
}

#[test]
fn logprobs_command_sets_the_next_requests() {
    let mut a = app(Mode::Raw);
    a.composer.input.insert_str("/logprobs 7");
    let fx = press(&mut a, KeyCode::Enter);
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::Agent(kimi_core::engine::Op::SetLogprobs(7)))),
        "{fx:?}"
    );
    assert_eq!(a.logprobs, 7);
    a.composer.input.insert_str("/logprobs 99");
    let fx = press(&mut a, KeyCode::Enter);
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::Agent(_))),
        "out of range: refused, {fx:?}"
    );
    assert_eq!(a.logprobs, 7);
}

#[test]
fn without_token_data_the_view_says_how_to_get_it() {
    let mut a = app(Mode::Raw);
    let mut t = Trace::default();
    t.push_chunk("Hello", 10);
    a.traces.push(t.into());
    a.layers.inspector.open = true;
    press(&mut a, KeyCode::Char('t'));
    // Keys on an empty view do nothing harmful.
    press(&mut a, KeyCode::Right);
    press(&mut a, KeyCode::Char('u'));
    let screen = text(&super::drawn(&mut a, 100, 20));
    assert!(
        screen.contains("No token data for this request"),
        "{screen}"
    );
    assert!(screen.contains("/logprobs N"), "{screen}");
}
