//! The slash-command popup of the composer: while the input is a command name being typed
//! (`/ex`), the commands whose name starts with it, one of them selected. The list comes from
//! the command table (`commands::COMMANDS`) and the ready MCP servers' prompts, so it offers
//! exactly what the parser accepts. Refreshed from the input after every event ([`refresh`]);
//! its keys (`Context::Slash`) come before the input's. Drawn by `ui::slash` from this state.

use crossterm::event::KeyEvent;

use super::commands;
use super::keys::{Action, Context, lookup};
use super::state::App;

/// One row of the list: a command as it is typed, and what it does (one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    /// With the slash: `/export`.
    pub(crate) name: String,
    pub(crate) help: String,
}

/// The popup's state, owned by the composer.
#[derive(Debug, Default)]
pub(crate) struct SlashPopup {
    /// The command name typed so far, without the slash; `None`: the input is not one.
    query: Option<String>,
    /// The commands that start with the query, in the table's order, then MCP prompts.
    pub(crate) choices: Vec<Choice>,
    /// No command starts with the query: `choices` holds the nearest one instead.
    pub(crate) guessed: bool,
    /// Index into `choices`.
    pub(crate) selected: usize,
    /// Up or Down chose a row since the query changed: Tab takes that row as it is.
    moved: bool,
    /// Esc closed the popup for this query; typing on opens it again.
    dismissed: bool,
}

impl SlashPopup {
    /// Shown, and taking its keys.
    pub(crate) fn is_open(&self) -> bool {
        self.query.is_some() && !self.dismissed
    }

    /// What was typed after the slash, while the popup is open.
    pub(crate) fn query(&self) -> Option<&str> {
        self.query.as_deref().filter(|_| !self.dismissed)
    }

    /// The text Tab puts in the input: the row chosen with Up/Down, the only match, or the
    /// longer prefix all matches share; a whole command is followed by a space.
    fn completion(&self) -> Option<String> {
        let query = self.query.as_deref()?;
        let chosen = self.choices.get(self.selected)?;
        if self.moved || self.choices.len() == 1 {
            return Some(format!("{} ", chosen.name));
        }
        let shared = common_prefix(self.choices.iter().map(|c| c.name.as_str()));
        Some(if shared.len() > query.len() + 1 {
            shared.to_owned()
        } else {
            format!("{} ", chosen.name)
        })
    }
}

/// The longest prefix of all `names` (whole characters).
fn common_prefix<'a>(mut names: impl Iterator<Item = &'a str>) -> &'a str {
    let Some(first) = names.next() else {
        return "";
    };
    names.fold(first, |shared, n| {
        let end = shared
            .char_indices()
            .zip(n.chars())
            .find(|((_, a), b)| a != b)
            .map_or(shared.len().min(n.len()), |((i, _), _)| i);
        &shared[..end]
    })
}

/// The command name being typed in a one-line `input`: after a single leading `/`, up to the
/// first blank (none yet). `//text` is a message, not a command.
fn typed_name(lines: &[String]) -> Option<&str> {
    let [line] = lines else { return None };
    let name = line.strip_prefix('/')?;
    (!name.starts_with('/') && !name.contains(char::is_whitespace)).then_some(name)
}

/// The row of command `c` typed as `name`: the help of its own form.
fn choice(name: &str, c: &commands::Command) -> Choice {
    Choice {
        name: format!("/{name}"),
        help: c.forms[0].help.to_owned(),
    }
}

/// The rows for `query`: every command with a name (or alias) that starts with it, then the
/// ready MCP servers' prompts that do.
fn choices(query: &str, mcp: &super::mcp_view::Ready) -> Vec<Choice> {
    let mut out: Vec<Choice> = Vec::new();
    for c in commands::COMMANDS {
        // One row per command: its own name when it matches, else the alias that does.
        let name = std::iter::once(c.name)
            .chain(c.aliases.iter().copied())
            .find(|n| n.starts_with(query));
        if let Some(name) = name {
            out.push(choice(name, c));
        }
    }
    for (server, p) in &mcp.prompts {
        // Server text: one line, control characters gone.
        let name = kimi_protocol::sanitize::one_line(
            &super::mcp_view::prompt_command(server, &p.name),
            200,
        );
        if name[1..].starts_with(query) {
            let help = p
                .description
                .as_deref()
                .unwrap_or("an MCP prompt, into the input");
            out.push(Choice {
                name,
                help: kimi_protocol::sanitize::one_line(help, 200),
            });
        }
    }
    out
}

