//! The reasoning of one answer (thinking models), as the transcript's reasoning cell holds it:
//! the text (sanitized as it streams), when it started and ended, and how many tokens came.
//! It is never part of the answer: `/copy` and export read the answer alone.

use std::time::{Duration, Instant};

use kimi_protocol::sanitize::StreamSanitizer;

#[derive(Debug, Default)]
pub(crate) struct Reasoning {
    text: String,
    sanitizer: StreamSanitizer,
    /// Reasoning deltas received: one token each as servers stream them.
    pub(crate) tokens: usize,
    started: Option<Instant>,
    /// Set when the answer (or a call, or the end of the round) followed the reasoning.
    took: Option<Duration>,
    /// The whole seconds of thinking the cell last showed through [`Reasoning::tick`].
    ticked_secs: u64,
}

impl Reasoning {
    /// A streamed piece of reasoning.
    pub(crate) fn push(&mut self, text: &str, now: Instant) {
        self.started.get_or_insert(now);
        self.tokens += 1;
        let clean = self.sanitizer.push(text);
        self.text.push_str(&clean);
    }

    /// The answer started (or the round ended): the reasoning is over and folds.
    pub(crate) fn end(&mut self, now: Instant) {
        if self.took.is_none()
            && let Some(t) = self.started
        {
            self.took = Some(now.saturating_duration_since(t));
        }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty() && self.started.is_none()
    }

    /// Still streaming: shown open, whatever the toggle says.
    pub(crate) fn live(&self) -> bool {
        self.started.is_some() && self.took.is_none()
    }

    /// Time passed: true when the live cell's timer has moved to another whole second since
    /// the last true, so the cell is laid out again once a second;
    /// never once the cell has folded.
    pub(crate) fn tick(&mut self, now: Instant) -> bool {
        if !self.live() {
            return false;
        }
        let secs = self.elapsed(now).as_secs();
        let moved = secs != self.ticked_secs;
        self.ticked_secs = secs;
        moved
    }

    /// When the live timer reaches its next whole second (what [`Reasoning::tick`] waits for);
    /// none once folded.
    pub(crate) fn next_tick(&self, now: Instant) -> Option<Instant> {
        let started = self.started.filter(|_| self.live())?;
        Some(crate::app::wake::next_step(
            started,
            now,
            Duration::from_secs(1),
        ))
    }

    /// How long the model thought: until now while live.
    pub(crate) fn elapsed(&self, now: Instant) -> Duration {
        match (self.took, self.started) {
            (Some(d), _) => d,
            (None, Some(t)) => now.saturating_duration_since(t),
            (None, None) => Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_timer_ticks_once_a_second_and_stops_when_folded() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut r = Reasoning::default();
        assert!(!r.tick(at(1500)), "no reasoning yet");
        r.push("hm", t0);
        let ticks: Vec<u64> = (1..=25)
            .map(|k| k * 100)
            .filter(|&ms| r.tick(at(ms)))
            .collect();
        assert_eq!(ticks, [1000, 2000], "one redraw a second");
        r.end(at(2600));
        assert!(!r.live());
        assert!(
            !r.tick(at(3000)) && !r.tick(at(9000)),
            "folded: no more ticks"
        );
    }
}
