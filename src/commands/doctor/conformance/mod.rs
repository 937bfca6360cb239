//! `kimi-tui doctor --conformance`: send a built-in set of requests to the profile's endpoint
//! in its mode, through the client's own streaming code (and each once more non-streamed), and
//! score what came back. The runner here only records; `checks` judges the record, `report`
//! prints it.

pub mod checks;
pub mod record;
pub mod report;
pub mod requests;
#[cfg(test)]
mod tests;

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use kimi_client::{Backend, Endpoint, probe};
use kimi_core::config;
use kimi_protocol::{Message, Mode, StreamEvent, Template, render};

use crate::cli::DoctorArgs;
use record::{Answer, Exchange, Recorded};
use requests::Request;

pub fn run(args: &DoctorArgs) -> Result<()> {
    let resolved = config::resolve(&args.connect.overrides()).map_err(anyhow::Error::new)?;
    let mut ep = resolved
        .profile
        .endpoint()
        .context("the profile's API key")?;
    // The same request twice must give the same answer for the two to be compared.
    ep.temperature = 0.0;
    ep.temperature_set = true;
    if ep.mode == Mode::Raw {
        // Token ids show whether each marker is one special token.
        ep.logprobs = ep.logprobs.max(1);
    }
    let rounds = args.rounds.max(1) as usize;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let backend = Backend::new(ep.clone())?;
    let rec = runtime.block_on(record(&backend, rounds));
    let results = checks::run_all(&rec);
    let timings = report::timings(&rec);
    let header = report::Header {
        base_url: &ep.base_url,
        mode: ep.mode.as_str(),
        model: &ep.model,
    };
    let text = if args.json {
        format!("{}\n", report::json(&header, &results, &timings, rounds))
    } else {
        report::table(&header, &results, &timings, rounds)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    let failed = results
        .iter()
        .filter(|r| r.status == checks::Status::Fail)
        .count();
    match failed {
        0 => Ok(()),
        1 => anyhow::bail!("1 conformance check failed"),
        n => anyhow::bail!("{n} conformance checks failed"),
    }
}

/// Send the set `rounds` times and record every answer.
async fn record(backend: &Backend, rounds: usize) -> Recorded {
    let ep = backend.endpoint();
    let mut rec = Recorded {
        mode: ep.mode,
        model: ep.model.clone(),
        thinks: ep.thinks(),
        asked_token_ids: ep.mode == Mode::Raw && ep.logprobs > 0,
        exchanges: Vec::new(),
    };
    let tools = requests::tools();
    for round in 1..=rounds {
        for req in requests::first_round(ep.thinks()) {
            let (x, answer) = exchange(backend, &req, &tools, round).await;
            let second = (req.name == requests::WEATHER && !answer.tool_calls.is_empty())
                .then(|| requests::tool_result_round(&req.messages, answer));
            rec.exchanges.push(x);
            if let Some(second) = second {
                rec.exchanges
                    .push(exchange(backend, &second, &tools, round).await.0);
            }
        }
    }
    rec
}

/// One request streamed through the client, then the same body again non-streamed. Returns
/// the record and the assistant message the client made of the streamed answer.
async fn exchange(
    backend: &Backend,
    req: &Request,
    tools: &[Value],
    round: usize,
) -> (Exchange, Message) {
    let ep = backend.endpoint();
    let cancel = CancellationToken::new();
    let (events, result) = backend
        .stream_turn(&req.messages, tools, &cancel)
        .events_and_result()
        .await;
    let streamed = Answer::from_turn(ep.mode, &events, &result);
    // The last request sent: the client sends again without `logprobs` when they are refused.
    let sent = events.iter().rev().find_map(|e| match e {
        StreamEvent::Request(r) => Some(r),
        _ => None,
    });
    let plain = match sent {
        Some(sent) if streamed.error.is_none() => non_streamed(ep, &sent.body).await,
        _ => None,
    };
    let rendered_bytes = match sent.and_then(|s| s.prompt.as_ref()) {
        Some(prompt) => prompt.len(),
        None => rendered_len(ep, &req.messages, tools),
    };
    let x = Exchange {
        request: req.name.to_owned(),
        round,
        tools: tools.to_vec(),
        expect: req.expect,
        rendered_bytes,
        streamed,
        plain,
    };
    (x, result.assistant_message())
}

/// The non-streamed twin of a streamed request. Raw Kimi K3 completions are left out: this
/// client parses them only as a stream.
async fn non_streamed(ep: &Endpoint, body: &Value) -> Option<Answer> {
    let (path, raw) = match ep.mode {
        Mode::Raw if ep.template() == Template::K3 => return None,
        Mode::Raw => ("completions", true),
        Mode::Chat => ("chat/completions", false),
    };
    Some(match probe::post_plain(ep, path, body).await {
        Ok(v) if raw => Answer::from_completion(&v, ep.raw_render_options().ends_in_reasoning()),
        Ok(v) => Answer::from_chat_message(&v),
        Err(e) => Answer {
            error: Some(e.to_string()),
            ..Answer::default()
        },
    })
}

/// Bytes of the prompt this client would render for `messages` (chat mode: what the server's
/// own render should resemble).
fn rendered_len(ep: &Endpoint, messages: &[Message], tools: &[Value]) -> usize {
    if ep.template() == Template::K3 {
        return kimi_protocol::k3::render_messages(messages, tools, &ep.k3_render_options())
            .map_or(0, |p| p.len());
    }
    render(messages, tools, ep.raw_render_options()).len()
}
