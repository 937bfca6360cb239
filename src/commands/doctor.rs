//! `kimi-tui doctor`: check the configured endpoint and tools, one line per check
//! (`✓` passed, `✗` failed, `!` warning or not checked), with a `fix:` line under each failure.
//! Exits non-zero when any check failed.
//!
//! 1. The config loads and a profile is selected; its API key variable is set.
//! 2. The server answers `GET /models`.
//! 3. The profile's model is listed.
//! 4. Raw mode: special tokens survive (`skip_special_tokens: false` is honoured).
//! 5. Chat mode: a tool call comes back parsed in `tool_calls`.
//! 6. Each tool's program exists and is executable.
//! 7. Each MCP server starts and lists its tools.

pub mod conformance;
mod k3_checks;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use kimi_protocol::Mode;

use crate::cli::{ConnectArgs, DoctorArgs};
use kimi_client::{Backend, BackendError, Endpoint, probe, redact_url};
use kimi_core::config::{self, ResolveError, Resolved};
use kimi_core::tools::ToolSpec;
use kimi_protocol::tokens::{TOOL_CALL_ARGUMENT_BEGIN, TOOL_CALL_BEGIN, TOOL_CALLS_SECTION_BEGIN};
use kimi_protocol::{Message, RenderOptions, render};

/// The vLLM command line that serves Kimi K2 with its tool parser.
pub const VLLM_COMMAND: &str = "vllm serve moonshotai/Kimi-K2-Instruct --trust-remote-code --enable-auto-tool-choice --tool-call-parser kimi_k2";

/// The question of the chat-mode check.
pub const CHAT_QUESTION: &str = "What's the weather in Beijing? Use the tool.";

