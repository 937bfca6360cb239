//! A Server-Sent Events decoder (the event-stream format of the WHATWG HTML standard) over a
//! stream of byte chunks.
//!
//! It replaces eventsource-stream 0.2.3, which panics on a UTF-8 BOM before the first event and
//! rescans a growing line from its start on every chunk (a 16 MB `data:` line cost about a
//! minute of CPU). Here each byte is scanned once and moved at most once, a leading BOM is
//! skipped even when split across chunks, lines end in CRLF, LF or CR (a CRLF split across
//! chunks counts once), and one event may hold at most [`MAX_EVENT_BYTES`].

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use futures_util::Stream;

/// The largest event accepted: its `data` plus the line being read. Huge tool arguments sent
/// in one event (hosted APIs do that) fit; a server that never ends an event does not grow
/// memory without bound.
pub(crate) const MAX_EVENT_BYTES: usize = 32 << 20;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field; empty for the default type (`message`).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Why a stream of events stopped.
#[derive(Debug)]
pub enum SseError<E> {
    /// The underlying body failed.
    Transport(E),
    /// One event grew past [`MAX_EVENT_BYTES`].
    TooLarge,
    /// An event's data is not UTF-8.
    NotUtf8,
}

impl<E: std::fmt::Display> std::fmt::Display for SseError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::Transport(e) => e.fmt(f),
            SseError::TooLarge => write!(
                f,
                "one event is larger than {} MiB, the most kimi-tui accepts",
                MAX_EVENT_BYTES >> 20
            ),
            SseError::NotUtf8 => f.write_str("an event's data is not valid UTF-8"),
        }
    }
}

/// The incremental decoder: bytes in with [`Decoder::feed`], events out of [`Decoder::next_event`].
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    /// Unconsumed input; `buf[pos..]` is the start of a line not yet complete.
    buf: Vec<u8>,
    pos: usize,
    /// Where the search for a line end resumes: bytes before it hold none.
    scan: usize,
    /// The previous line ended in CR at the end of a chunk: an LF right after it is its pair.
    skip_lf: bool,
    /// The start of the stream has been checked for a BOM.
    bom_checked: bool,
    data: Vec<u8>,
    event: Vec<u8>,
    ended: bool,
    /// Comment lines read (`: keepalive`): a server showing it is alive between events.
    comments: u64,
}

