//! Tool results: a run of consecutive `tool` messages, bound to the calls of the latest
//! assistant message by position and name (K3 prompts carry no ids).

use serde_json::{Map, Value};

use super::args::function_of;
use crate::python;

/// Whether `m` is an object whose role is `tool`.
pub(crate) fn is_tool(m: &Value) -> bool {
    m.get("role").and_then(Value::as_str) == Some("tool")
}

/// A result's call id: its `tool_call_id` if it has that key (even null), else its `id`.
fn result_id(m: &Map<String, Value>) -> Option<&Value> {
    match m.get("tool_call_id") {
        Some(v) => Some(v),
        None => m.get("id"),
    }
    .filter(|v| !v.is_null())
}

/// The calls of the latest assistant message that carry an id, with that id as printed.
fn call_ids(calls: Option<&Value>) -> Vec<(String, &Map<String, Value>)> {
    let Some(Value::Array(calls)) = calls else {
        return Vec::new();
    };
    calls
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|c| {
            let id = c.get("id").filter(|v| !v.is_null())?;
            Some((python::str_of(id), c))
        })
        .collect()
}

/// The order to render the run `run` (indices into `messages`, all tool messages) in, each
/// with the name of the call it was matched to. When every result's id is some call's id, the
/// run follows the calls' order (a repeated call id counts at its first position, results for
/// one call keep their order); otherwise it stays exactly as given, with no names.
pub(crate) fn order<'a>(
    messages: &'a [Value],
    run: std::ops::Range<usize>,
    calls: Option<&'a Value>,
) -> Vec<(usize, Option<&'a Value>)> {
    let ids = call_ids(calls);
    let result_ids: Vec<Option<String>> = run
        .clone()
        .map(|j| {
            messages[j]
                .as_object()
                .and_then(result_id)
                .map(python::str_of)
        })
        .collect();
    let all_match = result_ids.iter().all(|r| {
        r.as_ref()
            .is_some_and(|r| ids.iter().any(|(id, _)| id == r))
    });
    if !all_match {
        return run.map(|j| (j, None)).collect();
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::with_capacity(result_ids.len());
    for (id, call) in &ids {
        if seen.contains(&id.as_str()) {
            continue;
        }
        seen.push(id);
        let name = function_of(call).get("name").filter(|n| !n.is_null());
        for (j, r) in run.clone().zip(&result_ids) {
            if r.as_deref() == Some(id.as_str()) {
                out.push((j, name));
            }
        }
    }
    out
}

/// A tool message's name when it was not matched by id: its `tool` field if it has that key,
/// else its `name`; when that is null or missing, the name of the `k`-th call (1-based) of the
/// latest assistant message.
pub(crate) fn fallback_name<'a>(
    m: &'a Map<String, Value>,
    k: usize,
    calls: Option<&'a Value>,
) -> Option<&'a Value> {
    let own = match m.get("tool") {
        Some(v) => Some(v),
        None => m.get("name"),
    }
    .filter(|v| !v.is_null());
    own.or_else(|| {
        let call = calls?.as_array()?.get(k.checked_sub(1)?)?.as_object()?;
        function_of(call).get("name").filter(|v| !v.is_null())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(messages: &[Value], calls: &Value) -> Vec<(usize, Option<String>)> {
        order(messages, 0..messages.len(), Some(calls))
            .into_iter()
            .map(|(j, n)| (j, n.map(python::str_of)))
            .collect()
    }

    #[test]
    fn a_fully_matched_run_follows_call_order() {
        let calls = json!([
            {"id": "a", "function": {"name": "fa"}},
            {"id": 2, "name": "fb"},
            {"id": "a", "function": {"name": "dup"}}
        ]);
        let msgs = [
            json!({"role": "tool", "tool_call_id": "2", "tool": "x"}),
            json!({"role": "tool", "tool_call_id": "a"}),
            json!({"role": "tool", "id": "a"}),
        ];
        assert_eq!(
            names(&msgs, &calls),
            vec![
                (1, Some("fa".into())),
                (2, Some("fa".into())),
                (0, Some("fb".into()))
            ]
        );
    }

    #[test]
    fn one_unmatched_result_leaves_the_run_as_given() {
        let calls = json!([{"id": "a", "function": {"name": "fa"}}, {"id": "b", "function": {"name": "fb"}}]);
        let msgs = [
            json!({"role": "tool", "tool_call_id": "b"}),
            // A null tool_call_id hides the id.
            json!({"role": "tool", "tool_call_id": null, "id": "a"}),
        ];
        assert_eq!(names(&msgs, &calls), vec![(0, None), (1, None)]);
    }

    #[test]
    fn fallback_prefers_tool_then_name_then_position() {
        let calls = json!([{"function": {"name": "first"}}, {"name": "second"}]);
        let m = |v: Value| v.as_object().unwrap().clone();
        let name = |v: Value, k| fallback_name(&m(v), k, Some(&calls)).map(python::str_of);
        assert_eq!(
            name(json!({"tool": "t", "name": "n"}), 1).as_deref(),
            Some("t")
        );
        assert_eq!(
            name(json!({"tool": null, "name": "n"}), 2).as_deref(),
            Some("second")
        );
        assert_eq!(name(json!({"name": "n"}), 1).as_deref(), Some("n"));
        assert_eq!(name(json!({}), 1).as_deref(), Some("first"));
        assert_eq!(name(json!({}), 3), None);
        assert_eq!(fallback_name(&m(json!({})), 1, None), None);
    }
}