/// Run every check. `outer` holds the connection flags given before the subcommand
/// (`kimi-tui --profile x doctor`); the doctor's own flags win.
pub fn run(args: &DoctorArgs, outer: &ConnectArgs) -> Result<()> {
    let c = &args.connect;
    let args = DoctorArgs {
        connect: ConnectArgs {
            config: c.config.clone().or_else(|| outer.config.clone()),
            profile: c.profile.clone().or_else(|| outer.profile.clone()),
            mode: c.mode.or(outer.mode),
            base_url: c.base_url.clone().or_else(|| outer.base_url.clone()),
            model: c.model.clone().or_else(|| outer.model.clone()),
        },
        ..args.clone()
    };
    let args = &args;
    if args.conformance {
        return conformance::run(args);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut report = Report::default();
    runtime.block_on(check_all(args, &mut report));
    match report.failed {
        0 => {
            let warnings = match report.warned {
                0 => String::new(),
                1 => " (1 warning)".to_owned(),
                n => format!(" ({n} warnings)"),
            };
            report.line(&format!("all checks passed{warnings}"));
            Ok(())
        }
        1 => anyhow::bail!("1 check failed"),
        n => anyhow::bail!("{n} checks failed"),
    }
}

/// Counts and prints the results as they come.
#[derive(Default)]
struct Report {
    failed: usize,
    warned: usize,
}

impl Report {
    fn line(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    fn pass(&mut self, what: &str, text: &str) {
        self.line(&format!("✓ {what}: {text}"));
    }

    fn fail(&mut self, what: &str, text: &str, fix: &str) {
        self.failed += 1;
        self.line(&format!("✗ {what}: {text}\n  fix: {fix}"));
    }

    fn warn(&mut self, what: &str, text: &str, fix: Option<&str>) {
        self.warned += 1;
        match fix {
            Some(fix) => self.line(&format!("! {what}: {text}\n  fix: {fix}")),
            None => self.line(&format!("! {what}: {text}")),
        }
    }
}

/// What the fixes need to know.
struct Ctx<'a> {
    profile_name: &'a str,
    api_key_env: Option<&'a str>,
    base_url: &'a str,
}

async fn check_all(args: &DoctorArgs, report: &mut Report) {
    let Some(resolved) = check_config(args, report) else {
        return;
    };
    let endpoint = check_api_key(&resolved, report);
    let ctx = Ctx {
        profile_name: &resolved.profile_name,
        api_key_env: resolved.profile.api_key_env.as_deref(),
        base_url: &resolved.profile.base_url,
    };
    check_server(&endpoint, &ctx, report).await;
    check_tools(&resolved.tools, report);
    check_sandbox(&resolved, report);
    check_mcp_servers(&resolved, report).await;
}

/// What this kernel's sandbox enforces. A tool or stdio server asking for more is a warning,
/// not a failure: the config is right, and the tool refuses to run rather than run loose.
fn check_sandbox(resolved: &Resolved, report: &mut Report) {
    use kimi_core::tools::sandbox::{check, support};
    let support = support();
    let wanted = resolved
        .tools
        .iter()
        .map(|t| (format!("tool {}", t.name), t.sandbox_policy()))
        .chain(
            resolved
                .mcp_servers
                .iter()
                .map(|s| (format!("MCP server {}", s.name), s.sandbox_policy())),
        );
    let refused: Vec<(String, String)> = wanted
        .filter_map(|(what, policy)| {
            check(policy, support)
                .err()
                .map(|why| (what, why.to_string()))
        })
        .collect();
    if refused.is_empty() {
        report.pass("sandbox", &support.summary());
        return;
    }
    report.line(&format!("! sandbox: {}", support.summary()));
    for (what, why) in refused {
        report.warn(
            &what,
            &format!("will not run here: {why}"),
            Some("run kimi-tui on a kernel with Landlock (Linux 6.2+ for sandbox, 6.7+ for network = false), or remove its sandbox and network settings (it then runs with your full rights)"),
        );
    }
}

/// Check 7: each MCP server starts (all at once, each within its `startup_timeout_secs`) and
/// lists its tools; a failure says why, with the end of the server's stderr.
async fn check_mcp_servers(resolved: &Resolved, report: &mut Report) {
    use kimi_core::tools::mcp::{McpHub, ServerStatus};
    if resolved.mcp_servers.is_empty() {
        return;
    }
    let wait = resolved
        .mcp_servers
        .iter()
        .map(|s| s.startup_timeout_secs)
        .max()
        .unwrap_or(30);
    let local = resolved.tools.iter().map(|t| t.name.clone());
    let hub = McpHub::new(resolved.mcp_servers.clone(), local);
    hub.start();
    hub.wait_started(std::time::Duration::from_secs(wait + 1))
        .await;
    let specs = hub.specs();
    for (r, config) in hub.reports().into_iter().zip(&resolved.mcp_servers) {
        let what = format!("MCP server {}", r.name);
        match &r.status {
            ServerStatus::Ready => {
                let tools: Vec<String> = r
                    .tools
                    .iter()
                    .map(|name| match specs.iter().find(|s| s.name == *name) {
                        Some(spec) => format!("{name} ({})", approval_name(spec.approval)),
                        None => name.clone(),
                    })
                    .collect();
                let listed = if tools.is_empty() {
                    "no tools offered".to_owned()
                } else {
                    tools.join(", ")
                };
                let version = r.version.as_deref().map(one_line).unwrap_or_default();
                report.pass(
                    &what,
                    &format!(
                        "{version}{}{} tools: {listed}; {} resources, {} prompts{}",
                        if version.is_empty() { "" } else { "; " },
                        r.tools.len(),
                        r.resources.len(),
                        r.prompts.len(),
                        if r.instructions.is_some() {
                            "; has instructions (see /mcp)"
                        } else {
                            ""
                        }
                    ),
                );
                for skipped in &r.skipped {
                    report.warn(&what, &format!("not offered: {}", one_line(skipped)), None);
                }
            }
            ServerStatus::Failed(why) => {
                let tail: Vec<&str> = r.stderr_tail.trim_end().lines().collect();
                let from = tail.len().saturating_sub(5);
                let stderr = if tail.is_empty() {
                    String::new()
                } else {
                    format!(
                        "\n  stderr: {}",
                        tail[from..]
                            .iter()
                            .map(|l| one_line(l))
                            .collect::<Vec<_>>()
                            .join("\n          ")
                    )
                };
                let fix = if config.url.is_some() {
                    "check `url` (and `bearer_token_env`) in its [[mcp_servers]] entry, and that the server is up"
                } else {
                    "run its `command` by hand to see it start; check the program is installed (npx needs node and npm), or raise startup_timeout_secs"
                };
                // The whole cause: a cut-off error hides what to fix.
                report.fail(&what, &format!("{}{stderr}", whole_line(why)), fix);
            }
            ServerStatus::Starting | ServerStatus::Stopped => {
                report.fail(
                    &what,
                    "did not finish starting",
                    "raise startup_timeout_secs",
                );
            }
        }
    }
    hub.close(std::time::Duration::from_secs(3)).await;
}

/// Check 1: the config file and the profile.
fn check_config(args: &DoctorArgs, report: &mut Report) -> Option<Resolved> {
    match config::resolve(&args.connect.overrides()) {
        Ok(r) => {
            let source = match &r.config_path {
                Some(p) => p.display().to_string(),
                None => "no config file (command-line flags)".to_owned(),
            };
            let p = &r.profile;
            report.pass(
                "config",
                &format!(
                    "{source}; profile `{}`: {} mode, {}, model {}",
                    r.profile_name,
                    p.mode.as_str(),
                    redact_url(&p.base_url),
                    p.model
                ),
            );
            if !p.base_url.trim_end_matches('/').ends_with("/v1") {
                report.warn(
                    "base_url",
                    &format!("{} does not end in /v1", redact_url(&p.base_url)),
                    Some("OpenAI-compatible servers (vLLM, SGLang, Moonshot) serve under /v1, e.g. http://127.0.0.1:8000/v1"),
                );
            }
            Some(r)
        }
        Err(e) => {
            let text = format!("{e:#}");
            let fix = match &e {
                ResolveError::Config(c) if c.message.starts_with("cannot read") => {
                    "check the path, or create the file with `kimi-tui config init --config PATH`"
                }
                ResolveError::Config(_) => {
                    "correct the file at the place named above; config.example.toml (`kimi-tui config init` writes it) documents every key"
                }
                ResolveError::NoConfig { .. } => {
                    "run `kimi-tui config init` to write an example config there and edit it, or pass --config PATH or --base-url URL"
                }
                ResolveError::Profile { .. } => {
                    "choose a profile with --profile NAME, or set default_profile in the config"
                }
                ResolveError::BaseUrl(_) => "pass --base-url as http://HOST:PORT/v1",
            };
            report.fail("config", &one_line(&text), fix);
            report.warn("other checks", "not run (they need a working config)", None);
            None
        }
    }
}

/// Check 1b: the API key variable. Returns the endpoint to use (without a key when it is
/// missing, so that the server checks still say what the server thinks).
fn check_api_key(r: &Resolved, report: &mut Report) -> Endpoint {
    let profile = &r.profile;
    match profile.endpoint() {
        Ok(ep) => {
            match &profile.api_key_env {
                Some(var) => report.pass("API key", &format!("${var} is set")),
                None => report.pass(
                    "API key",
                    "none configured (no api_key_env; fine for a local server)",
                ),
            }
            ep
        }
        Err(e) => {
            let var = profile.api_key_env.as_deref().unwrap_or("the variable");
            report.fail(
                "API key",
                &e.to_string(),
                &format!(
                    "export {var}=<your key> before starting kimi-tui (the key is never stored in the config file)"
                ),
            );
            let mut keyless = profile.clone();
            keyless.api_key_env = None;
            keyless
                .endpoint()
                .unwrap_or_else(|_| Endpoint::new(profile.mode, &profile.base_url, &profile.model))
        }
    }
}

/// Checks 2 to 5.
async fn check_server(ep: &Endpoint, ctx: &Ctx<'_>, report: &mut Report) {
    let mode_check = match ep.mode {
        Mode::Raw => "special tokens",
        Mode::Chat => "tool calls",
    };
    let backend = match Backend::new(ep.clone()) {
        Ok(b) => b,
        Err(e) => {
            report.fail("server", &e.to_string(), "see the message above");
            return;
        }
    };
    let (models, total) = match backend.list_models(&[]).await {
        Ok(list) => {
            let total = list.total();
            report.pass(
                "server",
                &format!(
                    "{}/models answered ({} model{})",
                    ep.base_url,
                    total,
                    if total == 1 { "" } else { "s" }
                ),
            );
            let ids: Vec<String> = list.models.into_iter().map(|m| m.id).collect();
            (ids, total)
        }
        Err(e) => {
            report.fail(
                "server",
                &one_line(&e.what_failed()),
                &fix_for(&e, ctx, None),
            );
            report.warn("model", "not checked (the server did not answer)", None);
            report.warn(mode_check, "not checked (the server did not answer)", None);
            return;
        }
    };

    // Check 3.
    if models.contains(&ep.model) {
        report.pass("model", &format!("{} is served", ep.model));
    } else if models.is_empty() {
        report.warn(
            "model",
            &format!(
                "the server listed no models, so {} cannot be confirmed",
                ep.model
            ),
            None,
        );
    } else {
        const SHOWN: usize = 10;
        let mut listed = models
            .iter()
            .take(SHOWN)
            .map(|m| one_line(m))
            .collect::<Vec<_>>()
            .join(", ");
        if total > SHOWN {
            listed.push_str(&format!(", … ({total} in all)"));
        }
        report.fail(
            "model",
            &format!(
                "{} is not served; the server lists: {listed}",
                one_line(&ep.model)
            ),
            &format!(
                "set model = \"{}\" in profile `{}` (or pass --model)",
                one_line(&models[0]),
                ctx.profile_name
            ),
        );
        report.warn(mode_check, "not checked (fix the model name first)", None);
        return;
    }

    check_family(ep, report);
    match (ep.mode, ep.template() == kimi_protocol::Template::K3) {
        (Mode::Raw, true) => k3_checks::raw(ep, ctx, report).await,
        (Mode::Chat, true) => k3_checks::chat(ep, ctx, report).await,
        (Mode::Raw, false) => check_raw(ep, ctx, report).await,
        (Mode::Chat, false) => check_chat(ep, ctx, report).await,
    }
}

/// Check 3b: which member of the K2 family this is, and the template raw mode renders.
fn check_family(ep: &Endpoint, report: &mut Report) {
    use kimi_protocol::family::{Model, Template};
    let template = ep.template();
    let chosen = if ep.template.is_some() {
        "set by the profile's `template`"
    } else {
        "chosen from the model name"
    };
    if Model::classify(&ep.model) == Model::K3 && template.is_k2() {
        report.warn(
            "model family",
            &format!(
                "{} is Kimi K3, but the profile's template is {}: raw mode refuses to send it a K2 prompt",
                one_line(&ep.model),
                template.as_str()
            ),
            Some("remove `template` from the profile (or set template = \"k3\")"),
        );
        return;
    }
    let kind = match template {
        Template::K2Instruct => "not a thinking model".to_owned(),
        Template::K2Thinking => "thinking model (always thinks)".to_owned(),
        Template::K25 | Template::K26 if ep.thinking == Some(false) => {
            "thinking model, thinking off (thinking = false)".to_owned()
        }
        Template::K25 | Template::K26 => "thinking model (thinking on)".to_owned(),
        Template::K3 => "Kimi K3 (XTML prompt format; always thinks on Moonshot's API)".to_owned(),
    };
    report.pass(
        "model family",
        &format!(
            "{kind}; raw mode renders the {} template ({chosen})",
            template.as_str()
        ),
    );
}

/// A thinking model's probe: room for its reasoning, and no temperature where Moonshot fixes
/// it (K2.5/K2.6 on its API reject a changed one).
fn thinking_probe(ep: &Endpoint, mut body: Value) -> Value {
    use kimi_protocol::family::Template;
    if ep.thinks() {
        body["max_tokens"] = json!(4096);
        if kimi_client::is_moonshot(&ep.base_url)
            && matches!(ep.template(), Template::K25 | Template::K26)
            && let Some(o) = body.as_object_mut()
        {
            o.remove("temperature");
        }
    }
    body
}

/// Check 5b (thinking models, chat mode): does the server split the reasoning itself?
fn check_reasoning(message: &Value, report: &mut Report) {
    let field = ["reasoning_content", "reasoning"].into_iter().find(|k| {
        message
            .get(*k)
            .and_then(Value::as_str)
            .is_some_and(|r| !r.is_empty())
    });
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match field {
        Some(f) => report.pass(
            "reasoning",
            &format!("the server's reasoning parser is on (reasoning arrives in `{f}`)"),
        ),
        None if content.contains("</think>") || content.starts_with("<think>") => report.warn(
            "reasoning",
            "the server's reasoning parser is off: the reasoning came in content with <think>              tags (kimi-tui splits it and warns each turn)",
            Some(
                "start vLLM or SGLang with --reasoning-parser kimi_k2 (with the tool parser as before)",
            ),
        ),
        None => report.warn(
            "reasoning",
            "the answer carried no reasoning (neither reasoning_content nor reasoning, nor              <think> in content)",
            None,
        ),
    }
}

/// The tool both generation checks declare.
fn weather_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get weather information for a city",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {"city": {"type": "string", "description": "City name"}}
            }
        }
    })
}

