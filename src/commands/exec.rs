//! `kimi-tui exec`: one prompt, the whole agent loop, no screen. The answer streams to stdout,
//! tool activity to stderr; `--json` prints the conversation at the end instead. The agent
//! records the run as a session, as in the TUI.

use std::io::Write;

use anyhow::{Context, Result};

use kimi_client::Backend;

use super::exec_stream::JsonStream;
use crate::cli::ExecArgs;
use kimi_core::config;
use kimi_core::engine::{
    Agent, AgentInit, Approver, Decision, EVENT_QUEUE, EngineEvent, FixedPolicy, Op, SessionHandoff,
};
use kimi_core::session::{Session, SessionStore};
use kimi_core::tools::rules::{self, RuleDecision, Rules};
use kimi_core::tools::{CallProblem, Toolbox};
use kimi_protocol::sanitize;
use kimi_protocol::special;
use kimi_protocol::{Mode, StreamEvent, Template};

pub fn run(args: &ExecArgs) -> Result<()> {
    // Requests, tool runs and failures go to the log file, as in the TUI.
    let _log = kimi_ui::init_logging();
    panic_net(|| run_logged(args))
}

/// Run `body`; a panic in it or in the agent (a bug) goes to the log with where it happened
/// and ends `exec` with one `internal error` line and a failure status, not Rust's panic
/// message and backtrace note on stderr.
fn panic_net<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        kimi_core::logging::task_panicked(&info.to_string());
    }));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    std::panic::set_hook(previous);
    out.unwrap_or_else(|payload| {
        let message = kimi_core::engine::panic_message(payload);
        Err(anyhow::anyhow!("internal error: {message}"))
    })
}

