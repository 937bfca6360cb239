//! The inspector as a server debugger at 2 MiB, 120x40:
//!
//! - `inspector server/frame/2MiB parsed`: a raw-mode trace recorded from its events as the
//!   agent records them (each chunk with the text the parser made of it, a call every 500
//!   chunks, a stall every 1,000) gets one more chunk and its text, then the open inspector is
//!   laid out and drawn: the gap column, `→ text`, stall badges and the end of the stream.
//! - `inspector server/stall jump/2MiB`: `}` (next stall) and the frame after it.
//!
//! Compare with `stream_render`'s `inspector/frame/2MiB` (chunks without parsed events).

// A bench: a failed unwrap in setup is a broken bench, as in tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_protocol::{Mode, RequestSent, StreamEvent, Trace};
use kimi_ui::bench::BenchApp;

fn recorded_trace(bytes: usize) -> Trace {
    let mut t = Trace::default();
    t.record(&StreamEvent::Request(Box::new(RequestSent {
        mode: Mode::Raw,
        url: "http://127.0.0.1:8000/v1/completions".into(),
        prompt: Some(
            "<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>".into(),
        ),
        ..RequestSent::default()
    })));
    t.record(&StreamEvent::Response { status: 200 });
    let words = [" lorem", " ipsum", " dolor\n", " sit", " amet", " elit\n\n"];
    let mut k = 0u64;
    let mut at = 0u64;
    while t.data.len() < bytes {
        // A stall every 1,000 chunks.
        at += if k % 1000 == 999 { 1_500_000 } else { 10_000 };
        let w = words[(k % 6) as usize];
        t.record(&StreamEvent::Chunk {
            data: w.into(),
            at_us: at,
        });
        if k % 500 == 499 {
            let index = (k / 500) as usize;
            t.record(&StreamEvent::ToolCallBegin {
                index,
                id: format!("functions.f:{index}"),
                name: "f".into(),
            });
            t.record(&StreamEvent::ToolCallArgs {
                index,
                delta: w.into(),
            });
            t.record(&StreamEvent::ToolCallEnd { index });
        } else {
            t.record(&StreamEvent::Text(w.into()));
        }
        k += 1;
    }
    t
}

fn inspector_app(bytes: usize) -> BenchApp {
    let mut app = BenchApp::new();
    app.push_trace(recorded_trace(bytes));
    app.open_inspector();
    app.prepare();
    app
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("inspector server");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    let bytes = 2 << 20;
    // Room is left for the chunks the iterations add (past 2 MiB a trace drops them).
    let mut app = inspector_app(bytes - (256 << 10));
    let mut k = 0u64;
    g.bench_function("frame/2MiB parsed", |b| {
        b.iter(|| {
            k += 1;
            if let Some(t) = app.last_trace() {
                t.record(&StreamEvent::Chunk {
                    data: " token".into(),
                    at_us: 100_000_000 + k,
                });
                t.record(&StreamEvent::Text(" token".into()));
            }
            app.frame();
        })
    });
    let key = || Event::Key(KeyEvent::new(KeyCode::Char('}'), KeyModifiers::NONE));
    app.inspector_to_top();
    g.bench_function("stall jump/2MiB", |b| {
        b.iter(|| {
            k += 1;
            // Start over now and then: past the last stall `}` stays put.
            if k.is_multiple_of(200) {
                app.inspector_to_top();
            }
            app.feed(key());
            app.frame();
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
