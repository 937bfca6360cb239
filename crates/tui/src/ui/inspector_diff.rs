//! The inspector's prompt diff: what the request's prompt changed against the request before
//! it. An append is one quiet line; anything else means the server's prefix cache misses from
//! the first changed byte, and is shown with both sides.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::style;
use kimi_protocol::prompt_diff::{Change, PromptDiff};
use kimi_protocol::{Mode, sanitize};

/// The lines for the diff of request `index` (from 0) against the one before; `mode` says what
/// was compared.
/// `dropped`: the earlier answers whose reasoning the request before carried and this one does
/// not (why the prompt changed, when that is what changed).
pub(crate) fn lines(
    diff: Option<&PromptDiff>,
    index: usize,
    mode: Mode,
    dropped: Option<&[u32]>,
) -> Vec<Line<'static>> {
    let title = |t: String| Line::from(Span::styled(format!("── {t} "), style::accent()));
    let Some(diff) = diff else {
        return if index == 0 {
            Vec::new()
        } else {
            vec![
                title(format!("prompt vs request {index}")),
                Line::from(Span::styled(
                    "not compared: the requests are in different modes",
                    style::dim(),
                )),
            ]
        };
    };
    let what = match mode {
        Mode::Raw => "rendered prompt",
        Mode::Chat => "tools and messages",
    };
    let mut out = vec![title(format!("prompt vs request {index} ({what})"))];
    match diff {
        PromptDiff::Same => out.push(Line::from(Span::styled(
            "the same prompt, byte for byte: the prefix cache can hit all of it",
            style::ok(),
        ))),
        PromptDiff::Append { added } => {
            // The messages grow, yet the server's template may drop what they carry.
            let rendered_drop = dropped.filter(|d| mode == Mode::Chat && !d.is_empty());
            out.push(match rendered_drop {
                None => Line::from(Span::styled(
                    format!("append +{added} bytes, prefix cache can hit"),
                    style::ok(),
                )),
                Some(_) => Line::from(format!("the messages: append +{added} bytes")),
            });
            if let Some(d) = rendered_drop {
                out.push(Line::from(vec![
                    Span::styled(
                        " NOT AN APPEND AS RENDERED ",
                        style::error().add_modifier(Modifier::BOLD | Modifier::REVERSED),
                    ),
                    Span::styled(
                        format!(
                            " by this client's render of the messages: {}; the server's prefix cache likely misses from there",
                            crate::app::thinking_cost::why(Some(d))
                        ),
                        style::error(),
                    ),
                ]));
            }
        }
        PromptDiff::Changed(c) => {
            changed(c, mode, &mut out);
            out.push(Line::from(vec![
                Span::styled("  why:    ", style::dim()),
                Span::styled(crate::app::thinking_cost::why(dropped), style::warning()),
            ]));
        }
    }
    out
}

fn changed(c: &Change, mode: Mode, out: &mut Vec<Line<'static>>) {
    let place = match mode {
        Mode::Raw => format!("line {}", c.line + 1),
        Mode::Chat if c.line == 0 => "the tools".to_owned(),
        Mode::Chat => format!("message {}", c.line - 1),
    };
    let loud = style::error().add_modifier(Modifier::BOLD | Modifier::REVERSED);
    out.push(Line::from(vec![
        Span::styled(" NOT AN APPEND ", loud),
        Span::styled(
            format!(
                " changed at byte {} of {} ({place}): the prefix cache misses from there; {} bytes now, {} common at the end",
                c.offset, c.old_len, c.new_len, c.common_suffix
            ),
            style::error(),
        ),
    ]));
    let side = |label: &str, text: &str| {
        Line::from(vec![
            Span::styled(format!("  {label} "), style::dim()),
            Span::styled(format!("…{}", sanitize::visible(&c.before)), style::dim()),
            Span::styled(
                sanitize::visible(text).into_owned(),
                style::warning().add_modifier(Modifier::BOLD),
            ),
            Span::styled("…", style::dim()),
        ])
    };
    out.push(side("before:", &c.old));
    out.push(side("now:   ", &c.new));
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::prompt_diff::diff;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(crate::ui::line_text).collect()
    }

    #[test]
    fn an_append_is_one_quiet_line_and_a_change_shows_both_sides() {
        assert!(lines(None, 0, Mode::Raw, None).is_empty());
        let append = diff("abc", "abcdef");
        assert_eq!(
            text(&lines(Some(&append), 1, Mode::Raw, None)),
            [
                "── prompt vs request 1 (rendered prompt) ",
                "append +3 bytes, prefix cache can hit"
            ]
        );
        let change = diff("tools: [a,b]\n{m}\n", "tools: [b,a]\n{m}\n{n}\n");
        let got = text(&lines(Some(&change), 2, Mode::Chat, None));
        assert_eq!(got[0], "── prompt vs request 2 (tools and messages) ");
        assert!(
            got[1].starts_with(" NOT AN APPEND  changed at byte 8 of 17 (the tools)"),
            "{got:?}"
        );
        assert_eq!(
            got[2],
            "  before: …tools: [a,b]⏎{m}⏎…".replace('⏎', &sanitize::visible("\n"))
        );
        assert!(got[3].starts_with("  now:    …tools: [b,a]"), "{got:?}");
        assert_eq!(
            got[4],
            "  why:    not known: the reasoning the prompts carry was not measured for both requests"
        );
        let appended = diff("tools: []\n{m}\n", "tools: []\n{m}\n{n}\n");
        assert_eq!(
            text(&lines(Some(&appended), 2, Mode::Chat, Some(&[]))).len(),
            2
        );
        let rendered = text(&lines(Some(&appended), 2, Mode::Chat, Some(&[1])));
        assert_eq!(rendered[1], "the messages: append +4 bytes");
        assert_eq!(
            rendered[2],
            " NOT AN APPEND AS RENDERED  by this client's render of the messages: the reasoning of an earlier answer (message 1) is no longer in the prompt; the server's prefix cache likely misses from there"
        );
        let dropped = text(&lines(Some(&change), 2, Mode::Chat, Some(&[1])));
        assert_eq!(
            dropped[4],
            "  why:    the reasoning of an earlier answer (message 1) is no longer in the prompt"
        );
        assert_eq!(
            text(&lines(None, 3, Mode::Chat, None))[1],
            "not compared: the requests are in different modes"
        );
    }
}