fn run_logged(args: &ExecArgs) -> Result<()> {
    let prompt = super::exec_prompt::read(&args.prompt, std::io::stdin().lock())?;
    let resolved = config::resolve(&args.connect.overrides())?;
    let origin = resolved.origin();
    let endpoint = resolved
        .profile
        .endpoint()
        .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    let rules = session_rules(&resolved, args.trust_project)?;
    let toolbox = Toolbox::new(resolved.tools.clone())
        .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?
        .with_rules(rules);
    // K2.5/K2.6 answers start inside the reasoning: a server without a reasoning parser sends
    // it as content, recognised only at `</think>`.
    let unopened_reasoning = endpoint.mode == Mode::Chat
        && endpoint.thinks()
        && matches!(endpoint.template(), Template::K25 | Template::K26);
    // The run is saved as a session like the TUI's (listed by `kimi-tui sessions`, continued
    // with `kimi-tui --session ID`); without a data directory (no home) it is not.
    let recording = SessionStore::open_default().ok().map(|store| {
        let meta = Session::for_endpoint(&resolved.profile_name, &endpoint);
        SessionHandoff::new_session(store, meta)
    });
    let backend = Backend::new(endpoint)?;
    // One task is enough: the agent waits on the network, the printer on the agent.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let json = args.json;
    let mcp_servers = resolved.mcp_servers.clone();
    let outcome = runtime.block_on(async {
        // MCP servers: started before the prompt goes out, so their tools are offered to it.
        let (toolbox, mcp) = start_mcp(toolbox, mcp_servers).await;
        let init = AgentInit {
            backend,
            toolbox,
            max_rounds: resolved.profile.max_rounds,
            system_prompt: resolved.profile.system_prompt.clone(),
            conversation: Vec::new(),
            traces: Vec::new(),
        };
        let mut agent = Agent::spawn(init, EVENT_QUEUE);
        if let Some(r) = recording {
            agent.send(Op::Record(r));
        }
        let ctrl_c = agent.ops.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = ctrl_c.send(Op::Cancel);
            }
        });
        // With --json-stream stdout holds the events alone: the printer keeps the answer off it.
        let mut printer = Printer::new(
            json || args.json_stream,
            resolved.profile.neutralize_markers_in_tool_results,
        );
        let mut stream = args.json_stream.then(JsonStream::default);
        printer.show_reasoning = args.reasoning;
        printer.hold_unclassified = unopened_reasoning;
        printer.yes = args.yes;
        printer.special_tokens("your message", &prompt);
        let mut policy = FixedPolicy { yes: args.yes };
        agent.send(Op::UserTurn {
            text: prompt.clone(),
        });
        let mut outcome = None;
        let mut conversation = Vec::new();
        let mut decisions = Decisions::default();
        while let Some(e) = agent.events.recv().await {
            if let Some(s) = &mut stream {
                s.event(&e);
            }
            match e {
                EngineEvent::CallDecided {
                    call_id, decision, ..
                } => {
                    printer.decided(&decision);
                    decisions.record(call_id, decision);
                }
                EngineEvent::ApprovalRequested { id, request } => {
                    let call_id = request.call.id.clone();
                    let decision = policy.decide(*request).await;
                    if let Some(s) = &mut stream {
                        let approved = matches!(decision, Decision::Approve { .. });
                        s.approval(&call_id, approved, args.yes);
                    }
                    agent.send(Op::Approve {
                        id,
                        decision,
                        always: false,
                    });
                }
                EngineEvent::TurnDone { outcome: o } => {
                    outcome = Some(Ok(*o));
                    agent.send(Op::Snapshot);
                }
                EngineEvent::TurnFailed { message } => {
                    outcome = Some(Err(message));
                    agent.send(Op::Snapshot);
                }
                EngineEvent::Snapshot { messages, .. } => {
                    conversation = messages;
                    agent.send(Op::Shutdown);
                }
                e => printer.event(e),
            }
        }
        printer.release();
        let outcome = outcome.unwrap_or_else(|| Err("the agent stopped".to_owned()));
        if let Some(s) = &mut stream {
            s.turn_end(&outcome);
        }
        if let Some(hub) = mcp {
            // An HTTP session is closed (DELETE) before the process ends.
            hub.close(MCP_CLOSE_WAIT).await;
        }
        (outcome, conversation, decisions, printer.line_open)
    });
    let (outcome, conversation, decisions, line_open) = outcome;
    let mut out = std::io::stdout().lock();
    if json {
        let text = kimi_core::json_out::to_string_pretty(&decisions.annotate(&conversation)?)?;
        writeln!(out, "{text}").ok();
    } else if line_open {
        // The answer's last line is ended; nothing printed (a failure) prints nothing.
        writeln!(out).ok();
    }
    out.flush().ok();
    let outcome = outcome.map_err(|m| anyhow::anyhow!("internal error: {m}"))?;
    if let Some(e) = outcome.error {
        // The server's words, then where the settings that reached it came from.
        anyhow::bail!("{e} [{origin}]");
    }
    if outcome.cancelled {
        anyhow::bail!("cancelled");
    }
    if outcome.hit_max_rounds {
        anyhow::bail!(
            "stopped after {} rounds with the model still calling tools (max_rounds)",
            outcome.rounds
        );
    }
    if outcome.truncated {
        eprintln!("kimi-tui: warning: the answer was cut off at max_tokens");
    }
    Ok(())
}

/// The rules in force: the config's, and the working directory's project rules (their allow
/// rules only in a directory the user trusted in the TUI, or with `--trust-project`). What
/// was left out of the project's rules is said on stderr.
fn session_rules(resolved: &config::Resolved, trust_project: bool) -> Result<Rules> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let trusted = trust_project || kimi_core::trust::is_trusted(&cwd);
    let r = rules::session_rules(
        resolved.rules.clone(),
        resolved.config_path.clone(),
        &cwd,
        &resolved.tools,
        trusted,
    )?;
    for n in &r.notices {
        eprintln!("kimi-tui: {}", sanitize::for_terminal(n));
    }
    Ok(r.rules)
}

/// What decided each call, by call id (the last decision: arguments edited and checked again
/// replace the first).
#[derive(Default)]
struct Decisions(std::collections::HashMap<String, RuleDecision>);

impl Decisions {
    fn record(&mut self, call_id: String, d: RuleDecision) {
        self.0.insert(call_id, d);
    }

