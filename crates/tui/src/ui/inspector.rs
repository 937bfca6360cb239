//! The raw-stream inspector: the exact request, and the answer chunk by chunk as it arrived,
//! every special marker drawn as a badge with its token id, invisible characters made visible.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::count::count;
use super::inspector_parsed::{self, GAP_WIDTH};
use super::{inspector_chat, inspector_k3, inspector_rows, style};
use crate::app::state::App;
use kimi_protocol::sanitize;
use kimi_protocol::{Marker, special};
use kimi_protocol::{Mode, Model, Template, Trace};

fn ms(us: u64) -> String {
    format!("{:>9.1} ms", us as f64 / 1000.0)
}

/// Every line of the inspector for `trace` (number `index`), unwrapped; `template` is the
/// profile's, which decides the ids shown beside markers.
#[cfg(test)]
pub(crate) fn build(
    trace: &Trace,
    index: usize,
    total: usize,
    template: Template,
) -> Vec<Line<'static>> {
    let look = Look {
        ids: Ids::of(trace, template),
        stall_us: inspector_parsed::DEFAULT_STALL_MS * 1000,
        raw_json: false,
    };
    let mut out = Vec::new();
    head_lines(trace, index, total, &mut out);
    request_lines(trace, look.ids, &mut out);
    out.push(chunks_title(trace, look.raw_json));
    let mut start = 0usize;
    for n in 0..trace.chunks.len() {
        start = chunk_lines(trace, look, n, start, &mut out);
    }
    let stalls = (0..trace.chunks.len())
        .filter(|&n| inspector_parsed::is_stall(trace, n, look.stall_us))
        .count();
    inspector_parsed::foot_lines(trace, look.stall_us, stalls, &mut out);
    out
}

/// How chunks are laid out: the token ids badges show, and the gap that makes a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Look {
    pub(crate) ids: Ids,
    pub(crate) stall_us: u64,
    /// Chat mode: each event as its raw JSON, not as one compact line (`r`).
    pub(crate) raw_json: bool,
}

/// Which markers are badged and which token ids the badges show: the trace's family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ids {
    /// A K2 model rendered with this template: K2's markers, with ids as far as they are
    /// established for it (none for K2-Thinking's `<think>`/`</think>`).
    K2(Template),
    /// Kimi K3: its four structural tokens with K3's ids. K3 reuses K2's ids for other
    /// strings, so no K2 name or id is ever shown (K2 marker strings are text there).
    K3,
}

impl Ids {
    /// The family of `trace`: K3 when the model it asked for is K3, when its prompt ends with
    /// K3's generation prompt (raw mode sent XTML), or when the profile renders K3; else K2
    /// with the profile's template.
    pub(crate) fn of(trace: &Trace, template: Template) -> Ids {
        let model = trace
            .request
            .get("model")
            .and_then(serde_json::Value::as_str);
        let k3 = model.is_some_and(|m| Model::classify(m) == Model::K3)
            || trace
                .prompt
                .as_deref()
                .is_some_and(inspector_k3::ends_with_generation_prompt)
            || template == Template::K3;
        if k3 { Ids::K3 } else { Ids::K2(template) }
    }

    /// The template whose markers the family recognises (for the token view).
    pub(crate) fn template(self) -> Template {
        match self {
            Ids::K2(t) => t,
            Ids::K3 => Template::K3,
        }
    }

    pub(crate) fn is_k3(self) -> bool {
        self == Ids::K3
    }

    /// The label after a marker's badge: its id, `alias` for an unregistered spelling, or
    /// nothing when the id is not established.
    fn label(self, m: Marker) -> Option<String> {
        match self {
            Ids::K3 => m.token_id_in(Template::K3).map(|id| id.to_string()),
            Ids::K2(t) => match (m.token_id_in(t), m.token_id()) {
                (Some(id), _) => Some(id.to_string()),
                (None, None) => Some("alias".to_owned()),
                (None, Some(_)) => None,
            },
        }
    }
}

fn section(title: String) -> Line<'static> {
    Line::from(Span::styled(format!("── {title} "), style::accent()))
}