/// The prompt of the raw check: a rendered conversation with one tool and a user message, and
/// the start of the assistant's tool call, stopped inside the call's arguments. Any Kimi K2
/// continues it by closing the call with special tokens.
pub fn raw_probe_prompt(sort_tool_keys: bool) -> String {
    let mut prompt = render(
        &[Message::user("What's the weather in Beijing?")],
        &[weather_tool()],
        RenderOptions {
            add_generation_prompt: true,
            sort_tool_keys,
            ..Default::default()
        },
    );
    prompt.push_str(TOOL_CALLS_SECTION_BEGIN);
    prompt.push_str(TOOL_CALL_BEGIN);
    prompt.push_str("functions.get_weather:0");
    prompt.push_str(TOOL_CALL_ARGUMENT_BEGIN);
    prompt.push_str("{\"city\": \"Beijing\"}");
    prompt
}

/// Check 4: special tokens survive in completion text.
async fn check_raw(ep: &Endpoint, ctx: &Ctx<'_>, report: &mut Report) {
    const WHAT: &str = "special tokens";
    let body = json!({
        "model": ep.model,
        "prompt": raw_probe_prompt(ep.sort_tool_keys),
        "max_tokens": 16,
        "temperature": 0,
        "stream": true,
        "skip_special_tokens": false,
        "spaces_between_special_tokens": false,
    });
    let answer = match probe::post_streamed(ep, "completions", &body).await {
        Ok(v) => v,
        Err(e) => {
            report.fail(
                WHAT,
                &one_line(&e.what_failed()),
                &fix_for(&e, ctx, Some(Mode::Raw)),
            );
            return;
        }
    };
    let Some(text) = answer.pointer("/choices/0/text").and_then(Value::as_str) else {
        report.fail(
            WHAT,
            &format!(
                "the answer to POST {}/completions has no choices[0].text: {}",
                ep.base_url,
                one_line(&answer.to_string())
            ),
            "use a server with an OpenAI-compatible /v1/completions endpoint (vLLM, SGLang), or mode = \"chat\"",
        );
        return;
    };
    match first_marker(text) {
        Some(marker) => report.pass(
            WHAT,
            &format!("kept in completion text (the model closed the call with {marker})"),
        ),
        None => report.fail(
            WHAT,
            &format!(
                "special tokens are stripped: the server ignores skip_special_tokens=false (it answered {:?})",
                one_line(text)
            ),
            "use a vLLM/SGLang version that honours skip_special_tokens=false, or set mode = \"chat\" with the server's kimi_k2 tool parser",
        ),
    }
}

