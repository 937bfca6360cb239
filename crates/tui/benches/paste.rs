//! A 10 MB paste: the `update` that takes it (refused above the 1 MiB draft cap) and the frame
//! after it; a frame with the resulting draft; and a key typed into a draft at the cap. All must
//! stay well under a second (the issue: 27 s before); a frame must not grow with the draft.

mod common;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_ui::app::event::AppEvent;
use kimi_ui::app::paste::MAX_DRAFT_BYTES;
use kimi_ui::ui;

/// `update` with the event stamped now, as the event loop does.
fn update(app: &mut kimi_ui::app::state::App, event: AppEvent) -> Vec<kimi_ui::app::event::Effect> {
    kimi_ui::app::update::update(app, event, std::time::Instant::now())
}

/// About 10 MB of log-like lines (CRLF, as some terminals send), or one 10 MB line.
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
    let theme = ui::markdown::Theme::default();
    let mut g = c.benchmark_group("paste 10 MB");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (name, lines) in [("lines", true), ("one line", false)] {
        let text = pasted(lines);
        g.bench_function(format!("{name}: update + first frame"), |b| {
            b.iter_batched(
                common::new_app,
                |mut app| {
                    let mut term = common::terminal();
                    update(&mut app, AppEvent::Terminal(Event::Paste(text.clone())));
                    common::frame(&mut term, &mut app, &theme);
                    app
                },
                criterion::BatchSize::PerIteration,
            )
        });
        let mut app = common::new_app();
        update(&mut app, AppEvent::Terminal(Event::Paste(text.clone())));
        let mut term = common::terminal();
        g.bench_function(format!("{name}: a frame with the draft"), |b| {
            b.iter(|| {
                common::frame(&mut term, &mut app, &theme);
            })
        });
    }
    // At the cap: a draft of 1 MiB, one key typed and the frame drawn.
    let mut app = common::new_app();
    let line = "x".repeat(99) + "\n";
    update(
        &mut app,
        AppEvent::Terminal(Event::Paste(line.repeat(MAX_DRAFT_BYTES / 100 - 1))),
    );
    let mut term = common::terminal();
    let key = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
    g.bench_function("1 MiB draft: a key typed + frame", |b| {
        b.iter(|| {
            update(&mut app, AppEvent::Terminal(Event::Key(key)));
            common::frame(&mut term, &mut app, &theme);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
