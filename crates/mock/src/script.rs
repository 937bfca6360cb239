//! The scripted model: a pure function from a conversation and the declared tool names to what
//! "Kimi" answers. Rules are tried in order; the first that matches wins (see [`reply`]).

use serde_json::{Value, json};

use kimi_protocol::call_id;
use kimi_protocol::json as pyjson;
use kimi_protocol::message::Message;

/// `stream N tokens` is capped so a typo cannot make the server build gigabytes.
pub(crate) const MAX_LOREM_TOKENS: u64 = 10_000_000;

/// What the model says: content text, then tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub content: Text,
    pub calls: Vec<Call>,
}

/// The content of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    Plain(String),
    /// Exactly this many filler word tokens, generated lazily when streamed.
    Lorem {
        tokens: u64,
    },
    /// No content: the prompt ended inside an open tool call (a client prefilling the start of
    /// a call), so the reply closes it with `<|tool_call_end|><|tool_calls_section_end|>`, as
    /// Kimi K2 does.
    CloseCall,
    /// `stream N tokens of code` / `of prose`: N filler tokens laid out as one fenced code
    /// block or as paragraphs (what long answers look like, to measure rendering end to end).
    Shaped {
        tokens: u64,
        shape: Shape,
    },
}

/// The layout of [`Text::Shaped`] filler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One ```` ```rust ```` block of 12-token lines (the fences count as tokens).
    Code,
    /// Paragraphs of 60 tokens separated by blank lines.
    Prose,
    /// One-line paragraphs of 7 tokens, each starting with its number (`Line 00042`), so that
    /// a reader of the screen can tell every line from the others.
    Lines,
}

/// Tokens of one line of [`Shape::Code`].
const CODE_LINE: [&str; 12] = [
    "    let",
    " value",
    " =",
    " compute",
    "(",
    "42",
    ",",
    " \"label\"",
    ")",
    ";",
    " // step",
    "\n",
];

/// Token `i` of `total` of shaped filler text.
pub(crate) fn shaped_token(shape: Shape, i: u64, total: u64) -> std::borrow::Cow<'static, str> {
    use std::borrow::Cow;
    match shape {
        Shape::Code if i == 0 => Cow::Borrowed("```rust\n"),
        Shape::Code if i + 1 == total => Cow::Borrowed("```\n"),
        Shape::Code => Cow::Borrowed(CODE_LINE[((i - 1) % CODE_LINE.len() as u64) as usize]),
        Shape::Lines => {
            let word = LOREM[(i % LOREM.len() as u64) as usize];
            match i % 7 {
                0 => Cow::Owned(format!("Line {:05}", i / 7)),
                6 if i + 1 < total => Cow::Owned(format!("{word}.\n\n")),
                _ => Cow::Borrowed(word),
            }
        }
        Shape::Prose => {
            let word = LOREM[(i % LOREM.len() as u64) as usize];
            // A paragraph starts in column 0 (after its blank line) and ends with a full stop.
            let word = if i.is_multiple_of(60) {
                word.trim_start()
            } else {
                word
            };
            if i % 60 == 59 && i + 1 < total {
                Cow::Owned(format!("{word}.\n\n"))
            } else {
                Cow::Borrowed(word)
            }
        }
    }
}

/// One tool call: the function name and the raw argument text (not necessarily valid JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    pub arguments: String,
}

/// Filler words for `stream N tokens`; each is one token (a word with its leading space).
pub(crate) const LOREM: [&str; 12] = [
    " lorem",
    " ipsum",
    " dolor",
    " sit",
    " amet",
    " consectetur",
    " adipiscing",
    " elit",
    " sed",
    " do",
    " eiusmod",
    " tempor",
];

impl Text {
    /// The whole text (materializes `Lorem`).
    pub fn to_text(&self) -> String {
        match self {
            Text::Plain(s) => s.clone(),
            Text::Lorem { tokens } => {
                let n = *tokens as usize;
                let mut s = String::with_capacity(n * 7);
                for i in 0..n {
                    s.push_str(LOREM[i % LOREM.len()]);
                }
                s
            }
            Text::CloseCall => String::new(),
            Text::Shaped { tokens, shape } => (0..*tokens)
                .map(|i| shaped_token(*shape, i, *tokens))
                .collect(),
        }
    }
}

