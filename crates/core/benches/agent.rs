//! One turn through the agent to a reader, against the mock server over loopback, streamed one
//! byte per SSE event (about 650 events): what the engine adds between the socket and the screen.
//! Run on the TUI's runtime (two workers), the reader taking every event as the app does.

// A bench: a failed unwrap in setup is a broken bench, as in tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kimi_client::{Backend, Endpoint};
use kimi_core::config::Profile;
use kimi_core::engine::{
    Agent, AgentInit, EVENT_QUEUE, EngineEvent, Op, Supervisor, SupervisorInit, Switchboard,
};
use kimi_core::tools::Toolbox;
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::Mode;

/// One turn in `mode`, bench `name`. In chat mode each `content` delta carries one byte: what the
/// chat path (the reasoning and content channels, the `</think>` watch, the marker parser)
/// costs per event.
fn bench_turn(c: &mut Criterion, mode: Mode, name: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let opts = MockOptions {
        chunk_bytes: Some(1),
        ..MockOptions::default()
    };
    let server = rt.block_on(MockServer::start(opts, 0)).expect("mock");
    let ep = Endpoint::new(mode, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    let backend = Backend::new(ep).expect("client");
    let mut g = c.benchmark_group("agent");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function(name, |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut agent = Agent::spawn(
                    AgentInit {
                        backend: backend.clone(),
                        toolbox: Toolbox::default(),
                        max_rounds: 1,
                        system_prompt: None,
                        conversation: Vec::new(),
                        traces: Vec::new(),
                    },
                    EVENT_QUEUE,
                );
                agent.send(Op::UserTurn {
                    text: "Tell me about Rust.".into(),
                });
                let mut events = 0u32;
                while let Some(e) = agent.events.recv().await {
                    events += 1;
                    if matches!(e, EngineEvent::TurnDone { .. }) {
                        break;
                    }
                }
                agent.send(Op::Shutdown);
                assert!(events > 600, "{events}");
            })
        })
    });
    g.finish();
    rt.block_on(server.shutdown());
}

fn turn(c: &mut Criterion) {
    bench_turn(c, Mode::Raw, "turn_650_events");
}

fn chat_turn(c: &mut Criterion) {
    bench_turn(c, Mode::Chat, "chat_turn_650_events");
}

/// The raw turn through the agent's supervisor, read as the TUI reads it: what forwarding,
/// the conversation mirror and the call checks add per event (a cleared conversation after
/// each turn, so every turn sends the same request).
fn supervised_turn(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let opts = MockOptions {
        chunk_bytes: Some(1),
        ..MockOptions::default()
    };
    let server = rt.block_on(MockServer::start(opts, 0)).expect("mock");
    let mut profile = Profile::new(Mode::Raw, &server.base_url());
    profile.model = "moonshotai/Kimi-K2-Instruct".into();
    let mut g = c.benchmark_group("agent");
    g.measurement_time(Duration::from_secs(5));
    // One supervisor (its client and connection kept, as in the app), cleared after each turn.
    let board =
        Switchboard::new("b".into(), profile, Default::default(), None).expect("no key needed");
    let init = SupervisorInit {
        toolbox: Toolbox::default(),
        system_prompt: None,
        conversation: Vec::new(),
        traces: Vec::new(),
    };
    let mut agent = rt
        .block_on(async { Supervisor::spawn(board, init, EVENT_QUEUE) })
        .expect("client");
    g.bench_function("supervised_turn_650_events", |b| {
        b.iter(|| {
            rt.block_on(async {
                agent.send(Op::UserTurn {
                    text: "Tell me about Rust.".into(),
                });
                let mut events = 0u32;
                while let Some(e) = agent.recv().await {
                    events += 1;
                    if matches!(e, EngineEvent::TurnDone { .. }) {
                        break;
                    }
                }
                assert!(events > 600, "{events}");
                agent.send(Op::Clear);
                while let Some(e) = agent.recv().await {
                    if matches!(e, EngineEvent::Cleared) {
                        break;
                    }
                }
            })
        })
    });
    agent.send(Op::Shutdown);
    g.finish();
    rt.block_on(server.shutdown());
}

criterion_group!(benches, turn, chat_turn, supervised_turn);
criterion_main!(benches);