/// The summary at the top: which request, its status, timings and counts, what went wrong.
/// It changes while the answer streams; the lines below it do not.
pub(crate) fn head_lines(trace: &Trace, index: usize, total: usize, out: &mut Vec<Line<'static>>) {
    let head = Style::default().add_modifier(Modifier::BOLD);
    out.push(Line::from(vec![
        Span::styled(format!("Request {} of {total}", index + 1), head),
        Span::raw(format!(
            " · {} · POST {} · {}",
            trace.mode.as_str(),
            trace.url,
            trace
                .status
                .map_or_else(|| "no response yet".to_owned(), |s| format!("HTTP {s}"))
        )),
    ]));
    let speed = inspector_parsed::speed(trace)
        .map(|(rate, what)| format!(" · {rate:.1} {what}"))
        .unwrap_or_default();
    out.push(Line::from(Span::styled(
        format!(
            "first chunk {} · total {} · {} · {}{speed}",
            trace
                .first_chunk_us
                .map_or("-".into(), |u| ms(u).trim().to_owned()),
            trace
                .total_us
                .map_or("-".into(), |u| ms(u).trim().to_owned()),
            count(trace.chunks.len() as u64, "chunk"),
            count(trace.markers.len() as u64, "marker")
        ),
        style::dim(),
    )));
    if trace.dropped_chunks > 0 {
        out.push(Line::from(Span::styled(
            format!(
                "! {} later chunks ({} bytes) not kept: a request keeps its first {} MiB",
                trace.dropped_chunks,
                trace.dropped_bytes,
                kimi_protocol::trace::DATA_CAP >> 20
            ),
            style::warning(),
        )));
    }
    if let Some(e) = &trace.error {
        // The error's line, then its cause (the HTTP library's chain) on lines of their own.
        for (k, line) in e.lines().enumerate() {
            let line = sanitize::one_line(line, 1000);
            let mark = if k == 0 { "✗ " } else { "  " };
            out.push(Line::from(Span::styled(
                format!("{mark}{line}"),
                style::error(),
            )));
        }
    }
}

/// The request as sent: headers, body and (raw mode) the prompt.
pub(crate) fn request_lines(trace: &Trace, ids: Ids, out: &mut Vec<Line<'static>>) {
    if !trace.headers.is_empty() {
        out.push(section("headers".into()));
        for (k, v) in &trace.headers {
            out.push(Line::from(
                sanitize::visible(&format!("{k}: {v}")).into_owned(),
            ));
        }
    }
    out.push(section("request body".into()));
    let mut body = trace.request.clone();
    if trace.prompt.is_some()
        && let Some(p) = body.get_mut("prompt")
    {
        *p = serde_json::Value::String("(the prompt, shown below)".into());
    }
    let pretty = serde_json::to_string_pretty(&body).unwrap_or_default();
    for l in pretty.lines() {
        // Chat mode: no template wrote this body, so any special-token string in it came from
        // text, most often a message or a tool result the server will render. (Raw mode's body
        // holds kimi-tui's own `stop` marker; its prompt is shown apart.)
        let from_text: Vec<(usize, usize, Mark)> = match trace.mode {
            Mode::Chat => special::find(l)
                .into_iter()
                .map(|r| (r.start, r.end, Mark::FromText))
                .collect(),
            Mode::Raw => Vec::new(),
        };
        if from_text.is_empty() {
            out.push(Line::from(sanitize::visible(l).into_owned()));
        } else {
            out.extend(marked_lines(l, 0, &from_text, None, ids));
        }
    }
    if let Some(prompt) = &trace.prompt {
        out.push(section(format!("prompt ({} bytes)", prompt.len())));
        if !trace.prompt_text_markers.is_empty() {
            out.push(Line::from(Span::styled(
                format!(
                    "⚠ {} special-token strings below come from user or tool text, not from the template (badged ⚠ text)",
                    trace.prompt_text_markers.len()
                ),
                style::warning(),
            )));
        }
        let markers = prompt_marks(prompt, &trace.prompt_text_markers, ids);
        let markers = with_elements(prompt, 0, markers);
        out.extend(marked_lines(prompt, 0, &markers, None, ids));
    }
}

/// The title of the answer's section (it counts the chunks).
pub(crate) fn chunks_title(trace: &Trace, raw_json: bool) -> Line<'static> {
    match trace.mode {
        Mode::Raw => section(format!(
            "completion as received: {} chunks, each ⟨between bars⟩ with its arrival time, the gap since the one before, and → what the parser made of it",
            trace.chunks.len()
        )),
        Mode::Chat => section(format!(
            "SSE events as received: {}, each with its arrival time, the gap since the one before, {} (r: {}), and → what the client made of it",
            trace.chunks.len(),
            if raw_json {
                "its raw JSON"
            } else {
                "what it carries, text \"quoted\""
            },
            if raw_json { "compact" } else { "raw JSON" },
        )),
    }
}