/// Bring the popup in line with the input: called after every event. A new query selects
/// the first row again and reopens a popup closed with Esc.
pub(crate) fn refresh(app: &mut App) {
    let query = typed_name(app.composer.input.lines());
    let popup = &mut app.composer.slash;
    if popup.query.as_deref() != query {
        popup.query = query.map(str::to_owned);
        popup.selected = 0;
        popup.moved = false;
        popup.dismissed = false;
    }
    let Some(query) = popup.query.as_deref() else {
        popup.choices.clear();
        return;
    };
    // Rebuilt each time (a few dozen rows at most): MCP servers come and go.
    popup.choices = choices(query, &app.mcp);
    popup.guessed = popup.choices.is_empty();
    if popup.guessed {
        // A typo: the nearest command, for Tab to put right.
        let near = commands::suggestion(query)
            .and_then(|near| commands::names().find(|(n, _)| *n == near));
        popup.choices.extend(near.map(|(n, c)| choice(n, c)));
    }
    popup.selected = popup.selected.min(popup.choices.len().saturating_sub(1));
}

/// A key while the popup is open; `false` when the input should have it (Enter, text).
pub(crate) fn key(app: &mut App, k: &KeyEvent) -> bool {
    let popup = &mut app.composer.slash;
    if !popup.is_open() {
        return false;
    }
    let n = popup.choices.len();
    match lookup(Context::Slash, k) {
        // The list wraps around: the last command is one Up away from the first.
        Some(Action::LineUp) if n > 0 => {
            popup.selected = (popup.selected + n - 1) % n;
            popup.moved = true;
        }
        Some(Action::LineDown) if n > 0 => {
            popup.selected = (popup.selected + 1) % n;
            popup.moved = true;
        }
        Some(Action::LineUp | Action::LineDown) => {}
        Some(Action::CompleteCommand) => {
            if let Some(text) = popup.completion() {
                super::update::set_input(&mut app.composer.input, &text);
            }
        }
        Some(Action::ClosePopup) => popup.dismissed = true,
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_name_is_a_single_line_command_word() {
        let lines = |s: &str| s.split('\n').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(typed_name(&lines("/ex")), Some("ex"));
        assert_eq!(typed_name(&lines("/")), Some(""));
        assert_eq!(typed_name(&lines("/export ")), None);
        assert_eq!(typed_name(&lines("//etc")), None);
        assert_eq!(typed_name(&lines("hello /ex")), None);
        assert_eq!(typed_name(&lines("/ex\nmore")), None);
    }

    #[test]
    fn the_common_prefix_stops_at_the_first_difference() {
        assert_eq!(
            common_prefix(["/mode", "/model", "/mouse"].into_iter()),
            "/mo"
        );
        assert_eq!(common_prefix(["/model", "/mode"].into_iter()), "/mode");
        assert_eq!(common_prefix(["/é1", "/é2"].into_iter()), "/é");
        assert_eq!(common_prefix(std::iter::empty()), "");
    }

    #[test]
    fn every_command_of_the_table_is_offered_for_a_bare_slash() {
        let all = choices("", &Default::default());
        assert_eq!(all.len(), commands::COMMANDS.len());
        for (row, c) in all.iter().zip(commands::COMMANDS) {
            assert_eq!(row.name, format!("/{}", c.name));
            assert_eq!(row.help, c.forms[0].help);
            // What the popup offers, the parser accepts.
            assert!(
                !matches!(
                    commands::parse(&row.name),
                    Some(commands::SlashCommand::Unknown(m)) if m.starts_with("unknown")
                ),
                "{}",
                row.name
            );
        }
    }
}
