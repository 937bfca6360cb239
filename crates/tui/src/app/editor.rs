//! `Ctrl-G`: the draft in `$VISUAL`, else `$EDITOR`, else `vi`, as in Codex CLI and git. The
//! command line is split into words (`shell-words`: quotes as a shell has them, but no shell
//! runs, so nothing in it is expanded or executed), the draft goes to a private temporary file
//! (0600) whose path is the last argument, and what the file holds when the editor exits well
//! becomes the draft. The event loop suspends the screen around [`run`].

use std::io::Write as _;
use std::process::Command;

use super::composer::new_input;
use super::event::Effect;
use super::state::App;

/// The editor's argv from `$VISUAL` and `$EDITOR` (the first that is set and not blank), or
/// `vi`.
pub(crate) fn argv(visual: Option<&str>, editor: Option<&str>) -> Result<Vec<String>, EditorError> {
    let (var, line) = match (visual, editor) {
        (Some(v), _) if !v.trim().is_empty() => ("VISUAL", v),
        (_, Some(e)) if !e.trim().is_empty() => ("EDITOR", e),
        _ => return Ok(vec!["vi".to_owned()]),
    };
    let words = shell_words::split(line).map_err(|e| EditorError::Command {
        var,
        line: line.to_owned(),
        why: e.to_string(),
    })?;
    if words.is_empty() {
        return Ok(vec!["vi".to_owned()]);
    }
    Ok(words)
}

/// The editor's argv from the environment.
pub(crate) fn argv_from_env() -> Result<Vec<String>, EditorError> {
    let var = |name: &str| std::env::var(name).ok();
    argv(var("VISUAL").as_deref(), var("EDITOR").as_deref())
}

/// What the editor left: the file's text with one trailing newline (editors add one) taken off.
pub(crate) fn edited(mut text: String) -> String {
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    text
}

/// Edit `draft` with the editor and return the new text, or why the draft stays as it was.
/// Blocks until the editor exits: the caller has given it the terminal.
pub(crate) fn run(draft: &str) -> Result<String, EditorError> {
    run_with(&argv_from_env()?, draft)
}

/// [`run`] with this editor command.
pub(crate) fn run_with(argv: &[String], draft: &str) -> Result<String, EditorError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(EditorError::NoCommand);
    };
    let mut file = tempfile::Builder::new()
        .prefix("kimi-draft-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| EditorError::File("create", e.to_string()))?;
    file.write_all(draft.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| EditorError::File("write", e.to_string()))?;
    let path = file.path().to_owned();
    let status = Command::new(program)
        .args(args)
        .arg(&path)
        .status()
        .map_err(|e| EditorError::Start {
            program: program.clone(),
            why: e.to_string(),
        })?;
    if !status.success() {
        return Err(EditorError::Failed {
            program: program.clone(),
            code: status.code(),
        });
    }
    // Read by path: many editors write a new file and rename it over the old one.
    let bytes = std::fs::read(&path).map_err(|e| EditorError::ReadBack(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| EditorError::NotUtf8)?;
    Ok(edited(text))
}

/// Why the editor did not give a new draft (the draft stays as it was).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EditorError {
    /// `$VISUAL` or `$EDITOR` (`var`) holds `line`, which cannot be split into words.
    #[error("${var} ({line:?}): {why}")]
    Command {
        var: &'static str,
        line: String,
        why: String,
    },
    #[error("no editor command")]
    NoCommand,
    /// The draft file could not be made: `create` or `write`, and the OS's message.
    #[error("cannot {0} the draft file: {1}")]
    File(&'static str, String),
    #[error("cannot start the editor `{program}`: {why}; the draft is unchanged")]
    Start { program: String, why: String },
    /// The editor exited with `code`, or (`None`) was stopped by a signal.
    #[error(
        "the editor `{program}` {}; the draft is unchanged",
        match code {
            Some(c) => format!("exited with status {c}"),
            None => "was stopped by a signal".to_owned(),
        }
    )]
    Failed { program: String, code: Option<i32> },
    #[error("cannot read the draft back: {0}")]
    ReadBack(String),
    #[error("the edited draft is not UTF-8 text; the draft is unchanged")]
    NotUtf8,
    /// The terminal could not be handed over.
    #[error("cannot hand the terminal to the editor: {0}")]
    Suspend(String),
}

