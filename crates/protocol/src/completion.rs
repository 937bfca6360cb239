//! A whole completion in the OpenAI shape: the parser's events collected into content, complete
//! tool calls, a finish reason and warnings.

use serde::Serialize;
use serde_json::{Map, Value};

use super::event::Event;
use super::message::ToolCall;
use super::parser::Parser;
use super::warning::{CutBy, K3Note, Warning};

/// Why the turn ended, as the OpenAI API reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    /// The stream stopped inside a tool call (max_tokens or a cut connection).
    Length,
}

/// A completion mapped to the OpenAI message shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParsedCompletion {
    /// All text outside tool-call sections, exactly.
    pub content: String,
    /// Reasoning (thinking models), exactly; empty when there was none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// Complete calls only (closed by `<|tool_call_end|>`), in order.
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub warnings: Vec<Warning>,
    /// Calls that began and were cut off (never run); not printed when there were none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub incomplete_calls: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Collects parser events of one turn. Use it while streaming, then [`Collector::finish`].
#[derive(Debug, Default)]
pub struct Collector {
    content: String,
    reasoning: String,
    /// Calls in order of their index.
    calls: Vec<CallState>,
    warnings: Vec<Warning>,
    incomplete_calls: usize,
}

#[derive(Debug)]
struct CallState {
    index: usize,
    call: ToolCall,
    complete: bool,
}

impl Collector {
    pub fn push(&mut self, ev: &Event<'_>) {
        match ev {
            Event::Text { text } => self.content.push_str(text),
            Event::Reasoning { text } => self.reasoning.push_str(text),
            Event::ToolCallBegin { index, id, name } => self.calls.push(CallState {
                index: *index,
                call: ToolCall::new(id.as_ref(), name.as_ref(), String::new()),
                complete: false,
            }),
            Event::ToolCallArgs { index, delta } => {
                if let Some(c) = self.call_mut(*index) {
                    c.call.function.arguments.push_str(delta);
                }
            }
            Event::ToolCallEnd { index } => {
                if let Some(c) = self.call_mut(*index) {
                    c.complete = true;
                }
            }
            Event::Warning { warning } => {
                // A K2 call cut in its header, or closed without arguments, never got an
                // incomplete event but is an incomplete call all the same.
                if matches!(
                    warning,
                    Warning::IncompleteHeader { .. } | Warning::CallWithoutArguments { .. }
                ) {
                    self.incomplete_calls += 1;
                }
                self.warnings.push(warning.clone())
            }
            Event::ToolCallIncomplete { .. } => self.incomplete_calls += 1,
            Event::ReasoningWasText => {
                let reasoning = std::mem::take(&mut self.reasoning);
                self.content.insert_str(0, &reasoning);
            }
            Event::TextWasReasoning => {
                let content = std::mem::take(&mut self.content);
                self.reasoning.insert_str(0, &content);
            }
            Event::Marker { .. } | Event::SectionBegin | Event::SectionEnd | Event::TurnEnd => {}
        }
    }

    fn call_mut(&mut self, index: usize) -> Option<&mut CallState> {
        // Events only touch the latest call.
        self.calls.last_mut().filter(|c| c.index == index)
    }

    /// The content received so far.
    pub fn content(&self) -> &str {
        &self.content
    }

    pub fn finish(self) -> ParsedCompletion {
        let mut warnings = self.warnings;
        let truncated = warnings.iter().any(|w| {
            matches!(
                w,
                Warning::IncompleteCall {
                    cut_by: CutBy::StreamEnd,
                    ..
                } | Warning::IncompleteHeader {
                    cut_by: CutBy::StreamEnd,
                    ..
                } | Warning::K3(K3Note::IncompleteCall {
                    cut_by: CutBy::StreamEnd
                })
            )
        });
        let mut tool_calls = Vec::new();
        for c in self.calls.into_iter().filter(|c| c.complete) {
            if let Some(w) = check_arguments(c.index, &c.call) {
                warnings.push(w);
            }
            tool_calls.push(c.call);
        }
        let finish_reason = if truncated {
            FinishReason::Length
        } else if !tool_calls.is_empty() {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        ParsedCompletion {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls,
            finish_reason,
            warnings,
            incomplete_calls: self.incomplete_calls,
        }
    }
}

/// Why a call's argument text is not a JSON object, as [`parse_arguments`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentsError {
    /// Not valid JSON; the parser's message.
    Invalid(String),
    /// A JSON string that itself holds JSON.
    DoubleEncoded,
    /// Valid JSON, but not an object.
    NotAnObject,
}

