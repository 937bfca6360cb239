//! A 10 MB paste: the `update` that takes it (refused above the 1 MiB draft cap) and the frame
//! after it; a frame with the resulting draft; and a key typed into a draft at the cap. All must
//! stay well under a second (the issue: 27 s before); a frame must not grow with the draft.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_ui::bench::{BenchApp, MAX_DRAFT_BYTES};

fn pasted(lines: bool) -> String {
    let line = "2026-12-01T12:00:00Z INFO request handled in 12 ms path=/v1/completions 北京\r\n";
    let text = line.repeat(10_000_000 / line.len());
    if lines {
        text
    } else {
        text.replace("\r\n", " ")
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("paste 10 MB");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (name, lines) in [("lines", true), ("one line", false)] {
        let text = pasted(lines);
        g.bench_function(format!("{name}: update + first frame"), |b| {
            b.iter_batched(
                BenchApp::new,
                |mut app| {
                    app.feed(Event::Paste(text.clone()));
                    app.frame();
                    app
                },
                criterion::BatchSize::PerIteration,
            )
        });
        let mut app = BenchApp::new();
        app.feed(Event::Paste(text.clone()));
        g.bench_function(format!("{name}: a frame with the draft"), |b| {
            b.iter(|| app.frame())
        });
    }
    // At the cap: a draft of 1 MiB, one key typed and the frame drawn.
    let mut app = BenchApp::new();
    let line = "x".repeat(99) + "\n";
    app.feed(Event::Paste(line.repeat(MAX_DRAFT_BYTES / 100 - 1)));
    let key = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
    g.bench_function("1 MiB draft: a key typed + frame", |b| {
        b.iter(|| {
            app.feed(Event::Key(key));
            app.frame();
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
