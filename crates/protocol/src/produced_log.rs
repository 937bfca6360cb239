//! What the client made of each chunk of a trace, in about a byte a chunk for the common case.
//!
//! A raw-mode answer arrives a token at a time, and nearly every chunk produces one thing: a
//! short piece of answer (or reasoning) text. A 16-byte [`Produced`] for each of those cost
//! more than the trace's text (2 MiB of trace is about 580,000 chunks). Such chunks are kept
//! as runs of consecutive chunks plus one byte each for the text's length; everything else (a
//! marker, a call, a warning, a chunk that produced two things or 256 bytes or more of text)
//! is kept as a [`Produced`]. Reads and the saved form are the same list of [`Produced`] as
//! before, in chunk order.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::seq_serde;
use crate::trace::{Made, Produced};

/// The products of a trace's chunks, in chunk order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducedLog {
    /// Products of chunks outside any run, in the order they came.
    explicit: Vec<Produced>,
    /// Runs of consecutive chunks that each produced one short text, in chunk order.
    runs: Vec<Run>,
    /// The length of each run chunk's text, run after run.
    lens: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    first: u32,
    count: u32,
    /// Where this run's lengths start in `lens`.
    at: u32,
    reasoning: bool,
}

impl Run {
    fn end(&self) -> u32 {
        self.first.saturating_add(self.count)
    }

    fn made(&self, len: u8) -> Made {
        let len = u32::from(len);
        if self.reasoning {
            Made::Reasoning(len)
        } else {
            Made::Text(len)
        }
    }
}

/// A product a run can hold: one short text or reasoning piece; `(reasoning, length)`.
fn short_text(made: Made) -> Option<(bool, u8)> {
    match made {
        Made::Text(b) => u8::try_from(b).ok().map(|b| (false, b)),
        Made::Reasoning(b) => u8::try_from(b).ok().map(|b| (true, b)),
        _ => None,
    }
}

impl ProducedLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.explicit.is_empty() && self.runs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.explicit.len() + self.lens.len()
    }

    /// The chunk of the latest product, if any.
    fn last_chunk(&self) -> Option<u32> {
        let run = self.runs.last().map(|r| r.end() - 1);
        let explicit = self.explicit.last().map(|p| p.0);
        run.max(explicit)
    }

    /// Append what chunk `p.0` produced. Products come in chunk order (a damaged file that
    /// says otherwise is kept as it says, in `explicit`).
    pub fn push(&mut self, p: Produced) {
        let Produced(chunk, made) = p;
        let last = self.last_chunk();
        if last == Some(chunk) {
            // A second product of the chunk: it leaves its run, if it was in one.
            self.unrun_last(chunk);
        } else if last.is_none_or(|l| l < chunk)
            && let Some((reasoning, len)) = short_text(made)
        {
            self.run_push(chunk, reasoning, len);
            return;
        }
        self.explicit.push(p);
    }

    fn run_push(&mut self, chunk: u32, reasoning: bool, len: u8) {
        let at = u32::try_from(self.lens.len()).unwrap_or(u32::MAX);
        self.lens.push(len);
        match self.runs.last_mut() {
            Some(r) if r.end() == chunk && r.reasoning == reasoning => r.count += 1,
            _ => self.runs.push(Run {
                first: chunk,
                count: 1,
                at,
                reasoning,
            }),
        }
    }

    /// Move `chunk`'s product out of the last run (it ends there) into `explicit`.
    fn unrun_last(&mut self, chunk: u32) {
        let Some(r) = self.runs.last_mut().filter(|r| r.end() - 1 == chunk) else {
            return;
        };
        let Some(len) = self.lens.pop() else { return };
        let made = r.made(len);
        r.count -= 1;
        if r.count == 0 {
            self.runs.pop();
        }
        self.explicit.push(Produced(chunk, made));
    }

    /// What chunk `n` produced, in order. A binary search, not a scan.
    pub fn by_chunk(&self, n: usize) -> impl Iterator<Item = Made> + '_ {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let k = self.runs.partition_point(|r| r.end() <= n);
        let in_run = self.runs.get(k).filter(|r| r.first <= n).and_then(|r| {
            let i = r.at as usize + (n - r.first) as usize;
            self.lens.get(i).map(|&len| r.made(len))
        });
        let a = self.explicit.partition_point(|p| p.0 < n);
        let b = self.explicit.partition_point(|p| p.0 <= n);
        let explicit = self.explicit.get(a..b).unwrap_or_default();
        in_run.into_iter().chain(explicit.iter().map(|p| p.1))
    }

    /// Every product, in chunk order.
    pub fn iter(&self) -> impl Iterator<Item = Produced> + '_ {
        let mut explicit = self.explicit.iter().copied().peekable();
        let mut runs = self.runs.iter().flat_map(move |r| {
            (0..r.count).map(move |k| {
                let len = self.lens.get(r.at as usize + k as usize).copied();
                Produced(r.first + k, r.made(len.unwrap_or(0)))
            })
        });
        let mut next_run = runs.next();
        std::iter::from_fn(move || match (explicit.peek(), next_run) {
            (Some(e), Some(r)) if r.0 < e.0 => {
                next_run = runs.next();
                Some(r)
            }
            (Some(_), _) => explicit.next(),
            (None, Some(r)) => {
                next_run = runs.next();
                Some(r)
            }
            (None, None) => None,
        })
    }
}