/// The lines of chunk `n`, which starts at `start` in `trace.data`; returns where it ends.
pub(crate) fn chunk_lines(
    trace: &Trace,
    look: Look,
    n: usize,
    start: usize,
    out: &mut Vec<Line<'static>>,
) -> usize {
    let Some(mark) = trace.chunks.get(n) else {
        return start;
    };
    // Bounds are checked on load, but never trusted here: a bad one shows an empty chunk.
    let chunk = trace.data.get(start..mark.end).unwrap_or("");
    let ids = look.ids;
    let prefix = [
        Span::styled(format!("{} ", ms(mark.at_us)), style::dim()),
        inspector_parsed::gap_span(trace, n, look.stall_us),
        Span::styled(format!(" #{n:<5}│"), style::dim()),
    ];
    let compact = (trace.mode == Mode::Chat && !look.raw_json)
        .then(|| inspector_chat::fields(chunk))
        .flatten();
    let mut lines = match compact {
        Some(fields) => vec![compact_line(&fields, ids)],
        None => chunk_marked(trace, ids, chunk, start, mark.end),
    };
    if let Some(first) = lines.first_mut() {
        // A chat chunk carrying reasoning (thinking models) is told apart from the answer's.
        if trace.mode == Mode::Chat && carries_reasoning(chunk) {
            first
                .spans
                .insert(0, Span::styled("think ", reasoning_badge()));
        }
        for (k, span) in prefix.into_iter().enumerate() {
            first.spans.insert(k, span);
        }
    }
    // What the chunk produced goes after its closing bar, on its last line.
    if let Some(last) = lines.last_mut() {
        last.spans.push(Span::styled("│", style::dim()));
        last.spans
            .extend(inspector_parsed::made_spans(trace, n, chunk.len(), ids));
        if inspector_parsed::is_stall(trace, n, look.stall_us) {
            last.spans.push(Span::raw(" "));
            last.spans
                .push(Span::styled(" stall ", inspector_parsed::stall_style()));
        }
    }
    for l in lines.iter_mut().skip(1) {
        l.spans.insert(
            0,
            Span::styled(format!("{:>w$}│", "", w = 20 + GAP_WIDTH), style::dim()),
        );
    }
    out.extend(lines);
    mark.end
}

/// Chunk `chunk` (bytes `start..end` of the trace's data) as received, its markers badged.
fn chunk_marked(
    trace: &Trace,
    ids: Ids,
    chunk: &str,
    start: usize,
    end: usize,
) -> Vec<Line<'static>> {
    // K3 elements are paired before the chunk's marks are picked: an element's three tokens
    // often arrive in three chunks (raw mode pairs over the whole completion, chat mode within
    // the payload), and it is named in the chunk its `<|sep|>` ends in.
    let markers: Vec<(usize, usize, Mark)> = match trace.mode {
        // Raw mode: the parser's markers, by offset in the completion text.
        Mode::Raw => {
            let hits = if ids.is_k3() {
                k3_hits_near(trace, start, end)
            } else {
                &trace.markers[..]
            };
            let all = hits
                .iter()
                .map(|m| {
                    let at = usize::try_from(m.offset).unwrap_or(usize::MAX);
                    (
                        at,
                        at.saturating_add(m.marker.text().len()),
                        Mark::Token(m.marker),
                    )
                })
                .collect();
            let all = if ids.is_k3() {
                with_elements(&trace.data, 0, all)
            } else {
                all
            };
            all.into_iter()
                .filter(|(s, e, _)| *s < end && *e > start)
                .collect()
        }
        Mode::Chat => with_elements(
            chunk,
            start,
            find_markers(chunk, ids.template())
                .into_iter()
                .map(|(s, e, m)| (s + start, e + start, Mark::Token(m)))
                .collect(),
        ),
    };
    marked_lines(chunk, start, &markers, Some(start..end), ids)
}

