//! The one key table: which key does what where. `update` dispatches through [`lookup`], the F1
//! help lists [`TABLE`] row by row, and the status bar shows the rows marked with a hint, so a
//! binding cannot exist without its help, nor a hint without its binding.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where the keys go: the first context that is open takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    /// Before anything else, whatever is open.
    Global,
    /// The message input and the transcript.
    Input,
    /// The F1 help overlay.
    Help,
    /// The raw-stream inspector.
    Inspector,
    /// Typing an inspector search.
    Search,
    /// The approval dialog, asking.
    Dialog,
    /// The approval dialog, typing a reason to deny.
    DialogReason,
    /// The approval dialog, editing the arguments.
    DialogEdit,
    /// The approval dialog, editing the rule "always allow calls like this" would add.
    DialogRule,
    /// Asked once at start: trust this directory's project rules or not.
    Trust,
    // Going back, history and sessions.
    /// A picker (earlier messages for `Esc Esc`, saved sessions for `/sessions`).
    Picker,
    /// `Ctrl-R`: searching the prompt history.
    HistorySearch,
    /// The inspector's token view: before the inspector's own keys.
    Tokens,
    /// An MCP server's question (elicitation): before everything but Ctrl-C.
    Elicit,
    /// The slash-command popup over the input (`/` typed first): before the input's keys.
    Slash,
    /// The inspector's editor of the last answer (`e`): before the inspector's keys.
    AnswerEdit,
}

/// What a key does. Several contexts share the scroll actions; each scrolls its own view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Ctrl-C: cancel what runs, else quit.
    CancelOrQuit,
    Send,
    NewLine,
    HistoryPrev,
    HistoryNext,
    /// Esc in the input: cancel the running answer, else unselect the tool call.
    Cancel,
    QuitIfEmpty,
    LineUp,
    LineDown,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Tab: the previous (older) tool call; Shift-Tab the next.
    SelectPrevCall,
    SelectNextCall,
    ToggleCall,
    ToggleInspector,
    /// Open or fold the reasoning of thinking models.
    ToggleReasoning,
    OpenHelp,
    CloseHelp,
    CloseInspector,
    StartSearch,
    NextMatch,
    PrevMatch,
    PrevRequest,
    NextRequest,
    SaveTrace,
    /// Write the request in view as a reproducer for a server bug report.
    SaveRepro,
    /// A/B: send the request in view again non-streamed, or in the other mode, and show both
    /// answers side by side.
    CompareNonStream,
    CompareOtherMode,
    /// Chat mode: the inspector shows each SSE event as its raw JSON, or as one compact line.
    ToggleRawJson,
    /// Edit the model's output of the last answer, to continue from the edit.
    EditAnswer,
    /// Continue from the edited answer.
    ContinueEdit,
    /// Close the answer's editor; the answer stays as it was.
    CancelEdit,
    /// The inspector's next / previous stall (a gap over the threshold).
    NextStall,
    PrevStall,
    RunSearch,
    CancelSearch,
    DeleteSearchChar,
    Approve,
    AlwaysAllow,
    DenyWithReason,
    Deny,
    Edit,
    InspectCall,
    SubmitReason,
    SaveEdit,
    /// Open the rule that would allow calls like this one, to edit and save.
    AddRule,
    /// Save the edited rule (and approve the call if it matches it).
    SaveRule,
    /// Where the rule goes: this session or the user config.
    ToggleRuleScope,
    /// The trust prompt's answers.
    TrustProject,
    DistrustProject,
    /// Back from the reason or the editor to the question.
    BackToDialog,
    // Readline editing in the input: as in every shell.
    LineStart,
    LineEnd,
    WordBack,
    WordForward,
    DeleteToLineStart,
    DeleteToLineEnd,
    DeleteWordBack,
    Undo,
    /// Ctrl-Y: put back what Ctrl-U, Ctrl-K or Ctrl-W deleted.
    Yank,
    // Getting text out, compose.
    /// Wheel scrolling (mouse capture) on or off.
    ToggleMouse,
    /// The draft in `$VISUAL` / `$EDITOR`.
    OpenEditor,
    // Going back, history and sessions.
    /// Enter in a picker: take the selected item.
    Pick,
    ClosePicker,
    /// Ctrl-R in the input: start a reverse search of the prompt history.
    StartHistorySearch,
    /// Ctrl-R while searching: the next older match.
    HistorySearchOlder,
    AcceptHistorySearch,
    CancelHistorySearch,
    DeleteHistorySearchChar,
    // The inspector's token view.
    ToggleTokens,
    TokenPrev,
    TokenNext,
    TokenUp,
    TokenDown,
    TokenFirst,
    TokenLast,
    /// The next (previous) token below 25% probability, or flagged marker.
    NextUnlikely,
    PrevUnlikely,
    // An MCP server's question.
    ElicitNext,
    ElicitPrev,
    /// Enter: check the form and send it.
    ElicitAccept,
    ElicitDecline,
    ElicitCancel,
    ElicitDeleteChar,
    ElicitClearField,
    // The slash-command popup.
    /// Tab: the selected command (or the matches' common prefix) into the input.
    CompleteCommand,
    /// Esc: the popup closes, the input stays.
    ClosePopup,
}

