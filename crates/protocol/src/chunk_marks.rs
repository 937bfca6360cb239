//! Where each chunk of a trace ends and when it arrived, in 8 bytes a chunk instead of 16.
//!
//! A raw-mode answer arrives a token at a time: 2 MiB of trace is about 580,000 chunks, so the
//! marks cost more than the text they point into. Ends fit in 32 bits (a trace keeps at most
//! `DATA_CAP` bytes); arrival times are kept as 32-bit offsets from an epoch (71 minutes of
//! microseconds each), with a new epoch, rare, whenever a time does not fit the current one.
//! Reads and the saved form are the same [`ChunkMark`]s as before (`{"end": .., "at_us": ..}`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::seq_serde;

/// One chunk: where it ends in `Trace::data`, and when it arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkMark {
    /// Byte offset in `Trace::data` where this chunk ends.
    pub end: usize,
    /// Microseconds since the request was sent.
    pub at_us: u64,
}

/// The marks of a trace's chunks, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkMarks {
    packed: Vec<Packed>,
    /// `(first chunk, base)`: chunks from `first` on store `at_us - base`. Empty while every
    /// time fits 32 bits from 0.
    epochs: Vec<(usize, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Packed {
    end: u32,
    at: u32,
}

impl ChunkMarks {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.packed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// Append a chunk's mark. An end past 4 GiB (only a damaged file can say so) is kept as
    /// 4 GiB, which is past any data a trace holds, so it still reads as damaged.
    pub fn push(&mut self, mark: ChunkMark) {
        let base = self.epochs.last().map_or(0, |e| e.1);
        let at = match mark.at_us.checked_sub(base).map(u32::try_from) {
            Some(Ok(at)) => at,
            _ => {
                self.epochs.push((self.packed.len(), mark.at_us));
                0
            }
        };
        let end = u32::try_from(mark.end).unwrap_or(u32::MAX);
        self.packed.push(Packed { end, at });
    }

    /// Mark `n`, if there is one.
    pub fn get(&self, n: usize) -> Option<ChunkMark> {
        let p = self.packed.get(n)?;
        Some(ChunkMark {
            end: p.end as usize,
            at_us: self.base_of(n) + u64::from(p.at),
        })
    }

    /// Where chunk `n` ends, if there is one (cheaper than [`get`](Self::get)).
    pub fn end(&self, n: usize) -> Option<usize> {
        self.packed.get(n).map(|p| p.end as usize)
    }

    pub fn last(&self) -> Option<ChunkMark> {
        self.len().checked_sub(1).and_then(|n| self.get(n))
    }

    /// Replace mark `n`; false (and nothing changed) when there is none.
    pub fn set(&mut self, n: usize, mark: ChunkMark) -> bool {
        if n >= self.len() {
            return false;
        }
        // Rebuilt from `n` on: the epochs after it may change. Only tests and repairs do this.
        let rest: Vec<ChunkMark> = (n + 1..self.len()).filter_map(|k| self.get(k)).collect();
        self.truncate(n);
        self.push(mark);
        for m in rest {
            self.push(m);
        }
        true
    }

    /// Whether the ends of the first `n` chunks never go back (a damaged file may say otherwise).
    pub fn ends_ascending(&self, n: usize) -> bool {
        let n = n.min(self.len());
        self.packed[..n].windows(2).all(|w| w[0].end <= w[1].end)
    }

    /// Among the first `n` chunks (ends ascending), how many end at or before `offset`.
    pub fn ending_by(&self, n: usize, offset: u64) -> usize {
        let n = n.min(self.len());
        self.packed[..n].partition_point(|p| u64::from(p.end) <= offset)
    }

    /// Move the end of chunk `n` (arrival unchanged); false when there is no such chunk.
    pub fn set_end(&mut self, n: usize, end: usize) -> bool {
        match self.get(n) {
            Some(m) => self.set(n, ChunkMark { end, ..m }),
            None => false,
        }
    }

    /// Keep the first `n` marks.
    pub fn truncate(&mut self, n: usize) {
        self.packed.truncate(n);
        let keep = self.epochs.partition_point(|e| e.0 < n);
        self.epochs.truncate(keep);
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = ChunkMark> + ExactSizeIterator + '_ {
        self.packed.iter().enumerate().map(|(n, p)| ChunkMark {
            end: p.end as usize,
            at_us: self.base_of(n) + u64::from(p.at),
        })
    }

    fn base_of(&self, n: usize) -> u64 {
        let k = self.epochs.partition_point(|e| e.0 <= n);
        k.checked_sub(1).map_or(0, |k| self.epochs[k].1)
    }
}

impl FromIterator<ChunkMark> for ChunkMarks {
    fn from_iter<I: IntoIterator<Item = ChunkMark>>(iter: I) -> Self {
        let mut marks = ChunkMarks::new();
        for m in iter {
            marks.push(m);
        }
        marks
    }
}

impl From<Vec<ChunkMark>> for ChunkMarks {
    fn from(v: Vec<ChunkMark>) -> Self {
        v.into_iter().collect()
    }
}

impl Serialize for ChunkMarks {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        seq_serde::serialize(s, self.len(), self.iter())
    }
}

