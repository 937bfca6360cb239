//! Frame cost with 10, 1,000 and 10,000 messages in the transcript while the last one streams:
//! each iteration appends a token to the last answer, lays out and draws a 120x40 frame.
//! Flat figures across history sizes mean a frame only touches what is visible.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kimi_core::tools::Toolbox;
use kimi_protocol::Mode;
use kimi_ui::app::state::{App, AssistantTurn, Connection, Entry, TurnState};
use kimi_ui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

fn app_with(messages: usize) -> App {
    let connection = Connection {
        profile: "bench".into(),
        mode: Mode::Raw,
        model: "m".into(),
        host: "127.0.0.1:8000".into(),
    };
    let mut app = App::new(connection, Toolbox::default(), None);
    for i in 0..messages.saturating_sub(1) {
        if i % 2 == 0 {
            app.entries.push(Entry::User {
                text: format!("Question {i}: how does this work in Rust and in 北京?"),
                id: Default::default(),
            });
        } else {
            let mut t = AssistantTurn::new(None);
            t.push_text(&format!(
                "## Answer {i}\n\nSome **text** with `code`.\n\n```rust\nfn main() {{ println!(\"{i}\"); }}\n```\n\n- one\n- two\n"
            ));
            t.state = TurnState::Done;
            app.entries.push(Entry::Assistant(Box::new(t)));
        }
    }
    app.entries
        .push(Entry::Assistant(Box::new(AssistantTurn::new(None))));
    app
}

fn bench(c: &mut Criterion) {
    let theme = ui::markdown::Theme::default();
    let area = Rect::new(0, 0, 120, 40);
    let mut g = c.benchmark_group("frame while streaming");
    g.sample_size(30).measurement_time(Duration::from_secs(3));
    for n in [10usize, 1_000, 10_000] {
        let mut app = app_with(n);
        let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
        // Lay out once so the history's caches exist, as in a running app.
        ui::prepare(&mut app, area, &theme);
        let mut k = 0u64;
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                k += 1;
                if let Some(Entry::Assistant(t)) = app.entries.last_mut() {
                    t.push_text(if k.is_multiple_of(12) {
                        "\n\n"
                    } else {
                        " token"
                    });
                }
                ui::prepare(&mut app, area, &theme);
                term.draw(|f| ui::draw(f, black_box(&app))).expect("draw");
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