/// A chat event's fields on one line (see [`inspector_chat`]): keys dimmed, text quoted with
/// its markers badged and invisible characters shown.
fn compact_line(fields: &[inspector_chat::Field], ids: Ids) -> Line<'static> {
    if fields.is_empty() {
        return Line::from(Span::styled(inspector_chat::EMPTY, style::dim()));
    }
    let mut spans = Vec::new();
    for (k, f) in fields.iter().enumerate() {
        if k > 0 {
            spans.push(Span::raw("  "));
        }
        // Keys are the server's too (an unknown field): one line, escaped.
        spans.push(Span::styled(
            format!("{} ", sanitize::one_line(&f.key, 120)),
            style::dim(),
        ));
        let value = match &f.value {
            inspector_chat::Shown::Plain(v) => sanitize::one_line(v, PLAIN_CHARS),
            inspector_chat::Shown::Text(q) => q.clone(),
        };
        let marks: Vec<(usize, usize, Mark)> = find_markers(&value, ids.template())
            .into_iter()
            .map(|(s, e, m)| (s, e, Mark::Token(m)))
            .collect();
        // Quoted (or on one line), the value has no line break: one line.
        let lines = marked_lines(&value, 0, &marks, None, ids);
        spans.extend(lines.into_iter().flat_map(|l| l.spans));
    }
    Line::from(spans)
}

/// A compact field's value that is not text (an error object, say) is cut after this many
/// characters; the raw JSON (`r`) has it whole.
const PLAIN_CHARS: usize = 2000;

/// The parser's K3 hits that touch `start..end` of the completion, with one more on each side:
/// the other tokens of an element whose name text is in the range. Hits come in offset order,
/// so a chunk costs a binary search, not a pass over every hit.
fn k3_hits_near(trace: &Trace, start: usize, end: usize) -> &[kimi_protocol::MarkerHit] {
    let at = |m: &kimi_protocol::MarkerHit| usize::try_from(m.offset).unwrap_or(usize::MAX);
    let hits = &trace.markers[..];
    let lo = hits.partition_point(|m| at(m).saturating_add(m.marker.text().len()) <= start);
    let hi = hits.partition_point(|m| at(m) < end);
    let (lo, hi) = (lo.saturating_sub(1), (hi + 1).min(hits.len()));
    hits.get(lo..hi.max(lo)).unwrap_or(&[])
}

/// Whether a chat payload has a reasoning delta: `reasoning_content` or `reasoning` with a
/// string value (an explicit null, as SGLang sends, is not reasoning).
fn carries_reasoning(chunk: &str) -> bool {
    ["\"reasoning_content\"", "\"reasoning\""]
        .iter()
        .any(|key| {
            chunk.match_indices(key).any(|(i, _)| {
                let rest = chunk[i + key.len()..].trim_start();
                rest.strip_prefix(':')
                    .is_some_and(|v| v.trim_start().starts_with('"'))
            })
        })
}

fn reasoning_badge() -> ratatui::style::Style {
    style::dim().add_modifier(ratatui::style::Modifier::ITALIC | ratatui::style::Modifier::REVERSED)
}

/// Markers of `template`'s family found by text in `s` (for prompts and chat payloads):
/// (start, end, marker).
fn find_markers(s: &str, template: Template) -> Vec<(usize, usize, Marker)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(rel) = memchr::memchr(b'<', &b[i..]) {
        let at = i + rel;
        match Marker::at_start_in(&b[at..], template) {
            Some(m) => {
                out.push((at, at + m.text().len(), m));
                i = at + m.text().len();
            }
            None => i = at + 1,
        }
    }
    out
}

/// How a marked range of text is badged.
#[derive(Debug, Clone, PartialEq)]
enum Mark {
    /// A marker of the template or the completion, with its token id.
    Token(Marker),
    /// A K3 element's name and attributes, between its `<|open|>`/`<|close|>` and `<|sep|>`:
    /// badged with them, so the three tokens read as one marker.
    Name,
    /// The `<|sep|>` that ends a K3 element: its id, then the element by name (`⟨think⟩`).
    ElementEnd(String),
    /// A special-token string that came from user or tool text.
    FromText,
}