/// Parse a call's argument text. Only a JSON object is accepted: the one rule shared by the
/// completion warnings here and the tool runner's validation.
pub fn parse_arguments(arguments: &str) -> Result<Map<String, Value>, ArgumentsError> {
    match serde_json::from_str::<Value>(arguments) {
        Err(e) => Err(ArgumentsError::Invalid(e.to_string())),
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::String(inner)) if serde_json::from_str::<Value>(&inner).is_ok() => {
            Err(ArgumentsError::DoubleEncoded)
        }
        Ok(_) => Err(ArgumentsError::NotAnObject),
    }
}

/// Why these arguments must not be run as they are, if they must not.
pub fn check_arguments(index: usize, call: &ToolCall) -> Option<Warning> {
    let id = call.id.clone();
    match parse_arguments(&call.function.arguments) {
        Ok(_) => None,
        Err(ArgumentsError::Invalid(error)) => Some(Warning::InvalidArguments { index, id, error }),
        Err(ArgumentsError::DoubleEncoded) => Some(Warning::DoubleEncodedArguments { index, id }),
        Err(ArgumentsError::NotAnObject) => Some(Warning::ArgumentsNotObject { index, id }),
    }
}

/// Parse a complete completion, fed in the given chunks.
pub fn parse_chunks<'c>(chunks: impl IntoIterator<Item = &'c str>) -> ParsedCompletion {
    parse_chunks_with(Parser::new(), chunks)
}

/// [`parse_chunks`] with a given parser (e.g. [`Parser::starting_in_reasoning`]).
pub fn parse_chunks_with<'c>(
    mut parser: Parser,
    chunks: impl IntoIterator<Item = &'c str>,
) -> ParsedCompletion {
    let mut collector = Collector::default();
    let mut sink = |ev: Event<'_>| collector.push(&ev);
    for chunk in chunks {
        parser.feed(chunk, &mut sink);
    }
    parser.finish(&mut sink);
    collector.finish()
}

/// Parse a complete completion.
pub fn parse_completion(text: &str) -> ParsedCompletion {
    parse_chunks([text])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::*;

    fn call(id: &str, args: &str) -> String {
        format!("{TOOL_CALL_BEGIN}{id}{TOOL_CALL_ARGUMENT_BEGIN}{args}{TOOL_CALL_END}")
    }

    #[test]
    fn plain_answer_stops() {
        let p = parse_completion("It's sunny.<|im_end|>");
        assert_eq!(p.content, "It's sunny.");
        assert!(p.tool_calls.is_empty());
        assert_eq!(p.finish_reason, FinishReason::Stop);
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn calls_map_to_openai_shape() {
        let s = format!(
            "Checking.{TOOL_CALLS_SECTION_BEGIN}{}{}{TOOL_CALLS_SECTION_END} Done?{IM_END}",
            call("functions.get_weather:0", "{\"city\": \"Beijing\"}"),
            call("functions.ns.lookup:1", " {\"q\": 1} ")
        );
        let p = parse_completion(&s);
        assert_eq!(p.content, "Checking. Done?");
        assert_eq!(p.finish_reason, FinishReason::ToolCalls);
        assert_eq!(
            p.tool_calls,
            vec![
                ToolCall::new(
                    "functions.get_weather:0",
                    "get_weather",
                    "{\"city\": \"Beijing\"}"
                ),
                ToolCall::new("functions.ns.lookup:1", "ns.lookup", "{\"q\": 1}"),
            ]
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn incomplete_call_is_not_listed_and_finish_is_length() {
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}{}{TOOL_CALL_BEGIN}functions.b:1{TOOL_CALL_ARGUMENT_BEGIN}{{\"x\":",
            call("functions.a:0", "{}")
        );
        let p = parse_completion(&s);
        assert_eq!(p.tool_calls.len(), 1);
        assert_eq!(p.tool_calls[0].function.name, "a");
        assert_eq!(p.finish_reason, FinishReason::Length);
        let text: Vec<String> = p.warnings.iter().map(|w| w.to_string()).collect();
        assert!(
            text.iter()
                .any(|w| w.contains("incomplete") && w.contains("functions.b:1")),
            "{text:?}"
        );
    }

    #[test]
    fn bad_arguments_are_flagged() {
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}{}{}{}{TOOL_CALLS_SECTION_END}",
            call("functions.a:0", "{\"x\": "),
            call("functions.b:1", "\"{\\\"x\\\": 1}\""),
            call("functions.c:2", "[1]"),
        );
        let p = parse_completion(&s);
        assert_eq!(
            p.tool_calls.len(),
            3,
            "complete calls are listed even if bad"
        );
        assert!(matches!(
            p.warnings[0],
            Warning::InvalidArguments { index: 0, .. }
        ));
        assert!(matches!(
            p.warnings[1],
            Warning::DoubleEncodedArguments { index: 1, .. }
        ));
        assert!(matches!(
            p.warnings[2],
            Warning::ArgumentsNotObject { index: 2, .. }
        ));
        assert!(p.warnings[0].to_string().contains("not valid JSON"));
    }
}
