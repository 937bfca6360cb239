//! The inspector's lines for the trace in view, kept between frames: the request is laid out
//! once, chunks are appended as they arrive, and only the few summary lines at the top are
//! rebuilt. Drawing and search read the kept lines, so a frame or a search step costs the same
//! at 2 MiB of trace as at 2 KiB.

use ratatui::text::Line;

use super::inspector::{Ids, Look, chunk_lines, chunks_title, head_lines, request_lines};
use super::inspector_parsed::{self, DEFAULT_STALL_MS};
use kimi_protocol::{Mode, Template, Trace};

/// What identifies the trace the lines were built from (a new request, another one selected,
/// or the trace replaced by the engine's copy at the end of the round).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Source {
    index: usize,
    mode: Mode,
    started_unix_ms: u64,
    url_len: usize,
    prompt_len: Option<usize>,
    headers: usize,
    /// The token ids the badges show (the profile's template changed: laid out again), and
    /// the stall threshold.
    look: Look,
}

impl Source {
    fn of(trace: &Trace, index: usize, template: Template, stall_us: u64, raw_json: bool) -> Self {
        Source {
            look: Look {
                ids: Ids::of(trace, template),
                stall_us,
                raw_json,
            },
            index,
            mode: trace.mode,
            started_unix_ms: trace.started_unix_ms,
            url_len: trace.url.len(),
            prompt_len: trace.prompt.as_ref().map(String::len),
            headers: trace.headers.len(),
        }
    }
}

/// The inspector's lines (unwrapped), brought up to date by [`refresh`](Self::refresh).
#[derive(Debug, Default)]
pub(crate) struct InspectorView {
    source: Option<Source>,
    head: Vec<Line<'static>>,
    /// The A/B comparison of this request, when one was asked for: set every frame.
    ab: Vec<Line<'static>>,
    request: Vec<Line<'static>>,
    title: Line<'static>,
    chunks: Vec<Line<'static>>,
    /// Where the lines of each chunk laid out so far start in `chunks`.
    chunk_starts: Vec<usize>,
    /// Where the next chunk starts in the trace's data.
    data_end: usize,
    /// Markers of the trace already taken into account.
    markers: usize,
    // The prompt diff, the end of the stream, the stalls.
    /// The prompt diff against the request before (built once per trace, see
    /// [`prompt_diff`](Self::prompt_diff)) and what it was built for.
    diff: Vec<Line<'static>>,
    diff_key: Option<(usize, u64)>,
    /// The end of the stream: rebuilt every refresh, like the head.
    foot: Vec<Line<'static>>,
    /// Chunks after a stall, in order.
    stalls: Vec<usize>,
    /// The stall threshold in ms; `None`: [`DEFAULT_STALL_MS`].
    stall_ms: Option<u64>,
    /// Chat mode: each event as its raw JSON (`r`), not as one compact line.
    raw_json: bool,
}

impl InspectorView {
    /// Bring the lines up to date with `trace`, number `index` of `total`: appends the chunks
    /// that arrived, lays out again only the chunks a new marker touches (a marker split
    /// across chunks is known once its last byte arrives), and everything when the trace is
    /// another one. `template` is the profile's (it decides the ids shown beside markers).
    pub(crate) fn refresh(
        &mut self,
        trace: &Trace,
        index: usize,
        total: usize,
        template: Template,
    ) {
        let stall_us = self
            .stall_ms
            .unwrap_or(DEFAULT_STALL_MS)
            .saturating_mul(1000);
        let source = Source::of(trace, index, template, stall_us, self.raw_json);
        let look = source.look;
        let ids = look.ids;
        let done = self.chunk_starts.len();
        let same = self.source.as_ref() == Some(&source)
            && trace.chunks.len() >= done
            && trace.markers.len() >= self.markers
            && done
                .checked_sub(1)
                .and_then(|d| trace.chunks.end(d))
                .unwrap_or(0)
                == self.data_end;
        if !same {
            *self = InspectorView {
                stall_ms: self.stall_ms,
                raw_json: self.raw_json,
                ..InspectorView::default()
            };
            request_lines(trace, ids, &mut self.request);
            self.source = Some(source);
        }
        if trace.markers.len() > self.markers {
            if trace.mode == Mode::Raw {
                let first = trace.markers[self.markers..]
                    .iter()
                    .map(|m| m.offset)
                    .min()
                    .unwrap_or(u64::MAX);
                let done = self.chunk_starts.len();
                // Chunk ends only grow (a damaged file may say otherwise: then start over).
                let k = if trace.chunks.ends_ascending(done) {
                    trace.chunks.ending_by(done, first)
                } else {
                    0
                };
                self.truncate_chunks(k, trace);
            }
            self.markers = trace.markers.len();
        }
        let mut start = self.data_end;
        for n in self.chunk_starts.len()..trace.chunks.len() {
            self.chunk_starts.push(self.chunks.len());
            if inspector_parsed::is_stall(trace, n, stall_us) {
                self.stalls.push(n);
            }
            start = chunk_lines(trace, look, n, start, &mut self.chunks);
        }
        self.data_end = start;
        self.head.clear();
        head_lines(trace, index, total, &mut self.head);
        self.title = chunks_title(trace, self.raw_json);
        self.foot.clear();
        inspector_parsed::foot_lines(trace, stall_us, self.stalls.len(), &mut self.foot);
    }