/// One key: its code and the modifiers it needs (more may be held).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) code: KeyCode,
    pub(crate) mods: KeyModifiers,
}

const fn k(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}

const fn c(ch: char) -> Key {
    Key {
        code: KeyCode::Char(ch),
        mods: KeyModifiers::NONE,
    }
}

const fn ctrl(ch: char) -> Key {
    Key {
        code: KeyCode::Char(ch),
        mods: KeyModifiers::CONTROL,
    }
}

const fn with(code: KeyCode, mods: KeyModifiers) -> Key {
    Key { code, mods }
}

const fn alt(ch: char) -> Key {
    Key {
        code: KeyCode::Char(ch),
        mods: KeyModifiers::ALT,
    }
}

/// Keys a terminal reports only under the keyboard enhancement protocol (kitty's `CSI u`):
/// elsewhere Shift-Enter arrives as a plain Enter. Rows bound only to these are left out of the
/// help when the running terminal did not accept the protocol.
pub(crate) const ENHANCED_ONLY: &[Key] = &[with(Enter, KeyModifiers::SHIFT)];

/// Whether `row` has a key that reaches the app in a terminal with (`enhanced`) or without the
/// keyboard enhancement protocol.
pub(crate) fn row_works(row: &Row, enhanced: bool) -> bool {
    enhanced || row.binds.iter().any(|(k, _)| !ENHANCED_ONLY.contains(k))
}

/// One row of the table: keys and their actions in a context, as the help shows them.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) context: Context,
    /// The keys as the help writes them.
    pub(crate) keys: &'static str,
    pub(crate) help: &'static str,
    /// Shown in the status bar as `KEY TEXT`, in this order.
    pub(crate) hint: Option<(u8, &'static str, &'static str)>,
    pub(crate) binds: &'static [(Key, Action)],
}

use Action::*;
use Context::*;
use KeyCode::{
    BackTab, Backspace, Down, End, Enter, Esc, F, Home, Left, PageDown as PgDn, PageUp as PgUp,
    Right, Tab, Up,
};

const SCROLL: &[(Key, Action)] = &[
    (k(Up), LineUp),
    (c('k'), LineUp),
    (k(Down), LineDown),
    (c('j'), LineDown),
    (k(PgUp), PageUp),
    (k(PgDn), PageDown),
    (c(' '), PageDown),
    (k(Home), Top),
    (c('g'), Top),
    (k(End), Bottom),
    (c('G'), Bottom),
];