/// `marks` with each K3 element made readable: an `<|open|>` or `<|close|>` followed by its
/// name text and a `<|sep|>` gets the name badged and the element named after the `<|sep|>`.
/// `text` is what the offsets point into, its byte 0 at `base`.
fn with_elements(
    text: &str,
    base: usize,
    marks: Vec<(usize, usize, Mark)>,
) -> Vec<(usize, usize, Mark)> {
    let mut out: Vec<(usize, usize, Mark)> = Vec::with_capacity(marks.len());
    let mut it = marks.into_iter().peekable();
    while let Some((s, e, mark)) = it.next() {
        let pair = match (&mark, it.peek()) {
            (Mark::Token(first), Some((sep, _, Mark::Token(Marker::Sep)))) => {
                inspector_k3::element(text, base, *first, e, *sep)
            }
            _ => None,
        };
        out.push((s, e, mark));
        if let Some((name, label)) = pair
            && let Some((ss, se, _)) = it.next()
        {
            out.push((name.start, name.end, Mark::Name));
            out.push((ss, se, Mark::ElementEnd(label)));
        }
    }
    out
}

/// The prompt's markers: the template's own with their ids, those from message text apart.
fn prompt_marks(prompt: &str, from_text: &[(usize, usize)], ids: Ids) -> Vec<(usize, usize, Mark)> {
    let mut marks: Vec<(usize, usize, Mark)> = find_markers(prompt, ids.template())
        .into_iter()
        .filter(|(s, _, _)| from_text.binary_search_by_key(s, |r| r.0).is_err())
        .map(|(s, e, m)| (s, e, Mark::Token(m)))
        .collect();
    marks.extend(
        from_text
            .iter()
            .filter(|(s, e)| s < e && *e <= prompt.len())
            .filter(|(s, e)| prompt.is_char_boundary(*s) && prompt.is_char_boundary(*e))
            .map(|&(s, e)| (s, e, Mark::FromText)),
    );
    marks.sort_by_key(|m| m.0);
    marks
}

/// `text` (which starts at `base` in the stream) split into lines, with the bytes of markers
/// styled as badges and a token-id badge where a marker ends inside `window`.
fn marked_lines(
    text: &str,
    base: usize,
    markers: &[(usize, usize, Mark)],
    window: Option<std::ops::Range<usize>>,
    ids: Ids,
) -> Vec<Line<'static>> {
    let mut lines = vec![Line::default()];
    let end = base + text.len();
    let mut pos = base;
    let push_text = |lines: &mut Vec<Line<'static>>, s: &str, st: Style| {
        for (k, part) in s.split('\n').enumerate() {
            if k > 0 {
                if let Some(l) = lines.last_mut() {
                    l.spans.push(Span::styled("⏎", style::dim()));
                }
                lines.push(Line::default());
            }
            if !part.is_empty() {
                let shown = sanitize::visible(part).into_owned();
                if let Some(l) = lines.last_mut() {
                    l.spans.push(Span::styled(shown, st));
                }
            }
        }
    };
    // Offsets come from a trace (maybe a damaged file): sliced with `get`, never unchecked.
    let part = |a: usize, b: usize| text.get(a.saturating_sub(base)..b.saturating_sub(base));
    for (ms_, me, marker) in markers {
        let (ms_, me) = (*ms_, *me);
        let s = ms_.max(base).min(end);
        let e = me.min(end);
        if s > pos
            && let Some(t) = part(pos, s)
        {
            push_text(&mut lines, t, Style::default());
        }
        // Overlapping ranges (a bad saved trace) are skipped, never sliced inside.
        if s < pos {
            continue;
        }
        let badge = match marker {
            Mark::Token(_) | Mark::Name | Mark::ElementEnd(_) => style::badge(),
            Mark::FromText => style::text_marker(),
        };
        if e > s
            && let Some(t) = part(s, e)
        {
            push_text(&mut lines, t, badge);
        }
        let ends_here = window.as_ref().is_none_or(|w| me <= w.end && me > w.start);
        if ends_here && let Some(l) = lines.last_mut() {
            let label = match marker {
                Mark::Token(m) => ids.label(*m),
                Mark::ElementEnd(_) => ids.label(Marker::Sep),
                Mark::Name => None,
                Mark::FromText => Some("⚠ text".to_owned()),
            };
            if let Some(label) = label {
                l.spans
                    .push(Span::styled(format!(" {label} "), style::key()));
            }
            if let Mark::ElementEnd(element) = marker {
                l.spans
                    .push(Span::styled(element.clone(), style::element()));
            }
        }
        pos = e.max(pos);
    }
    if pos < end
        && let Some(t) = part(pos, end)
    {
        push_text(&mut lines, t, Style::default());
    }
    lines
}