impl Call {
    fn new(name: &str, arguments: impl Into<String>) -> Self {
        Call {
            name: name.to_owned(),
            arguments: arguments.into(),
        }
    }
}

impl Reply {
    pub(crate) fn text(content: impl Into<String>) -> Self {
        Reply {
            content: Text::Plain(content.into()),
            calls: Vec::new(),
        }
    }

    fn calling(content: impl Into<String>, calls: Vec<Call>) -> Self {
        Reply {
            content: Text::Plain(content.into()),
            calls,
        }
    }

    /// The answer to a raw prompt that ends inside an open tool call: close the call and the
    /// section (see [`Text::CloseCall`]).
    pub(crate) fn close_open_call() -> Self {
        Reply {
            content: Text::CloseCall,
            calls: Vec::new(),
        }
    }
}

/// The names of OpenAI-style tool objects (`{"type":"function","function":{"name":..}}`, or a flat
/// `{"name":..}`).
pub(crate) fn declared_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|t| {
            t.get("function")
                .and_then(|f| f.get("name"))
                .or_else(|| t.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect()
}

/// What the scripted model answers to `messages`, given the declared tool names.
///
/// 1. Trailing tool results: quote each, then a summary sentence.
/// 2. `call NAME with ARGS` lines in the last user message: those calls, declared or not.
/// 3. "parallel" with `get_weather`: two weather calls.
/// 4. "weather" with `get_weather`: one call for the city after " in ".
/// 5. "time" with `get_time`; "list"/"files" with `list_dir`.
/// 6. `stream N tokens`: N filler tokens (`... of code`: one fenced block; `... of prose`:
///    paragraphs).
/// 7. Otherwise a markdown answer exercising headings, lists, code, CJK.
pub fn reply(messages: &[Message], tools: &[String]) -> Reply {
    if let Some(r) = answer_tool_results(messages) {
        return r;
    }
    let question = messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(Message::text)
        .unwrap_or_default();
    let declared = |name: &str| tools.iter().any(|t| t == name);
    let lower = question.to_lowercase();

    let calls = explicit_calls(&question);
    if !calls.is_empty() {
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        return Reply::calling(format!("Calling {}.", join_names(&names)), calls);
    }
    if lower.contains("parallel") && declared("get_weather") {
        return Reply::calling(
            "Let me check both cities. ",
            vec![
                Call::new("get_weather", city_args("Beijing")),
                Call::new("get_weather", city_args("Shanghai")),
            ],
        );
    }
    if lower.contains("weather") && declared("get_weather") {
        let city = city_after_in(&question).unwrap_or_else(|| "Beijing".to_owned());
        return Reply::calling(
            format!("Let me check the weather in {city}. "),
            vec![Call::new("get_weather", city_args(&city))],
        );
    }
    if has_word(&lower, "time") && declared("get_time") {
        return Reply::calling("Let me check the time. ", vec![Call::new("get_time", "{}")]);
    }
    if (lower.contains("list") || lower.contains("files")) && declared("list_dir") {
        let args = pyjson::to_string(&json!({"path": "."}), pyjson::PYTHON_DEFAULT);
        return Reply::calling("Let me list the files. ", vec![Call::new("list_dir", args)]);
    }
    if let Some((n, shape)) = stream_tokens(&lower) {
        let content = match shape {
            None => Text::Lorem { tokens: n },
            Some(shape) => Text::Shaped { tokens: n, shape },
        };
        return Reply {
            content,
            calls: Vec::new(),
        };
    }
    Reply::text(markdown_answer(&question))
}

/// The reply when the mock was told to emit `calls` (`--tool-call-*`): those calls, unless the
/// conversation ends with tool results, which are quoted back as always.
pub(crate) fn forced_reply(messages: &[Message], calls: &[Call]) -> Option<Reply> {
    if calls.is_empty() {
        return None;
    }
    Some(
        answer_tool_results(messages)
            .unwrap_or_else(|| Reply::calling("Calling a tool.", calls.to_vec())),
    )
}

/// The first rule [`reply`] tries: the conversation ends with tool results.
fn answer_tool_results(messages: &[Message]) -> Option<Reply> {
    let first_result = messages
        .iter()
        .rposition(|m| m.role != "tool")
        .map_or(0, |i| i + 1);
    let results = &messages[first_result..];
    if results.is_empty() {
        return None;
    }
    // The turn that made the calls, to name results that carry only an id.
    let calls = messages[..first_result]
        .iter()
        .rev()
        .find(|m| m.role == "assistant")
        .map(|m| m.tool_calls.as_slice())
        .unwrap_or_default();
    let mut out = String::new();
    for r in results {
        let id = r.tool_call_id.as_deref().unwrap_or("");
        let name = match r.name.as_deref() {
            Some(n) if !n.is_empty() && n != "tool" => n.to_owned(),
            _ => calls
                .iter()
                .find(|c| c.id == id && !c.function.name.is_empty())
                .map(|c| c.function.name.clone())
                .unwrap_or_else(|| match call_id::function_name(id) {
                    "" => "tool".to_owned(),
                    n => n.to_owned(),
                }),
        };
        out.push_str(&format!(
            "The {name} tool returned: {}.\n",
            neutralize(r.text().trim_end())
        ));
    }
    out.push_str(match results.len() {
        1 => "That is the result of the tool call.",
        _ => "Those are the results of all the tool calls.",
    });
    Some(Reply::text(out))
}

/// The second rule: every line holding `call NAME with ARGS`, in order.
fn explicit_calls(text: &str) -> Vec<Call> {
    text.lines().filter_map(call_in_line).collect()
}

fn call_in_line(line: &str) -> Option<Call> {
    // ASCII lowercasing keeps byte offsets, so positions found in `lower` index `line`.
    let lower = line.to_ascii_lowercase();
    let mut from = 0;
    while let Some(off) = lower[from..].find("call ") {
        let start = from + off;
        from = start + 1;
        let at_word_start = line[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_');
        if !at_word_start {
            continue;
        }
        let rest = line[start + 5..].trim_start();
        let name_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let name = rest[..name_end].trim_matches('`');
        if let Some(args) = rest[name_end..].strip_prefix(" with ")
            && !name.is_empty()
        {
            return Some(Call::new(name, args.trim_end()));
        }
    }
    None
}

fn join_names(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `{"city": "X"}` as Kimi writes it (Python's default separators).
fn city_args(city: &str) -> String {
    pyjson::to_string(&json!({ "city": city }), pyjson::PYTHON_DEFAULT)
}

/// The capitalised word(s) after the first " in " that has any ("in New York?" gives "New York").
fn city_after_in(text: &str) -> Option<String> {
    let mut from = 0;
    while let Some(off) = text[from..].find(" in ") {
        let rest = &text[from + off + 4..];
        from += off + 4;
        let mut words = Vec::new();
        for word in rest.split_whitespace() {
            let clean = word.trim_matches(|c: char| !c.is_alphanumeric());
            if !clean.chars().next().is_some_and(char::is_uppercase) {
                break;
            }
            words.push(clean);
            if !word.ends_with(|c: char| c.is_alphanumeric()) {
                break; // punctuation ends the name
            }
        }
        if !words.is_empty() {
            return Some(words.join(" "));
        }
    }
    None
}

/// `word` appears as a whole word in `text` (already lowercase).
fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .any(|w| w == word)
}

/// `stream N tokens`, optionally followed by ` of code` or ` of prose`.
fn stream_tokens(lower: &str) -> Option<(u64, Option<Shape>)> {
    let mut from = 0;
    while let Some(off) = lower[from..].find("stream ") {
        let rest = &lower[from + off + 7..];
        from += off + 7;
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0
            && rest[digits..].starts_with(" tokens")
            && let Ok(n) = rest[..digits].parse::<u64>()
        {
            let after = &rest[digits + " tokens".len()..];
            let shape = if after.starts_with(" of code") {
                Some(Shape::Code)
            } else if after.starts_with(" of prose") {
                Some(Shape::Prose)
            } else if after.starts_with(" of lines") {
                Some(Shape::Lines)
            } else {
                None
            };
            return Some((n.min(MAX_LOREM_TOKENS), shape));
        }
    }
    None
}

/// User text quoted back must not smuggle markers into the completion, where the client would
/// take them for real ones.
fn neutralize(text: &str) -> String {
    text.replace("<|", "< |")
}

/// A reply that exercises the client's markdown rendering and wide characters.
fn markdown_answer(question: &str) -> String {
    let mut quoted: String = question.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((i, _)) = quoted.char_indices().nth(200) {
        quoted.truncate(i);
        quoted.push('…');
    }
    format!(
        "## Mock answer\n\n\
         You asked: \"{}\"\n\n\
         This reply comes from the scripted mock Kimi server. It shows what a client must render:\n\n\
         - a bullet point with **bold** text\n\
         - a second bullet with `inline code`\n\
         - a third bullet, plain\n\n\
         ```rust\n\
         fn main() {{\n    let greeting = \"hello\";\n    println!(\"{{greeting}}, world\");\n}}\n\
         ```\n\n\
         你好，世界。这是一个测试。\n\n\
         Try `call get_weather with {{\"city\": \"Paris\"}}` to make me call a tool, and **thanks** for testing.",
        neutralize(&quoted)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::message::ToolCall;

    fn tools(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    fn ask(q: &str, names: &[&str]) -> Reply {
        reply(&[Message::system("s"), Message::user(q)], &tools(names))
    }

    fn plain(r: &Reply) -> &str {
        match &r.content {
            Text::Plain(s) => s,
            Text::Lorem { .. } | Text::Shaped { .. } | Text::CloseCall => panic!("not plain"),
        }
    }

    #[test]
    fn tool_results_are_quoted() {
        let msgs = vec![
            Message::user("weather in Beijing and Shanghai?"),
            Message::assistant_with_calls(
                "",
                vec![
                    ToolCall::new("functions.get_weather:0", "get_weather", "{}"),
                    ToolCall::new("functions.get_weather:1", "get_weather", "{}"),
                ],
            ),
            Message::tool_result(
                "functions.get_weather:0",
                "get_weather",
                "{\"weather\": \"Sunny\"}",
            ),
            Message {
                name: None,
                ..Message::tool_result("functions.get_weather:1", "x", "{\"weather\": \"Rainy\"}")
            },
        ];
        let r = reply(&msgs, &tools(&["get_weather"]));
        assert!(r.calls.is_empty());
        let text = plain(&r);
        assert!(
            text.contains("The get_weather tool returned: {\"weather\": \"Sunny\"}."),
            "{text}"
        );
        assert!(
            text.contains("The get_weather tool returned: {\"weather\": \"Rainy\"}."),
            "{text}"
        );
        assert!(text.ends_with("Those are the results of all the tool calls."));
    }

    #[test]
    fn results_before_a_new_user_message_do_not_count() {
        let msgs = vec![
            Message::tool_result("functions.f:0", "f", "x"),
            Message::user("hello"),
        ];
        assert!(plain(&reply(&msgs, &[])).starts_with("## Mock answer"));
    }

    #[test]
    fn explicit_calls_are_verbatim_and_ordered() {
        let r = ask(
            "Please call nope.tool with {not json\ncall slow with {\"secs\": 5}  \nrecall x with y",
            &[],
        );
        assert_eq!(
            r.calls,
            vec![
                Call::new("nope.tool", "{not json"),
                Call::new("slow", "{\"secs\": 5}")
            ]
        );
        assert_eq!(plain(&r), "Calling nope.tool and slow.");
        let one = ask(
            "call get_weather with {\"city\": \"Oslo\"}",
            &["get_weather"],
        );
        assert_eq!(plain(&one), "Calling get_weather.");
    }

    #[test]
    fn parallel_weather() {
        let r = ask("Check weather in parallel", &["get_weather"]);
        assert_eq!(plain(&r), "Let me check both cities. ");
        assert_eq!(
            r.calls,
            vec![
                Call::new("get_weather", "{\"city\": \"Beijing\"}"),
                Call::new("get_weather", "{\"city\": \"Shanghai\"}")
            ]
        );
        // Without the tool, no call.
        assert!(ask("parallel weather", &[]).calls.is_empty());
    }

    #[test]
    fn weather_city() {
        let cases = [
            ("What's the weather like in Paris?", "Paris"),
            ("weather in New York today", "New York"),
            ("weather in paris", "Beijing"),
            ("How is the weather?", "Beijing"),
            ("Is the weather cold in winter in Oslo, really?", "Oslo"),
        ];
        for (q, city) in cases {
            let r = ask(q, &["get_weather"]);
            assert_eq!(
                r.calls,
                vec![Call::new(
                    "get_weather",
                    format!("{{\"city\": \"{city}\"}}")
                )],
                "{q}"
            );
            assert_eq!(plain(&r), format!("Let me check the weather in {city}. "));
        }
    }

    #[test]
    fn time_and_list() {
        assert_eq!(
            ask("What time is it?", &["get_time"]).calls,
            vec![Call::new("get_time", "{}")]
        );
        assert!(ask("sometimes", &["get_time"]).calls.is_empty());
        assert_eq!(
            ask("show me the files", &["list_dir"]).calls,
            vec![Call::new("list_dir", "{\"path\": \".\"}")]
        );
    }

    #[test]
    fn stream_n_tokens_of_code_or_prose() {
        let code = ask("stream 26 tokens of code", &[]);
        assert_eq!(
            code.content,
            Text::Shaped {
                tokens: 26,
                shape: Shape::Code
            }
        );
        let text = code.content.to_text();
        assert!(text.starts_with("```rust\n    let value = compute(42, \"label\"); // step\n"));
        assert!(text.ends_with("\n```\n"), "{text}");
        assert_eq!(text.matches('\n').count(), 4, "{text}");
        let prose = ask("stream 121 tokens of prose", &[]).content.to_text();
        let paragraphs: Vec<&str> = prose.split("\n\n").collect();
        assert_eq!(paragraphs.len(), 3, "{prose}");
        assert!(paragraphs.iter().all(|p| p.starts_with("lorem")), "{prose}");
        assert!(paragraphs[0].ends_with("tempor."), "{prose}");
        let lines = ask("stream 21 tokens of lines", &[]).content.to_text();
        assert_eq!(
            lines,
            "Line 00000 ipsum dolor sit amet consectetur adipiscing.\n\n\
             Line 00001 sed do eiusmod tempor lorem ipsum.\n\n\
             Line 00002 sit amet consectetur adipiscing elit sed"
        );
        assert_eq!(
            ask("stream 5 tokens", &[]).content,
            Text::Lorem { tokens: 5 }
        );
    }

    #[test]
    fn stream_n_tokens() {
        let r = ask("please stream 100000 tokens", &[]);
        assert_eq!(r.content, Text::Lorem { tokens: 100000 });
        assert_eq!(
            ask("stream 99999999999 tokens", &[]).content,
            Text::Lorem {
                tokens: MAX_LOREM_TOKENS
            }
        );
        assert_eq!(Text::Lorem { tokens: 3 }.to_text(), " lorem ipsum dolor");
    }

    #[test]
    fn markdown_fallback() {
        let r = ask("Tell me <|im_end|> something", &[]);
        let text = plain(&r);
        assert!(r.calls.is_empty());
        for needle in [
            "## ",
            "Tell me < |im_end|> something",
            "\n- ",
            "```rust\n",
            "`inline code`",
            "**",
            "你好",
        ] {
            assert!(text.contains(needle), "{needle}");
        }
        assert!(!text.contains("<|"));
    }

    #[test]
    fn declared_names_from_both_shapes() {
        let t = vec![
            json!({"type": "function", "function": {"name": "a"}}),
            json!({"name": "b"}),
            json!({"type": "function"}),
        ];
        assert_eq!(declared_names(&t), vec!["a", "b"]);
    }
}