/// Check 5: the server parses tool calls into `tool_calls`.
async fn check_chat(ep: &Endpoint, ctx: &Ctx<'_>, report: &mut Report) {
    const WHAT: &str = "tool calls";
    let body = json!({
        "model": ep.model,
        "messages": [{"role": "user", "content": CHAT_QUESTION}],
        "tools": [weather_tool()],
        "max_tokens": 256,
        "temperature": 0,
        "stream": true,
    });
    let body = thinking_probe(ep, body);
    let answer = match probe::post_streamed(ep, "chat/completions", &body).await {
        Ok(v) => v,
        Err(e) => {
            report.fail(
                WHAT,
                &one_line(&e.what_failed()),
                &fix_for(&e, ctx, Some(Mode::Chat)),
            );
            return;
        }
    };
    let Some(message) = answer.pointer("/choices/0/message") else {
        report.fail(
            WHAT,
            &format!(
                "the answer to POST {}/chat/completions has no choices[0].message: {}",
                ep.base_url,
                one_line(&answer.to_string())
            ),
            "use an OpenAI-compatible server (vLLM, SGLang, the Moonshot API)",
        );
        return;
    };
    if ep.thinks() {
        check_reasoning(message, report);
    }
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Some(call) = calls.first() {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let args = call
            .pointer("/function/arguments")
            .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
            .unwrap_or_default();
        report.pass(
            WHAT,
            &format!(
                "parsed by the server ({} {})",
                one_line(name),
                one_line(&args)
            ),
        );
    } else if content.contains("<|tool_call") {
        report.fail(
            WHAT,
            &format!(
                "the server's tool parser is off: the call came back as marker text in content ({:?})",
                one_line(content)
            ),
            "start vLLM with --enable-auto-tool-choice --tool-call-parser kimi_k2 (SGLang: --tool-call-parser kimi_k2), or use mode = \"raw\"",
        );
    } else {
        report.fail(
            WHAT,
            &format!(
                "the model did not call the tool; it answered {:?}",
                one_line(content)
            ),
            &format!(
                "run doctor again; if it persists, check that model `{}` is a Kimi K2 model and that the server parses tool calls (vLLM: --enable-auto-tool-choice --tool-call-parser kimi_k2)",
                ep.model
            ),
        );
    }
}

