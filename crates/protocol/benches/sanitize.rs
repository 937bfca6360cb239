//! Model text made safe for the terminal, per streamed token: the stateless `for_terminal` on
//! each token (what the app did before: its clean-text path is unchanged) against one
//! `StreamSanitizer` fed token by token (what it does now), on 100,000 tokens of prose and of
//! text laced with escape sequences.

// A bench: a failed unwrap in setup is a broken bench, as in tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kimi_protocol::sanitize::{StreamSanitizer, for_terminal};

/// 100,000 tokens of 3-6 bytes, as a model streams them.
fn tokens(hostile: bool) -> Vec<String> {
    let words = [
        "The", " quick", " brown", " fox", " 北京", " café", ",", " jumps", "\n", " over",
    ];
    (0..100_000)
        .map(|i| {
            let w = words[i % words.len()];
            if hostile && i % 50 == 0 {
                // A sequence split over two tokens.
                format!("{w}\u{1b}[3")
            } else if hostile && i % 50 == 1 {
                format!("1m{w}")
            } else {
                w.to_owned()
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    for (name, hostile) in [("prose", false), ("hostile", true)] {
        let toks = tokens(hostile);
        c.bench_function(&format!("for_terminal per token, 100k {name}"), |b| {
            b.iter(|| {
                let mut out = String::new();
                for t in &toks {
                    out.push_str(&for_terminal(black_box(t)));
                }
                out
            })
        });
        c.bench_function(&format!("StreamSanitizer, 100k {name}"), |b| {
            b.iter(|| {
                let mut s = StreamSanitizer::new();
                let mut out = String::new();
                for t in &toks {
                    s.push_into(black_box(t), &mut out);
                }
                out
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
