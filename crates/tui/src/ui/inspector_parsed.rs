//! The inspector's "raw beside parsed" parts: the gap column and stall badge of each chunk,
//! what the client made of the chunk (after it, on the same line), and the end of the stream
//! (finish reason, usage, `[DONE]`, speed, response headers).

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::inspector::Ids;
use super::inspector_k3::{self, MadeMarker};
use super::style;
use kimi_protocol::sanitize;
use kimi_protocol::trace::Made;
use kimi_protocol::{Mode, Trace};

/// Gaps at least this long are stalls unless the inspector is told otherwise.
pub(crate) const DEFAULT_STALL_MS: u64 = 1000;

/// Width of the gap column ("+12345.6").
pub(crate) const GAP_WIDTH: usize = 9;

/// How a stall's gap and badge are drawn: reverse video reads without colour too.
pub(crate) fn stall_style() -> Style {
    style::warning().add_modifier(Modifier::REVERSED | Modifier::BOLD)
}

/// Microseconds since the chunk before `n` (since the request for the first).
pub(crate) fn gap_us(trace: &Trace, n: usize) -> u64 {
    let at = trace.chunks.get(n).map_or(0, |c| c.at_us);
    let before = n
        .checked_sub(1)
        .and_then(|p| trace.chunks.get(p))
        .map_or(0, |c| c.at_us);
    at.saturating_sub(before)
}

/// Whether chunk `n` came after a stall (its gap is `stall_us` or more). The first chunk's
/// wait is the time to first token, shown in the head, not a stall.
pub(crate) fn is_stall(trace: &Trace, n: usize, stall_us: u64) -> bool {
    n > 0 && gap_us(trace, n) >= stall_us
}

/// The gap column of chunk `n`.
pub(crate) fn gap_span(trace: &Trace, n: usize, stall_us: u64) -> Span<'static> {
    let gap = gap_us(trace, n) as f64 / 1000.0;
    let text = format!("{:>w$}", format!("+{gap:.1}"), w = GAP_WIDTH);
    if is_stall(trace, n, stall_us) {
        Span::styled(text, stall_style())
    } else {
        Span::styled(text, style::dim())
    }
}

/// What chunk `n` (of `len` bytes) produced, as spans to put after it: `→ text`, `→ call 0
/// begin get_weather (id)`, `args 0 +12B`, ... A chunk whose whole text became answer text
/// says just `text`: the common case stays short. A K3 trace says it in K3's words: reasoning,
/// content, and each element once (`⟨think⟩`), not its three tokens.
pub(crate) fn made_spans(trace: &Trace, n: usize, len: usize, ids: Ids) -> Vec<Span<'static>> {
    let made: Vec<Made> = trace.produced_by(n).collect();
    let mut out = Vec::new();
    if made.is_empty() {
        return out;
    }
    out.push(Span::styled(" →", style::dim()));
    let whole = |b: u32| made.len() == 1 && b as usize == len && trace.mode == Mode::Raw;
    let (text_word, think_word) = if ids.is_k3() {
        ("content", "reasoning")
    } else {
        ("text", "think")
    };
    for m in &made {
        let (text, st) = match *m {
            Made::Text(b) if whole(b) => (text_word.to_owned(), style::dim()),
            Made::Text(b) => (format!("{text_word} {b}B"), style::dim()),
            Made::Reasoning(b) if whole(b) => (think_word.to_owned(), style::dim()),
            Made::Reasoning(b) => (format!("{think_word} {b}B"), style::dim()),
            Made::Marker(i) if ids.is_k3() && trace.mode == Mode::Raw => {
                match inspector_k3::made_marker(trace, i as usize) {
                    MadeMarker::Element(e) => (e, style::accent()),
                    MadeMarker::Skip => continue,
                    MadeMarker::Token => match trace.markers.get(i as usize) {
                        Some(hit) => (
                            format!("marker {}", marker_name(hit.marker)),
                            style::accent(),
                        ),
                        None => continue,
                    },
                }
            }
            Made::Marker(i) => match trace.markers.get(i as usize) {
                Some(hit) => (
                    format!("marker {}", marker_name(hit.marker)),
                    style::accent(),
                ),
                None => continue,
            },
            Made::CallBegin(h) => match trace.call_heads.get(h as usize) {
                Some(head) => (
                    format!(
                        "call {} begin {} ({})",
                        head.index,
                        sanitize::one_line(&head.name, 80),
                        sanitize::one_line(&head.id, 80)
                    ),
                    style::accent().add_modifier(Modifier::BOLD),
                ),
                None => continue,
            },
            Made::Args { call, bytes } => (format!("args {call} +{bytes}B"), style::accent()),
            Made::CallEnd(i) => (
                format!("call {i} end"),
                style::accent().add_modifier(Modifier::BOLD),
            ),
            Made::CallIncomplete(i) => (format!("call {i} cut off"), style::error()),
            Made::Warning(i) => {
                let w = trace
                    .warnings
                    .get(i as usize)
                    .map_or("(more warnings not kept)".into(), |w| {
                        sanitize::one_line(w, 160)
                    });
                (format!("⚠ {w}"), style::warning())
            }
        };
        out.push(Span::raw(" "));
        out.push(Span::styled(text, st));
    }
    out
}

