//! Frame cost with 10, 1,000 and 10,000 messages in the transcript while the last one streams:
//! each iteration appends a token to the last answer, lays out and draws a 120x40 frame.
//! Flat figures across history sizes mean a frame only touches what is visible.

mod common;

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kimi_ui::app::state::{App, AssistantTurn, Entry, TurnState};
use kimi_ui::ui;

fn app_with(messages: usize) -> App {
    let mut app = common::new_app();
    for i in 0..messages.saturating_sub(1) {
        if i % 2 == 0 {
            app.transcript.entries.push(Entry::User {
                text: format!("Question {i}: how does this work in Rust and in 北京?"),
                id: Default::default(),
            });
        } else {
            let mut t = AssistantTurn::new(None);
            t.push_text(&format!(
                "## Answer {i}\n\nSome **text** with `code`.\n\n```rust\nfn main() {{ println!(\"{i}\"); }}\n```\n\n- one\n- two\n"
            ));
            t.state = TurnState::Done;
            app.transcript.entries.push(Entry::Assistant(Box::new(t)));
        }
    }
    app.transcript
        .entries
        .push(Entry::Assistant(Box::new(AssistantTurn::new(None))));
    app
}

fn bench(c: &mut Criterion) {
    let theme = ui::markdown::Theme::default();
    let mut g = c.benchmark_group("frame while streaming");
    g.sample_size(30).measurement_time(Duration::from_secs(3));
    for n in [10usize, 1_000, 10_000] {
        let mut app = app_with(n);
        let mut term = common::terminal();
        // Lay out once so the history's caches exist, as in a running app.
        ui::prepare(&mut app, common::AREA, &theme);
        let mut k = 0u64;
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                k += 1;
                if let Some(Entry::Assistant(t)) = app.transcript.entries.last_mut() {
                    t.push_text(if k.is_multiple_of(12) {
                        "\n\n"
                    } else {
                        " token"
                    });
                }
                common::frame(&mut term, &mut app, &theme);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