    /// The conversation as JSON, each tool result carrying `"decision"`: what decided its
    /// call (`verdict`, `origin`: the rule with its file and line, or the tool's approval)
    /// and `text`, the decision in words (`RuleDecision`'s `Display`).
    fn annotate(&self, conversation: &[kimi_protocol::Message]) -> Result<serde_json::Value> {
        let mut out = serde_json::to_value(conversation)?;
        for m in out.as_array_mut().into_iter().flatten() {
            let Some(id) = m.get("tool_call_id").and_then(|v| v.as_str()) else {
                continue;
            };
            if let Some(d) = self.0.get(id) {
                let mut v = serde_json::to_value(d)?;
                v["text"] = serde_json::Value::String(d.to_string());
                m["decision"] = v;
            }
        }
        Ok(out)
    }
}

/// Writes the stream as it arrives: text to stdout, the rest to stderr.
struct Printer {
    json: bool,
    stdout: std::io::Stdout,
    /// The profile breaks special-token strings in tool results before sending them.
    neutralized: bool,
    /// Special-token strings were already reported (once per turn; `exec` runs one).
    warned: bool,
    /// The round's text stream: a sequence split across tokens is removed whole.
    text: sanitize::StreamSanitizer,
    /// `--reasoning`: the model's reasoning goes to stderr as it streams (never to stdout,
    /// which holds the answer alone).
    show_reasoning: bool,
    reasoning: sanitize::StreamSanitizer,
    /// Reasoning was printed and its line is still open.
    reasoning_open: bool,
    /// Content may be reasoning until `</think>` says so (see [`Printer::text`]).
    hold_unclassified: bool,
    /// This round's content so far while it is not known to be the answer.
    held: Option<String>,
    /// This round's reasoning as received: a K3 model may turn out to have written its answer
    /// there, which then goes to stdout.
    round_reasoning: String,
    /// `--yes` was given: a declined call was not declined for the want of it.
    yes: bool,
    /// The answer printed so far ends inside a line.
    line_open: bool,
}

/// Most content held back while it may still be reasoning; past it, it is printed as the
/// answer (a server that never sends `</think>` still shows its answer, late).
const HOLD_MAX: usize = 64 << 10;

impl Printer {
    fn new(json: bool, neutralized: bool) -> Self {
        Printer {
            json,
            stdout: std::io::stdout(),
            neutralized,
            warned: false,
            text: Default::default(),
            show_reasoning: false,
            reasoning: Default::default(),
            reasoning_open: false,
            hold_unclassified: false,
            held: None,
            round_reasoning: String::new(),
            yes: false,
            line_open: false,
        }
    }

    /// The answer's text to stdout, or held: with K2.5/K2.6 the content of a server without a
    /// reasoning parser is the reasoning until `</think>`, which then comes back as reasoning
    /// (the TUI moves it; stdout cannot take back what it printed).
    fn text(&mut self, t: &str) {
        if let Some(held) = &mut self.held {
            held.push_str(t);
            if held.len() > HOLD_MAX {
                self.release();
            }
            return;
        }
        self.print_text(t);
    }

    fn print_text(&mut self, t: &str) {
        self.close_reasoning();
        let clean = self.text.push(t);
        if let Some(last) = clean.chars().last() {
            self.line_open = last != '\n';
        }
        let mut out = self.stdout.lock();
        let _ = out.write_all(clean.as_bytes());
        let _ = out.flush();
    }

    /// Reasoning arrived: the held content was that reasoning (moved out at `</think>`), or,
    /// the server splitting reasoning itself, the content is the answer from now on.
    fn classify(&mut self, reasoning: &str) {
        match self.held.take() {
            Some(held) if !held.is_empty() && reasoning != held => self.print_text(&held),
            _ => {}
        }
    }

    /// Print what is held as the answer and stop holding this round.
    fn release(&mut self) {
        if let Some(held) = self.held.take() {
            self.print_text(&held);
        }
    }

    /// End the reasoning block on stderr before anything else is printed.
    fn close_reasoning(&mut self) {
        if std::mem::take(&mut self.reasoning_open) {
            eprintln!();
        }
    }

    /// Warn, once, that `text` (from `source`) holds special-token strings.
    fn special_tokens(&mut self, source: &str, text: &str) {
        let found = special::find(text);
        if self.warned || found.is_empty() {
            return;
        }
        self.warned = true;
        let consequence = if self.neutralized && source != "your message" {
            "they are sent broken up, as neutralize_markers_in_tool_results asks"
        } else {
            "the server may read them as real turn boundaries"
        };
        let note = format!(
            "kimi-tui: warning: {source} contains {}; {consequence}",
            special::describe(text, &found)
        );
        eprintln!("{}", sanitize::for_terminal(&note));
    }