/// A marker's short name (`call_begin`), as `parse --events` spells it.
fn marker_name(m: kimi_protocol::Marker) -> String {
    serde_json::to_value(m)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| m.text().to_owned())
}

/// Tokens (or chunks) per second after the first chunk, and what it counted: the usage's
/// completion tokens when the server reported them, else the chunks.
pub(crate) fn speed(trace: &Trace) -> Option<(f64, &'static str)> {
    let (first, total) = (trace.first_chunk_us?, trace.total_us?);
    let secs = total.checked_sub(first).filter(|&d| d > 0)? as f64 / 1e6;
    match trace.usage.map(|u| u.completion_tokens).filter(|&t| t > 0) {
        Some(tokens) => Some((tokens as f64 / secs, "tokens/s from usage")),
        None if trace.chunks.len() > 1 => Some((
            (trace.chunks.len() - 1) as f64 / secs,
            "chunks/s: no usage reported",
        )),
        None => None,
    }
}

/// The end of the stream: how it finished, the usage, `[DONE]`, the speed and the response
/// headers (secrets masked when recorded). Rebuilt each frame: a few lines.
pub(crate) fn foot_lines(
    trace: &Trace,
    stall_us: u64,
    stalls: usize,
    out: &mut Vec<Line<'static>>,
) {
    out.push(Line::from(Span::styled(
        "── end of stream ",
        style::accent(),
    )));
    let finish = match &trace.finish_reason {
        Some(r) => Span::raw(format!("finish_reason {}", sanitize::one_line(r, 40))),
        None => Span::styled("no finish_reason", style::warning()),
    };
    let done = if trace.done {
        Span::raw("[DONE] received")
    } else if trace.total_us.is_some() {
        Span::styled("no [DONE]", style::warning())
    } else {
        Span::styled("streaming", style::dim())
    };
    let usage = match trace.usage {
        Some(u) => Span::raw(format!(
            "usage: prompt {}, completion {}, total {} tokens",
            u.prompt_tokens, u.completion_tokens, u.total_tokens
        )),
        None => Span::styled("no usage reported", style::dim()),
    };
    let sep = || Span::styled(" · ", style::dim());
    out.push(Line::from(vec![finish, sep(), done, sep(), usage]));
    let mut timing = vec![Span::raw(match trace.first_chunk_us {
        Some(us) => format!("time to first chunk {:.1} ms", us as f64 / 1000.0),
        None => "no chunk yet".to_owned(),
    })];
    if let Some((rate, what)) = speed(trace) {
        timing.push(sep());
        timing.push(Span::raw(format!("{rate:.1} {what}")));
    }
    timing.push(sep());
    let stall_text = format!(
        "{stalls} stall{} (gaps of {:.0} ms or more)",
        if stalls == 1 { "" } else { "s" },
        stall_us as f64 / 1000.0
    );
    timing.push(if stalls > 0 {
        Span::styled(stall_text, stall_style())
    } else {
        Span::styled(stall_text, style::dim())
    });
    out.push(Line::from(timing));
    if !trace.response_headers.is_empty() {
        out.push(Line::from(Span::styled(
            format!(
                "── response headers (HTTP {}) ",
                trace.status.map_or("-".into(), |s| s.to_string())
            ),
            style::accent(),
        )));
        for (k, v) in &trace.response_headers {
            out.push(Line::from(
                sanitize::visible(&format!("{k}: {v}")).into_owned(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::{StreamEvent, StreamMeta, Usage};

    const K2: Ids = Ids::K2(kimi_protocol::Template::K2Instruct);

    fn text(spans: &[Span<'_>]) -> String {
        spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn gaps_over_the_threshold_are_stalls_and_the_first_wait_is_not() {
        let mut t = Trace::default();
        t.push_chunk("a", 5_000_000);
        t.push_chunk("b", 5_100_000);
        t.push_chunk("c", 6_600_000);
        assert!(!is_stall(&t, 0, 1_000_000));
        assert!(!is_stall(&t, 1, 1_000_000));
        assert!(is_stall(&t, 2, 1_000_000));
        assert_eq!(gap_span(&t, 2, 1_000_000).content, "  +1500.0");
        assert_eq!(gap_span(&t, 2, 1_000_000).style, stall_style());
        assert_eq!(gap_span(&t, 1, 1_000_000).style, style::dim());
    }

    #[test]
    fn what_a_chunk_made_is_listed_after_it() {
        let mut t = Trace {
            mode: Mode::Raw,
            ..Trace::default()
        };
        for e in [
            StreamEvent::Chunk {
                data: "Hi".into(),
                at_us: 1,
            },
            StreamEvent::Text("Hi".into()),
            StreamEvent::Chunk {
                data: "<|tool_call_begin|>functions.f:0".into(),
                at_us: 2,
            },
            StreamEvent::Marker(kimi_protocol::MarkerHit {
                marker: kimi_protocol::Marker::CallBegin,
                offset: 2,
                call: Some(0),
            }),
            StreamEvent::ToolCallBegin {
                index: 0,
                id: "functions.f:0".into(),
                name: "f\u{1b}[31m".into(),
            },
            StreamEvent::ToolCallArgs {
                index: 0,
                delta: "{}".into(),
            },
            StreamEvent::Warning("bad\nthing".into()),
            StreamEvent::ToolCallIncomplete { index: 0 },
        ] {
            t.record(&e);
        }
        assert_eq!(text(&made_spans(&t, 0, 2, K2)), " → text");
        assert_eq!(
            text(&made_spans(&t, 1, 32, K2)),
            " → marker call_begin call 0 begin f\\x1b[31m (functions.f:0) args 0 +2B ⚠ bad⏎thing call 0 cut off"
                .replace('⏎', &sanitize::one_line("\n", 5))
        );
        assert!(made_spans(&t, 2, 0, K2).is_empty());
    }

    #[test]
    fn the_foot_says_how_it_ended_and_how_fast() {
        let mut t = Trace::default();
        t.push_chunk("a", 100_000);
        t.push_chunk("b", 600_000);
        t.total_us = Some(1_100_000);
        assert_eq!(speed(&t), Some((1.0, "chunks/s: no usage reported")));
        t.record(&StreamEvent::Usage(Usage {
            prompt_tokens: 3,
            completion_tokens: 10,
            total_tokens: 13,
            ..Usage::default()
        }));
        t.record(&StreamEvent::Meta(StreamMeta::FinishReason("stop".into())));
        t.record(&StreamEvent::Meta(StreamMeta::Done));
        t.record(&StreamEvent::Meta(StreamMeta::Headers(vec![(
            "server".into(),
            "vllm".into(),
        )])));
        assert_eq!(speed(&t), Some((10.0, "tokens/s from usage")));
        let mut out = Vec::new();
        foot_lines(&t, 1_000_000, 0, &mut out);
        let all: Vec<String> = out.iter().map(|l| text(&l.spans)).collect();
        assert_eq!(
            all[1],
            "finish_reason stop · [DONE] received · usage: prompt 3, completion 10, total 13 tokens"
        );
        assert_eq!(
            all[2],
            "time to first chunk 100.0 ms · 10.0 tokens/s from usage · 0 stalls (gaps of 1000 ms or more)"
        );
        assert_eq!(all[4], "server: vllm");
    }
}