/// Every binding. Within a context a key has one action; when a key matches several rows
/// through held modifiers, the row needing the most modifiers wins (Shift-Enter before Enter).
pub(crate) const TABLE: &[Row] = &[
    Row {
        context: Global,
        keys: "Ctrl-C",
        help: "cancel a run; else clear the draft (Up brings it back); twice: quit",
        hint: None,
        binds: &[(ctrl('c'), CancelOrQuit)],
    },
    Row {
        context: Input,
        keys: "Enter",
        help: "send the message",
        hint: None,
        binds: &[(k(Enter), Send)],
    },
    Row {
        context: Input,
        keys: "Ctrl-J, Alt-Enter",
        help: "new line",
        hint: None,
        binds: &[
            (with(Enter, KeyModifiers::ALT), NewLine),
            (ctrl('j'), NewLine),
        ],
    },
    Row {
        context: Input,
        keys: "Shift-Enter",
        help: "new line (where the terminal reports it: kitty keyboard protocol)",
        hint: None,
        binds: &[(with(Enter, KeyModifiers::SHIFT), NewLine)],
    },
    Row {
        context: Input,
        keys: "Ctrl-A / Ctrl-E",
        help: "start / end of the line",
        hint: None,
        binds: &[(ctrl('a'), LineStart), (ctrl('e'), LineEnd)],
    },
    Row {
        context: Input,
        keys: "Alt-B / Alt-F",
        help: "back / forward a word",
        hint: None,
        binds: &[(alt('b'), WordBack), (alt('f'), WordForward)],
    },
    Row {
        context: Input,
        keys: "Ctrl-U / Ctrl-K",
        help: "delete to the start / end of the line",
        hint: None,
        binds: &[(ctrl('u'), DeleteToLineStart), (ctrl('k'), DeleteToLineEnd)],
    },
    Row {
        context: Input,
        keys: "Ctrl-W",
        help: "delete the word before the cursor",
        hint: None,
        binds: &[(ctrl('w'), DeleteWordBack)],
    },
    Row {
        context: Input,
        keys: "Ctrl-Z, Ctrl-_",
        help: "undo an edit",
        hint: None,
        // Ctrl-_ is byte 0x1F, which terminals without the enhancement protocol report as Ctrl-7.
        binds: &[(ctrl('z'), Undo), (ctrl('_'), Undo), (ctrl('7'), Undo)],
    },
    Row {
        context: Input,
        keys: "Ctrl-Y",
        help: "put back what Ctrl-U, Ctrl-K or Ctrl-W deleted",
        hint: None,
        binds: &[(ctrl('y'), Yank)],
    },
    Row {
        context: Input,
        keys: "Up / Down",
        help: "earlier prompts (first / last line); a queued message first",
        hint: None,
        binds: &[(k(Up), HistoryPrev), (k(Down), HistoryNext)],
    },
    Row {
        context: Input,
        keys: "Esc",
        help: "cancel the running answer (the partial answer stays)",
        hint: Some((3, "Esc", "cancel")),
        binds: &[(k(Esc), Cancel)],
    },
    Row {
        context: Input,
        keys: "Ctrl-D",
        help: "quit on an empty input (pressed twice)",
        hint: None,
        binds: &[(ctrl('d'), QuitIfEmpty)],
    },
    Row {
        context: Input,
        keys: "PgUp / PgDn, wheel",
        help: "scroll the transcript (the wheel while /mouse is on)",
        hint: None,
        binds: &[(k(PgUp), PageUp), (k(PgDn), PageDown)],
    },
    Row {
        context: Input,
        keys: "Home / End",
        help: "top / bottom (on an empty input, or with Ctrl)",
        hint: None,
        binds: &[
            (k(Home), Top),
            (with(Home, KeyModifiers::CONTROL), Top),
            (k(End), Bottom),
            (with(End, KeyModifiers::CONTROL), Bottom),
        ],
    },
    Row {
        context: Input,
        keys: "Tab / Shift-Tab",
        help: "select a tool call and scroll to it",
        hint: None,
        binds: &[(k(Tab), SelectPrevCall), (k(BackTab), SelectNextCall)],
    },
    Row {
        context: Input,
        keys: "Ctrl-O",
        help: "expand the selected (or last) tool call's result",
        hint: None,
        binds: &[(ctrl('o'), ToggleCall)],
    },
    Row {
        context: Input,
        keys: "Ctrl-T",
        help: "inspector: raw stream, markers and token ids (of the selected call)",
        hint: Some((2, "Ctrl-T", "inspector")),
        binds: &[(ctrl('t'), ToggleInspector)],
    },
    Row {
        context: Input,
        keys: "F2",
        help: "show / hide the reasoning of thinking models",
        hint: Some((2, "F2", "reasoning")),
        binds: &[(k(F(2)), ToggleReasoning)],
    },
    // Getting text out, compose.
    Row {
        context: Input,
        keys: "F3",
        help: "wheel scrolling on / off (/mouse); off, the terminal selects text",
        hint: None,
        binds: &[(k(F(3)), ToggleMouse)],
    },
    Row {
        context: Input,
        keys: "Ctrl-G",
        help: "edit the draft in $VISUAL / $EDITOR (else vi)",
        hint: None,
        binds: &[(ctrl('g'), OpenEditor)],
    },
    Row {
        context: Input,
        keys: "F1, ?",
        help: "this help (? on an empty input)",
        hint: Some((1, "F1", "help")),
        binds: &[(k(F(1)), OpenHelp), (c('?'), OpenHelp)],
    },
    Row {
        context: Dialog,
        keys: "y / a",
        help: "approve / approve and always allow this tool",
        hint: None,
        binds: &[(c('y'), Approve), (c('a'), AlwaysAllow)],
    },
    Row {
        context: Dialog,
        keys: "r",
        help: "always allow calls like this: edit the rule it adds, then save",
        hint: None,
        binds: &[(c('r'), AddRule)],
    },
    Row {
        context: Dialog,
        keys: "n / Esc",
        help: "deny with a reason for the model / deny",
        hint: None,
        binds: &[(c('n'), DenyWithReason), (k(Esc), Deny)],
    },
    Row {
        context: Dialog,
        keys: "e",
        help: "edit the arguments as JSON",
        hint: None,
        binds: &[(c('e'), Edit)],
    },
    Row {
        context: Dialog,
        keys: "↑↓ j k PgUp PgDn g G",
        help: "scroll long arguments (y counts once all were shown)",
        hint: None,
        binds: SCROLL,
    },
    Row {
        context: Dialog,
        keys: "Ctrl-T",
        help: "the call's raw markers in the inspector (Esc comes back)",
        hint: None,
        binds: &[(ctrl('t'), InspectCall)],
    },
    Row {
        context: DialogReason,
        keys: "Enter / Esc",
        help: "typing a reason: deny with it / back",
        hint: None,
        binds: &[(k(Enter), SubmitReason), (k(Esc), BackToDialog)],
    },
    Row {
        context: DialogEdit,
        keys: "Ctrl-S / Esc",
        help: "editing: check the arguments and run / back",
        hint: None,
        binds: &[(ctrl('s'), SaveEdit), (k(Esc), BackToDialog)],
    },
    Row {
        context: DialogRule,
        keys: "Ctrl-S / Tab / Esc",
        help: "a rule: save & run the call / this session or user config / back",
        hint: None,
        binds: &[
            (ctrl('s'), SaveRule),
            (k(Tab), ToggleRuleScope),
            (k(Esc), BackToDialog),
        ],
    },
    Row {
        context: Trust,
        keys: "t / n, Esc",
        help: "trust this directory's project rules / not now",
        hint: None,
        binds: &[
            (c('t'), TrustProject),
            (c('n'), DistrustProject),
            (k(Esc), DistrustProject),
        ],
    },
    Row {
        context: Elicit,
        keys: "Tab / Shift-Tab, ↓ ↑",
        help: "an MCP server's question: next / previous field (type to fill it)",
        hint: None,
        binds: &[
            (k(Tab), ElicitNext),
            (k(Down), ElicitNext),
            (k(BackTab), ElicitPrev),
            (k(Up), ElicitPrev),
        ],
    },
    Row {
        context: Elicit,
        keys: "Backspace / Ctrl-U",
        help: "delete a character / clear the field",
        hint: None,
        binds: &[
            (k(Backspace), ElicitDeleteChar),
            (ctrl('u'), ElicitClearField),
        ],
    },
    Row {
        context: Elicit,
        keys: "Enter",
        help: "check the answers and send them (empty optional fields are left out)",
        hint: None,
        binds: &[(k(Enter), ElicitAccept)],
    },
    Row {
        context: Elicit,
        keys: "Ctrl-D / Esc",
        help: "decline the question / cancel it (and the server's operation)",
        hint: None,
        binds: &[(ctrl('d'), ElicitDecline), (k(Esc), ElicitCancel)],
    },
    Row {
        context: Inspector,
        keys: "↑↓ j k PgUp PgDn g G",
        help: "scroll",
        hint: None,
        binds: SCROLL,
    },
    Row {
        context: Inspector,
        keys: "[ ] ← →",
        help: "previous / next request",
        hint: None,
        binds: &[
            (c('['), PrevRequest),
            (k(Left), PrevRequest),
            (c(']'), NextRequest),
            (k(Right), NextRequest),
        ],
    },
    Row {
        context: Inspector,
        keys: "/ n N",
        help: "search, next match, previous match",
        hint: None,
        binds: &[
            (c('/'), StartSearch),
            (c('n'), NextMatch),
            (c('N'), PrevMatch),
        ],
    },
    // The token view.
    Row {
        context: Inspector,
        keys: "t",
        help: "token view: token ids, logprobs as shades, alternatives",
        hint: None,
        binds: &[(c('t'), ToggleTokens)],
    },
    Row {
        context: Tokens,
        keys: "← → ↑ ↓ Home End",
        help: "token view: select a token (its alternatives show below)",
        hint: None,
        binds: &[
            (k(Left), TokenPrev),
            (c('h'), TokenPrev),
            (k(Right), TokenNext),
            (c('l'), TokenNext),
            (k(Up), TokenUp),
            (c('k'), TokenUp),
            (k(Down), TokenDown),
            (c('j'), TokenDown),
            (k(Home), TokenFirst),
            (c('g'), TokenFirst),
            (k(End), TokenLast),
            (c('G'), TokenLast),
        ],
    },
    Row {
        context: Tokens,
        keys: "u U",
        help: "token view: next / previous unlikely token (p < 25%) or split marker",
        hint: None,
        binds: &[(c('u'), NextUnlikely), (c('U'), PrevUnlikely)],
    },
    Row {
        context: Tokens,
        keys: "t",
        help: "token view: back to the chunks",
        hint: None,
        binds: &[(c('t'), ToggleTokens)],
    },
    Row {
        context: Inspector,
        keys: "r",
        help: "chat mode: SSE events as raw JSON, or as compact lines",
        hint: None,
        binds: &[(c('r'), ToggleRawJson)],
    },
    Row {
        context: Inspector,
        keys: "s",
        help: "save the request as a replayable trace file (kimi-tui replay FILE)",
        hint: None,
        binds: &[(c('s'), SaveTrace)],
    },
    Row {
        context: Inspector,
        keys: "x",
        help: "write a reproducer for a bug report (kimi-tui repro's JSON lines)",
        hint: None,
        binds: &[(c('x'), SaveRepro)],
    },
    Row {
        context: Inspector,
        keys: "a A",
        help: "A/B: again non-streamed (a) or in the other mode (A), side by side",
        hint: None,
        binds: &[(c('a'), CompareNonStream), (c('A'), CompareOtherMode)],
    },
    Row {
        context: Inspector,
        keys: "e",
        help: "edit the model's output of the last answer and continue from the edit",
        hint: None,
        binds: &[(c('e'), EditAnswer)],
    },
    Row {
        context: AnswerEdit,
        keys: "Ctrl-S / Esc",
        help: "editing the last answer: continue from the edit / cancel",
        hint: None,
        binds: &[(ctrl('s'), ContinueEdit), (k(Esc), CancelEdit)],
    },
    Row {
        context: Inspector,
        keys: "} {",
        help: "next / previous stall (a long gap between chunks)",
        hint: None,
        binds: &[(c('}'), NextStall), (c('{'), PrevStall)],
    },
    Row {
        context: Inspector,
        keys: "Esc q Ctrl-T",
        help: "close the inspector",
        hint: None,
        binds: &[
            (k(Esc), CloseInspector),
            (c('q'), CloseInspector),
            (ctrl('t'), ToggleInspector),
        ],
    },
    Row {
        context: Search,
        keys: "Enter / Esc",
        help: "typing a search: search / cancel (Backspace deletes)",
        hint: None,
        binds: &[
            (k(Enter), RunSearch),
            (k(Esc), CancelSearch),
            (k(Backspace), DeleteSearchChar),
        ],
    },
    // Going back, history and sessions.
    Row {
        context: Input,
        keys: "Esc Esc",
        help: "idle, empty input: go back to an earlier message, edit, resend",
        hint: None,
        binds: &[(k(Esc), Cancel)],
    },
    Row {
        context: Input,
        keys: "Ctrl-R",
        help: "search the prompt history (kept across runs)",
        hint: None,
        binds: &[(ctrl('r'), StartHistorySearch)],
    },
    // The slash-command popup: Enter is the input's (it runs what is typed).
    Row {
        context: Slash,
        keys: "↑ ↓",
        help: "move the selection in the list of commands",
        hint: None,
        binds: &[(k(Up), LineUp), (k(Down), LineDown)],
    },
    Row {
        context: Slash,
        keys: "Tab",
        help: "complete the selected command (or the shared prefix), then a space",
        hint: None,
        binds: &[(k(Tab), CompleteCommand)],
    },
    Row {
        context: Slash,
        keys: "Esc",
        help: "close the list (the input stays; Enter runs what is typed)",
        hint: None,
        binds: &[(k(Esc), ClosePopup)],
    },
    Row {
        context: Picker,
        keys: "↑↓ j k PgUp PgDn g G",
        help: "move in the list",
        hint: None,
        binds: SCROLL,
    },
    Row {
        context: Picker,
        keys: "Enter / Esc q",
        help: "take the selected item / close",
        hint: None,
        binds: &[
            (k(Enter), Pick),
            (k(Esc), ClosePicker),
            (c('q'), ClosePicker),
        ],
    },
    Row {
        context: HistorySearch,
        keys: "Ctrl-R",
        help: "the next older match (typing narrows, Backspace widens)",
        hint: None,
        binds: &[
            (ctrl('r'), HistorySearchOlder),
            (k(Backspace), DeleteHistorySearchChar),
        ],
    },
    Row {
        context: HistorySearch,
        keys: "Enter / Esc",
        help: "keep the match in the input / put the draft back",
        hint: None,
        binds: &[
            (k(Enter), AcceptHistorySearch),
            (k(Esc), CancelHistorySearch),
        ],
    },
    Row {
        context: Help,
        keys: "↑↓ PgUp PgDn",
        help: "scroll this help",
        hint: None,
        binds: &[
            (k(Up), LineUp),
            (k(Down), LineDown),
            (k(PgUp), PageUp),
            (k(PgDn), PageDown),
            (k(Home), Top),
            (k(End), Bottom),
        ],
    },
    Row {
        context: Help,
        keys: "Esc, F1, ? or q",
        help: "close this help",
        hint: None,
        binds: &[
            (k(Esc), CloseHelp),
            (k(F(1)), CloseHelp),
            (c('?'), CloseHelp),
            (c('q'), CloseHelp),
        ],
    },
];

