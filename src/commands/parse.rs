//! `kimi-tui parse`: raw completion in, the OpenAI shape (or the event stream) out; with
//! `--trace`, a saved trace's chunks parsed again exactly as they arrived.

use anyhow::Result;

use super::{input, stream_json, write_stdout};
use crate::cli::ParseArgs;
use kimi_protocol::event::Coalescer;
use kimi_protocol::k3::K3Parser;
use kimi_protocol::{Collector, Event, Parser, Template};

/// The parser of the template's protocol: K2's markers or K3's XTML channels.
enum AnyParser {
    K2(Parser),
    K3(K3Parser),
}

impl AnyParser {
    fn feed(&mut self, chunk: &str, sink: &mut impl FnMut(Event<'_>)) {
        match self {
            AnyParser::K2(p) => p.feed(chunk, sink),
            AnyParser::K3(p) => p.feed(chunk, sink),
        }
    }

    fn finish(&mut self, sink: &mut impl FnMut(Event<'_>)) {
        match self {
            AnyParser::K2(p) => p.finish(sink),
            AnyParser::K3(p) => p.finish(sink),
        }
    }
}

pub fn run(args: &ParseArgs) -> Result<()> {
    if let Some(path) = &args.trace {
        return trace(path);
    }
    let (name, text) = input::read(args.file.as_deref())?;
    let chunks: Vec<String> = if args.chunks {
        input::json(&name, &text, "a JSON array of strings")?
    } else {
        vec![text]
    };
    let template = args.template.unwrap_or_default();
    let mut parser = if template == Template::K3 {
        // The K3 prompt opens the think channel, or the response channel with thinking off.
        AnyParser::K3(K3Parser::new(!args.thinking_off))
    } else {
        // K2.5/K2.6 prompts end with an open `<think>` unless thinking is off.
        let in_reasoning = args.starts_in_reasoning
            || (matches!(template, Template::K25 | Template::K26) && !args.thinking_off);
        AnyParser::K2(Parser::with_reasoning(in_reasoning))
    };
    let out = if args.events {
        let mut events = Coalescer::default();
        let mut sink = |ev: Event<'_>| events.push(ev);
        chunks.iter().for_each(|c| parser.feed(c, &mut sink));
        parser.finish(&mut sink);
        let mut out = String::new();
        for ev in events.into_events() {
            out.push_str(&kimi_core::json_out::to_string(&ev.to_json_in(template))?);
            out.push('\n');
        }
        out
    } else {
        let mut collector = Collector::default();
        let mut sink = |ev: Event<'_>| collector.push(&ev);
        chunks.iter().for_each(|c| parser.feed(c, &mut sink));
        parser.finish(&mut sink);
        let mut out = kimi_core::json_out::to_string_pretty(&collector.finish())?;
        out.push('\n');
        out
    };
    write_stdout(out.as_bytes())
}

/// `parse --trace FILE`: the trace's chunks through the decoder of its mode (raw: the marker
/// parser; chat: the SSE payloads with the delta assembly), one JSON line per chunk and per
/// event, as the live turn reported them; last, the result.
fn trace(path: &std::path::Path) -> Result<()> {
    let file = stream_json::load(path)?;
    let mut lines = stream_json::Lines::default();
    let mut out = String::new();
    let mut failed = None;
    let (events, result) = kimi_client::replay::reparse(&file.trace).events_and_result();
    for ev in &events {
        if let Some(v) = lines.line(ev) {
            match kimi_core::json_out::to_string(&v) {
                Ok(s) => {
                    out.push_str(&s);
                    out.push('\n');
                }
                Err(e) => failed = Some(e),
            }
        }
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    out.push_str(&kimi_core::json_out::to_string(&result_json(&result))?);
    out.push('\n');
    write_stdout(out.as_bytes())
}

pub use kimi_client::event_json::result_json;
