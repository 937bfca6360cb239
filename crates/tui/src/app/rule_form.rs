//! "Always allow calls like this": the rule the dialog offers for its call, as the TOML the
//! user edits (each argument an exact pattern, to widen), where it goes (this session or the
//! user config), and saving it. The core validates and adds the rule; the call is approved
//! once it says the rule is in force, and only when the rule as edited still matches it.

use ratatui_textarea::{CursorMove, TextArea};
use serde::Deserialize;

use super::event::Effect;
use super::state::{ApprovalDialog, DialogStage};
use kimi_core::engine::Op;
use kimi_core::tools::rules::{CompiledRule, Rule, RuleScope, Verdict};

/// The rule form of the dialog.
#[derive(Debug)]
pub(crate) struct RuleForm {
    /// The rule as TOML: one `[[rules]]` table, as the config holds it.
    pub(crate) editor: Box<TextArea<'static>>,
    pub(crate) scope: RuleScope,
    /// Why the last save did not add the rule (the text, or the core's validation).
    pub(crate) problems: Vec<String>,
    /// The rule sent to the core, waiting for its answer (keys other than Esc wait too).
    pub(crate) pending: bool,
}

/// Why the form's text is not a rule that may be added for this call.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FormError {
    #[error("not TOML for one rule: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("the text holds {0} rules: keep exactly one [[rules]] table")]
    Count(usize),
    #[error("{0}")]
    Rule(#[from] kimi_core::tools::rules::RuleError),
    #[error("this rule allows nothing: its decision is `{0}`, and the dialog adds allow rules")]
    NotAllow(Verdict),
    #[error("the rule as edited does not match this call: widen it, or Esc")]
    NoMatch,
}

/// A config's worth of rules: the form parses the same shape the config file has.
#[derive(Deserialize)]
struct Rules {
    #[serde(default)]
    rules: Vec<Rule>,
}

/// The TOML of the rule that allows calls of `tool` with exactly `arguments` (a JSON object):
/// what the form opens with. Values holding glob characters are flagged in a comment, since a
/// pattern there matches more than the one value.
pub(crate) fn prefill(tool: &str, arguments: &str) -> String {
    let value = serde_json::from_str(arguments).unwrap_or(serde_json::Value::Null);
    let rule = Rule::like_call(tool, &value, Verdict::Allow);
    let mut out = String::new();
    let wild: Vec<&String> = (rule.args.iter())
        .filter(|(_, v)| v.as_str().is_some_and(|s| s.contains(['*', '?'])))
        .map(|(k, _)| k)
        .collect();
    if !wild.is_empty() {
        out.push_str("# `*` and `?` in a pattern are wildcards: check ");
        out.push_str(&wild.iter().map(|k| key(k)).collect::<Vec<_>>().join(", "));
        out.push('\n');
    }
    out.push_str("[[rules]]\n");
    out.push_str(&format!("tool = {}\n", string(&rule.tool)));
    if !rule.args.is_empty() {
        let pairs: Vec<String> = (rule.args.iter())
            .map(|(k, v)| format!("{} = {}", key(k), scalar(v)))
            .collect();
        out.push_str(&format!("args = {{ {} }}\n", pairs.join(", ")));
    }
    out.push_str("decision = \"allow\"\n");
    out.push_str("reason = \"allowed from the dialog\"\n");
    out
}

/// A TOML basic string in which every character that does not print visibly (controls, C1,
/// bidi and zero-width characters: the model wrote these values) is a `\u` escape, so the form
/// shows exactly the bytes the rule will hold and cannot be reordered or hidden on screen.
fn string(s: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut buf = [0u8; 4];
    for c in s.chars() {
        let _ = match c {
            '"' => write!(out, "\\\""),
            '\\' => write!(out, "\\\\"),
            '\n' => write!(out, "\\n"),
            '\t' => write!(out, "\\t"),
            c if c.is_control()
                || kimi_protocol::invisible::any_hidden(c.encode_utf8(&mut buf)) =>
            {
                if (c as u32) > 0xffff {
                    write!(out, "\\U{:08X}", c as u32)
                } else {
                    write!(out, "\\u{:04X}", c as u32)
                }
            }
            c => write!(out, "{c}"),
        };
    }
    out.push('"');
    out
}

/// A TOML key: bare when it may be, quoted otherwise.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { k.to_owned() } else { string(k) }
}

/// A JSON scalar as a TOML value (`null`, which TOML lacks, cannot come from `like_call`'s
/// patterns in a form that parses back: it is written as a string the user sees).
fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => string(s),
        serde_json::Value::Bool(b) => b.to_string(),
        serde_json::Value::Number(n) => n.to_string(),
        other => string(&other.to_string()),
    }
}

/// Open the form for the dialog's call.
pub(crate) fn open(d: &mut ApprovalDialog) {
    let text = prefill(&d.request.call.function.name, &d.request.arguments);
    let mut editor = TextArea::new(text.lines().map(str::to_owned).collect());
    editor.move_cursor(CursorMove::Top);
    d.stage = DialogStage::Rule(Box::new(RuleForm {
        editor: Box::new(editor),
        scope: RuleScope::Session,
        problems: Vec::new(),
        pending: false,
    }));
    d.hint = None;
}