impl FromIterator<Produced> for ProducedLog {
    fn from_iter<I: IntoIterator<Item = Produced>>(iter: I) -> Self {
        let mut log = ProducedLog::new();
        for p in iter {
            log.push(p);
        }
        log
    }
}

impl Serialize for ProducedLog {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        seq_serde::serialize(s, self.len(), self.iter())
    }
}

impl<'de> Deserialize<'de> for ProducedLog {
    /// Read one at a time, into runs as they were when recorded.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        seq_serde::deserialize(d, "a list of [chunk, product] pairs", ProducedLog::push)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn made_strategy() -> impl Strategy<Value = Made> {
        prop_oneof![
            4 => (0u32..300).prop_map(Made::Text),
            2 => (0u32..300).prop_map(Made::Reasoning),
            1 => (0u32..5).prop_map(Made::Marker),
            1 => (0u32..3).prop_map(Made::CallBegin),
            1 => (0u32..3, 0u32..400).prop_map(|(call, bytes)| Made::Args { call, bytes }),
            1 => (0u32..3).prop_map(Made::CallEnd),
            1 => Just(Made::Warning(u32::MAX)),
        ]
    }

    /// Products in chunk order: each step either stays on the chunk or moves on by 1-3.
    fn products() -> impl Strategy<Value = Vec<Produced>> {
        prop::collection::vec((0u32..4, made_strategy()), 0..200).prop_map(|steps| {
            let mut chunk = 0;
            steps
                .into_iter()
                .map(|(step, made)| {
                    chunk += step.saturating_sub(1);
                    Produced(chunk, made)
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn reads_and_saved_form_are_the_products_as_pushed(pushed in products()) {
            let log: ProducedLog = pushed.iter().copied().collect();
            prop_assert_eq!(log.len(), pushed.len());
            prop_assert_eq!(log.iter().collect::<Vec<_>>(), pushed.clone());
            let last = pushed.last().map_or(0, |p| p.0 as usize);
            for n in 0..=last + 1 {
                let want: Vec<Made> = pushed.iter().filter(|p| p.0 as usize == n).map(|p| p.1).collect();
                prop_assert_eq!(log.by_chunk(n).collect::<Vec<_>>(), want);
            }
            let json = serde_json::to_string(&log).unwrap();
            prop_assert_eq!(&json, &serde_json::to_string(&pushed).unwrap());
            let back: ProducedLog = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back, log);
        }
    }

    #[test]
    fn a_token_a_chunk_costs_a_byte_not_an_entry() {
        let log: ProducedLog = (0..10_000)
            .map(|n| Produced(n, Made::Text(n % 7)))
            .collect();
        assert!(log.explicit.is_empty());
        assert_eq!((log.runs.len(), log.lens.len()), (1, 10_000));
        assert_eq!(
            log.by_chunk(9_999).collect::<Vec<_>>(),
            [Made::Text(9_999 % 7)]
        );
    }

    #[test]
    fn a_second_product_takes_its_chunk_out_of_the_run() {
        let mut log = ProducedLog::new();
        log.push(Produced(0, Made::Text(3)));
        log.push(Produced(1, Made::Text(4)));
        log.push(Produced(1, Made::Marker(0)));
        log.push(Produced(2, Made::Text(300)));
        log.push(Produced(3, Made::Reasoning(2)));
        assert_eq!(log.runs.len(), 2);
        assert_eq!(
            log.by_chunk(1).collect::<Vec<_>>(),
            [Made::Text(4), Made::Marker(0)]
        );
        assert_eq!(log.by_chunk(2).collect::<Vec<_>>(), [Made::Text(300)]);
        assert_eq!(log.by_chunk(3).collect::<Vec<_>>(), [Made::Reasoning(2)]);
        assert_eq!(log.by_chunk(4).count(), 0);
    }

    #[test]
    fn products_out_of_order_from_a_damaged_file_are_all_kept() {
        let pushed = [
            Produced(5, Made::Text(1)),
            Produced(2, Made::Text(1)),
            Produced(9, Made::CallEnd(0)),
        ];
        let log: ProducedLog = pushed.into_iter().collect();
        assert_eq!(log.len(), 3);
        let mut all: Vec<_> = log.iter().collect();
        all.sort_by_key(|p| p.0);
        assert_eq!(all, [pushed[1], pushed[0], pushed[2]]);
    }
}
