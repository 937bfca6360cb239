//! Frame cost with 10, 1,000 and 10,000 messages in the transcript while the last one streams:
//! each iteration appends a token to the last answer, lays out and draws a 120x40 frame.
//! Flat figures across history sizes mean a frame only touches what is visible.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kimi_ui::bench::BenchApp;

fn app_with(messages: usize) -> BenchApp {
    let mut app = BenchApp::new();
    for i in 0..messages.saturating_sub(1) {
        if i % 2 == 0 {
            app.push_user(&format!(
                "Question {i}: how does this work in Rust and in 北京?"
            ));
        } else {
            app.push_answer(
                &format!(
                    "## Answer {i}\n\nSome **text** with `code`.\n\n```rust\nfn main() {{ println!(\"{i}\"); }}\n```\n\n- one\n- two\n"
                ),
                true,
            );
        }
    }
    app.push_answer("", false);
    app
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame while streaming");
    g.sample_size(30).measurement_time(Duration::from_secs(3));
    for n in [10usize, 1_000, 10_000] {
        let mut app = app_with(n);
        // Lay out once so the history's caches exist, as in a running app.
        app.prepare();
        let mut k = 0u64;
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                k += 1;
                app.push_token(if k.is_multiple_of(12) {
                    "\n\n"
                } else {
                    " token"
                });
                app.frame();
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
