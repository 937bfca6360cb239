//! K3 stream parser throughput on a mixed completion (reasoning, an answer with CJK and emoji,
//! a tools channel with large string arguments holding `<` and K3 marker text), fed whole and
//! in 4-byte chunks, at 1 MB and 10 MB to show linear scaling; next to the K2 parser on a
//! completion of the same size and mix (`cargo bench -p kimi-protocol --bench k3_parser`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kimi_protocol::k3::K3Parser;
use kimi_protocol::tokens::*;
use kimi_protocol::{Event, Parser};

const PROSE: &str = "The quick brown fox jumps over the lazy dog; x < y && y > z. \
                     北京今天晴，气温二十五度。天気は晴れです。😀 Some `code` and **bold** text.\n";

/// A file's content as a large argument, with `<` and marker-looking text that is not a marker.
fn body(i: usize) -> String {
    "fn main() { if a < b { println!(\"<|not a marker|> <|open|>x\"); } }\n"
        .repeat(200 + (i % 7) * 100)
}

/// About `size` bytes of K3 completion text (thinking on), deterministic.
fn k3_stream(size: usize) -> String {
    let mut out = String::with_capacity(size + 200_000);
    for _ in 0..20 {
        out.push_str(PROSE);
    }
    out.push_str("<|close|>think<|sep|><|open|>response<|sep|>");
    let mut i = 0usize;
    while out.len() < size {
        for _ in 0..40 {
            out.push_str(PROSE);
        }
        out.push_str("<|close|>response<|sep|><|open|>tools<|sep|>");
        for k in 0..2 {
            out.push_str(&format!(
                "<|open|>call tool=\"write_file\" index=\"{}\"<|sep|><|open|>argument key=\"path\" type=\"string\"<|sep|>src/f{i}.rs<|close|>argument<|sep|><|open|>argument key=\"content\" type=\"string\"<|sep|>{}<|close|>argument<|sep|><|open|>argument key=\"mode\" type=\"number\"<|sep|>420<|close|>argument<|sep|><|close|>call<|sep|>",
                k + 1,
                body(i)
            ));
        }
        out.push_str("<|close|>tools<|sep|><|open|>response<|sep|>");
        i += 1;
    }
    out.push_str("<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>");
    out
}

/// The same mix as a K2 completion, for comparison.
fn k2_stream(size: usize) -> String {
    let mut out = String::with_capacity(size + 200_000);
    let mut i = 0usize;
    while out.len() < size {
        for _ in 0..40 {
            out.push_str(PROSE);
        }
        out.push_str(TOOL_CALLS_SECTION_BEGIN);
        for k in 0..2 {
            let content = serde_json::to_string(&body(i)).unwrap_or_default();
            out.push_str(&format!(
                "{TOOL_CALL_BEGIN}functions.write_file:{k}{TOOL_CALL_ARGUMENT_BEGIN}{{\"path\": \"src/f{i}.rs\", \"content\": {content}, \"mode\": 420}}{TOOL_CALL_END}"
            ));
        }
        out.push_str(TOOL_CALLS_SECTION_END);
        i += 1;
    }
    out.push_str(IM_END);
    out
}

/// `s` in chunks of `n` bytes, each moved forward to a char boundary.
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

fn count(n: &mut usize, ev: Event<'_>) {
    *n += match ev {
        Event::Text { text } | Event::Reasoning { text } => text.len(),
        Event::ToolCallArgs { delta, .. } => delta.len(),
        _ => 1,
    }
}

fn run_k3(parts: &[&str]) -> usize {
    let mut parser = K3Parser::new(true);
    let mut n = 0usize;
    let mut sink = |ev: Event<'_>| count(&mut n, ev);
    for p in parts {
        parser.feed(black_box(p), &mut sink);
    }
    parser.finish(&mut sink);
    n
}

fn run_k2(parts: &[&str]) -> usize {
    let mut parser = Parser::new();
    let mut n = 0usize;
    let mut sink = |ev: Event<'_>| count(&mut n, ev);
    for p in parts {
        parser.feed(black_box(p), &mut sink);
    }
    parser.finish(&mut sink);
    n
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("k3_parser");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for (label, size) in [("1MB", 1 << 20), ("10MB", 10 << 20)] {
        let k3 = k3_stream(size);
        let k3_four = chunks(&k3, 4);
        g.throughput(Throughput::Bytes(k3.len() as u64));
        g.bench_function(format!("k3 {label}/whole"), |b| {
            b.iter(|| run_k3(&[k3.as_str()]))
        });
        g.bench_function(format!("k3 {label}/4-byte chunks"), |b| {
            b.iter(|| run_k3(&k3_four))
        });
        let k2 = k2_stream(size);
        let k2_four = chunks(&k2, 4);
        g.throughput(Throughput::Bytes(k2.len() as u64));
        g.bench_function(format!("k2 {label}/whole"), |b| {
            b.iter(|| run_k2(&[k2.as_str()]))
        });
        g.bench_function(format!("k2 {label}/4-byte chunks"), |b| {
            b.iter(|| run_k2(&k2_four))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
