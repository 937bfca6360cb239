//! Known server bugs as named scenarios (`mock-server --server-bug NAME`): each one a setting of
//! [`MockOptions`], so that a client or a conformance check can be tried against the failure
//! without the server that has it. The table is the only place a scenario is defined.

use kimi_protocol::family::Template;

use super::MockOptions;

/// One known failure of real Kimi servers.
#[derive(Debug, Clone, Copy)]
pub struct ServerBug {
    pub name: &'static str,
    /// The upstream report the scenario imitates.
    pub upstream: &'static str,
    /// What a client sees.
    pub what: &'static str,
    /// The conformance checks (`doctor --conformance`) that fail against it in raw mode, and
    /// no other; empty: the defect does not show in raw mode.
    pub raw: &'static [&'static str],
    /// The same in chat mode.
    pub chat: &'static [&'static str],
    apply: fn(&mut MockOptions),
}

impl ServerBug {
    /// `raw: a, b; chat: c`: the checks it fails, mode by mode (only the modes it shows in).
    pub fn fails_said(&self) -> String {
        [("raw", self.raw), ("chat", self.chat)]
            .into_iter()
            .filter(|(_, checks)| !checks.is_empty())
            .map(|(mode, checks)| format!("{mode} fails: {}", checks.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `opts` with this failure switched on (the model changed only when the failure belongs to
    /// another family).
    pub fn apply(&self, opts: &mut MockOptions) {
        (self.apply)(opts);
    }
}

/// The model a family-bound scenario serves when the one asked for is of another family.
fn serve(opts: &mut MockOptions, template: Template, model: &str) {
    if Template::for_model(&opts.model) != template {
        opts.model = model.to_owned();
    }
}

/// A thinking K2 model, unless one is served already.
fn thinking(opts: &mut MockOptions) {
    let t = Template::for_model(&opts.model);
    if !t.thinks() || t == Template::K3 {
        opts.model = "moonshotai/Kimi-K2-Thinking".to_owned();
    }
}

pub const SERVER_BUGS: [ServerBug; 10] = [
    ServerBug {
        name: "empty-tool-call-deltas",
        upstream: "vllm-project/vllm#54701",
        what: "streamed tool_calls deltas arrive empty (finish reason still tool_calls); \
               stream: false answers right",
        raw: &[],
        chat: &["finish_reason", "stream_agreement"],
        apply: |o| o.empty_tool_call_deltas = true,
    },
    ServerBug {
        name: "markers-in-content",
        upstream: "vLLM served without --tool-call-parser kimi_k2 (field reports)",
        what: "the tool-call markers arrive as text in content; no tool_calls",
        raw: &[],
        chat: &["finish_reason", "leaked_markers"],
        apply: |o| o.markers_in_content = true,
    },
    ServerBug {
        name: "duplicate-calls",
        upstream: "a tool parser re-sending a finished call (field reports)",
        what: "every call is delivered twice, the same id, name and arguments under two indexes",
        raw: &[],
        chat: &["duplicate_calls"],
        apply: |o| o.repeat_calls = true,
    },
    ServerBug {
        name: "missing-think-close",
        upstream: "a reasoning parser that never sees </think> (field reports)",
        what: "a thinking model never writes </think>: the answer text stays in the reasoning",
        raw: &["think_close"],
        chat: &["empty_answer"],
        apply: |o| {
            thinking(o);
            o.omit_think_close = true;
        },
    },
    ServerBug {
        name: "im-end-after-think",
        upstream: "MoonshotAI/Kimi-K2#128",
        what: "K2.6 after a tool result: </think> then <|im_end|>, an empty answer",
        raw: &["empty_answer"],
        chat: &["empty_answer"],
        apply: |o| {
            serve(o, Template::K26, "moonshotai/Kimi-K2.6");
            o.im_end_after_think = true;
        },
    },
    ServerBug {
        name: "k3-think-close-skipped",
        upstream: "vllm-project/vllm#53246 (K3 drops calls)",
        what: "Kimi K3 ends its reasoning by opening the tools channel, no think close",
        raw: &["think_close"],
        chat: &[],
        apply: |o| {
            serve(o, Template::K3, "moonshotai/Kimi-K3");
            o.k3_shape = Some("think-close-skipped-tools".to_owned());
        },
    },
    ServerBug {
        name: "split-markers",
        upstream: "a tokenizer without Kimi's special tokens (field reports)",
        what: "every marker is spelled from ordinary text tokens (in chat they reach content)",
        raw: &["special_tokens"],
        chat: &[],
        apply: |o| o.split_markers = true,
    },
    ServerBug {
        name: "numbered-call-ids",
        upstream: "gateways renumbering call ids (field reports)",
        what: "call ids like call00003 instead of functions.NAME:IDX",
        raw: &["call_ids", "schema"],
        chat: &["call_ids"],
        apply: |o| o.numbered_call_ids = true,
    },
    ServerBug {
        name: "tool-calls-finish-stop",
        upstream: "OpenAI-compatible gateways (field reports)",
        what: "calls arrive but the finish reason is stop",
        raw: &[],
        chat: &["finish_reason"],
        apply: |o| o.stop_with_tool_calls = true,
    },
    ServerBug {
        name: "stream-differs",
        upstream: "stream/non-stream repro harnesses (vllm-project/vllm#53246)",
        what: "the non-streamed answer differs from the streamed one: its text is dropped \
               (or added where the stream has none)",
        raw: &["stream_agreement"],
        chat: &["stream_agreement"],
        apply: |o| o.nonstream_differs = true,
    },
];

/// The scenario called `name`.
pub fn find(name: &str) -> Option<&'static ServerBug> {
    SERVER_BUGS.iter().find(|b| b.name == name)
}

/// What `--server-bug list` prints: one line per scenario, name, upstream report, what it does,
/// the checks it fails.
pub fn list() -> String {
    let width = SERVER_BUGS.iter().map(|b| b.name.len()).max().unwrap_or(0);
    SERVER_BUGS
        .iter()
        .map(|b| {
            format!(
                "{:width$}  {}\n{:width$}  {} [{}]\n",
                b.name,
                b.upstream,
                "",
                b.what,
                b.fails_said()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_each_scenario_changes_the_options() {
        for (i, b) in SERVER_BUGS.iter().enumerate() {
            assert!(
                SERVER_BUGS[i + 1..].iter().all(|o| o.name != b.name),
                "{}",
                b.name
            );
            assert!(!(b.raw.is_empty() && b.chat.is_empty()), "{}", b.name);
            let mut opts = MockOptions::default();
            b.apply(&mut opts);
            assert_ne!(
                format!("{opts:?}"),
                format!("{:?}", MockOptions::default()),
                "{} changes nothing",
                b.name
            );
            assert!(list().contains(b.upstream), "{}", b.name);
        }
        assert!(find("k3-think-close-skipped").is_some());
        assert!(find("list").is_none());
    }

    #[test]
    fn family_bound_scenarios_serve_their_family_only_when_needed() {
        let mut o = MockOptions::default();
        find("im-end-after-think").expect("known").apply(&mut o);
        assert_eq!(Template::for_model(&o.model), Template::K26);
        let mut o = MockOptions {
            model: "kimi-k2.5".into(),
            ..MockOptions::default()
        };
        find("missing-think-close").expect("known").apply(&mut o);
        assert_eq!(o.model, "kimi-k2.5", "a thinking model is kept");
        let mut o = MockOptions::default();
        find("missing-think-close").expect("known").apply(&mut o);
        assert!(Template::for_model(&o.model).thinks());
    }
}