/// The lines as plain text (search, saving).
#[cfg(test)]
pub(crate) fn plain_lines(trace: &Trace, index: usize, template: Template) -> Vec<String> {
    build(trace, index, index + 1, template)
        .iter()
        .map(super::line_text)
        .collect()
}

/// The line where call `call` first shows up: its first marker (raw) or id (chat).
pub(crate) fn line_of_call<'a>(
    trace: &Trace,
    lines: impl IntoIterator<Item = &'a Line<'static>>,
    call: usize,
    raw_json: bool,
) -> Option<usize> {
    let needle = match trace.mode {
        Mode::Raw => {
            let hit = trace.markers.iter().find(|m| m.call == Some(call))?;
            let chunk = trace
                .chunks
                .iter()
                .position(|c| c.end > hit.offset as usize)?;
            format!("#{chunk:<5}│")
        }
        Mode::Chat if raw_json => format!("\"index\":{call}"),
        Mode::Chat => format!("tool_calls[{call}]"),
    };
    lines
        .into_iter()
        .position(|l| super::line_text(l).contains(&needle))
}

/// The inspector's keys; `r` only for a chat request, the one with JSON events.
fn title(app: &App) -> &'static str {
    let chat = (app.inspected_index())
        .and_then(|i| app.traces.get(i))
        .is_some_and(|t| t.read().mode == Mode::Chat);
    if chat {
        " Inspector · [ ] request · / search · n N next · } { stall · r JSON · a A/B · e edit · s save · Esc close "
    } else {
        " Inspector · [ ] request · / search · n N next · } { stall · a A/B · e edit · s save · Esc close "
    }
}

