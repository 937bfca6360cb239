//! No model byte reaches the terminal unescaped: hostile text (escape sequences that set the
//! title, write the clipboard, link, clear and move; C1 controls; `\r`, backspace, DEL; bidi
//! overrides and zero-width characters) is fed to the app through the engine events of a live
//! turn (and as a saved session's title), every screen that shows it is drawn through the real path (`ui::prepare`, `ui::draw`,
//! ratatui's crossterm backend) into memory, and the bytes are checked twice: every escape
//! sequence in them must be one ratatui itself writes, and a terminal emulator (`vt100`) fed
//! them must see no title, clipboard or other command, only the text as the app escapes it.

use std::cell::RefCell;
use std::io::Write;
use std::num::NonZeroU16;
use std::rc::Rc;

use crate::app::event::AppEvent;
use crate::app::picker_sessions;
use crate::app::state::{App, Connection};
use crate::ui;
use crossterm::event::KeyCode;
use kimi_core::backend::BackendError;
use kimi_core::engine::{ApprovalRequest, EngineEvent, SharedTrace};
use kimi_core::session::{Session, SessionStore};
use kimi_core::tools::mcp::ToolNote;
use kimi_core::tools::{Approval, ToolResult, ToolSpec, ToolStatus, Toolbox};
use kimi_protocol::{Message, Mode, StreamEvent, TokenLogprob, ToolCall, Trace};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use serde_json::json;

use super::app_update::key;
use super::update;

/// Model text that would take over a terminal printed as is. The capital letters mark where
/// each piece ends, so what is left of it on screen can be checked.
const HOSTILE: &str = concat!(
    "A\x1b]0;pwned\x07",       // window title (OSC 0, BEL)
    "B\x1b]52;c;cHduZWQ=\x07", // clipboard write (OSC 52)
    "C\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\", // hyperlink (OSC 8, ST)
    "D\x1b[2J\x1b[H",          // clear the screen, cursor home
    "E\u{9b}31m",              // C1 CSI: red
    "F\u{9d}2;c1\u{9c}",       // C1 OSC: title, C1 ST
    "G\rH\x08I\x7fJ",          // carriage return, backspace, DEL
    "\u{202e}K\u{200b}L",      // right-to-left override, zero width space
    "\x1bP1$qm\x1b\\M",        // DCS
);

/// What the chat shows of [`HOSTILE`]: sequences gone whole, controls and bidi gone (the zero
/// width space stays: it moves nothing, and joins emoji in ordinary text).
const SHOWN_IN_CHAT: &str = "ABClinkDEFGHIJK\u{200b}LM";

const W: u16 = 120;
const H: u16 = 50;

fn weather() -> ToolSpec {
    ToolSpec {
        parameters: json!({"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string"}}}),
        approval: Approval::Ask,
        ..ToolSpec::new("get_weather", vec!["/bin/true".into()])
    }
}

fn app() -> App {
    let connection = Connection {
        profile: "test".into(),
        mode: Mode::Raw,
        model: "m".into(),
        host: "127.0.0.1:1".into(),
    };
    App::new(
        connection,
        Toolbox::new(vec![weather()]).expect("tools"),
        None,
    )
}

fn engine(app: &mut App, e: EngineEvent) {
    update(app, AppEvent::Engine(e));
}

/// `text` cut into pieces of `n` bytes (at character boundaries): sequences split across
/// chunks, as a stream splits them.
fn pieces(text: &str, n: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in text.chars() {
        if out.last().is_some_and(|p| p.len() >= n) {
            out.push(String::new());
        }
        if let Some(p) = out.last_mut() {
            p.push(c);
        }
    }
    out
}

