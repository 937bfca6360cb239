//! The environment a tool's process starts with: what it inherits, what it is given, and the
//! API keys it never gets.

use std::collections::BTreeSet;
use std::ffi::OsString;

use super::spec::ToolSpec;

/// Variables removed from every tool's environment whatever the config says: the key variables
/// of the hosted Kimi endpoints, so a key exported for another program (or a profile this config
/// does not have) still does not reach a tool.
pub(crate) const ALWAYS_HIDDEN: [&str; 3] = ["MOONSHOT_API_KEY", "KIMI_API_KEY", "OPENAI_API_KEY"];

/// The variables kimi-tui sets for the tool itself; neither `env` nor the allow-list can change
/// them.
pub(crate) const TOOL_NAME_VAR: &str = "KIMI_TOOL_NAME";
pub(crate) const TOOL_CALL_ID_VAR: &str = "KIMI_TOOL_CALL_ID";

/// The child's whole environment, in order of application:
/// 1. the parent's environment, or with `inherit_env` set only the variables it lists;
/// 2. plus `spec.env`, replacing what it names;
/// 3. minus [`ALWAYS_HIDDEN`] and `spec.hidden_env` (every profile's `api_key_env`), whichever
///    step put them there;
/// 4. plus `KIMI_TOOL_NAME` and `KIMI_TOOL_CALL_ID`.
///
/// `parent` is the caller's environment (`std::env::vars_os()` in the runner), a parameter so
/// the rules can be checked without touching the process environment.
pub(crate) fn child_env(
    spec: &ToolSpec,
    call_id: &str,
    parent: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let hidden: BTreeSet<&str> = ALWAYS_HIDDEN
        .iter()
        .copied()
        .chain(spec.hidden_env.iter().map(String::as_str))
        .collect();
    let allowed: Option<BTreeSet<&str>> = spec
        .inherit_env
        .as_ref()
        .map(|names| names.iter().map(String::as_str).collect());
    let inherited = parent.into_iter().filter(|(name, _)| {
        // A name that is not UTF-8 cannot be listed, nor be one of ours: it passes only without
        // an allow-list.
        match name.to_str() {
            Some(n) => {
                !hidden.contains(n)
                    && n != TOOL_NAME_VAR
                    && n != TOOL_CALL_ID_VAR
                    && !spec.env.contains_key(n)
                    && allowed.as_ref().is_none_or(|a| a.contains(n))
            }
            None => allowed.is_none(),
        }
    });
    let mut env: Vec<(OsString, OsString)> = inherited.collect();
    env.extend(
        spec.env
            .iter()
            .filter(|(k, _)| {
                !hidden.contains(k.as_str())
                    && k.as_str() != TOOL_NAME_VAR
                    && k.as_str() != TOOL_CALL_ID_VAR
            })
            .map(|(k, v)| (k.into(), v.into())),
    );
    env.push((TOOL_NAME_VAR.into(), spec.name.as_str().into()));
    env.push((TOOL_CALL_ID_VAR.into(), call_id.into()));
    env
}

/// Problems with an `inherit_env` list, for [`ToolSpec::check`]: names that are empty or hold
/// `=` or NUL.
pub(crate) fn check_inherit_env(names: &[String]) -> Option<String> {
    let bad: Vec<String> = names
        .iter()
        .filter(|n| n.is_empty() || n.contains('=') || n.contains('\0'))
        .map(|n| format!("{n:?}"))
        .collect();
    (!bad.is_empty()).then(|| {
        format!(
            "inherit_env: not a valid variable name (empty, or contains `=` or NUL): {}",
            bad.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect()
    }

    #[test]
    fn keys_of_every_profile_and_the_well_known_ones_are_dropped() {
        let mut spec = ToolSpec::new("t", vec!["x".into()]);
        spec.hidden_env = vec!["LOCAL_KEY".into(), "OTHER_KEY".into()];
        let env = child_env(
            &spec,
            "id:0",
            parent(&[
                ("PATH", "/bin"),
                ("LOCAL_KEY", "a"),
                ("OTHER_KEY", "b"),
                ("MOONSHOT_API_KEY", "c"),
                ("OPENAI_API_KEY", "d"),
                ("KIMI_TOOL_NAME", "forged"),
            ]),
        );
        assert_eq!(
            names(&env),
            ["PATH=/bin", "KIMI_TOOL_NAME=t", "KIMI_TOOL_CALL_ID=id:0"]
        );
    }

    #[test]
    fn an_allow_list_keeps_only_what_it_names() {
        let mut spec = ToolSpec::new("t", vec!["x".into()]);
        spec.inherit_env = Some(vec![
            "PATH".into(),
            "MOONSHOT_API_KEY".into(),
            "NOPE".into(),
        ]);
        spec.env.insert("UNITS".into(), "metric".into());
        spec.env.insert("HOME".into(), "/config/home".into());
        spec.env.insert("OPENAI_API_KEY".into(), "written".into());
        let env = child_env(
            &spec,
            "id:1",
            parent(&[
                ("PATH", "/bin"),
                ("HOME", "/home/u"),
                ("MOONSHOT_API_KEY", "c"),
            ]),
        );
        // Listed but hidden: the key still stays out. `env` replaces what it names.
        assert_eq!(
            names(&env),
            [
                "PATH=/bin",
                "HOME=/config/home",
                "UNITS=metric",
                "KIMI_TOOL_NAME=t",
                "KIMI_TOOL_CALL_ID=id:1"
            ]
        );
    }

    #[test]
    fn bad_names_in_the_allow_list_are_named() {
        assert_eq!(check_inherit_env(&["PATH".into()]), None);
        let e = check_inherit_env(&["PATH".into(), "A=B".into(), String::new()]).expect("bad");
        assert_eq!(
            e,
            "inherit_env: not a valid variable name (empty, or contains `=` or NUL): \"A=B\", \"\""
        );
    }
}
