//! `mcp__SERVER__TOOL`: the name an MCP tool is offered under. It must be a valid function name
//! and survive inside a Kimi call id (`functions.NAME:0`, see `kimi_protocol::call_id`), so only
//! `[A-Za-z0-9_.-]`, at most 64 characters.

use crate::tools::spec::MAX_NAME_LEN;

/// What every MCP tool name starts with.
pub const PREFIX: &str = "mcp__";

/// Longest server name: leaves room for the tool part within 64 characters.
pub const MAX_SERVER_NAME_LEN: usize = 24;

/// A server name: letters, digits, `-` and single `_` (never `__`, which separates the parts,
/// nor a leading or trailing `_`), at most 24 characters.
pub fn check_server_name(name: &str) -> Result<(), ServerNameError> {
    if name.is_empty() {
        return Err(ServerNameError::Empty);
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
    {
        return Err(ServerNameError::BadChar(c));
    }
    if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
        return Err(ServerNameError::Underscores);
    }
    if name.len() > MAX_SERVER_NAME_LEN {
        return Err(ServerNameError::TooLong(name.len()));
    }
    Ok(())
}

/// Why a server name cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ServerNameError {
    #[error("must not be empty")]
    Empty,
    #[error("{0:?} is not allowed; use only letters, digits, `-` and `_`")]
    BadChar(char),
    #[error(
        "`__` and a leading or trailing `_` are not allowed (`__` separates mcp__SERVER__TOOL)"
    )]
    Underscores,
    /// The name's length in bytes.
    #[error("{0} characters is too long; at most {MAX_SERVER_NAME_LEN}")]
    TooLong(usize),
}

/// The offered name of `server`'s tool `tool`: characters outside `[A-Za-z0-9_.-]` become `_`,
/// and the tool part is cut so the whole stays within 64 characters. `None` for an empty tool
/// name. Two tools may sanitise to one name; the caller keeps the first.
pub fn tool_name(server: &str, tool: &str) -> Option<String> {
    if tool.is_empty() {
        return None;
    }
    let head = format!("{PREFIX}{server}__");
    let room = MAX_NAME_LEN.saturating_sub(head.len());
    if room == 0 {
        return None;
    }
    let tail: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(room)
        .collect();
    Some(head + &tail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::call_id;

    #[test]
    fn names_survive_a_call_id() {
        for (server, tool, expected) in [
            ("files", "read_text_file", "mcp__files__read_text_file"),
            ("gh", "repo/list issues", "mcp__gh__repo_list_issues"),
            ("a-b", "ünïcode.v2", "mcp__a-b___n_code.v2"),
        ] {
            let name = tool_name(server, tool).expect("a name");
            assert_eq!(name, expected);
            assert_eq!(call_id::function_name(&call_id::canonical(&name, 3)), name);
        }
        let long = tool_name("server", &"x".repeat(100)).expect("cut");
        assert_eq!(long.len(), 64);
        assert!(long.starts_with("mcp__server__xxx"));
        assert_eq!(tool_name("s", ""), None);
    }

    #[test]
    fn server_names_are_checked() {
        for ok in ["files", "a-b", "a_b", "A1"] {
            check_server_name(ok).expect(ok);
        }
        for bad in ["", "a b", "a__b", "_a", "a_", "a.b", &"x".repeat(25)] {
            assert!(check_server_name(bad).is_err(), "{bad:?}");
        }
    }
}