/// A turn as the agent reports it: the round's trace (raw chunks and their tokens) filled in as
/// the answer streams, reasoning, text, two calls (one of a known tool with hostile arguments
/// and id, one with a hostile name), the first run (a server's notes, its result), the second
/// refused, then a failed round and turn.
/// `while_running` sees the app while the first call runs, after its server's notes.
fn hostile_turn(app: &mut App, while_running: &mut dyn FnMut(&mut App)) -> ApprovalRequest {
    engine(
        app,
        EngineEvent::MessageAppended {
            index: 0,
            message: Box::new(Message::user("weather?")),
        },
    );
    engine(app, EngineEvent::RoundStarted { round: 1 });
    let trace = SharedTrace::new(Trace {
        mode: Mode::Raw,
        url: "http://127.0.0.1:1/v1/completions".into(),
        prompt: Some(format!("<|im_user|>user<|im_middle|>{HOSTILE}<|im_end|>")),
        request: json!({"prompt": HOSTILE}),
        status: Some(200),
        ..Trace::default()
    });
    engine(
        app,
        EngineEvent::TraceStarted {
            index: 0,
            trace: trace.clone(),
        },
    );
    let mut events = Vec::new();
    for (i, p) in pieces(HOSTILE, 5).into_iter().enumerate() {
        events.push(StreamEvent::Chunk {
            data: p.clone(),
            at_us: 1_000 * (i as u64 + 1),
        });
        events.push(StreamEvent::Tokens(vec![TokenLogprob {
            id: Some(i as u32),
            text: p.clone(),
            logprob: Some(-0.5),
            top: vec![],
        }]));
        events.push(StreamEvent::Reasoning(p.clone()));
    }
    for p in pieces(HOSTILE, 7) {
        events.push(StreamEvent::Text(p));
    }
    let id = format!("functions.get_weather:0{HOSTILE}");
    let arguments = format!("{{\"city\": \"Paris{HOSTILE}\"}}");
    events.push(StreamEvent::ToolCallBegin {
        index: 0,
        id: id.clone(),
        name: "get_weather".into(),
    });
    for p in pieces(&arguments, 6) {
        events.push(StreamEvent::ToolCallArgs { index: 0, delta: p });
    }
    events.push(StreamEvent::ToolCallEnd { index: 0 });
    let bad_name = format!("get{HOSTILE}");
    events.push(StreamEvent::ToolCallBegin {
        index: 1,
        id: "functions.x:1".into(),
        name: bad_name.clone(),
    });
    events.push(StreamEvent::ToolCallArgs {
        index: 1,
        delta: "{}".into(),
    });
    events.push(StreamEvent::ToolCallEnd { index: 1 });
    events.push(StreamEvent::Warning(format!("odd chunk: {HOSTILE}")));
    for e in events {
        // The agent records each event in the shared trace, then forwards it (a chunk without
        // its text, which is in the trace).
        trace.record(&e);
        let e = match e {
            StreamEvent::Chunk { at_us, .. } => StreamEvent::Chunk {
                data: String::new(),
                at_us,
            },
            e => e,
        };
        engine(app, EngineEvent::Stream(e));
    }
    let call = ToolCall::new(&id, "get_weather", &arguments);
    let refused = ToolCall::new("functions.x:1", &bad_name, "{}");
    engine(
        app,
        EngineEvent::MessageAppended {
            index: 1,
            message: Box::new(Message::assistant_with_calls(
                HOSTILE,
                vec![call.clone(), refused.clone()],
            )),
        },
    );
    engine(
        app,
        EngineEvent::TraceFinished {
            index: 0,
            message_index: 1,
        },
    );
    engine(
        app,
        EngineEvent::RoundFinished {
            round: 1,
            finish: "tool_calls".into(),
            error: None,
            cancelled: false,
        },
    );
    let request = ApprovalRequest {
        index: 0,
        call: call.clone(),
        spec: weather(),
        arguments: arguments.clone(),
        rule: kimi_core::tools::rules::RuleDecision::by_tool(kimi_core::tools::rules::Verdict::Ask),
        problems: app
            .toolbox
            .check_call("get_weather", &arguments)
            .err()
            .into_iter()
            .collect(),
    };
    engine(
        app,
        EngineEvent::ToolStarted {
            index: 0,
            call: call.clone(),
            arguments: arguments.clone(),
        },
    );
    for note in [
        ToolNote::Progress {
            progress: 1.0,
            total: Some(2.0),
            message: Some(HOSTILE.into()),
        },
        ToolNote::Log {
            level: format!("info{HOSTILE}"),
            text: HOSTILE.into(),
        },
    ] {
        engine(
            app,
            EngineEvent::ToolNote {
                index: 0,
                call_id: id.clone(),
                note,
            },
        );
    }
    while_running(app);
    engine(
        app,
        EngineEvent::ToolFinished {
            index: 0,
            call: call.clone(),
            outcome: Box::new(ToolResult {
                content: HOSTILE.into(),
                status: ToolStatus::CouldNotStart(format!("MCP server `s`: {HOSTILE}")),
                output: HOSTILE.into(),
                output_total_bytes: HOSTILE.len() as u64,
                truncated: false,
                log_tail: HOSTILE.into(),
                duration: std::time::Duration::from_millis(12),
            }),
        },
    );
    engine(
        app,
        EngineEvent::MessageAppended {
            index: 2,
            message: Box::new(Message::tool_result(&id, "get_weather", HOSTILE)),
        },
    );
    engine(
        app,
        EngineEvent::ToolRefused {
            index: 1,
            call: refused,
            problem: app
                .toolbox
                .check_call(&bad_name, "{}")
                .expect_err("unknown tool"),
        },
    );
    engine(
        app,
        EngineEvent::Notice {
            text: format!("MCP server `s` says: {HOSTILE}"),
            error: true,
        },
    );
    engine(app, EngineEvent::RoundStarted { round: 2 });
    engine(
        app,
        EngineEvent::RoundFinished {
            round: 2,
            finish: String::new(),
            error: Some(Box::new(BackendError::ServerEvent {
                message: HOSTILE.into(),
            })),
            cancelled: false,
        },
    );
    engine(
        app,
        EngineEvent::TurnFailed {
            message: HOSTILE.into(),
        },
    );
    request
}