    /// A call a rule decided: which rule, on stderr (the tool's own `approval` deciding is the
    /// usual case and goes unsaid).
    fn decided(&mut self, d: &RuleDecision) {
        if d.rule().is_some() {
            self.close_reasoning();
            eprintln!("{}", sanitize::for_terminal(&format!("[tool] {d}")));
        }
    }

    fn event(&mut self, e: EngineEvent) {
        let note = match e {
            EngineEvent::Notice { text, .. } => format!("kimi-tui: {text}"),
            EngineEvent::RoundStarted { .. } => {
                self.release();
                self.close_reasoning();
                self.text = Default::default();
                self.reasoning = Default::default();
                self.round_reasoning.clear();
                self.held = (self.hold_unclassified && !self.json).then(String::new);
                return;
            }
            EngineEvent::Stream(StreamEvent::Finished { .. })
            | EngineEvent::RoundFinished { .. } => {
                self.release();
                return;
            }
            EngineEvent::Stream(StreamEvent::ReasoningWasText) => {
                let answer = std::mem::take(&mut self.round_reasoning);
                if self.show_reasoning && !answer.is_empty() {
                    self.close_reasoning();
                    eprintln!(
                        "kimi-tui: the reasoning above was the answer (the model wrote it in its think channel): it follows on stdout"
                    );
                }
                if !self.json {
                    self.text(&answer);
                }
                return;
            }
            EngineEvent::Stream(StreamEvent::Reasoning(t)) => {
                self.round_reasoning.push_str(&t);
                self.classify(&t);
                if !self.show_reasoning {
                    return;
                }
                let clean = self.reasoning.push(&t);
                let mut err = std::io::stderr().lock();
                if !self.reasoning_open {
                    self.reasoning_open = true;
                    let _ = err.write_all(b"[reasoning] ");
                }
                let _ = err.write_all(clean.as_bytes());
                let _ = err.flush();
                return;
            }
            EngineEvent::Stream(StreamEvent::Text(t)) if !self.json => {
                self.text(&t);
                return;
            }
            EngineEvent::Stream(StreamEvent::Warning(w)) => format!("kimi-tui: warning: {w}"),
            // A transient failure the agent retries.
            EngineEvent::RetryScheduled {
                error,
                attempt,
                attempts,
                wait,
            } => format!(
                "kimi-tui: {}; retrying in {:.1} s (attempt {attempt}/{attempts})",
                sanitize::one_line(&error.what_failed(), 1000),
                wait.as_secs_f64()
            ),
            EngineEvent::ToolRefused { call, problem, .. } => {
                // Without --yes nobody is there to approve: say which flag does.
                let hint = match &problem {
                    CallProblem::Denied { reason: None } if !self.yes => {
                        " (exec approves `ask` tools only with --yes)"
                    }
                    _ => "",
                };
                format!(
                    "[tool] {} not run: {}{hint}",
                    call_label(&call),
                    sanitize::one_line(&problem.to_string(), 1000)
                )
            }
            EngineEvent::ToolStarted {
                call, arguments, ..
            } => format!(
                "[tool] {} running with {}",
                call_label(&call),
                summarize_arguments(&arguments)
            ),
            EngineEvent::ToolNote { call_id, note, .. } => format!(
                "[tool] {}: {}",
                sanitize::display_id(&call_id),
                sanitize::one_line(&note.line(), 1000)
            ),
            EngineEvent::ToolFinished { call, outcome, .. } => format!(
                "[tool] {} {} in {} ms, {} bytes of output",
                call_label(&call),
                sanitize::one_line(&outcome.status.label(), 1000),
                outcome.duration.as_millis(),
                outcome.output_total_bytes
            ),
            EngineEvent::MessageAppended { message, .. } if message.role == "tool" => {
                let name = message.name.as_deref().unwrap_or_default();
                return self.special_tokens(&format!("the tool result of {name}"), &message.text());
            }
            _ => return,
        };
        self.close_reasoning();
        // Names, arguments and server text come from outside: no escape sequence gets through.
        eprintln!("{}", sanitize::for_terminal(&note));
    }
}

