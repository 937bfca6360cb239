//! Counts in words: "1 tool", "3 tools", "0 tools".

/// `n` and the noun, singular for exactly one: `count(1, "tool")` is "1 tool".
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_and_every_other_number_plural() {
        assert_eq!(count(1u32, "tool"), "1 tool");
        assert_eq!(count(0u32, "tool"), "0 tools");
        assert_eq!(count(2u64, "turn"), "2 turns");
    }
}