/// The bytes the backend writes, kept where the test can read them after the draw.
#[derive(Clone, Default)]
struct Written(Rc<RefCell<Vec<u8>>>);

impl Write for Written {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One frame of `app` as the event loop draws it, as the bytes a terminal would get.
fn bytes_of(app: &mut App) -> Vec<u8> {
    let area = Rect::new(0, 0, W, H);
    let written = Written::default();
    let backend = CrosstermBackend::new(written.clone());
    let mut term = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    )
    .expect("terminal");
    ui::prepare(app, area, &ui::markdown::Theme::default());
    term.draw(|f| ui::draw(f, app)).expect("draw");
    drop(term);
    written.0.take()
}

/// Every escape sequence in `bytes` that ratatui would not write, and every other control
/// character (C0, DEL, C1) or bidi control in them.
fn foreign_sequences(bytes: &[u8]) -> Vec<String> {
    let mut bad = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == 0x1b {
            match csi_at(bytes, i) {
                Some((end, seq)) if ratatui_writes(&seq) => {
                    i = end;
                    continue;
                }
                Some((_, seq)) => bad.push(format!("CSI {seq:?}")),
                None => bad.push(format!(
                    "ESC then {:?}",
                    String::from_utf8_lossy(&bytes[i + 1..(i + 8).min(bytes.len())])
                )),
            }
        } else if b < 0x20 || b == 0x7f {
            bad.push(format!("control byte {b:#04x}"));
        }
        i += 1;
    }
    for c in String::from_utf8_lossy(bytes).chars() {
        if ('\u{80}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        {
            bad.push(format!("character U+{:04X}", c as u32));
        }
    }
    bad
}

/// The CSI sequence at `i` (ESC `[` parameters final byte): where it ends and its text after
/// the `[`.
fn csi_at(bytes: &[u8], i: usize) -> Option<(usize, String)> {
    if bytes.get(i + 1) != Some(&b'[') {
        return None;
    }
    let mut j = i + 2;
    while j < bytes.len() && (0x20..0x40).contains(&bytes[j]) {
        j += 1;
    }
    let fin = *bytes.get(j)?;
    (0x40..0x7f).contains(&fin).then(|| {
        (
            j + 1,
            String::from_utf8_lossy(&bytes[i + 2..=j]).into_owned(),
        )
    })
}

