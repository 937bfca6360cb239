//! `kimi-tui parse`: raw completion in, the OpenAI shape (or the event stream) out.

use anyhow::Result;

use super::{input, write_stdout};
use crate::cli::ParseArgs;
use kimi_protocol::event::Coalescer;
use kimi_protocol::{Collector, Event, Parser, Template};

pub fn run(args: &ParseArgs) -> Result<()> {
    let (name, text) = input::read(args.file.as_deref())?;
    let chunks: Vec<String> = if args.chunks {
        input::json(&name, &text, "a JSON array of strings")?
    } else {
        vec![text]
    };
    let template = args.template.unwrap_or_default();
    // K2.5/K2.6 prompts end with an open `<think>` unless thinking is off (spec section 7).
    let in_reasoning = args.starts_in_reasoning
        || (matches!(template, Template::K25 | Template::K26) && !args.thinking_off);
    let mut parser = Parser::with_reasoning(in_reasoning);
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
