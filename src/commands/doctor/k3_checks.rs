//! The generation checks for a Kimi K3 model. Raw mode: the real request (the XTML prompt with
//! a tool, token ids asked for) through the real parser, then whether the structural tokens
//! came back as the single tokens 163586-163589 or spelled from ordinary ones. Chat mode:
//! whether the server runs K3's tool and reasoning parsers.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{CHAT_QUESTION, Ctx, Report, fix_for, one_line, weather_tool};
use kimi_client::{Backend, Endpoint, probe};
use kimi_protocol::k3;
use kimi_protocol::{Message, Mode, StreamEvent, TokenLogprob};

/// The id each structural token must come back as.
const IDS: [(&str, u32); 4] = [
    (k3::END_OF_MSG, 163_586),
    (k3::OPEN, 163_587),
    (k3::CLOSE, 163_588),
    (k3::SEP, 163_589),
];

/// What the tokens of an answer say about its structural tokens.
#[derive(Debug, PartialEq)]
enum TokenVerdict {
    /// No token data came (the server does not send ids).
    Unknown,
    /// Every structural string in the text came as its own single token.
    Single(usize),
    /// These came spelled from ordinary tokens (the string, and the ids that made it).
    Spelled(Vec<(String, Vec<u32>)>),
    /// The text had no structural string at all.
    None,
}

fn verdict(tokens: &[TokenLogprob]) -> TokenVerdict {
    if tokens.is_empty() || tokens.iter().all(|t| t.id.is_none()) {
        return TokenVerdict::Unknown;
    }
    let text: String = tokens.iter().map(|t| t.text.as_str()).collect();
    let mut starts = Vec::with_capacity(tokens.len());
    let mut at = 0;
    for t in tokens {
        starts.push(at);
        at += t.text.len();
    }
    let mut single = 0;
    let mut spelled = Vec::new();
    for (s, id) in IDS {
        for (pos, _) in text.match_indices(s) {
            let first = starts.partition_point(|&p| p <= pos).saturating_sub(1);
            let one = tokens[first].text == s && starts[first] == pos;
            if one && tokens[first].id == Some(id) {
                single += 1;
                continue;
            }
            let end = pos + s.len();
            let ids = (first..tokens.len())
                .take_while(|&i| starts[i] < end)
                .filter_map(|i| tokens[i].id)
                .collect();
            spelled.push((s.to_owned(), ids));
        }
    }
    match (single, spelled.is_empty()) {
        (0, true) => TokenVerdict::None,
        (n, true) => TokenVerdict::Single(n),
        (_, false) => TokenVerdict::Spelled(spelled),
    }
}

/// Raw mode: the XTML round trip, and how the structural tokens came back.
pub(super) async fn raw(ep: &Endpoint, ctx: &Ctx<'_>, report: &mut Report) {
    let mut ep = ep.clone();
    ep.logprobs = ep.logprobs.max(1);
    ep.max_tokens = 2048;
    let backend = match Backend::new(ep.clone()) {
        Ok(b) => b,
        Err(e) => {
            report.fail("K3 raw round", &one_line(&e.to_string()), "see above");
            return;
        }
    };
    let mut tokens = Vec::new();
    let mut warnings = Vec::new();
    let (messages, tools, cancel) = (
        [Message::user(CHAT_QUESTION)],
        [weather_tool()],
        CancellationToken::new(),
    );
    let (events, result) = backend
        .stream_turn(&messages, &tools, &cancel)
        .events_and_result()
        .await;
    for e in events {
        match e {
            StreamEvent::Tokens(t) => tokens.extend(t),
            StreamEvent::Warning(w) => warnings.push(w),
            _ => {}
        }
    }
    if let Some(e) = &result.error {
        report.fail(
            "K3 raw round",
            &one_line(&e.to_string()),
            &fix_for(e, ctx, Some(Mode::Raw)),
        );
        return;
    }
    match result.tool_calls.first() {
        Some(call) => report.pass(
            "K3 raw round",
            &format!(
                "the XTML answer parsed: {} {}",
                one_line(&call.function.name),
                one_line(&call.function.arguments)
            ),
        ),
        None => report.warn(
            "K3 raw round",
            &format!(
                "the model did not call the tool; it answered {:?}",
                one_line(&result.content)
            ),
            None,
        ),
    }
    if !warnings.is_empty() {
        report.warn(
            "K3 answer shape",
            &format!("irregular: {}", one_line(&warnings.join("; "))),
            Some("the server may be cutting or re-spelling markers; open the inspector (Tab, then t) on a real turn"),
        );
    }
    match verdict(&tokens) {
        TokenVerdict::Single(n) => report.pass(
            "special tokens",
            &format!("{n} structural tokens came back as single tokens with K3's ids (163586-163589)"),
        ),
        TokenVerdict::Spelled(list) => {
            let shown: Vec<String> = list
                .iter()
                .take(3)
                .map(|(s, ids)| format!("{s} as ids {ids:?}"))
                .collect();
            report.fail(
                "special tokens",
                &format!(
                    "{} structural token(s) came spelled from ordinary tokens: {}",
                    list.len(),
                    shown.join(", ")
                ),
                "the server's tokenizer does not treat K3's structural strings as tokens: serve the model with Moonshot's K3 tokenizer (trust_remote_code), not a converted one",
            );
        }
        TokenVerdict::None => report.fail(
            "special tokens",
            "no structural token came back in the completion text",
            "send skip_special_tokens=false (kimi-tui does) to a server that honours it, or use mode = \"chat\" with the server's kimi_k3 parsers",
        ),
        TokenVerdict::Unknown => report.warn(
            "special tokens",
            "the server sent no token ids, so single tokens cannot be told from spelled ones",
            Some("vLLM sends them with return_tokens_as_token_ids (kimi-tui asks for it)"),
        ),
    }
}