/// What ratatui's crossterm backend writes: colours and attributes (SGR), cursor moves, cursor
/// shown or hidden, clearing.
fn ratatui_writes(seq: &str) -> bool {
    let (params, fin) = seq.split_at(seq.len() - 1);
    let numeric = |p: &str| {
        p.chars()
            .all(|c| c.is_ascii_digit() || c == ';' || c == ':')
    };
    match fin {
        "m" | "H" => numeric(params),
        "J" | "K" => matches!(params, "" | "0" | "1" | "2" | "3"),
        "h" | "l" => params == "?25",
        _ => false,
    }
}

/// What a terminal emulator saw besides text: titles, clipboard, and every sequence it does not
/// handle.
#[derive(Default)]
struct Seen(Vec<String>);

impl vt100::Callbacks for Seen {
    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.0.push("bell".into());
    }
    fn set_window_icon_name(&mut self, _: &mut vt100::Screen, name: &[u8]) {
        self.0
            .push(format!("icon name {:?}", String::from_utf8_lossy(name)));
    }
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0
            .push(format!("title {:?}", String::from_utf8_lossy(title)));
    }
    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, _: &[u8], data: &[u8]) {
        self.0
            .push(format!("clipboard {:?}", String::from_utf8_lossy(data)));
    }
    fn paste_from_clipboard(&mut self, _: &mut vt100::Screen, _: &[u8]) {
        self.0.push("paste".into());
    }
    fn unhandled_char(&mut self, _: &mut vt100::Screen, c: char) {
        self.0.push(format!("char {c:?}"));
    }
    fn unhandled_control(&mut self, _: &mut vt100::Screen, b: u8) {
        self.0.push(format!("control {b:#04x}"));
    }
    fn unhandled_escape(&mut self, _: &mut vt100::Screen, _: Option<u8>, _: Option<u8>, b: u8) {
        self.0.push(format!("escape {:?}", b as char));
    }
    fn unhandled_csi(
        &mut self,
        _: &mut vt100::Screen,
        _: Option<u8>,
        _: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        // SGR codes the emulator does not know (crossterm's underline colour reset, 59):
        // colours only, and the byte check has vetted every sequence already.
        if c != 'm' {
            self.0.push(format!("CSI {params:?} {c:?}"));
        }
    }
    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        let params: Vec<_> = params.iter().map(|p| String::from_utf8_lossy(p)).collect();
        self.0.push(format!("OSC {params:?}"));
    }
}

/// `bytes` through a terminal emulator: the screen's text (rows joined by newlines) and what
/// else it saw.
fn emulated(bytes: &[u8]) -> (String, Vec<String>) {
    let rows = NonZeroU16::new(H).expect("rows");
    let cols = NonZeroU16::new(W).expect("cols");
    let mut parser = vt100::Parser::new_with_callbacks(rows, cols, 0, Seen::default());
    parser.process(bytes);
    (parser.screen().contents(), parser.callbacks().0.clone())
}

/// Draw `app` and check its bytes both ways; the screen as the emulator shows it.
fn checked_screen(app: &mut App, what: &str) -> String {
    let bytes = bytes_of(app);
    let bad = foreign_sequences(&bytes);
    assert!(
        bad.is_empty(),
        "{what}: bytes ratatui does not write: {bad:?}"
    );
    let (screen, seen) = emulated(&bytes);
    assert!(
        seen.is_empty(),
        "{what}: the terminal saw {seen:?}\n{screen}"
    );
    // What a sequence carries never shows bare, right after the letter before it: that is
    // how it looks when only its escape character was dropped (by ratatui, which skips control
    // characters) and the rest was not removed with it.
    for bare in [
        "A]0;pwned",
        "B]52;c;",
        "C]8;;http",
        "D[2J",
        "E31m",
        "F2;c1",
        "LP1$qm",
    ] {
        assert!(
            !screen.contains(bare),
            "{what}: `{bare}`, a sequence without its escape, shows:\n{screen}"
        );
    }
    screen
}