/// What to do about a failed request.
fn fix_for(e: &BackendError, ctx: &Ctx<'_>, stage: Option<Mode>) -> String {
    let profile = ctx.profile_name;
    match e {
        BackendError::Connect { .. } => format!(
            "start the model server (vLLM: `{VLLM_COMMAND}`), or correct base_url in profile `{profile}` (now {})",
            redact_url(ctx.base_url)
        ),
        BackendError::Timeout { secs, .. } => format!(
            "the server did not answer within {secs} s: check that it is up and not overloaded, or raise idle_timeout_secs in profile `{profile}`"
        ),
        BackendError::Http {
            status, message, ..
        } => match status {
            401 | 403 => match ctx.api_key_env {
                Some(var) => format!("check the API key in ${var}: the server refused it"),
                None => format!(
                    "the server wants an API key: set api_key_env = \"VAR\" in profile `{profile}` and export VAR=<your key>"
                ),
            },
            404 if stage == Some(Mode::Raw) => format!(
                "check base_url in profile `{profile}` (it should end in /v1) and the model name; a server without /v1/completions (the Moonshot API) needs mode = \"chat\""
            ),
            404 => format!(
                "check base_url in profile `{profile}` (it should end in /v1, e.g. http://127.0.0.1:8000/v1) and the model name"
            ),
            429 => "the server is rate-limiting: wait and run doctor again".to_owned(),
            400 if stage == Some(Mode::Chat) && message.to_lowercase().contains("tool") => {
                "start vLLM with --enable-auto-tool-choice --tool-call-parser kimi_k2 (SGLang: --tool-call-parser kimi_k2)".to_owned()
            }
            400 => format!(
                "the server rejected the request: check that it serves this model on this endpoint, or switch profile `{profile}` to the other mode"
            ),
            s if *s >= 500 => {
                "the server failed: look at its log (out of memory? still loading the model?)".to_owned()
            }
            _ => "see the server's message above".to_owned(),
        },
        BackendError::Dropped { .. } | BackendError::ServerEvent { .. } => {
            "the server broke off its answer: look at its log".to_owned()
        }
        BackendError::Setup(_) => format!("correct base_url in profile `{profile}`"),
        BackendError::NotEventStream { .. } => format!(
            "base_url in profile `{profile}` reaches something that is not the model server (a proxy's login page?): point it at the server itself"
        ),
        BackendError::Redirected { .. } => format!(
            "set base_url in profile `{profile}` to the address the server redirects to, if you trust it"
        ),
        BackendError::Unreadable { .. } => {
            "the server's answer cannot be read as events: look at its log".to_owned()
        }
    }
}