    /// Lines after the end of the stream until the next refresh (what MCP servers said while
    /// the request's calls ran).
    pub(crate) fn add_to_foot(&mut self, lines: Vec<Line<'static>>) {
        self.foot.extend(lines);
    }

    /// The A/B lines of this request (none: no comparison of it).
    pub(crate) fn set_ab(&mut self, lines: Vec<Line<'static>>) {
        self.ab = lines;
    }

    /// Gaps of `ms` or more are stalls (laid out again on the next refresh if it changed).
    pub(crate) fn set_stall_ms(&mut self, ms: u64) {
        self.stall_ms = Some(ms);
    }

    /// Chat events as their raw JSON or as compact lines (laid out again on the next refresh
    /// if it changed).
    pub(crate) fn set_raw_json(&mut self, raw: bool) {
        self.raw_json = raw;
    }

    /// The prompt diff lines for the trace `key` (its index and start): `build` runs once per
    /// trace (comparing prompts reads them whole), not every frame.
    pub(crate) fn prompt_diff(
        &mut self,
        key: (usize, u64),
        build: impl FnOnce() -> Vec<Line<'static>>,
    ) {
        if self.diff_key != Some(key) {
            self.diff = build();
            self.diff_key = Some(key);
        }
    }

    /// The next stall after line `from` (forward) or the last one before it: which stall
    /// (from 0) and its line.
    pub(crate) fn stall_line(&self, from: usize, forward: bool) -> Option<(usize, usize)> {
        let base = self.head.len() + self.ab.len() + self.diff.len() + self.request.len() + 1;
        let lines: Vec<(usize, usize)> = self
            .stalls
            .iter()
            .filter_map(|n| self.chunk_starts.get(*n).map(|s| base + s))
            .enumerate()
            .collect();
        if forward {
            lines.into_iter().find(|&(_, l)| l > from)
        } else {
            lines.into_iter().rev().find(|&(_, l)| l < from)
        }
    }

    /// How many stalls the laid-out chunks hold.
    pub(crate) fn stall_count(&self) -> usize {
        self.stalls.len()
    }

    /// Keep the lines of the first `k` chunks only.
    fn truncate_chunks(&mut self, k: usize, trace: &Trace) {
        if k >= self.chunk_starts.len() {
            return;
        }
        self.chunks.truncate(self.chunk_starts[k]);
        self.chunk_starts.truncate(k);
        self.stalls.retain(|&n| n < k);
        self.data_end = k
            .checked_sub(1)
            .and_then(|p| trace.chunks.end(p))
            .unwrap_or(0);
    }

    /// Forget everything (the inspector closed, or no trace to show).
    pub(crate) fn clear(&mut self) {
        *self = InspectorView {
            stall_ms: self.stall_ms,
            ..InspectorView::default()
        };
    }

    /// Whether the lines show a trace.
    pub(crate) fn is_built(&self) -> bool {
        self.source.is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.head.len()
            + self.ab.len()
            + self.diff.len()
            + self.request.len()
            + 1
            + self.chunks.len()
            + self.foot.len()
    }

