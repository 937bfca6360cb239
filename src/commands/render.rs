//! `kimi-tui render`: request JSON in, prompt bytes out.

use anyhow::Result;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::{input, write_stdout};
use crate::cli::RenderArgs;
use kimi_protocol::{Message, RenderOptions, render};

/// What `render` reads: the fields of a chat request the template uses.
#[derive(Debug, Deserialize)]
pub struct RenderRequest {
    pub messages: Vec<Message>,
    #[serde(default, deserialize_with = "tools_or_null")]
    pub tools: Vec<Value>,
    /// Absent or null means true: a chat request asks for the assistant's answer.
    #[serde(default)]
    pub add_generation_prompt: Option<bool>,
}

fn tools_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    let tools = Option::<Vec<Map<String, Value>>>::deserialize(d)?;
    Ok(tools
        .unwrap_or_default()
        .into_iter()
        .map(Value::Object)
        .collect())
}

pub fn run(args: &RenderArgs) -> Result<()> {
    let (name, text) = input::read(args.file.as_deref())?;
    let req: RenderRequest = input::json(
        &name,
        &text,
        r#"a request object {"messages": [...], "tools": [...], "add_generation_prompt": bool}"#,
    )?;
    let prompt = render(
        &req.messages,
        &req.tools,
        RenderOptions {
            add_generation_prompt: req.add_generation_prompt.unwrap_or(true),
            sort_tool_keys: args.sort_tool_keys,
            ..Default::default()
        },
    );
    write_stdout(prompt.as_bytes())
}
