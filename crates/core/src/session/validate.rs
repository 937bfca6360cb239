//! Checks a loaded session before anything uses it: every offset into a trace's data must be in
//! range, on a character boundary and in order, so that no later slice can panic. A file that
//! fails is reported as corrupt (and, like any corrupt file, never overwritten).

use kimi_protocol::{Mode, Trace};

use super::Session;

/// The first problem of a session, as `traces[i].trace.FIELD: what is wrong`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("traces[{index}].trace.{error}")]
pub(super) struct SessionCheckError {
    pub index: usize,
    pub error: TraceError,
}

/// What is wrong with one trace; the text starts with the field (`chunks[k].end`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum TraceError {
    #[error("chunks[{k}].end: {end} is past the end of data ({len} bytes)")]
    ChunkPastEnd { k: usize, end: usize, len: usize },
    #[error("chunks[{k}].end: {end} is before the previous chunk's end {prev}")]
    ChunkBeforePrevious { k: usize, end: usize, prev: usize },
    #[error("chunks[{k}].end: {end} is inside a UTF-8 character")]
    ChunkSplitsChar { k: usize, end: usize },
    /// `limit` is the completion's length: `data` plus the dropped tail.
    #[error("markers[{k}].offset: {offset} is past the end of the completion ({limit} bytes)")]
    MarkerPastEnd { k: usize, offset: u64, limit: u64 },
    #[error("markers[{k}].offset: {offset} is inside a UTF-8 character")]
    MarkerSplitsChar { k: usize, offset: u64 },
}

/// The first problem found.
pub(super) fn check(session: &Session) -> Result<(), SessionCheckError> {
    for (index, t) in session.traces.iter().enumerate() {
        check_trace(&t.trace).map_err(|error| SessionCheckError { index, error })?;
    }
    Ok(())
}

/// One trace; the error names the field.
pub(crate) fn check_trace(trace: &Trace) -> Result<(), TraceError> {
    let data = &trace.data;
    let mut prev = 0usize;
    for (k, c) in trace.chunks.iter().enumerate() {
        let end = c.end;
        if end > data.len() {
            return Err(TraceError::ChunkPastEnd {
                k,
                end,
                len: data.len(),
            });
        }
        if end < prev {
            return Err(TraceError::ChunkBeforePrevious { k, end, prev });
        }
        if !data.is_char_boundary(end) {
            return Err(TraceError::ChunkSplitsChar { k, end });
        }
        prev = end;
    }
    // Raw mode: markers are offsets into the completion, which is `data` plus any dropped tail.
    if trace.mode == Mode::Raw {
        let limit = data.len() as u64 + trace.dropped_bytes;
        for (k, m) in trace.markers.iter().enumerate() {
            let offset = m.offset;
            let end = offset.checked_add(m.marker.text().len() as u64);
            if end.is_none_or(|e| e > limit) {
                return Err(TraceError::MarkerPastEnd { k, offset, limit });
            }
            if offset <= data.len() as u64 && !data.is_char_boundary(offset as usize) {
                return Err(TraceError::MarkerSplitsChar { k, offset });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::Marker;
    use kimi_protocol::MarkerHit;
    use kimi_protocol::trace::ChunkMark;

    fn good() -> Trace {
        let mut t = Trace::default();
        t.push_chunk("é<|tool_calls_section_begin|>", 1);
        t.push_chunk("x", 2);
        t.markers.push(MarkerHit {
            marker: Marker::SectionBegin,
            offset: 2,
            call: None,
        });
        t
    }

    #[test]
    fn good_traces_pass_and_each_bad_offset_is_named() {
        assert_eq!(check_trace(&good()), Ok(()));
        let mut t = good();
        t.chunks.set(1, ChunkMark { end: 999, at_us: 2 });
        assert!(
            check_trace(&t)
                .expect_err("range")
                .to_string()
                .starts_with("chunks[1].end: 999 is past")
        );
        let mut t = good();
        t.chunks.set_end(0, 1);
        assert!(
            check_trace(&t)
                .expect_err("boundary")
                .to_string()
                .contains("inside a UTF-8 character")
        );
        let mut t = good();
        let (a, b) = (t.chunks.get(0).unwrap(), t.chunks.get(1).unwrap());
        t.chunks.set(0, b);
        t.chunks.set(1, a);
        assert!(
            check_trace(&t)
                .expect_err("order")
                .to_string()
                .contains("before the previous")
        );
        let mut t = good();
        t.markers[0].offset = 1;
        assert!(
            check_trace(&t)
                .expect_err("marker")
                .to_string()
                .starts_with("markers[0].offset: 1 is inside")
        );
        let mut t = good();
        t.markers[0].offset = u64::MAX;
        assert!(
            check_trace(&t)
                .expect_err("marker")
                .to_string()
                .contains("past the end")
        );
        // A marker in the dropped tail of a capped trace is fine.
        let mut t = good();
        t.dropped_bytes = 100;
        t.markers[0].offset = 50;
        assert_eq!(check_trace(&t), Ok(()));
    }
}