    /// Line `n`, counted from the top.
    pub(crate) fn line(&self, n: usize) -> Option<&Line<'static>> {
        let mut n = n;
        for part in [&self.head, &self.ab, &self.diff, &self.request] {
            if n < part.len() {
                return part.get(n);
            }
            n -= part.len();
        }
        if n == 0 {
            return Some(&self.title);
        }
        n -= 1;
        if n < self.chunks.len() {
            return self.chunks.get(n);
        }
        self.foot.get(n - self.chunks.len())
    }

    /// Up to `count` lines from line `from`.
    pub(crate) fn window(&self, from: usize, count: usize) -> impl Iterator<Item = &Line<'static>> {
        (from..from.saturating_add(count)).map_while(|n| self.line(n))
    }

    /// Every line, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Line<'static>> {
        self.head
            .iter()
            .chain(&self.ab)
            .chain(&self.diff)
            .chain(&self.request)
            .chain(std::iter::once(&self.title))
            .chain(&self.chunks)
            .chain(&self.foot)
    }

    /// The next line from `from` (forward, `from` included) or before `from` (backward) whose
    /// text holds `query`, ignoring case. Only the lines passed over are read.
    pub(crate) fn find(&self, query: &str, from: usize, forward: bool) -> Option<usize> {
        let q = query.to_lowercase();
        // One buffer for every line read; an ASCII line is lowercased in place (the same as
        // `to_lowercase` for it), so a step allocates nothing per line in the common case.
        let mut text = String::new();
        let mut hit = |n: usize| {
            let Some(line) = self.line(n) else {
                return false;
            };
            text.clear();
            line.spans.iter().for_each(|s| text.push_str(&s.content));
            if text.is_ascii() {
                text.make_ascii_lowercase();
                text.contains(&q)
            } else {
                text.to_lowercase().contains(&q)
            }
        };
        if forward {
            (from..self.len()).find(|&n| hit(n))
        } else {
            (0..from.min(self.len())).rev().find(|&n| hit(n))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::inspector::build;
    use kimi_protocol::Marker;
    use kimi_protocol::MarkerHit;

    const K2I: Template = Template::K2Instruct;

    fn texts<'a>(lines: impl IntoIterator<Item = &'a Line<'static>>) -> Vec<String> {
        lines.into_iter().map(crate::ui::line_text).collect()
    }

    fn raw() -> Trace {
        Trace {
            mode: Mode::Raw,
            url: "http://h/v1/completions".into(),
            prompt: Some("<|im_user|>user<|im_middle|>hi<|im_end|>".into()),
            ..Trace::default()
        }
    }

    #[test]
    fn appended_chunks_and_late_markers_give_what_a_rebuild_gives() {
        let mut t = raw();
        let mut view = InspectorView::default();
        let pieces = [
            "Hello",
            " wor",
            "ld\nnext",
            "<|tool_ca",
            "lls_section_begin|>",
            "x",
        ];
        for (k, p) in pieces.iter().enumerate() {
            t.push_chunk(p, 1000 * k as u64);
            if k == 4 {
                // The parser reports the split marker once its last byte is in.
                t.markers.push(MarkerHit {
                    marker: Marker::SectionBegin,
                    offset: 16,
                    call: None,
                });
            }
            view.refresh(&t, 0, 1, K2I);
            assert_eq!(
                texts(view.iter()),
                texts(&build(&t, 0, 1, K2I)),
                "after chunk {k}"
            );
            assert_eq!(
                view.iter().cloned().collect::<Vec<_>>(),
                build(&t, 0, 1, K2I)
            );
        }
        t.total_us = Some(9000);
        t.status = Some(200);
        view.refresh(&t, 0, 2, K2I);
        assert_eq!(
            view.iter().cloned().collect::<Vec<_>>(),
            build(&t, 0, 2, K2I)
        );
        assert_eq!(view.len(), build(&t, 0, 2, K2I).len());
        assert_eq!(view.line(view.len()), None);
        // Lines added after the foot last one refresh: each frame adds them anew.
        let before = view.len();
        for _ in 0..3 {
            view.refresh(&t, 0, 2, K2I);
            view.add_to_foot(vec![Line::from("── MCP server notes")]);
        }
        assert_eq!(view.len(), before + 1);
        // Another trace in the same slot (the engine's copy): built again.
        let mut other = raw();
        other.started_unix_ms = 5;
        other.push_chunk("other", 1);
        view.refresh(&other, 0, 2, K2I);
        assert_eq!(
            view.iter().cloned().collect::<Vec<_>>(),
            build(&other, 0, 2, K2I)
        );
        // Fewer chunks than laid out (a reload): built again.
        let mut fewer = raw();
        fewer.push_chunk("Hello", 0);
        view.refresh(&fewer, 0, 2, K2I);
        assert_eq!(
            view.iter().cloned().collect::<Vec<_>>(),
            build(&fewer, 0, 2, K2I)
        );
    }

    #[test]
    fn search_reads_the_kept_lines_both_ways() {
        let mut t = raw();
        for k in 0..50 {
            t.push_chunk(if k % 10 == 3 { " Needle" } else { " hay" }, k);
        }
        let mut view = InspectorView::default();
        view.refresh(&t, 0, 1, K2I);
        let all = texts(&build(&t, 0, 1, K2I));
        let hits: Vec<usize> = (0..all.len())
            .filter(|&n| all[n].to_lowercase().contains("needle"))
            .collect();
        assert_eq!(hits.len(), 5);
        assert_eq!(view.find("NEEDLE", 0, true), Some(hits[0]));
        assert_eq!(view.find("needle", hits[0] + 1, true), Some(hits[1]));
        assert_eq!(view.find("needle", hits[4], false), Some(hits[3]));
        assert_eq!(view.find("needle", hits[4] + 1, true), None);
        assert_eq!(view.find("needle", hits[0], false), None);
        assert_eq!(
            texts(view.window(hits[2], 2)),
            all[hits[2]..hits[2] + 2].to_vec()
        );
    }

    #[test]
    fn damaged_chunk_bounds_never_panic() {
        let mut t = raw();
        t.push_chunk("abc", 1);
        t.push_chunk("def", 2);
        t.chunks.set_end(0, 99);
        let mut view = InspectorView::default();
        view.refresh(&t, 0, 1, K2I);
        t.markers.push(MarkerHit {
            marker: Marker::CallEnd,
            offset: 1,
            call: Some(0),
        });
        view.refresh(&t, 0, 1, K2I);
        assert_eq!(
            view.iter().cloned().collect::<Vec<_>>(),
            build(&t, 0, 1, K2I)
        );
    }
}