/// The action of `key` in `context`, if the table binds one.
pub(crate) fn lookup(context: Context, key: &KeyEvent) -> Option<Action> {
    TABLE
        .iter()
        .filter(|r| r.context == context)
        .flat_map(|r| r.binds.iter())
        .filter(|(b, _)| b.code == key.code && key.modifiers.contains(b.mods))
        .max_by_key(|(b, _)| b.mods.bits().count_ones())
        .map(|(_, a)| *a)
}

/// The status bar's hints, `KEY TEXT` in their order.
pub(crate) fn hints() -> Vec<(&'static str, &'static str)> {
    let mut h: Vec<_> = TABLE.iter().filter_map(|r| r.hint).collect();
    h.sort_by_key(|(order, ..)| *order);
    h.into_iter().map(|(_, key, text)| (key, text)).collect()
}

/// The help's sections: a title and the contexts whose rows it lists.
pub(crate) const SECTIONS: &[(&str, &[Context])] = &[
    ("Keys", &[Global, Input]),
    (
        "Approval dialog",
        &[Dialog, DialogReason, DialogEdit, DialogRule],
    ),
    ("A project's rules", &[Trust]),
    ("An MCP server's question", &[Elicit]),
    ("Inspector", &[Inspector, Tokens, Search, AnswerEdit]),
    ("The commands list (typing /)", &[Slash]),
    ("Pickers and history search", &[Picker, HistorySearch]),
    ("In this help", &[Help]),
];

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_CONTEXTS: &[Context] = &[
        Global,
        Input,
        Help,
        Inspector,
        Search,
        Dialog,
        DialogReason,
        DialogEdit,
        DialogRule,
        Trust,
        Picker,
        HistorySearch,
        Tokens,
        Elicit,
        Slash,
    ];

    fn event(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    /// Every key a terminal can send that the table could care about, with every modifier.
    fn all_keys() -> Vec<KeyEvent> {
        let mut codes: Vec<KeyCode> = (' '..='~').map(KeyCode::Char).collect();
        codes.extend([
            Enter, Esc, Tab, BackTab, Backspace, Up, Down, Left, Right, Home, End, PgUp, PgDn,
        ]);
        codes.extend((1..=12).map(F));
        let mods = [
            KeyModifiers::NONE,
            KeyModifiers::SHIFT,
            KeyModifiers::CONTROL,
            KeyModifiers::ALT,
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        ];
        codes
            .into_iter()
            .flat_map(|c| mods.iter().map(move |m| event(c, *m)))
            .collect()
    }

    #[test]
    fn every_action_reachable_by_a_key_is_in_the_help_of_its_context() {
        for &ctx in ALL_CONTEXTS {
            for key in all_keys() {
                let Some(action) = lookup(ctx, &key) else {
                    continue;
                };
                let row = TABLE
                    .iter()
                    .find(|r| r.context == ctx && r.binds.iter().any(|(_, a)| *a == action));
                let row = row.unwrap_or_else(|| panic!("{action:?} in {ctx:?} has no row"));
                assert!(!row.help.is_empty() && !row.keys.is_empty(), "{row:?}");
                assert!(
                    SECTIONS.iter().any(|(_, cs)| cs.contains(&ctx)),
                    "{ctx:?} is in no help section"
                );
            }
        }
    }

    #[test]
    fn a_key_means_one_thing_per_context() {
        for &ctx in ALL_CONTEXTS {
            let binds: Vec<_> = TABLE
                .iter()
                .filter(|r| r.context == ctx)
                .flat_map(|r| r.binds.iter())
                .collect();
            for (i, (a, x)) in binds.iter().enumerate() {
                for (b, y) in &binds[i + 1..] {
                    assert!(a != b || x == y, "{a:?} is bound twice in {ctx:?}");
                }
            }
        }
    }

    #[test]
    fn held_modifiers_pick_the_more_specific_binding() {
        assert_eq!(lookup(Input, &event(Enter, KeyModifiers::NONE)), Some(Send));
        assert_eq!(
            lookup(Input, &event(Enter, KeyModifiers::SHIFT)),
            Some(NewLine)
        );
        assert_eq!(
            lookup(Input, &event(Enter, KeyModifiers::ALT)),
            Some(NewLine)
        );
        assert_eq!(
            lookup(Input, &event(Enter, KeyModifiers::CONTROL)),
            Some(Send)
        );
        assert_eq!(
            lookup(Input, &event(KeyCode::Char('j'), KeyModifiers::CONTROL)),
            Some(NewLine)
        );
        // A plain letter in the input is text.
        assert_eq!(
            lookup(Input, &event(KeyCode::Char('j'), KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            lookup(Inspector, &event(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Bottom)
        );
        assert_eq!(
            lookup(Global, &event(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(CancelOrQuit)
        );
        assert_eq!(
            lookup(Global, &event(KeyCode::Char('c'), KeyModifiers::NONE)),
            None
        );
    }

    #[test]
    fn hints_are_bound_keys_in_order() {
        let h = hints();
        assert_eq!(
            h,
            vec![
                ("F1", "help"),
                ("Ctrl-T", "inspector"),
                ("F2", "reasoning"),
                ("Esc", "cancel")
            ]
        );
        for (key, _) in h {
            let row = TABLE
                .iter()
                .find(|r| r.hint.is_some_and(|(_, k, _)| k == key));
            let row = row.unwrap_or_else(|| panic!("hint {key} has no row"));
            // The hint's key is one of the row's keys, and the row is in the help.
            assert!(row.keys.contains(key), "{row:?}");
            assert!(!row.binds.is_empty());
        }
    }
}
