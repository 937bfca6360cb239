//! TEMPORARY plain-text stand-in until the markdown renderer lands.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

#[derive(Debug, Clone, Default)]
pub struct Theme {}

pub fn render(text: &str, width: u16, _theme: &Theme) -> Vec<Line<'static>> {
    super::wrap::wrap(text, width, Span::raw(""), Style::default())
}

#[derive(Debug, Default)]
pub struct MarkdownCache {
    text: String,
    lines: Vec<Line<'static>>,
    width: u16,
    dirty: bool,
}

impl MarkdownCache {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push_str(&mut self, delta: &str) {
        self.text.push_str(delta);
        self.dirty = true;
    }
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_owned();
        self.dirty = true;
    }
    pub fn text(&self) -> &str {
        &self.text
    }
    pub fn lines(&mut self, width: u16, theme: &Theme) -> &[Line<'static>] {
        if self.dirty || self.width != width {
            self.lines = render(&self.text, width, theme);
            self.width = width;
            self.dirty = false;
        }
        &self.lines
    }
    pub fn cached_lines(&self) -> &[Line<'static>] {
        &self.lines
    }
}
