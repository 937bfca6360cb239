//! Frame cost while a long answer streams, at 120x40.
//!
//! - `code block frame/N`: the last line of an N-line fenced code block grows by a token, then
//!   the frame is laid out and drawn. Linear rendering means 2,000 lines cost about what 10 do.
//! - `paragraph frame/N`: an answer that is one paragraph of N tokens (no newline, some
//!   `**bold**` and `code`) grows by a token, then the frame is laid out and drawn. Committed
//!   rows are kept, so 100,000 tokens cost about what 1,000 do.
//! - `inspector frame/2MiB`: a raw-mode trace holding 2 MiB of chunks gets one more chunk,
//!   then the open inspector is laid out and drawn.
//! - `inspector search step/2MiB`: `n` (next match) in the inspector on that trace.
//! - `token view frame/2MiB`: the same 2 MiB of chunks with token data (one token
//!   per chunk, an id, a logprob and 5 alternatives by id, as vLLM's raw mode sends them) gets
//!   one more chunk and its token, then the open token view, the last token selected, is laid
//!   out and drawn.
//!
//! The code block state is rebuilt, untimed, every `RESET` iterations, so the open line never
//! holds more than `RESET` tokens. "after history" puts an earlier answer above the block, so
//! the screen is full whatever the block's length (a 10-line block alone leaves it mostly
//! empty, which is cheaper to draw). 200 lines fill the screen with code as 2,000 do: what
//! the two cost apart is what the length of the block costs.

// A bench: a failed unwrap in setup is a broken bench, as in tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_protocol::{Mode, StreamEvent, TokenLogprob, TopLogprob, Trace};
use kimi_ui::bench::BenchApp;

const RESET: u64 = 16;

/// An app whose last answer is an open `rust` code block of `lines` complete lines and a
/// started one, laid out once as in a running app. With `history`, an earlier answer of 60
/// lines comes first, so the screen is full whatever the length of the block.
fn code_app(lines: usize, history: bool) -> BenchApp {
    let mut app = BenchApp::new();
    if history {
        let mut earlier = String::new();
        for i in 0..60 {
            earlier.push_str(&format!(
                "Line {i} of an earlier answer, with some *styled* words.\n\n"
            ));
        }
        app.push_answer(&earlier, true);
    }
    let mut text = String::from("Here it is:\n\n```rust\n");
    for i in 0..lines {
        text.push_str(&format!(
            "    let value_{i} = compute({i}, \"label\"); // step {i}\n"
        ));
    }
    text.push_str("    let last =");
    app.push_answer(&text, false);
    app.prepare();
    app
}

fn paragraph_app(tokens: usize) -> BenchApp {
    let mut app = BenchApp::new();
    let words = [
        " The",
        " quick",
        " **brown**",
        " fox",
        " jumps",
        " over",
        " `lazy`",
        " dogs.",
    ];
    app.push_answer("Here it is:\n\nStart", false);
    for i in 0..tokens {
        app.push_token(words[i % words.len()]);
        if i % 64 == 0 {
            app.prepare();
        }
    }
    app.prepare();
    app
}

fn big_trace(bytes: usize) -> Trace {
    let mut t = Trace {
        mode: Mode::Raw,
        url: "http://127.0.0.1:8000/v1/completions".into(),
        status: Some(200),
        prompt: Some(
            "<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>".into(),
        ),
        ..Trace::default()
    };
    let words = [" lorem", " ipsum", " dolor\n", " sit", " amet", " elit\n\n"];
    let mut k = 0u64;
    while t.data.len() < bytes {
        t.push_chunk(words[(k % 6) as usize], k * 10);
        k += 1;
    }
    t
}

fn inspector_app(bytes: usize) -> BenchApp {
    let mut app = BenchApp::new();
    app.push_trace(big_trace(bytes));
    app.open_inspector();
    app.prepare();
    app
}

fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("code block frame");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    for (n, history) in [
        (10usize, false),
        (200, false),
        (2_000, false),
        (10, true),
        (2_000, true),
    ] {
        let id = if history {
            format!("{n} after history")
        } else {
            n.to_string()
        };
        g.bench_with_input(BenchmarkId::from_parameter(id), &n, |b, &n| {
            b.iter_custom(|iters| {
                let mut app = code_app(n, history);
                let mut took = Duration::ZERO;
                for k in 0..iters {
                    if k > 0 && k % RESET == 0 {
                        app = code_app(n, history);
                    }
                    let t0 = Instant::now();
                    app.push_token(" x");
                    app.frame();
                    took += t0.elapsed();
                }
                took
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("paragraph frame");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    for n in [1_000usize, 100_000] {
        // Built once per size: appending to it is what is measured (criterion's few
        // thousand iterations add a few percent to the paragraph).
        let mut app = paragraph_app(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                app.push_token(" word");
                app.frame();
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("inspector");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    let bytes = 2 << 20;
    // Built once (criterion calls the routine several times); room is left for the chunks
    // the iterations add (past 2 MiB a trace drops them).
    let mut app = inspector_app(bytes - (256 << 10));
    let mut k = 0u64;
    g.bench_function("frame/2MiB", |b| {
        b.iter(|| {
            k += 1;
            // As the agent adds a chunk to the trace it shares with the app.
            if let Some(t) = app.last_trace() {
                t.record(&StreamEvent::Chunk {
                    data: " token".into(),
                    at_us: 1_000_000 + k,
                });
            }
            app.frame();
        })
    });
    drop(app);
    // Just under the cap: a trace never holds more (`big_trace` would wait forever).
    let mut app = inspector_app(bytes - 64);
    g.bench_function("search step/2MiB", |b| {
        for c in "/amet".chars() {
            app.feed(key(c));
        }
        app.feed(Event::Key(KeyEvent::new(
            KeyCode::Enter,
            KeyModifiers::NONE,
        )));
        app.inspector_to_top();
        b.iter(|| {
            // Start over now and then, so every step finds a match close by.
            k += 1;
            if k.is_multiple_of(1000) {
                app.inspector_to_top();
            }
            app.feed(key('n'));
            app.prepare();
            black_box(app.inspector_scroll())
        })
    });
    g.finish();
}

// The inspector's token view.
fn token_trace(bytes: usize) -> Trace {
    let mut t = big_trace(0);
    let words = [" lorem", " ipsum", " dolor\n", " sit", " amet", " elit\n\n"];
    let mut k = 0u64;
    while t.data.len() < bytes {
        let w = words[(k % 6) as usize];
        t.record(&StreamEvent::Chunk {
            data: w.into(),
            at_us: k * 10,
        });
        t.record(&StreamEvent::Tokens(vec![token(w, k)]));
        k += 1;
    }
    t
}

fn token(text: &str, k: u64) -> TokenLogprob {
    TokenLogprob {
        id: Some(1000 + (k % 5000) as u32),
        text: text.into(),
        // One in nine unlikely, as the mock server does.
        logprob: Some(if k.is_multiple_of(9) { -2.5 } else { -0.1 }),
        top: (0..5)
            .map(|a| TopLogprob {
                id: Some(2000 + a),
                text: String::new(),
                logprob: -0.1 - a as f32,
            })
            .collect(),
    }
}

fn token_frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("token view");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    let bytes = 2 << 20;
    let mut app = BenchApp::new();
    // Room is left for the chunks the iterations add (past the caps a trace drops them).
    app.push_trace(token_trace(bytes - (256 << 10)));
    app.open_inspector();
    app.feed(key('t'));
    app.select_last_token();
    app.prepare();
    let mut k = 0u64;
    g.bench_function("frame/2MiB", |b| {
        b.iter(|| {
            k += 1;
            if let Some(t) = app.last_trace() {
                t.record(&StreamEvent::Chunk {
                    data: " token".into(),
                    at_us: 1_000_000 + k,
                });
                t.record(&StreamEvent::Tokens(vec![token(" token", k)]));
            }
            app.select_last_token();
            app.frame();
        })
    });
    g.finish();
}

criterion_group!(benches, frames, token_frames);
criterion_main!(benches);
