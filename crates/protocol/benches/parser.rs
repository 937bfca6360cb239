//! Stream parser throughput on a mixed completion (text, CJK, emoji, tool calls with large
//! arguments), fed whole and in 4-byte chunks, at 1 MB and 10 MB to show linear scaling; and a
//! thinking model's completion that starts in the reasoning.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kimi_protocol::tokens::*;
use kimi_protocol::{Event, Parser, parse_chunks};

/// About `size` bytes of completion text, deterministic.
fn mixed_stream(size: usize) -> String {
    let prose = "The quick brown fox jumps over the lazy dog; x < y && y > z. \
                 北京今天晴，气温二十五度。天気は晴れです。😀 Some `code` and **bold** text.\n";
    let mut out = String::with_capacity(size + 200_000);
    let mut i = 0usize;
    while out.len() < size {
        for _ in 0..40 {
            out.push_str(prose);
        }
        out.push_str(TOOL_CALLS_SECTION_BEGIN);
        for k in 0..2 {
            out.push_str(TOOL_CALL_BEGIN);
            out.push_str(&format!("functions.write_file:{k}"));
            out.push_str(TOOL_CALL_ARGUMENT_BEGIN);
            // A large argument: a file's content, JSON-escaped, with '<' that is not a marker.
            let body = "fn main() { if a < b { println!(\\\"<|not a marker|>\\\"); } }\\n"
                .repeat(200 + (i % 7) * 100);
            out.push_str(&format!(
                "{{\"path\": \"src/f{i}.rs\", \"content\": \"{body}\"}}"
            ));
            out.push_str(TOOL_CALL_END);
        }
        out.push_str(TOOL_CALLS_SECTION_END);
        i += 1;
    }
    out.push_str(IM_END);
    out
}

/// `s` in chunks of `n` bytes, each moved back to a char boundary.
fn chunks(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::with_capacity(s.len() / n + 1);
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + n).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    out
}

fn run(parts: &[&str]) -> usize {
    run_with(Parser::new(), parts)
}

fn run_with(mut parser: Parser, parts: &[&str]) -> usize {
    let mut n = 0usize;
    let mut sink = |ev: Event<'_>| {
        n += match ev {
            Event::Text { text } | Event::Reasoning { text } => text.len(),
            Event::ToolCallArgs { delta, .. } => delta.len(),
            _ => 1,
        }
    };
    for p in parts {
        parser.feed(black_box(p), &mut sink);
    }
    parser.finish(&mut sink);
    n
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("parser");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for (label, size) in [("1MB", 1 << 20), ("10MB", 10 << 20)] {
        let s = mixed_stream(size);
        let four = chunks(&s, 4);
        g.throughput(Throughput::Bytes(s.len() as u64));
        g.bench_function(format!("{label}/whole"), |b| b.iter(|| run(&[s.as_str()])));
        g.bench_function(format!("{label}/4-byte chunks"), |b| b.iter(|| run(&four)));
        g.bench_function(format!("{label}/to OpenAI shape, 4-byte chunks"), |b| {
            b.iter(|| parse_chunks(four.iter().copied()).tool_calls.len())
        });
    }
    // A K2.5 completion: it starts in the reasoning (half of the text, with `</...` tags that
    // are not `</think>`), then `</think>` and the same mixed stream.
    let s = format!(
        "{}{THINK_END}{}",
        "Thinking about </b> and <think> x < y. ".repeat((1 << 20) / 40),
        mixed_stream(1 << 20)
    );
    let four = chunks(&s, 4);
    g.throughput(Throughput::Bytes(s.len() as u64));
    g.bench_function("2MB reasoning then mixed/whole", |b| {
        b.iter(|| run_with(Parser::starting_in_reasoning(), &[s.as_str()]))
    });
    g.bench_function("2MB reasoning then mixed/4-byte chunks", |b| {
        b.iter(|| run_with(Parser::starting_in_reasoning(), &four))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
