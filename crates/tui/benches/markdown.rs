//! Markdown rendering: a whole 20 KB message at width 100, and a message streamed as 10,000
//! tokens through `MarkdownCache` with `lines()` every 50 tokens (what the TUI does at its
//! frame rate). Before the benchmarks, prints the heap that a `MarkdownCache` holds after
//! streaming 100,000 tokens (the app must stay under 30 MB resident).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kimi_ui::bench::{MarkdownCache, Theme, render};

/// Counts live heap bytes, to report what the cache keeps.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A deterministic assistant answer of about `size` bytes: prose with inline styles, lists,
/// code blocks, a table, quotes and CJK.
fn message(size: usize) -> String {
    let sections = [
        "## Overview\n\nThe **parser** reads the stream in *chunks* and emits `events` as soon as \
         they are complete; see [the docs](https://example.com/docs/parser) for details. \
         It never blocks on partial input.\n\n",
        "1. Install the tool:\n\n   ```bash\n   cargo install kimi-tui --locked\n   ```\n\n\
         2. Run it with `--demo`.\n3. Press **F1** for help.\n\n",
        "```rust\nfn main() {\n    let args: Vec<String> = std::env::args().collect();\n    \
         // Print each argument with its index.\n    for (i, a) in args.iter().enumerate() {\n        \
         println!(\"{i}: {a}\");\n    }\n}\n```\n\n",
        "- fast: linear in the input\n- small: no big tables\n  - nested point with more text that \
         wraps at a narrow width\n- safe: no `unsafe`\n\n",
        "| Option | Default | Meaning |\n|---|---:|---|\n| `--width` | 100 | wrap width |\n| \
         `--theme` | dark | colours |\n\n",
        "> Note: 北京今天晴，气温二十五度。这是一段很长的中文文本，用于测试换行。\n\n",
        "```python\ndef fib(n: int) -> int:\n    \"\"\"Return the n-th number.\"\"\"\n    return n \
         if n < 2 else fib(n - 1) + fib(n - 2)\n```\n\n",
    ];
    let mut out = String::with_capacity(size + 1024);
    let mut i = 0;
    while out.len() < size {
        out.push_str(sections[i % sections.len()]);
        i += 1;
    }
    out
}

/// Split text into model-like tokens: at most 4 chars, a new token at each space or newline.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut n = 0;
    for (i, c) in text.char_indices() {
        if i > start && (c == ' ' || c == '\n' || n >= 4) {
            out.push(&text[start..i]);
            start = i;
            n = 0;
        }
        n += 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn stream(toks: &[&str], every: usize, width: u16, theme: &Theme) -> MarkdownCache {
    let mut cache = MarkdownCache::new();
    for (k, t) in toks.iter().enumerate() {
        cache.push_str(t);
        if (k + 1) % every == 0 {
            black_box(cache.lines(width, theme).len());
        }
    }
    black_box(cache.lines(width, theme).len());
    cache
}

fn report_memory() {
    let theme = Theme::default();
    let text = message(600_000);
    let toks = tokens(&text);
    let toks = &toks[..toks.len().min(100_000)];
    let streamed: usize = toks.iter().map(|t| t.len()).sum();
    let before = LIVE.load(Ordering::Relaxed);
    let t0 = Instant::now();
    let cache = stream(toks, 50, 100, &theme);
    let took = t0.elapsed();
    let held = LIVE.load(Ordering::Relaxed) - before;
    eprintln!(
        "markdown: {} tokens ({} KB) streamed with lines() every 50 tokens in {:.0} ms; \
         the cache holds {:.1} MB of heap for {} lines",
        toks.len(),
        streamed / 1024,
        took.as_secs_f64() * 1e3,
        held as f64 / (1024.0 * 1024.0),
        cache.cached_lines().len()
    );
    drop(cache);
}

fn benches(c: &mut Criterion) {
    report_memory();
    let theme = Theme::default();

    let text = message(20_000);
    let mut g = c.benchmark_group("markdown");
    g.sample_size(30).measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("render_20KB_width_100", |b| {
        b.iter(|| black_box(render(black_box(&text), 100, &theme)))
    });

    let long = message(200_000);
    let toks = tokens(&long);
    let toks = &toks[..10_000];
    let bytes: usize = toks.iter().map(|t| t.len()).sum();
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("stream_10k_tokens_lines_every_50", |b| {
        b.iter(|| stream(toks, 50, 100, &theme))
    });
    g.finish();
}

criterion_group!(markdown_benches, benches);
criterion_main!(markdown_benches);
