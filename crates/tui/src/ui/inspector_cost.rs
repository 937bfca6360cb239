//! The inspector's "what thinking costs" lines for one request: the earlier reasoning its prompt
//! re-sent (bytes, and tokens where the server counted them), the prefix-cache hit the server
//! reported, and the reasoning tokens of this answer. A figure not reported is `-`, never 0.

use ratatui::text::{Line, Span};

use super::count::count;
use super::style;
use crate::app::thinking_cost::{RequestCost, percent};
use kimi_protocol::reasoning_resent::Measured;

const NOT_REPORTED: &str = "- (not reported)";

pub(crate) fn lines(c: &RequestCost) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(Span::styled(
        "── what thinking costs ",
        style::accent(),
    ))];
    out.push(resent(c));
    let u = c.usage;
    out.push(match u {
        None => Line::from(Span::styled(
            "prompt cache: - (no usage reported)",
            style::dim(),
        )),
        Some(u) => match u.cached_tokens {
            None => Line::from(format!("prompt cache: cached tokens {NOT_REPORTED}")),
            Some(cached) => {
                let pct = percent(cached, u.prompt_tokens)
                    .map(|p| format!(" ({p}%)"))
                    .unwrap_or_default();
                Line::from(format!(
                    "prompt cache: {cached} of {} prompt tokens cached{pct}",
                    u.prompt_tokens
                ))
            }
        },
    });
    out.push(Line::from(match u.and_then(|u| u.reasoning_tokens) {
        Some(r) => format!("reasoning tokens of this answer: {r}"),
        None => format!("reasoning tokens of this answer: {NOT_REPORTED}"),
    }));
    out
}

fn resent(c: &RequestCost) -> Line<'static> {
    let Some(r) = &c.resent else {
        return Line::from(Span::styled(
            "reasoning re-sent: not measured for this request",
            style::dim(),
        ));
    };
    let whose = match r.carried.as_slice() {
        [] => String::new(),
        [m] => format!(" of an earlier answer (message {m})"),
        many => format!(
            " of {} (messages {})",
            count(many.len() as u64, "earlier answer"),
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let measured = match r.measured {
        Measured::Sent => "in the prompt sent",
        Measured::ClientRender => {
            "in this client's render of the messages (the server renders its own)"
        }
    };
    let tokens = match (r.bytes, c.resent_tokens) {
        (0, _) => String::new(),
        (_, Some(t)) => format!(" · {t} tokens as the server counted them"),
        (_, None) => format!(" · tokens {NOT_REPORTED}"),
    };
    Line::from(format!(
        "reasoning re-sent: {}{whose} {measured}{tokens}",
        count(r.bytes, "byte")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::Usage;
    use kimi_protocol::reasoning_resent::ReasoningResent;

    fn text(c: &RequestCost) -> Vec<String> {
        lines(c).iter().map(crate::ui::line_text).collect()
    }

    #[test]
    fn a_figure_not_reported_is_a_dash_never_zero() {
        let c = RequestCost {
            turn: 1,
            usage: Some(Usage {
                prompt_tokens: 40,
                completion_tokens: 9,
                total_tokens: 49,
                ..Usage::default()
            }),
            resent: Some(ReasoningResent {
                bytes: 35,
                carried: vec![1],
                messages: 3,
                measured: Measured::Sent,
            }),
            resent_tokens: None,
        };
        assert_eq!(
            text(&c)[1..],
            [
                "reasoning re-sent: 35 bytes of an earlier answer (message 1) in the prompt sent · tokens - (not reported)",
                "prompt cache: cached tokens - (not reported)",
                "reasoning tokens of this answer: - (not reported)",
            ]
        );
        let none = RequestCost {
            usage: None,
            resent: None,
            ..c
        };
        assert_eq!(
            text(&none)[1..3],
            [
                "reasoning re-sent: not measured for this request",
                "prompt cache: - (no usage reported)",
            ]
        );
    }
}