impl Decoder {
    pub(crate) fn feed(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// The body ended: a line without its line end is dropped, as the spec says, and so is an
    /// event without its closing blank line.
    pub(crate) fn finish(&mut self) {
        self.ended = true;
    }

    /// The next complete event in what was fed, if any.
    pub(crate) fn next_event(
        &mut self,
    ) -> Result<Option<Event>, SseError<std::convert::Infallible>> {
        if !self.bom_checked {
            let head = &self.buf[self.pos..];
            if head.len() < BOM.len() && BOM.starts_with(head) && !self.ended {
                return Ok(None);
            }
            if head.starts_with(BOM) {
                self.pos += BOM.len();
                self.scan = self.scan.max(self.pos);
            }
            self.bom_checked = true;
        }
        loop {
            if self.skip_lf && self.pos < self.buf.len() {
                self.skip_lf = false;
                if self.buf[self.pos] == b'\n' {
                    self.pos += 1;
                    self.scan = self.scan.max(self.pos);
                }
            }
            let Some(off) = memchr::memchr2(b'\n', b'\r', &self.buf[self.scan..]) else {
                self.scan = self.buf.len();
                if self.data.len() + self.event.len() + (self.buf.len() - self.pos)
                    > MAX_EVENT_BYTES
                {
                    return Err(SseError::TooLarge);
                }
                // Keep only the incomplete line: each byte is moved at most once, since a
                // line start stays at 0 until a line end arrives.
                if self.pos > 0 {
                    self.buf.drain(..self.pos);
                    self.scan -= self.pos;
                    self.pos = 0;
                }
                return Ok(None);
            };
            let end = self.scan + off;
            let cr = self.buf[end] == b'\r';
            let mut next = end + 1;
            if cr {
                match self.buf.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            let (start, pos) = (self.pos, next);
            self.pos = pos;
            self.scan = pos;
            if let Some(event) = self.line(start, end)? {
                return Ok(Some(event));
            }
        }
    }

    /// Interpret `buf[start..end]`; an empty line dispatches the event.
    fn line(
        &mut self,
        start: usize,
        end: usize,
    ) -> Result<Option<Event>, SseError<std::convert::Infallible>> {
        let line = &self.buf[start..end];
        if line.is_empty() {
            let data = std::mem::take(&mut self.data);
            let event = std::mem::take(&mut self.event);
            if data.is_empty() {
                return Ok(None);
            }
            let mut data = String::from_utf8(data).map_err(|_| SseError::NotUtf8)?;
            data.pop(); // the `\n` after the last data line
            let event = String::from_utf8(event).map_err(|_| SseError::NotUtf8)?;
            return Ok(Some(Event { event, data }));
        }
        if line[0] == b':' {
            self.comments += 1;
            return Ok(None);
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        if self.data.len() + self.event.len() + value.len() > MAX_EVENT_BYTES {
            return Err(SseError::TooLarge);
        }
        match name {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            // `id` and `retry` matter for reconnecting, which a completion never does.
            _ => {}
        }
        Ok(None)
    }
}

/// Events decoded from a stream of byte chunks.
pub struct EventStream<S> {
    inner: S,
    decoder: Decoder,
    done: bool,
    /// When the last comment line was read, and how many had been read then.
    last_comment: Option<(Instant, u64)>,
}

impl<S> EventStream<S> {
    pub fn new(inner: S) -> Self {
        EventStream {
            inner,
            decoder: Decoder::default(),
            done: false,
            last_comment: None,
        }
    }

    /// The byte stream read.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// When the last complete comment line (an SSE keepalive) arrived, if one did. Only whole
    /// lines count: a server trickling the bytes of one event shows nothing by them.
    pub fn last_keepalive(&self) -> Option<Instant> {
        self.last_comment.map(|(at, _)| at)
    }

    fn note_comments(&mut self) {
        let seen = self.last_comment.map_or(0, |(_, n)| n);
        if self.decoder.comments != seen {
            self.last_comment = Some((Instant::now(), self.decoder.comments));
        }
    }
}

fn widen<E>(e: SseError<std::convert::Infallible>) -> SseError<E> {
    match e {
        SseError::Transport(never) => match never {},
        SseError::TooLarge => SseError::TooLarge,
        SseError::NotUtf8 => SseError::NotUtf8,
    }
}

impl<S, E> Stream for EventStream<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Event, SseError<E>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            let next = this.decoder.next_event();
            this.note_comments();
            match next {
                Ok(Some(ev)) => return Poll::Ready(Some(Ok(ev))),
                Ok(None) if this.decoder.ended => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Ok(None) => {}
                Err(e) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(widen(e))));
                }
            }
            match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => this.decoder.feed(&chunk),
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(SseError::Transport(e))));
                }
                Poll::Ready(None) => this.decoder.finish(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_chunks(chunks: &[&[u8]]) -> Vec<Event> {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c);
            while let Some(e) = d.next_event().expect("valid") {
                out.push(e);
            }
        }
        d.finish();
        while let Some(e) = d.next_event().expect("valid") {
            out.push(e);
        }
        out
    }

    fn data(events: &[Event]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn a_leading_bom_is_skipped_even_split_across_chunks() {
        let text = b"\xEF\xBB\xBFdata: a\n\ndata: b\n\n";
        for split in 0..text.len() {
            let got = decode_chunks(&[&text[..split], &text[split..]]);
            assert_eq!(data(&got), ["a", "b"], "split at {split}");
        }
        // Only the first BOM is special: later ones are data.
        let got = decode_chunks(&[b"data: a\n\n\xEF\xBB\xBFdata: b\n\n"]);
        assert_eq!(data(&got), ["a"]);
    }

    #[test]
    fn every_line_end_works_at_every_split() {
        let text =
            b"data: one\r\n\r\ndata: two\r\rdata: three\n\n: comment\ndata:four\ndata:  five\n\n";
        for split in 0..text.len() {
            let got = decode_chunks(&[&text[..split], &text[split..]]);
            assert_eq!(
                data(&got),
                ["one", "two", "three", "four\n five"],
                "split at {split}"
            );
        }
        let bytewise: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(decode_chunks(&bytewise).len(), 4);
    }

    #[test]
    fn fields_events_and_empty_data() {
        let got = decode_chunks(&[b"event: ping\n\nevent: x\ndata\nid: 7\nretry: 5\nfoo\n\n"]);
        // An event without data is not dispatched; `data` with no colon is an empty line of data.
        assert_eq!(
            got,
            vec![Event {
                event: "x".into(),
                data: String::new()
            }]
        );
    }

    #[test]
    fn an_unfinished_event_at_the_end_is_dropped() {
        assert!(decode_chunks(&[b"data: a\n"]).is_empty());
        assert!(decode_chunks(&[b"data: a"]).is_empty());
    }

    #[test]
    fn an_event_past_the_limit_is_an_error_even_in_one_line() {
        let mut d = Decoder::default();
        d.feed(b"data: ");
        let chunk = vec![b'x'; 1 << 20];
        let mut failed = false;
        for _ in 0..=(MAX_EVENT_BYTES >> 20) {
            d.feed(&chunk);
            match d.next_event() {
                Ok(None) => {}
                Err(SseError::TooLarge) => {
                    failed = true;
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(failed);
        // Many data lines add up too.
        let mut d = Decoder::default();
        let line = format!("data: {}\n", "y".repeat(1 << 20));
        let mut failed = false;
        for _ in 0..=(MAX_EVENT_BYTES >> 20) {
            d.feed(line.as_bytes());
            if matches!(d.next_event(), Err(SseError::TooLarge)) {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }

    #[test]
    fn bad_utf8_is_an_error_not_a_panic() {
        let mut d = Decoder::default();
        d.feed(b"data: \xFF\xFE\n\n");
        assert!(matches!(d.next_event(), Err(SseError::NotUtf8)));
    }

    #[test]
    fn a_long_line_in_small_chunks_is_scanned_once() {
        // 8 MiB in 4 KiB chunks: with a rescan per chunk this is 2,048 passes over up to 8 MiB.
        let mut d = Decoder::default();
        d.feed(b"data: ");
        let chunk = vec![b'z'; 4096];
        let started = std::time::Instant::now();
        for _ in 0..2048 {
            d.feed(&chunk);
            assert!(d.next_event().expect("fits").is_none());
        }
        d.feed(b"\n\n");
        let ev = d.next_event().expect("fits").expect("an event");
        assert_eq!(ev.data.len(), 8 << 20);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "took {:?}",
            started.elapsed()
        );
    }

    /// Every outcome of decoding, errors included, for comparing two feedings.
    fn outcome(chunks: &[&[u8]]) -> Vec<Result<Event, String>> {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        for (i, c) in chunks.iter().enumerate() {
            d.feed(c);
            if i + 1 == chunks.len() {
                d.finish();
            }
            loop {
                match d.next_event() {
                    Ok(Some(e)) => out.push(Ok(e)),
                    Ok(None) => break,
                    Err(e) => {
                        out.push(Err(e.to_string()));
                        return out;
                    }
                }
            }
        }
        out
    }

    proptest::proptest! {
        // Any bytes, cut anywhere: no panic, and the same events as when fed whole.
        #[test]
        fn any_input_at_any_split_decodes_the_same(
            parts in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(
                    b"data: x\r\n:\xEF\xBB\xBF\xFFevent".to_vec()), 0..12), 1..12)
        ) {
            let whole: Vec<u8> = parts.concat();
            let chunks: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            proptest::prop_assert_eq!(outcome(&chunks), outcome(&[&whole]));
        }
    }

    #[tokio::test]
    async fn the_stream_adapter_passes_transport_errors_and_ends() {
        use futures_util::StreamExt;
        let chunks: Vec<Result<Bytes, &str>> = vec![
            Ok(Bytes::from_static(b"\xEF\xBB")),
            Ok(Bytes::from_static(b"\xBFdata: [DONE]\n\n")),
            Err("reset"),
        ];
        let mut s = EventStream::new(futures_util::stream::iter(chunks));
        assert_eq!(s.next().await.expect("one").expect("ok").data, "[DONE]");
        assert!(matches!(
            s.next().await,
            Some(Err(SseError::Transport("reset")))
        ));
        assert!(s.next().await.is_none());
    }
}