#[test]
fn the_chat_a_tool_pane_and_the_approval_dialog_show_hostile_text_inert() {
    let mut a = app();
    let mut running = String::new();
    let request = hostile_turn(&mut a, &mut |a| {
        for t in a.transcript.entries.iter_mut().filter_map(|e| match e {
            crate::app::state::Entry::Assistant(t) => Some(t),
            _ => None,
        }) {
            t.rev += 1;
        }
        running = checked_screen(a, "running tool pane");
    });
    // The server's progress message and log line, on one line each, escaped.
    assert!(running.contains(r"(50%) · A\x1b]0;pwned\x07B"), "{running}");
    assert!(running.contains(r"[infoA\x1b]0;pwned"), "{running}");
    for p in a.transcript.entries.iter_mut().filter_map(|e| match e {
        crate::app::state::Entry::Assistant(t) => Some(t),
        _ => None,
    }) {
        for pane in &mut p.panes {
            pane.expanded = true;
        }
        p.rev += 1;
    }
    // The reasoning shown too (F2).
    key(&mut a, KeyCode::F(2));
    let screen = checked_screen(&mut a, "chat");
    assert!(screen.contains(SHOWN_IN_CHAT), "{screen}");
    assert!(
        screen.matches(SHOWN_IN_CHAT).count() >= 2,
        "the answer and the reasoning:\n{screen}"
    );
    // The pane escapes what it shows: the id, the arguments, the result, the server's notes.
    assert!(screen.contains(r"ParisA\x1b]0;pwned\x07B"), "{screen}");

    engine(
        &mut a,
        EngineEvent::ApprovalRequested {
            id: 7,
            request: Box::new(request),
        },
    );
    assert!(a.layers.dialog.is_some());
    let screen = checked_screen(&mut a, "approval dialog");
    assert!(screen.contains("Tool call needs approval"), "{screen}");
    assert!(screen.contains(r#""ParisA\x1b]0;pwned\x07B"#), "{screen}");
}

#[test]
fn the_inspector_shows_hostile_chunks_and_tokens_as_visible_escapes() {
    let mut a = app();
    hostile_turn(&mut a, &mut |_| {});
    a.layers.inspector.open = true;
    let screen = checked_screen(&mut a, "inspector chunks");
    assert!(
        screen.contains(r"A\x1b]0;pwned\x07B"),
        "the prompt:\n{screen}"
    );
    assert!(screen.contains(r"│\rH\x08I\x7f│"), "a chunk:\n{screen}");

    assert!(key(&mut a, KeyCode::Char('t')).is_empty());
    assert!(a.layers.inspector.tokens.open);
    let screen = checked_screen(&mut a, "inspector tokens");
    assert!(screen.contains("Inspector · tokens"), "{screen}");
    assert!(screen.contains(r"text ⟨A\x1b]0;⟩"), "{screen}");
    assert!(screen.contains(r"│\u{9b}31m│"), "{screen}");
}

#[test]
fn the_sessions_picker_shows_hostile_titles_inert() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut s = Session::new(
        &format!("p{HOSTILE}"),
        Mode::Chat,
        &format!("m{HOSTILE}"),
        "http://h/v1",
    );
    s.id = "20260102-000000-bbbb".into();
    s.messages = vec![Message::user(HOSTILE), Message::assistant(HOSTILE)];
    s.updated_unix_ms = 2_000;
    store.save(&s).expect("saved");
    let mut a = app();
    picker_sessions::open(&mut a, store.list());
    assert!(a.layers.picker.is_some());
    let screen = checked_screen(&mut a, "sessions picker");
    assert!(screen.contains("Saved sessions"), "{screen}");
    // The title (the first message) and the profile, escaped on one line.
    assert!(screen.contains(r"A\x1b]0;pwned\x07B"), "{screen}");
    assert!(screen.contains(r"pA\x1b]0;pwned"), "{screen}");
}