/// Chat mode: does the server run K3's tool and reasoning parsers?
pub(super) async fn chat(ep: &Endpoint, ctx: &Ctx<'_>, report: &mut Report) {
    let body = serde_json::json!({
        "model": ep.model,
        "messages": [{"role": "user", "content": CHAT_QUESTION}],
        "tools": [weather_tool()],
        "max_tokens": 4096,
        "stream": true,
    });
    let answer = match probe::post_streamed(ep, "chat/completions", &body).await {
        Ok(v) => v,
        Err(e) => {
            report.fail(
                "tool calls",
                &one_line(&e.to_string()),
                &fix_for(&e, ctx, Some(Mode::Chat)),
            );
            return;
        }
    };
    let message = answer
        .pointer("/choices/0/message")
        .cloned()
        .unwrap_or_default();
    let content = message.get("content").and_then(Value::as_str).unwrap_or("");
    let reasoning = ["reasoning_content", "reasoning"].into_iter().find(|k| {
        message
            .get(*k)
            .and_then(Value::as_str)
            .is_some_and(|r| !r.is_empty())
    });
    let markers = k3::STRUCTURAL.iter().any(|m| content.contains(m));
    let fix = "start vLLM with --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 --enable-auto-tool-choice (SGLang: the kimi_k3 parsers); kimi-tui meanwhile parses K3 markers in content itself";
    match reasoning {
        Some(f) => report.pass(
            "reasoning",
            &format!("the server's kimi_k3 reasoning parser is on (reasoning arrives in `{f}`)"),
        ),
        None if markers => report.warn("reasoning", "the server's reasoning parser is off: K3's think channel came in content", Some(fix)),
        None => report.warn(
            "reasoning",
            "the answer carried no reasoning (K3 always thinks): the server may put it in content (a known fault of hosted K3)",
            None,
        ),
    }
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    match calls.first() {
        Some(call) => {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or("?");
            report.pass(
                "tool calls",
                &format!("parsed by the server's kimi_k3 tool parser ({} {})", one_line(name), one_line(id)),
            );
        }
        None if markers => report.fail(
            "tool calls",
            &format!("the server's tool parser is off: K3 markers came back in content ({:?})", one_line(content)),
            fix,
        ),
        None => report.fail(
            "tool calls",
            &format!("the model did not call the tool; it answered {:?}", one_line(content)),
            "run doctor again; if it persists, check the server parses K3 tool calls (vLLM: --tool-call-parser kimi_k3)",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(text: &str, id: u32) -> TokenLogprob {
        TokenLogprob {
            id: Some(id),
            text: text.to_owned(),
            logprob: Some(-0.1),
            top: Vec::new(),
        }
    }

    #[test]
    fn single_and_spelled_tokens_are_told_apart() {
        let single = [
            tok("hi", 10),
            tok("<|close|>", 163_588),
            tok("think", 39964),
            tok("<|sep|>", 163_589),
        ];
        assert_eq!(verdict(&single), TokenVerdict::Single(2));
        let spelled = [
            tok("hi", 10),
            tok("<|", 5),
            tok("close", 6),
            tok("|>", 7),
            tok("think", 39964),
            tok("<|sep|>", 163_589),
        ];
        assert_eq!(
            verdict(&spelled),
            TokenVerdict::Spelled(vec![("<|close|>".to_owned(), vec![5, 6, 7])])
        );
        // The right text with the wrong id is spelled too.
        assert!(matches!(
            verdict(&[tok("<|open|>", 42)]),
            TokenVerdict::Spelled(_)
        ));
        assert_eq!(verdict(&[tok("plain", 1)]), TokenVerdict::None);
        assert_eq!(verdict(&[]), TokenVerdict::Unknown);
    }
}