pub(crate) fn render(frame: &mut Frame, area: Rect, app: &App) {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(style::accent())
        .title(title(app));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    if let Some(edit) = &app.layers.inspector.edit {
        frame.render_widget(&edit.editor, body);
        let foot_text = app.layers.inspector.message.clone().unwrap_or_default();
        frame.render_widget(Paragraph::new(Span::styled(foot_text, style::dim())), foot);
        return;
    }
    let lines = &app.layers.inspector.view;
    if !lines.is_built() {
        frame.render_widget(
            Paragraph::new("No request yet: send a message, then come back here."),
            body,
        );
        return;
    };
    let start = app
        .layers
        .inspector
        .scroll
        .min(lines.len().saturating_sub(1));
    // Wrapped as `prepare` counted; search matches in reverse video.
    let rows = body.height as usize;
    let query = app.layers.inspector.query.as_deref().unwrap_or_default();
    let visible: Vec<Line<'static>> = lines
        .window(start, rows)
        .map(|l| inspector_rows::highlight(l, query))
        .collect();
    frame.render_widget(inspector_rows::paragraph(visible), body);
    let foot_text = if let Some(q) = &app.layers.inspector.searching {
        format!("/{q}▏")
    } else {
        let pos = format!("line {}/{}", start + 1, lines.len());
        match &app.layers.inspector.message {
            Some(m) => format!("{m} · {pos}"),
            None => pos,
        }
    };
    frame.render_widget(Paragraph::new(Span::styled(foot_text, style::dim())), foot);
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::MarkerHit;

    const K2I: Template = Template::K2Instruct;

    fn raw_trace() -> Trace {
        let mut t = Trace {
            mode: Mode::Raw,
            url: "http://h/v1/completions".into(),
            status: Some(200),
            prompt: Some(
                "<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>"
                    .into(),
            ),
            ..Trace::default()
        };
        // A marker split across two chunks, and a control character.
        t.push_chunk("Hi\u{1b}<|tool_ca", 1000);
        t.push_chunk("lls_section_begin|>", 2500);
        t.markers.push(MarkerHit {
            marker: Marker::SectionBegin,
            offset: 3,
            call: None,
        });
        t
    }

    #[test]
    fn chunks_markers_and_invisibles_are_shown() {
        let lines = plain_lines(&raw_trace(), 0, K2I);
        let text = lines.join("\n");
        assert!(text.contains("#0    │Hi\\x1b<|tool_ca│"), "{text}");
        assert!(
            text.contains("#1    │lls_section_begin|> 163595 │"),
            "{text}"
        );
        assert!(text.contains("1.0 ms") && text.contains("2.5 ms"));
        assert!(
            text.contains("<|im_user|> 163587 "),
            "prompt markers badged: {text}"
        );
    }

    #[test]
    fn damaged_offsets_never_panic() {
        // Out of range, inside a character, out of order: what a hand-edited file can hold.
        let mut t = raw_trace();
        t.data = "é北京".into();
        t.chunks.set_end(0, 1);
        t.chunks.set_end(1, 99);
        t.chunks
            .push(kimi_protocol::trace::ChunkMark { end: 0, at_us: 3 });
        t.markers.push(MarkerHit {
            marker: Marker::CallBegin,
            offset: 3,
            call: Some(0),
        });
        t.markers.push(MarkerHit {
            marker: Marker::CallEnd,
            offset: u64::MAX,
            call: Some(0),
        });
        let text = plain_lines(&t, 0, K2I).join("\n");
        assert!(text.contains("#2"), "{text}");
        let _ = line_of_call(&t, &build(&t, 0, 1, K2I), 0, false);
        assert_eq!(t.chunks().count(), 3);
    }

    #[test]
    fn split_marker_bytes_are_badged_in_both_chunks() {
        let lines = build(&raw_trace(), 0, 1, K2I);
        let badge = style::badge();
        let badged: Vec<String> = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .filter(|s| s.style == badge)
            .map(|s| s.content.to_string())
            .collect();
        assert!(badged.contains(&"<|tool_ca".to_owned()), "{badged:?}");
        assert!(
            badged.contains(&"lls_section_begin|>".to_owned()),
            "{badged:?}"
        );
    }

    #[test]
    fn markers_from_text_are_badged_apart_from_the_template_s() {
        let prompt = "<|im_user|>user<|im_middle|>hi<|im_end|><|im_system|>[EOS]<|im_end|>";
        let body = prompt.find("hi").expect("body") + 2;
        let mut t = Trace {
            mode: Mode::Raw,
            prompt: Some(prompt.into()),
            ..Trace::default()
        };
        t.prompt_text_markers = vec![(body, body + 10), (body + 23, body + 28)];
        let lines = build(&t, 0, 1, K2I);
        let text: Vec<String> = lines.iter().map(crate::ui::line_text).collect();
        let text = text.join("\n");
        assert!(
            text.contains("⚠ 2 special-token strings below come from user or tool text"),
            "{text}"
        );
        // The template's own `<|im_end|>` keeps its id; the user's copy and `[EOS]` do not.
        assert!(
            text.contains(
                "hi<|im_end|> ⚠ text <|im_system|> 163594 [EOS] ⚠ text <|im_end|> 163586"
            ),
            "{text}"
        );
        let from_text: Vec<String> = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .filter(|s| s.style == style::text_marker())
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(from_text, ["<|im_end|>", "[EOS]"]);
        // Raw mode's own stop marker in the body is not text.
        t.request = serde_json::json!({"stop": ["<|im_end|>"]});
        assert_eq!(
            build(&t, 0, 1, K2I)
                .iter()
                .flat_map(|l| l.spans.iter())
                .filter(|s| s.style == style::text_marker())
                .count(),
            2
        );
        // Chat mode: markers in the request's messages are badged as text too.
        let chat = Trace {
            mode: Mode::Chat,
            request: serde_json::json!({"messages": [{"role": "tool", "content": "x<|im_end|>"}]}),
            ..Trace::default()
        };
        let badged: Vec<String> = build(&chat, 0, 1, K2I)
            .iter()
            .flat_map(|l| l.spans.iter())
            .filter(|s| s.style == style::text_marker())
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(badged, ["<|im_end|>"]);
        // Ranges from a damaged saved trace are ignored, not sliced.
        t.prompt_text_markers = vec![(1, 3), (body, prompt.len() + 5), (body + 1, body)];
        let _ = build(&t, 0, 1, K2I);
    }
}

#[cfg(test)]
mod reasoning_tests {
    use super::carries_reasoning;