/// The first `<|name|>` marker in `text` (lowercase letters and `_` between the bars).
pub fn first_marker(text: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(off) = text[from..].find("<|") {
        let start = from + off;
        let rest = &text[start + 2..];
        let name_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || *b == b'_')
            .count();
        if name_len > 0 && rest[name_len..].starts_with("|>") {
            return Some(&text[start..start + 2 + name_len + 2]);
        }
        from = start + 2;
    }
    None
}

/// Check 6: each tool's program exists and is executable.
fn check_tools(tools: &[ToolSpec], report: &mut Report) {
    if tools.is_empty() {
        report.pass("tools", "none declared");
        return;
    }
    let here = std::env::current_dir().ok();
    for spec in tools {
        let what = format!("tool {}", spec.name);
        match locate_program(spec, here.as_deref()) {
            Ok(path) => report.pass(
                &what,
                &format!(
                    "{} (approval {})",
                    path.display(),
                    approval_name(spec.approval)
                ),
            ),
            Err((problem, fix)) => report.fail(&what, &problem, &fix),
        }
    }
}

fn approval_name(a: kimi_core::tools::Approval) -> &'static str {
    match a {
        kimi_core::tools::Approval::Ask => "ask",
        kimi_core::tools::Approval::Auto => "auto",
        kimi_core::tools::Approval::Deny => "deny",
    }
}

