//! Messages typed while a turn runs: queued, shown in the status bar, sent one by
//! one as turns end. `Up` on an empty input takes the last one back to edit or drop; a turn
//! the user cancelled sends nothing, and the queue goes back into the input, so no text is lost.

use super::state::App;

/// Queue `text` (the turn running now is not disturbed).
pub(crate) fn push(app: &mut App, text: String) {
    app.composer.queued.push(text);
    let n = app.composer.queued.len();
    app.notice(
        format!("Queued ({n}): sent when this answer ends. Up on an empty input takes it back."),
        false,
    );
}

/// Up on an empty input with something queued: the last queued message back in the input.
pub(crate) fn take_back(app: &mut App) -> Option<String> {
    let text = app.composer.queued.pop()?;
    app.notice(
        "Taken back from the queue: edit it, or clear it with Ctrl-C.",
        false,
    );
    Some(text)
}

/// The turn ended: the next queued message, to send now; `None` when the queue is empty or the
/// turn was cancelled (then the queue goes back into an empty input instead).
pub(crate) fn next(app: &mut App, cancelled: bool) -> Option<String> {
    if app.composer.queued.is_empty() {
        return None;
    }
    if cancelled {
        if app.composer.input.is_empty() {
            let text = std::mem::take(&mut app.composer.queued).join("\n\n");
            app.composer.input.insert_str(&text);
            app.notice(
                "The turn was cancelled: the queued message is back in the input.",
                false,
            );
        }
        return None;
    }
    Some(app.composer.queued.remove(0))
}