    #[test]
    fn reasoning_chunks_are_told_apart() {
        assert!(carries_reasoning(
            r#"{"choices":[{"delta":{"content":null,"reasoning_content":"hm"}}]}"#
        ));
        assert!(carries_reasoning(r#"{"delta": {"reasoning": "hm"}}"#));
        assert!(!carries_reasoning(
            r#"{"delta":{"content":"x","reasoning_content":null}}"#
        ));
        assert!(!carries_reasoning(
            r#"{"delta":{"content":""reasoning" is a word"}}"#
        ));
    }
}

#[cfg(test)]
mod id_tests {
    use super::*;
    use kimi_protocol::MarkerHit;

    /// A raw completion of a thinking model: `<think>hm</think>Hi`.
    fn thinking_trace(model: &str) -> Trace {
        let mut t = Trace {
            mode: Mode::Raw,
            request: serde_json::json!({ "model": model }),
            ..Trace::default()
        };
        t.push_chunk("<think>hm</think>Hi", 1000);
        for (marker, offset) in [(Marker::ThinkBegin, 0), (Marker::ThinkEnd, 9)] {
            t.markers.push(MarkerHit {
                marker,
                offset,
                call: None,
            });
        }
        t
    }

    #[test]
    fn think_badges_show_ids_only_where_they_are_established() {
        let thinking = plain_lines(
            &thinking_trace("moonshotai/Kimi-K2-Thinking"),
            0,
            Template::K2Thinking,
        )
        .join("\n");
        assert!(
            thinking.contains("│<think>hm</think>Hi│"),
            "K2-Thinking: badges without ids: {thinking}"
        );
        assert!(
            !thinking.contains("163606") && !thinking.contains("163607"),
            "{thinking}"
        );
        let k25 = plain_lines(&thinking_trace("moonshotai/Kimi-K2.5"), 0, Template::K25).join("\n");
        assert!(
            k25.contains("│<think> 163606 hm</think> 163607 Hi│"),
            "K2.5: ids shown: {k25}"
        );
        // The kept view is laid out again when the profile's template changes.
        let t = thinking_trace("kimi-k2-thinking");
        let mut view = crate::ui::inspector_view::InspectorView::default();
        view.refresh(&t, 0, 1, Template::K25);
        view.refresh(&t, 0, 1, Template::K2Thinking);
        assert_eq!(
            view.iter().cloned().collect::<Vec<_>>(),
            build(&t, 0, 1, Template::K2Thinking)
        );
    }

    #[test]
    fn the_family_is_the_model_s_the_prompt_s_or_the_profile_s() {
        let trace = |model: &str, prompt: Option<&str>| Trace {
            request: serde_json::json!({ "model": model }),
            prompt: prompt.map(str::to_owned),
            ..Trace::default()
        };
        let k2 = Template::K25;
        assert_eq!(Ids::of(&trace("kimi-k3", None), k2), Ids::K3);
        assert_eq!(
            Ids::of(&trace("local", Some("x<|open|>response<|sep|>")), k2),
            Ids::K3
        );
        assert_eq!(Ids::of(&trace("local", None), Template::K3), Ids::K3);
        assert_eq!(Ids::of(&trace("local", Some("<think>")), k2), Ids::K2(k2));
        // The shared ids name each family's own strings, never the other's.
        assert_eq!(Ids::K3.label(Marker::Open).as_deref(), Some("163587"));
        assert_eq!(Ids::K3.label(Marker::ImUser), None);
        assert_eq!(Ids::K2(k2).label(Marker::ImUser).as_deref(), Some("163587"));
        assert_eq!(Ids::K2(k2).label(Marker::Open), None);
    }

    #[test]
    fn a_k3_model_never_gets_k2_token_ids() {
        // Chat mode: a marker string in a payload is badged, but not named by a K2 id.
        let chat = |model: &str| {
            let mut t = Trace {
                mode: Mode::Chat,
                request: serde_json::json!({ "model": model }),
                ..Trace::default()
            };
            t.push_chunk(
                r#"{"delta":{"content":"<|tool_calls_section_begin|><|im_end|>"}}"#,
                1,
            );
            plain_lines(&t, 0, Template::K2Instruct).join("\n")
        };
        let k2 = chat("kimi-k2-0905-preview");
        assert!(k2.contains("163595") && k2.contains("163586"), "{k2}");
        let k3 = chat("moonshotai/Kimi-K3");
        assert!(
            k3.contains("<|tool_calls_section_begin|><|im_end|>"),
            "{k3}"
        );
        assert!(!k3.contains("1635") && !k3.contains("alias"), "{k3}");
        // A raw trace of a K3 model (raw mode refuses to send one; a hand-made file can hold
        // it), even with a K2 template configured, shows no K2 id either.
        let raw = plain_lines(&thinking_trace("kimi-k3-preview"), 0, Template::K25).join("\n");
        assert!(!raw.contains("16360"), "{raw}");
    }
}
