//! Colours and styles of the app's chrome (the markdown body has its own theme).

use ratatui::style::{Color, Modifier, Style};

pub(crate) fn user_header() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}
pub(crate) fn assistant_header() -> Style {
    Style::default()
        .fg(Color::Magenta)
        .add_modifier(Modifier::BOLD)
}
pub(crate) fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}
pub(crate) fn error() -> Style {
    Style::default().fg(Color::Red)
}
pub(crate) fn warning() -> Style {
    Style::default().fg(Color::Yellow)
}
pub(crate) fn ok() -> Style {
    Style::default().fg(Color::Green)
}
pub(crate) fn accent() -> Style {
    Style::default().fg(Color::Cyan)
}
pub(crate) fn key() -> Style {
    Style::default().fg(Color::Black).bg(Color::Gray)
}
pub(crate) fn badge() -> Style {
    Style::default()
        .fg(Color::Black)
        .bg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}
/// A K3 element named from its three marker tokens (`⟨think⟩`).
pub(crate) fn element() -> Style {
    Style::default()
        .fg(Color::Black)
        .bg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}
/// A special-token string inside user or tool text: it looks like a marker but is not the
/// template's, so it must not look like one.
pub(crate) fn text_marker() -> Style {
    Style::default()
        .fg(Color::White)
        .bg(Color::Red)
        .add_modifier(Modifier::BOLD)
}
