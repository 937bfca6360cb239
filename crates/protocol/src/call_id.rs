//! Tool-call ids: `functions.{name}:{idx}`, and the function name recovered from one.

/// The id Kimi K2 writes for the `index`-th call of a turn.
pub fn canonical(name: &str, index: usize) -> String {
    format!("functions.{name}:{index}")
}

/// The function name inside a call id: strip a leading `functions.`, then a trailing `:` followed
/// by optional whitespace and digits. Dots and dashes stay (`functions.ns.tool:0` is `ns.tool`,
/// where vLLM's `split(".")[-1]` would wrongly give `tool`).
pub fn function_name(id: &str) -> &str {
    let id = id.trim();
    let rest = id.strip_prefix("functions.").unwrap_or(id);
    let no_digits = rest.trim_end_matches(|c: char| c.is_ascii_digit());
    match no_digits.trim_end().strip_suffix(':') {
        Some(name) => name,
        None => rest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_ids() {
        let cases = [
            ("functions.get_weather:0", "get_weather"),
            ("functions.get_weather:12", "get_weather"),
            ("functions.ns.tool:0", "ns.tool"),
            ("functions.my-tool.v2:3", "my-tool.v2"),
            ("functions.get_weather: 1", "get_weather"),
            ("  functions.get_weather:0\n", "get_weather"),
            ("get_weather:0", "get_weather"),
            ("functions.get_weather", "get_weather"),
            ("functions.get_weather:", "get_weather"),
            ("functions.v2:0", "v2"),
            ("call_abc123", "call_abc123"),
            ("", ""),
        ];
        for (id, name) in cases {
            assert_eq!(function_name(id), name, "id {id:?}");
        }
    }

    #[test]
    fn canonical_round_trips() {
        assert_eq!(canonical("ns.tool", 2), "functions.ns.tool:2");
        assert_eq!(function_name(&canonical("a-b.c", 0)), "a-b.c");
    }
}
