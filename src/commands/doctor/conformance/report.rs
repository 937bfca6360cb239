//! The conformance scorecard: timings worked out from the recorded answers, a table for people
//! and one JSON object for scripts.

use serde::Serialize;
use serde_json::{Value, json};

use super::checks::{CHECKS, CheckResult, Status};
use super::record::Recorded;

/// Speed, reported and never judged. Milliseconds; `None` when nothing was measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timings {
    /// Time to the first piece of answer (text, reasoning or call), median over the streamed
    /// answers.
    pub ttft_ms_p50: Option<f64>,
    /// Completion tokens (as the server counts them) per second after the first piece.
    pub tokens_per_s: Option<f64>,
    /// Gaps between chunks after the first piece, over all streamed answers.
    pub gap_ms_p50: Option<f64>,
    pub gap_ms_p99: Option<f64>,
    pub streamed_answers: usize,
}

/// The timings of the streamed answers that ended without an error.
pub fn timings(rec: &Recorded) -> Timings {
    let mut ttft = Vec::new();
    let mut gaps = Vec::new();
    let (mut tokens, mut secs) = (0u64, 0f64);
    let mut n = 0;
    for x in &rec.exchanges {
        let a = &x.streamed;
        if a.error.is_some() {
            continue;
        }
        n += 1;
        let Some(first) = a.first_token_us() else {
            continue;
        };
        ttft.push(first as f64 / 1000.0);
        let after: Vec<u64> = a
            .chunks
            .iter()
            .map(|c| c.at_us)
            .filter(|t| *t >= first)
            .collect();
        gaps.extend(after.windows(2).map(|w| (w[1] - w[0]) as f64 / 1000.0));
        if let Some(u) = a.usage {
            tokens += u.completion_tokens;
            secs += a.total_us.saturating_sub(first) as f64 / 1e6;
        }
    }
    Timings {
        ttft_ms_p50: percentile(&mut ttft, 50.0),
        tokens_per_s: (secs > 0.0 && tokens > 0).then(|| tokens as f64 / secs),
        gap_ms_p50: percentile(&mut gaps, 50.0),
        gap_ms_p99: percentile(&mut gaps, 99.0),
        streamed_answers: n,
    }
}

/// The nearest-rank percentile `p` of `values`.
fn percentile(values: &mut [f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    Some(values[rank.clamp(1, values.len()) - 1])
}

/// Whether the run passed: no check failed (warnings and skips do not count).
pub fn passed(results: &[CheckResult]) -> bool {
    results.iter().all(|r| r.status != Status::Fail)
}

/// The one JSON object of `--json`.
pub fn json(
    header: &Header<'_>,
    results: &[CheckResult],
    timings: &Timings,
    rounds: usize,
) -> Value {
    json!({
        "endpoint": {"base_url": header.base_url, "mode": header.mode, "model": header.model},
        "rounds": rounds,
        "passed": passed(results),
        "checks": results,
        "timings": timings,
    })
}

/// Which endpoint was checked.
pub struct Header<'a> {
    pub base_url: &'a str,
    pub mode: &'a str,
    pub model: &'a str,
}

/// The scorecard as lines: one per check (`fix:` under a failure or a warning), the timings,
/// the verdict. Server text is made terminal-safe.
pub fn table(
    header: &Header<'_>,
    results: &[CheckResult],
    timings: &Timings,
    rounds: usize,
) -> String {
    let safe = |s: &str| {
        kimi_protocol::sanitize::for_terminal(s)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let width = CHECKS.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut out = format!(
        "conformance of {} ({} mode, model {}), {rounds} round{}\n{:width$}  STATUS  EVIDENCE\n",
        safe(header.base_url),
        header.mode,
        safe(header.model),
        if rounds == 1 { "" } else { "s" },
        "CHECK",
    );
    for r in results {
        out.push_str(&format!(
            "{:width$}  {:6}  {}\n",
            r.name,
            r.status.label(),
            safe(&r.evidence)
        ));
        if let Some(h) = &r.hint
            && matches!(r.status, Status::Fail | Status::Warn)
        {
            out.push_str(&format!("{:width$}  fix: {h}\n", ""));
        }
    }
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1} ms"));
    out.push_str(&format!(
        "timing: TTFT p50 {}, {} tokens/s, inter-token gap p50 {}, p99 {} ({} streamed answers)\n",
        ms(timings.ttft_ms_p50),
        timings
            .tokens_per_s
            .map_or("-".to_owned(), |v| format!("{v:.1}")),
        ms(timings.gap_ms_p50),
        ms(timings.gap_ms_p99),
        timings.streamed_answers
    ));
    let failed = results.iter().filter(|r| r.status == Status::Fail).count();
    out.push_str(&match failed {
        0 => "all checks passed\n".to_owned(),
        1 => "1 check failed\n".to_owned(),
        n => format!("{n} checks failed\n"),
    });
    out
}