/// `Ctrl-G` in the input: ask the event loop to run the editor on the draft.
pub(crate) fn open(app: &mut App, fx: &mut Vec<Effect>) {
    fx.push(Effect::Editor(app.composer.input.lines().join("\n")));
}

/// The editor exited: its text replaces the draft (through the paste rules: line endings,
/// no control sequences, the size cap), or a notice says why the draft stayed.
pub(crate) fn finished(app: &mut App, result: Result<String, EditorError>) {
    app.dirty = true;
    let text = match result {
        Ok(text) => text,
        Err(why) => return app.notice(format!("Ctrl-G: {why}."), true),
    };
    if let Err(why) = super::paste::check_size(text.len(), 0) {
        return app.notice(why.to_string().replacen("Paste", "Edited draft", 1), true);
    }
    let text = super::paste::clean(&text);
    app.composer.input = new_input();
    app.composer.input.insert_str(&text);
    app.composer.history_pos = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visual_wins_then_editor_then_vi() {
        assert_eq!(argv(Some("nvim"), Some("nano")), Ok(vec!["nvim".into()]));
        assert_eq!(argv(None, Some("nano")), Ok(vec!["nano".into()]));
        assert_eq!(argv(Some("  "), Some("nano")), Ok(vec!["nano".into()]));
        assert_eq!(argv(None, None), Ok(vec!["vi".into()]));
        assert_eq!(argv(Some(""), Some("")), Ok(vec!["vi".into()]));
    }

    #[test]
    fn the_command_is_split_like_a_shell_would_but_nothing_is_expanded() {
        assert_eq!(
            argv(Some("code --wait -n"), None),
            Ok(vec!["code".into(), "--wait".into(), "-n".into()])
        );
        assert_eq!(
            argv(None, Some("'/opt/my editor/bin/ed' -c 'set ft=markdown'")),
            Ok(vec![
                "/opt/my editor/bin/ed".into(),
                "-c".into(),
                "set ft=markdown".into()
            ])
        );
        // No shell: `$HOME`, `;` and backticks are plain characters of the words.
        assert_eq!(
            argv(Some("vi $HOME;rm `x`"), None),
            Ok(vec!["vi".into(), "$HOME;rm".into(), "`x`".into()])
        );
        let err = argv(Some("vi 'unclosed"), None).unwrap_err().to_string();
        assert!(err.contains("$VISUAL"), "{err}");
    }

    /// A fake editor: a script that records the draft file's mode and content, then rewrites it.
    #[test]
    fn the_draft_goes_through_a_private_file_and_comes_back_edited() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tmp");
        let script = dir.path().join("ed.sh");
        let seen = dir.path().join("seen");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nstat -c %a \"$1\" > '{0}'\ncat \"$1\" >> '{0}'\nprintf 'edited\\nline 2\\n' > \"$1\"\n",
                seen.display()
            ),
        )
        .expect("script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let argv = vec![script.display().to_string()];
        assert_eq!(
            run_with(&argv, "the draft").as_deref(),
            Ok("edited\nline 2")
        );
        assert_eq!(
            std::fs::read_to_string(&seen).expect("seen"),
            "600\nthe draft"
        );
        let failed = run_with(&["false".into()], "x").unwrap_err().to_string();
        assert!(
            failed.contains("status 1") && failed.contains("unchanged"),
            "{failed}"
        );
        let missing = run_with(&["/nonexistent/editor".into()], "x")
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot start"), "{missing}");
    }

    #[test]
    fn one_trailing_newline_is_trimmed() {
        assert_eq!(edited("a\nb\n".into()), "a\nb");
        assert_eq!(edited("a\r\n".into()), "a");
        assert_eq!(edited("a\n\n".into()), "a\n");
        assert_eq!(edited("a".into()), "a");
    }
}
