//! The tool declaration that opens the prompt, with the tokenizer-side preprocessing (key
//! sort, TypeScript form) that a server running Moonshot's tokenizer applies.

use serde_json::Value;

use super::RenderOptions;
use crate::family::Template;
use crate::json;
use crate::tokens::{IM_END, IM_MIDDLE, IM_SYSTEM};
use crate::tools_ts;

/// `<|im_system|>tool_declare<|im_middle|>` + the declaration + `<|im_end|>`, if `tools` is
/// not empty.
pub(super) fn write(
    out: &mut String,
    tools: &[Value],
    opts: RenderOptions,
    tools_ts_str: Option<&str>,
) {
    if tools.is_empty() {
        return;
    }
    let thinking_family = opts.template != Template::K2Instruct;
    let sort = opts.sort_tool_keys || (thinking_family && opts.preprocess_tools);
    let tools = Value::Array(tools.to_vec());
    let tools = if sort {
        json::sorted_keys(&tools)
    } else {
        tools
    };
    out.push_str(IM_SYSTEM);
    out.push_str("tool_declare");
    out.push_str(IM_MIDDLE);
    let typescript = match opts.template {
        Template::K25 | Template::K26 => match tools_ts_str.filter(|s| !s.is_empty()) {
            Some(given) => Some(given.to_owned()),
            None if opts.preprocess_tools => match &tools {
                Value::Array(list) => tools_ts::encode(list).ok(),
                _ => None,
            },
            None => None,
        },
        Template::K2Instruct | Template::K2Thinking | Template::K3 => None,
    };
    match typescript {
        Some(ts) => out.push_str(&ts),
        None => json::write_value(out, &tools, json::COMPACT),
    }
    out.push_str(IM_END);
}