impl<'de> Deserialize<'de> for ChunkMarks {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        seq_serde::deserialize(d, "a list of chunk marks", ChunkMarks::push)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(end: usize, at_us: u64) -> ChunkMark {
        ChunkMark { end, at_us }
    }

    #[test]
    fn marks_read_back_as_pushed_across_epochs() {
        let big = u64::from(u32::MAX);
        let pushed = vec![
            mark(3, 10),
            mark(5, big + 20),
            mark(7, big + 30),
            mark(9, 4), // earlier than its epoch (a damaged file): a new epoch
            mark(11, 3 * big),
            mark(12, u64::MAX),
        ];
        let marks: ChunkMarks = pushed.clone().into();
        assert_eq!(marks.len(), 6);
        assert_eq!(marks.iter().collect::<Vec<_>>(), pushed);
        assert_eq!(marks.get(2), Some(mark(7, big + 30)));
        assert_eq!(marks.end(4), Some(11));
        assert_eq!(marks.get(6), None);
        assert!(marks.ends_ascending(6) && marks.ends_ascending(99));
        assert_eq!((marks.ending_by(6, 7), marks.ending_by(2, 7)), (3, 2));
        assert!(!ChunkMarks::from(vec![mark(3, 1), mark(2, 2)]).ends_ascending(2));
        assert_eq!(marks.last(), Some(mark(12, u64::MAX)));
    }

    #[test]
    fn truncate_and_set_keep_the_other_marks() {
        let big = u64::from(u32::MAX);
        let mut marks: ChunkMarks = vec![mark(1, 1), mark(2, big + 5), mark(3, big + 6)].into();
        assert!(marks.set(0, mark(9, 2)));
        assert!(!marks.set(3, mark(9, 2)));
        assert!(marks.set_end(1, 4) && !marks.set_end(3, 4));
        assert!(marks.set_end(1, 2));
        assert_eq!(
            marks.iter().collect::<Vec<_>>(),
            [mark(9, 2), mark(2, big + 5), mark(3, big + 6)]
        );
        marks.truncate(1);
        assert_eq!(marks.iter().collect::<Vec<_>>(), [mark(9, 2)]);
        marks.push(mark(4, 7));
        assert_eq!(marks.get(1), Some(mark(4, 7)));
    }

    #[test]
    fn an_end_past_4_gib_stays_past_any_data() {
        let mut marks = ChunkMarks::new();
        marks.push(mark(usize::MAX, 1));
        assert_eq!(marks.end(0), Some(u32::MAX as usize));
    }

    #[test]
    fn the_saved_form_is_a_list_of_marks() {
        let marks: ChunkMarks = vec![mark(2, 5), mark(3, 9)].into();
        let json = serde_json::to_string(&marks).unwrap();
        assert_eq!(json, r#"[{"end":2,"at_us":5},{"end":3,"at_us":9}]"#);
        let back: ChunkMarks = serde_json::from_str(&json).unwrap();
        assert_eq!(back, marks);
        assert!(serde_json::from_str::<ChunkMarks>(r#"[{"end":2}]"#).is_err());
    }
}