/// How long exec waits at the end for MCP sessions to close.
const MCP_CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Arguments on the `[tool] ... running with` line are cut after this many characters.
const ARGUMENT_CHARS: usize = 200;

/// The arguments for the `[tool]` line: as they are when short; else their start, then how
/// large they are and (a JSON object) which keys they hold, so a 1 MB argument is one line.
fn summarize_arguments(arguments: &str) -> String {
    let chars = arguments.chars().count();
    if chars <= ARGUMENT_CHARS {
        return sanitize::one_line(arguments, ARGUMENT_CHARS);
    }
    let start: String = arguments.chars().take(ARGUMENT_CHARS).collect();
    let keys = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(o)) => {
            let names: Vec<&str> = o.keys().map(String::as_str).collect();
            format!(
                ", keys: {}",
                sanitize::one_line(&names.join(", "), ARGUMENT_CHARS)
            )
        }
        _ => String::new(),
    };
    format!(
        "{}… ({} bytes in all{keys}; --json prints them whole)",
        sanitize::one_line(&start, ARGUMENT_CHARS),
        arguments.len()
    )
}

/// `NAME (ID)` of a call, each escaped on one line: a hostile id cannot fake more lines.
fn call_label(call: &kimi_protocol::ToolCall) -> String {
    format!(
        "{} ({})",
        sanitize::one_line(&call.function.name, 64),
        sanitize::display_id(&call.id)
    )
}

/// Start the MCP servers and wait (up to the longest `startup_timeout_secs`) until each is ready
/// or has failed; a failure is said on stderr and the run goes on without its tools.
async fn start_mcp(
    toolbox: Toolbox,
    servers: Vec<kimi_core::tools::mcp::McpServerConfig>,
) -> (Toolbox, Option<kimi_core::tools::mcp::McpHub>) {
    use kimi_core::tools::mcp::{McpHub, ServerStatus};
    if servers.is_empty() {
        return (toolbox, None);
    }
    let wait = servers
        .iter()
        .map(|s| s.startup_timeout_secs)
        .max()
        .unwrap_or(30);
    let hub = McpHub::new(servers, toolbox.names());
    // exec cannot ask the user: a server's question is cancelled, and stderr says who asked
    // what. What servers report (tools changed, ...) goes to stderr too.
    let mut questions = hub.questions();
    tokio::spawn(async move {
        while let Some(ask) = questions.recv().await {
            eprintln!(
                "{}",
                sanitize::for_terminal(&format!(
                    "kimi-tui: {}; answered cancel: exec cannot ask the user",
                    ask.summary()
                ))
            );
            let _ = ask.answer(kimi_core::tools::mcp::ElicitReply::Cancel);
        }
    });
    let notices = hub.clone();
    let mut changes = hub.subscribe();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            for n in notices.take_notices() {
                eprintln!(
                    "{}",
                    sanitize::for_terminal(&format!("kimi-tui: {}", n.text))
                );
            }
        }
    });
    hub.start();
    // A little beyond the servers' own timeouts, which they enforce themselves.
    hub.wait_started(std::time::Duration::from_secs(wait + 1))
        .await;
    for r in hub.reports() {
        if let ServerStatus::Failed(why) = &r.status {
            let tail = r.stderr_tail.trim_end();
            eprintln!(
                "[MCP server {} failed: {}; its tools are not offered]",
                r.name,
                sanitize::one_line(why, 300)
            );
            if !tail.is_empty() {
                eprintln!("{}", sanitize::for_terminal(tail));
            }
        }
    }
    (toolbox.with_mcp(hub.clone()), Some(hub))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_one_internal_error() {
        let err = panic_net(|| -> Result<()> {
            let v: Vec<u8> = Vec::new();
            let _ = v[usize::from(v.is_empty())];
            Ok(())
        })
        .expect_err("the panic is an error");
        let text = format!("{err:#}");
        assert!(
            text.starts_with("internal error: index out of bounds"),
            "{text}"
        );
        assert_eq!(panic_net(|| Ok(7)).expect("no panic"), 7);
    }
}
