//! What the MCP servers said while the calls of the request in view ran: each call's last
//! progress and log lines, after the end of the stream. The pane shows the same; here they sit
//! beside the raw stream that asked for the call.

use ratatui::text::{Line, Span};

use super::style;
use crate::app::state::{App, Entry};
use kimi_protocol::Trace;
use kimi_protocol::sanitize::one_line;

/// The lines for the calls `trace` produced whose server reported progress or log lines.
pub(crate) fn notes_lines(app: &App, trace: &Trace) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for head in &trace.call_heads {
        let pane = app.transcript.entries.iter().rev().find_map(|e| match e {
            Entry::Assistant(turn) => turn.panes.iter().find(|p| p.id == head.id),
            _ => None,
        });
        let Some(pane) = pane else { continue };
        if pane.progress.is_none() && pane.log.is_empty() {
            continue;
        }
        out.push(Line::from(Span::styled(
            format!(
                "── MCP server notes · {} ({})",
                one_line(&head.name, 64),
                one_line(&head.id, 64)
            ),
            style::accent(),
        )));
        if let Some(p) = &pane.progress {
            out.push(Line::from(one_line(&p.line(), 300)));
        }
        // Sanitized when they arrived.
        out.extend(pane.log.iter().map(|l| Line::from(l.clone())));
    }
    out
}