/// The rule in `text`, checked as far as the UI can: one allow rule that matches this call
/// (`tool` with `arguments`). The core checks the rest (the tool's schema) when it adds it.
pub(crate) fn parse(text: &str, tool: &str, arguments: &str) -> Result<Rule, FormError> {
    let mut rules = toml::from_str::<Rules>(text)?.rules;
    if rules.len() != 1 {
        return Err(FormError::Count(rules.len()));
    }
    let rule = rules.remove(0);
    if rule.decision != Verdict::Allow {
        return Err(FormError::NotAllow(rule.decision));
    }
    let compiled = CompiledRule::new(rule)?;
    let args = serde_json::from_str(arguments).unwrap_or(serde_json::Value::Null);
    if !compiled.matches(tool, &args) {
        return Err(FormError::NoMatch);
    }
    Ok(compiled.rule)
}

/// Ctrl-S in the form: the rule goes to the core (`Op::AddRule`), or its problem is shown.
pub(crate) fn save(d: &mut ApprovalDialog, fx: &mut Vec<Effect>) {
    let tool = d.request.call.function.name.clone();
    let arguments = d.request.arguments.clone();
    let DialogStage::Rule(form) = &mut d.stage else {
        return;
    };
    if form.pending {
        return;
    }
    match parse(&form.editor.lines().join("\n"), &tool, &arguments) {
        Ok(rule) => {
            form.problems.clear();
            form.pending = true;
            fx.push(Effect::Agent(Op::AddRule {
                rule: Box::new(rule),
                scope: form.scope,
            }));
        }
        Err(e) => form.problems = vec![e.to_string()],
    }
}

/// Tab in the form: the other place for the rule.
pub(crate) fn toggle_scope(form: &mut RuleForm) {
    form.scope = match form.scope {
        RuleScope::Session => RuleScope::UserConfig,
        RuleScope::UserConfig => RuleScope::Session,
    };
}

/// The scope as the form shows it.
pub(crate) fn scope_label(scope: RuleScope) -> &'static str {
    match scope {
        RuleScope::Session => "[this session] · user config",
        RuleScope::UserConfig => "this session · [user config]",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefilled_rule_parses_back_and_matches_its_call() {
        let args = r#"{"command": "git status -s", "n": 3, "force": false, "deep": {"a": 1}}"#;
        let text = prefill("run_command", args);
        assert!(
            text.contains(r#"args = { command = "git status -s", n = 3, force = false }"#),
            "{text}"
        );
        let rule = parse(&text, "run_command", args).expect("parses");
        assert_eq!(rule.decision, Verdict::Allow);
        // Exact: another command is not matched.
        let other = r#"{"command": "git push", "n": 3, "force": false}"#;
        assert!(matches!(
            parse(&text, "run_command", other),
            Err(FormError::NoMatch)
        ));
    }

    #[test]
    fn odd_keys_are_quoted_and_wildcards_flagged() {
        let args = r#"{"a b": "x\"y\u007f", "glob": "ls *.rs"}"#;
        let text = prefill("t", args);
        assert!(text.contains(r#"args = { "a b" = "#), "{text}");
        assert!(
            text.starts_with("# `*` and `?` in a pattern are wildcards: check glob"),
            "{text}"
        );
        let rule = parse(&text, "t", args).expect("parses");
        assert_eq!(rule.args["a b"], "x\"y\u{7f}");
    }

    /// The model writes these values: what would reorder, hide or control the screen is shown
    /// as an escape, and the rule still holds the exact value.
    #[test]
    fn hidden_characters_in_arguments_show_as_escapes_and_parse_back_exactly() {
        let value = "rm -rf /\u{202e}txt.exe\u{200b}\u{9b}31m\u{1b}]0;x\u{7}\r\n\u{e0041}";
        let args = serde_json::json!({ "command": value }).to_string();
        let text = prefill("run_command", &args);
        assert!(
            !kimi_protocol::invisible::any_hidden(&text.replace('\n', "")),
            "{text:?}"
        );
        assert!(
            text.contains(r"\u202E") && text.contains(r"\u009B") && text.contains(r"\U000E0041")
        );
        assert_eq!(text.lines().count(), 5, "one line per key: {text}");
        let rule = parse(&text, "run_command", &args).expect("parses");
        assert_eq!(rule.args["command"], value);
    }

    #[test]
    fn the_form_refuses_what_the_dialog_cannot_add() {
        let args = r#"{"command": "ls"}"#;
        let deny = "[[rules]]\ntool = \"t\"\ndecision = \"deny\"\n";
        assert!(matches!(
            parse(deny, "t", args),
            Err(FormError::NotAllow(Verdict::Deny))
        ));
        let two = "[[rules]]\ntool = \"t\"\ndecision = \"allow\"\n[[rules]]\ntool = \"t\"\ndecision = \"allow\"\n";
        assert!(matches!(parse(two, "t", args), Err(FormError::Count(2))));
        assert!(matches!(
            parse("[[rules]\n", "t", args),
            Err(FormError::Toml(_))
        ));
        let bad_example = "[[rules]]\ntool = \"t\"\nargs = { command = \"l*\" }\ndecision = \"allow\"\nnot_match = [{ command = \"ls\" }]\n";
        assert!(matches!(
            parse(bad_example, "t", args),
            Err(FormError::Rule(_))
        ));
        // Widened: still this call.
        let wide = "[[rules]]\ntool = \"t\"\nargs = { command = \"l*\" }\ndecision = \"allow\"\n";
        assert!(parse(wide, "t", args).is_ok());
    }
}