/// Where the runner will find `command[0]`, resolved the same way: a relative path with a `/`
/// against `cwd` if set (itself taken from the current directory when relative), else against
/// the current directory; a bare name on `PATH`. The error is (problem, fix).
fn locate_program(spec: &ToolSpec, here: Option<&Path>) -> Result<PathBuf, (String, String)> {
    let program = spec.command.first().map(String::as_str).unwrap_or_default();
    let name = &spec.name;
    let cwd = match &spec.cwd {
        None => None,
        Some(dir) => {
            let abs = match here {
                Some(h) if dir.is_relative() => h.join(dir),
                _ => dir.clone(),
            };
            if !abs.is_dir() {
                return Err((
                    format!(
                        "the working directory {} does not exist or is not a directory",
                        abs.display()
                    ),
                    format!("create it, or correct `cwd` of tool `{name}`"),
                ));
            }
            Some(abs)
        }
    };
    let path = Path::new(program);
    if !program.contains('/') {
        let found = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(program))
                .find(|p| is_executable_file(p))
        });
        return found.ok_or_else(|| {
            (
                format!("`{program}` is not found on PATH"),
                format!(
                    "install it, or give command[0] of tool `{name}` as a path (e.g. \"/usr/bin/{program}\" or \"./tools/{program}\")"
                ),
            )
        });
    }
    let base = cwd.as_deref().or(here);
    // `./x.sh` from `/dir` is shown as `/dir/x.sh`.
    let tidy: PathBuf = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    let full = match base {
        Some(b) if path.is_relative() => b.join(tidy),
        _ => path.to_path_buf(),
    };
    let from = match (&cwd, path.is_relative()) {
        (_, false) => String::new(),
        (Some(_), true) => " (relative paths are taken from the tool's cwd)".to_owned(),
        (None, true) => {
            " (relative paths are taken from the directory kimi-tui runs in)".to_owned()
        }
    };
    match std::fs::metadata(&full) {
        Err(_) => Err((
            format!("`{program}` not found: no file at {}{from}", full.display()),
            format!(
                "correct command[0] of tool `{name}`, use an absolute path, or run kimi-tui from the directory it is relative to"
            ),
        )),
        Ok(m) if m.is_dir() => Err((
            format!("`{program}` is a directory ({})", full.display()),
            format!("point command[0] of tool `{name}` at the program file"),
        )),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => Err((
            format!("`{program}` is not executable ({})", full.display()),
            format!("chmod +x {}", full.display()),
        )),
        Ok(_) => Ok(full),
    }
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Server or model text on one terminal-safe line, at most 200 characters.
fn one_line(text: &str) -> String {
    capped_line(text, 200)
}

/// An error kept whole on one line (up to a size no real cause chain reaches).
fn whole_line(text: &str) -> String {
    capped_line(text, 4000)
}

fn capped_line(text: &str, max: usize) -> String {
    let clean = kimi_protocol::sanitize::for_terminal(text);
    let joined = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &joined[..i]),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_found() {
        assert_eq!(
            first_marker("x<|tool_call_end|><|tool_calls_section_end|>"),
            Some("<|tool_call_end|>")
        );
        assert_eq!(first_marker("a <| b |> <|Bad|> <||>"), None);
        assert_eq!(first_marker("<|<|im_end|>"), Some("<|im_end|>"));
        assert_eq!(first_marker(""), None);
    }

    #[test]
    fn the_raw_prompt_ends_inside_a_call() {
        let p = raw_probe_prompt(false);
        assert!(p.starts_with("<|im_system|>tool_declare<|im_middle|>[{\"type\":\"function\""));
        assert!(p.ends_with(
            "<|im_assistant|>assistant<|im_middle|><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\"}"
        ));
        assert!(kimi_mock::prompt::ends_inside_call(&p));
    }

    #[test]
    fn one_line_is_safe_and_short() {
        assert_eq!(one_line("a\n\x1b[31mb\tc"), "a b c");
        assert_eq!(one_line(&"x".repeat(300)).chars().count(), 201);
    }
}
