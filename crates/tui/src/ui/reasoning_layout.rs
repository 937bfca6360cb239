//! The rows of a turn's reasoning cell, as the transcript view holds them: the header line,
//! then the body in runs of whole lines, each run's rows dropped when far from the viewport
//! and laid out again (from the reasoning's text, which the turn keeps) when scrolled to. An
//! open cell of a long reasoning is as long as an answer; this keeps its memory as flat.

use std::ops::Range;
use std::time::Instant;

use ratatui::text::Line;

use super::reasoning;
use crate::app::reasoning::Reasoning;

/// Lines of reasoning text per run: the unit of eviction and of relayout while it streams.
const RUN_LINES: usize = 32;

/// What the rows show: laid out again when any of it changes (a new delta, the fold when the
/// answer starts, the reasoning key, a new width).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Key {
    width: u16,
    open: bool,
    live: bool,
    tokens: usize,
    bytes: usize,
}

/// A run of whole lines of the body: its bytes in the reasoning's text and its rows.
#[derive(Debug)]
struct Run {
    text: Range<usize>,
    rows: usize,
    lines: Option<Vec<Line<'static>>>,
}

#[derive(Debug, Default)]
pub(crate) struct ReasoningLayout {
    /// `None` until first laid out.
    key: Option<Key>,
    head: Option<Line<'static>>,
    /// Where the body starts in the text (blank lines before it are not shown).
    lead: usize,
    runs: Vec<Run>,
    rows: usize,
}

impl ReasoningLayout {
    /// Bring the rows up to date with `r`. While it streams, only the last run is laid out
    /// again (the text only grows); anything else lays out the whole.
    pub(crate) fn refresh(&mut self, r: &Reasoning, open: bool, width: u16, now: Instant) {
        let key = Key {
            width,
            open,
            live: r.live(),
            tokens: r.tokens,
            bytes: r.text().len(),
        };
        if self.key == Some(key) {
            // The live header's elapsed time moves with the clock alone (the app ticks it).
            if key.live {
                self.head = reasoning::head(r, open, now);
            }
            return;
        }
        let text = r.text();
        let body = reasoning::body_text(text);
        let lead = text.len() - text.trim_start_matches('\n').len();
        let grows = self.key.is_some_and(|k| {
            k.width == width && k.open == open && k.live && key.live && k.bytes <= key.bytes
        }) && lead == self.lead
            && !self.runs.is_empty();
        self.key = Some(key);
        self.head = reasoning::head(r, open, now);
        if self.head.is_none() || !reasoning::shown(r, open) {
            self.runs.clear();
        } else {
            let from = if grows {
                self.runs.pop().map_or(lead, |run| run.text.start)
            } else {
                self.runs.clear();
                lead
            };
            self.lead = lead;
            self.lay_out_from(text, from, lead + body.len(), width);
        }
        self.rows =
            usize::from(self.head.is_some()) + self.runs.iter().map(|r| r.rows).sum::<usize>();
    }

    /// Runs for `text[from..end]`, appended.
    fn lay_out_from(&mut self, text: &str, from: usize, end: usize, width: u16) {
        let mut start = from;
        loop {
            // The run ends before the `RUN_LINES`-th newline after `start`, or at the end.
            let stop = text[start..end]
                .match_indices('\n')
                .nth(RUN_LINES - 1)
                .map_or(end, |(i, _)| start + i);
            let lines = reasoning::body(&text[start..stop], width);
            self.runs.push(Run {
                text: start..stop,
                rows: lines.len(),
                lines: Some(lines),
            });
            if stop >= end {
                break;
            }
            start = stop + 1;
        }
    }

    /// Rows in all (the header and the body).
    pub(crate) fn height(&self) -> usize {
        self.rows
    }

    /// Rows laid out and held now.
    #[cfg(test)]
    pub(crate) fn live_rows(&self) -> usize {
        usize::from(self.head.is_some())
            + self
                .runs
                .iter()
                .filter_map(|r| r.lines.as_ref().map(Vec::len))
                .sum::<usize>()
    }

    /// The runs with the first row of each, in this layout's rows.
    fn runs_at(&self) -> impl Iterator<Item = (usize, &Run)> {
        let mut at = usize::from(self.head.is_some());
        self.runs.iter().map(move |run| {
            let first = at;
            at += run.rows;
            (first, run)
        })
    }

    /// Lay out again the evicted runs that rows `range` meet.
    pub(crate) fn materialize(&mut self, r: &Reasoning, range: Range<usize>) {
        let Some(key) = self.key else {
            return;
        };
        let hits: Vec<usize> = self
            .runs_at()
            .enumerate()
            .filter(|(_, (first, run))| {
                run.lines.is_none() && meets(&range, *first..first + run.rows)
            })
            .map(|(k, _)| k)
            .collect();
        for k in hits {
            let run = &mut self.runs[k];
            if let Some(text) = r.text().get(run.text.clone()) {
                run.lines = Some(reasoning::body(text, key.width));
            }
        }
    }

    /// Append rows `range` (laid out: see [`materialize`](Self::materialize)).
    pub(crate) fn rows_into(&self, range: Range<usize>, out: &mut Vec<Line<'static>>) {
        if let Some(head) = &self.head
            && range.contains(&0)
        {
            out.push(head.clone());
        }
        for (first, run) in self.runs_at() {
            let (lo, hi) = (range.start.max(first), range.end.min(first + run.rows));
            if lo < hi
                && let Some(lines) = &run.lines
            {
                out.extend_from_slice(&lines[lo - first..hi - first]);
            }
        }
    }

    /// Drop the rows of the runs outside `keep` (their heights stay).
    pub(crate) fn retain(&mut self, keep: Range<usize>) {
        let far: Vec<usize> = self
            .runs_at()
            .enumerate()
            .filter(|(_, (first, run))| !meets(&keep, *first..first + run.rows))
            .map(|(k, _)| k)
            .collect();
        for k in far {
            self.runs[k].lines = None;
        }
    }
}

fn meets(a: &Range<usize>, b: Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}
