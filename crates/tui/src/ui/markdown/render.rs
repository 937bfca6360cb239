//! One markdown block (see [`blocks`](super::blocks)) to wrapped, styled lines: pulldown-cmark
//! events become logical lines (a prefix for the first row, a prefix for the following rows,
//! content spans and a layout kind), each laid out by [`wrap_into`] as soon as it is complete.

use std::borrow::Cow;

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::Theme;
use super::highlight::{Lang, highlight};
use super::wrap::{Kind, spans_width, str_width, wrap_into};

pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

const SPACES: &str = "                                                                ";

/// `n` spaces, borrowed when short.
fn spaces(n: usize) -> Cow<'static, str> {
    if n <= SPACES.len() {
        Cow::Borrowed(&SPACES[..n])
    } else {
        Cow::Owned(" ".repeat(n))
    }
}

/// Expand tabs to 4-column stops, starting at display column `col`; returns the new column.
fn expand_tabs_into(s: &str, mut col: usize, out: &mut String) -> usize {
    for piece in s.split_inclusive('\t') {
        let (text, tab) = match piece.strip_suffix('\t') {
            Some(t) => (t, true),
            None => (piece, false),
        };
        out.push_str(text);
        col += str_width(text);
        if tab {
            let n = 4 - col % 4;
            out.push_str(&SPACES[..n]);
            col += n;
        }
    }
    col
}

/// Code with tabs expanded per line.
fn expand_code_tabs(code: &str) -> Cow<'_, str> {
    if !code.contains('\t') {
        return Cow::Borrowed(code);
    }
    let mut out = String::with_capacity(code.len() + 16);
    for line in code.split_inclusive('\n') {
        expand_tabs_into(line, 0, &mut out);
    }
    Cow::Owned(out)
}

/// A container that adds to the prefix of the lines inside it.
enum Frame {
    Quote,
    Item {
        /// The marker, until the first line of the item takes it.
        marker: Option<Span<'static>>,
        indent: usize,
    },
}

struct ListState {
    next: Option<u64>,
    marker_width: usize,
    loose: bool,
    depth: usize,
}

/// Facts about a list that its start event does not tell.
#[derive(Default, Clone, Copy)]
struct ListInfo {
    loose: bool,
    items: u64,
}

/// Looseness and item counts of the lists, in order of their start events.
fn list_infos(events: &[Event<'_>]) -> Vec<ListInfo> {
    enum C {
        List(usize),
        Item,
        Other,
    }
    let mut infos = Vec::new();
    let mut stack: Vec<C> = Vec::new();
    for ev in events {
        match ev {
            Event::Start(Tag::List(_)) => {
                stack.push(C::List(infos.len()));
                infos.push(ListInfo::default());
            }
            Event::Start(Tag::Item) => {
                if let Some(C::List(k)) = stack.last() {
                    infos[*k].items += 1;
                }
                stack.push(C::Item);
            }
            Event::Start(Tag::Paragraph) => {
                if let [.., C::List(k), C::Item] = stack.as_slice() {
                    infos[*k].loose = true;
                }
            }
            Event::Start(Tag::BlockQuote(_) | Tag::FootnoteDefinition(_)) => stack.push(C::Other),
            Event::End(TagEnd::List(_) | TagEnd::Item | TagEnd::BlockQuote(_)) => {
                stack.pop();
            }
            Event::End(TagEnd::FootnoteDefinition) => {
                stack.pop();
            }
            _ => {}
        }
    }
    infos
}

struct Link {
    url: String,
    text: String,
    image: bool,
}

struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
    in_head: bool,
    row: Vec<Vec<Span<'static>>>,
    cell: Vec<Span<'static>>,
}

struct Code {
    lang: Option<Lang>,
    text: String,
}

struct Renderer<'a, 'o> {
    theme: &'o Theme,
    width: usize,
    out: &'o mut Vec<Line<'static>>,
    frames: Vec<Frame>,
    /// Cumulative inline styles; the last is the current one.
    styles: Vec<Style>,
    inline: Vec<Span<'a>>,
    inline_active: bool,
    need_blank: bool,
    /// Where the last separator line went (`out`'s length before and after it).
    last_blank: Option<(usize, usize)>,
    lists: Vec<ListState>,
    infos: Vec<ListInfo>,
    next_info: usize,
    links: Vec<Link>,
    code: Option<Code>,
    html: Option<String>,
    table: Option<Table>,
}

/// Render one block of markdown at `width` (> 0), appending rows to `out`.
pub(crate) fn render_block(text: &str, width: usize, theme: &Theme, out: &mut Vec<Line<'static>>) {
    let events: Vec<Event<'_>> = Parser::new_ext(text, options()).collect();
    let infos = list_infos(&events);
    let mut r = Renderer {
        theme,
        width,
        out,
        frames: Vec::new(),
        styles: vec![Style::default()],
        inline: Vec::new(),
        inline_active: false,
        need_blank: false,
        lists: Vec::new(),
        infos,
        next_info: 0,
        links: Vec::new(),
        code: None,
        html: None,
        table: None,
        last_blank: None,
    };
    for ev in events {
        r.event(ev);
    }
    r.flush_inline();
    // A separator that nothing followed (an empty quote or list at the end): the block ends
    // where its text did, as it does when the same text is rendered in pieces.
    if let Some((before, after)) = r.last_blank
        && r.out.len() == after
    {
        r.out.truncate(before);
    }
}

/// The word of a fence's info string that names the language.
fn info_word(info: &str) -> &str {
    info.split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
}

/// The language of the fenced code block that `opener` (its first line) opens, read as
/// [`render_block`] reads it (pulldown-cmark decodes escapes in the info string).
pub(crate) fn fence_lang(opener: &str) -> Option<Lang> {
    Parser::new_ext(opener, options()).find_map(|ev| match ev {
        Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
            Lang::from_info(info_word(&info))
        }
        _ => None,
    })
}

/// What pulldown-cmark makes of the incomplete last line of an open fenced code block.
pub(crate) enum LastLine {
    /// Code, as it is.
    Code,
    /// Not code: empty, the closing fence, or spaces that may start one.
    NotCode,
    /// Code, but changed (not seen in practice; the caller renders the whole block).
    Other,
}

/// How the incomplete last line `line` of the fenced block that `opener` opens is read: found
/// by parsing the two lines alone, which is what the whole block gives for that line.
pub(crate) fn last_line_code(opener: &str, line: &str) -> LastLine {
    if line.is_empty() {
        return LastLine::NotCode;
    }
    let mut probe = String::with_capacity(opener.len() + line.len());
    probe.push_str(opener);
    probe.push_str(line);
    let mut code = String::new();
    for ev in Parser::new_ext(&probe, options()) {
        if let Event::Text(t) = ev {
            code.push_str(&t);
        }
    }
    if code == line {
        LastLine::Code
    } else if code.is_empty() {
        LastLine::NotCode
    } else {
        LastLine::Other
    }
}

/// Lines of code of a top-level fenced block, laid out as [`render_block`] lays them out;
/// `code` is whole lines of it (the last may be incomplete).
pub(crate) fn code_lines(
    code: &str,
    lang: Option<Lang>,
    width: usize,
    theme: &Theme,
    out: &mut Vec<Line<'static>>,
) {
    let text = expand_code_tabs(code);
    let bar = [Span::styled("▎ ", theme.code_bar)];
    highlight(&text, lang, theme, |spans| {
        wrap_into(&bar, &bar, spans, Kind::Code, width, out);
    });
}

/// `<br>`, `<br/>` or `<br />`, which models use for line breaks (in tables too).
fn is_br(html: &str) -> bool {
    let h = html.trim();
    let Some(inner) = h.strip_prefix('<').and_then(|h| h.strip_suffix('>')) else {
        return false;
    };
    let inner = inner.trim_end_matches('/').trim();
    inner.eq_ignore_ascii_case("br")
}

fn cow_str<'a>(s: pulldown_cmark::CowStr<'a>) -> Cow<'a, str> {
    match s {
        pulldown_cmark::CowStr::Borrowed(b) => Cow::Borrowed(b),
        other => Cow::Owned(other.to_string()),
    }
}

impl<'a> Renderer<'a, '_> {
    fn style(&self) -> Style {
        // The base style is pushed first and never popped; the default is only a fallback.
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, s: Style) {
        let cur = self.style();
        self.styles.push(cur.patch(s));
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// Prefixes for the next logical line: first row (takes any pending list marker) and
    /// following rows.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::with_capacity(self.frames.len());
        let mut cont = Vec::with_capacity(self.frames.len());
        for f in &mut self.frames {
            match f {
                Frame::Quote => {
                    let s = Span::styled("│ ", self.theme.quote);
                    first.push(s.clone());
                    cont.push(s);
                }
                Frame::Item { marker, indent } => {
                    first.push(marker.take().unwrap_or_else(|| Span::raw(spaces(*indent))));
                    cont.push(Span::raw(spaces(*indent)));
                }
            }
        }
        (first, cont)
    }

    fn emit(&mut self, spans: &[Span<'_>], kind: Kind, extra: Option<Span<'static>>) {
        let (mut first, mut cont) = self.prefixes();
        if let Some(e) = extra {
            first.push(e.clone());
            cont.push(e);
        }
        wrap_into(&first, &cont, spans, kind, self.width, self.out);
    }

    fn emit_blank(&mut self) {
        let before = self.out.len();
        let mut prefix = Vec::new();
        for f in &self.frames {
            match f {
                Frame::Quote => prefix.push(Span::styled("│ ", self.theme.quote)),
                Frame::Item { indent, .. } => prefix.push(Span::raw(spaces(*indent))),
            }
        }
        wrap_into(&prefix, &prefix, &[], Kind::Prose, self.width, self.out);
        self.last_blank = Some((before, self.out.len()));
    }

    /// Before a block element: the blank line that separates it from the previous one.
    fn block_start(&mut self) {
        if self.need_blank {
            self.emit_blank();
            self.need_blank = false;
        }
    }

    fn begin_inline(&mut self) {
        if self.table.is_none() && !self.inline_active {
            self.block_start();
            self.inline_active = true;
        }
    }

    /// Emit the inline content gathered so far as a prose line.
    fn flush_inline(&mut self) {
        if self.inline_active {
            let spans = std::mem::take(&mut self.inline);
            self.emit(&spans, Kind::Prose, None);
            self.inline_active = false;
        }
    }

    /// Add inline text in `style`.
    fn push_text(&mut self, text: Cow<'a, str>, style: Style) {
        for link in &mut self.links {
            link.text.push_str(&text);
        }
        let text = if text.contains(['\t', '\n']) {
            // Prose is re-flowed, so tab stops count from the start of this piece of text
            // (which keeps the work linear).
            let mut s = String::with_capacity(text.len() + 8);
            expand_tabs_into(&text.replace('\n', " "), 0, &mut s);
            Cow::Owned(s)
        } else {
            text
        };
        if let Some(t) = &mut self.table {
            t.cell.push(Span::styled(text.into_owned(), style));
            return;
        }
        self.begin_inline();
        self.inline.push(Span::styled(text, style));
    }

    fn event(&mut self, ev: Event<'a>) {
        if let Some(code) = &mut self.code {
            match ev {
                Event::Text(t) => code.text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => self.end_code(),
                _ => {}
            }
            return;
        }
        match ev {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                let style = self.style();
                self.push_text(cow_str(t), style);
            }
            Event::Code(t) => {
                let style = self.style().patch(self.theme.code_inline);
                self.push_text(cow_str(t), style);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                let style = self.style().patch(self.theme.code_inline);
                self.push_text(cow_str(t), style);
            }
            Event::Html(t) => match &mut self.html {
                Some(h) => h.push_str(&t),
                None => {
                    let style = self.style().patch(self.theme.html);
                    self.push_text(cow_str(t), style);
                }
            },
            Event::InlineHtml(t) if is_br(&t) => self.event(Event::HardBreak),
            Event::InlineHtml(t) => {
                let style = self.style().patch(self.theme.html);
                self.push_text(cow_str(t), style);
            }
            Event::FootnoteReference(t) => {
                let style = self.style().patch(self.theme.link);
                self.push_text(Cow::Owned(format!("[^{t}]")), style);
            }
            Event::SoftBreak => {
                let style = self.style();
                self.push_text(Cow::Borrowed(" "), style);
            }
            Event::HardBreak => {
                if self.table.is_some() {
                    let style = self.style();
                    self.push_text(Cow::Borrowed(" "), style);
                } else {
                    self.flush_inline();
                    self.inline_active = true;
                }
            }
            Event::Rule => {
                self.flush_inline();
                self.block_start();
                let rule = [Span::styled("", self.theme.rule)];
                self.emit(&rule, Kind::Rule, None);
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let style = self.theme.list_bullet;
                let mark = if done { "[x] " } else { "[ ] " };
                self.push_text(Cow::Borrowed(mark), style);
            }
        }
    }

    fn start(&mut self, tag: Tag<'a>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush_inline();
                let mut style = self.theme.heading;
                if level == HeadingLevel::H1 {
                    style = style.add_modifier(Modifier::UNDERLINED);
                }
                self.push_style(style);
                self.begin_inline();
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.block_start();
                self.frames.push(Frame::Quote);
                self.push_style(self.theme.quote_text);
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                self.block_start();
                let info = match &kind {
                    CodeBlockKind::Fenced(info) => info.as_ref(),
                    CodeBlockKind::Indented => "",
                };
                let word = info_word(info);
                let label = if word.is_empty() { "text" } else { word };
                let badge = [Span::styled(format!(" {label} "), self.theme.code_label)];
                self.emit(&badge, Kind::Clip, None);
                self.code = Some(Code {
                    lang: Lang::from_info(word),
                    text: String::new(),
                });
            }
            Tag::HtmlBlock => {
                self.flush_inline();
                self.block_start();
                self.html = Some(String::new());
            }
            Tag::List(start) => {
                self.flush_inline();
                self.block_start();
                let info = self.infos.get(self.next_info).copied().unwrap_or_default();
                self.next_info += 1;
                let marker_width = match start {
                    Some(s) => {
                        let last = s.saturating_add(info.items.saturating_sub(1));
                        last.to_string().len() + 2
                    }
                    None => 2,
                };
                self.lists.push(ListState {
                    next: start,
                    marker_width,
                    loose: info.loose,
                    depth: self.lists.len(),
                });
            }
            Tag::Item => {
                self.flush_inline();
                let theme = self.theme;
                let (marker, indent, loose) = match self.lists.last_mut() {
                    Some(list) => {
                        let w = list.marker_width;
                        let text: Cow<'static, str> = match &mut list.next {
                            Some(n) => {
                                let s = format!("{:>width$}. ", *n, width = w - 2);
                                *n = n.saturating_add(1);
                                Cow::Owned(s)
                            }
                            None => Cow::Borrowed(match list.depth % 3 {
                                0 => "• ",
                                1 => "◦ ",
                                _ => "▪ ",
                            }),
                        };
                        (Span::styled(text, theme.list_bullet), w, list.loose)
                    }
                    None => (Span::styled("• ", theme.list_bullet), 2, false),
                };
                if !loose {
                    self.need_blank = false;
                }
                self.frames.push(Frame::Item {
                    marker: Some(marker),
                    indent,
                });
            }
            Tag::Table(aligns) => {
                self.flush_inline();
                self.block_start();
                self.table = Some(Table {
                    aligns,
                    rows: Vec::new(),
                    header_rows: 0,
                    in_head: false,
                    row: Vec::new(),
                    cell: Vec::new(),
                });
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = true;
                }
            }
            Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.push_style(self.theme.emphasis),
            Tag::Strong => self.push_style(self.theme.strong),
            Tag::Strikethrough => self.push_style(self.theme.strikethrough),
            Tag::Superscript | Tag::Subscript => self.push_style(Style::default()),
            Tag::Link { dest_url, .. } => {
                self.push_style(self.theme.link);
                self.links.push(Link {
                    url: dest_url.to_string(),
                    text: String::new(),
                    image: false,
                });
            }
            Tag::Image { dest_url, .. } => {
                self.push_style(self.theme.link);
                let style = self.style();
                self.push_text(Cow::Borrowed("[image: "), style);
                self.links.push(Link {
                    url: dest_url.to_string(),
                    text: String::new(),
                    image: true,
                });
            }
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => {
                self.flush_inline();
                self.block_start();
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.need_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.pop_style();
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.frames.pop();
                self.pop_style();
                self.need_blank = true;
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::HtmlBlock => {
                let html = self.html.take().unwrap_or_default();
                let style = self.theme.html;
                for line in html.lines() {
                    let mut s = String::new();
                    expand_tabs_into(line, 0, &mut s);
                    self.emit(&[Span::styled(s, style)], Kind::Code, None);
                }
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                self.need_blank = true;
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(Frame::Item {
                    marker: Some(_), ..
                }) = self.frames.last()
                {
                    // An empty item: its marker alone.
                    self.emit(&[], Kind::Prose, None);
                }
                self.frames.pop();
            }
            TagEnd::Table => self.end_table(),
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                    t.header_rows = t.rows.len();
                    t.in_head = false;
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                if let Some(t) = &mut self.table {
                    let mut cell = std::mem::take(&mut t.cell);
                    if t.in_head {
                        for s in &mut cell {
                            s.style = s.style.patch(self.theme.table_header);
                        }
                    }
                    t.row.push(cell);
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some(link) = self.links.pop() {
                    if link.image {
                        let style = self.style().patch(self.theme.link);
                        self.push_text(Cow::Borrowed("]"), style);
                    }
                    let url = link.url;
                    let same =
                        url == link.text || url.strip_prefix("mailto:") == Some(link.text.as_str());
                    if !url.is_empty() && !same {
                        let style = self.style().patch(self.theme.link_url);
                        self.push_text(Cow::Owned(format!(" ({url})")), style);
                    }
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.flush_inline();
                self.need_blank = true;
            }
        }
    }

    fn end_code(&mut self) {
        let Some(code) = self.code.take() else {
            return;
        };
        let text = expand_code_tabs(&code.text);
        let theme = self.theme;
        let bar = Span::styled("▎ ", theme.code_bar);
        highlight(&text, code.lang, theme, |spans| {
            self.emit(spans, Kind::Code, Some(bar.clone()));
        });
        self.need_blank = true;
    }

    fn end_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        let theme = self.theme;
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut natural = vec![0usize; cols];
        for row in &table.rows {
            for (c, cell) in row.iter().enumerate() {
                natural[c] = natural[c].max(spans_width(cell));
            }
        }
        // Columns narrower than their text wrap it: nothing is cut off.
        let (first, _) = self.prefixes();
        let avail = self.width.saturating_sub(spans_width(&first));
        let widths = column_widths(&natural, avail.saturating_sub(3 * cols.saturating_sub(1)));
        let sep = Span::styled(" │ ", theme.table_border);
        for (r, row) in table.rows.iter().enumerate() {
            let empty = Vec::new();
            // Each cell as rows of its column's width.
            let cells: Vec<Vec<Line<'static>>> = widths
                .iter()
                .enumerate()
                .map(|(c, &w)| {
                    let mut lines = Vec::new();
                    wrap_into(
                        &[],
                        &[],
                        row.get(c).unwrap_or(&empty),
                        Kind::Prose,
                        w,
                        &mut lines,
                    );
                    lines
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
            for k in 0..height {
                let mut spans: Vec<Span<'static>> = Vec::new();
                for (c, &width) in widths.iter().enumerate() {
                    if c > 0 {
                        spans.push(sep.clone());
                    }
                    let part = cells[c].get(k).map(|l| l.spans.as_slice()).unwrap_or(&[]);
                    let pad = width.saturating_sub(spans_width(part));
                    let (before, after) = match table.aligns.get(c) {
                        Some(Alignment::Right) => (pad, 0),
                        Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                        _ => (0, pad),
                    };
                    if before > 0 {
                        spans.push(Span::raw(spaces(before)));
                    }
                    spans.extend(part.iter().cloned());
                    if after > 0 && c + 1 < cols {
                        spans.push(Span::raw(spaces(after)));
                    }
                }
                self.emit(&spans, Kind::Clip, None);
            }
            if r + 1 == table.header_rows {
                let line: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let rule = [Span::styled(line.join("─┼─"), theme.table_border)];
                self.emit(&rule, Kind::Clip, None);
            }
        }
        self.need_blank = true;
    }
}

/// Column widths that fit `budget` columns of text: each column its natural width when all
/// fit; else the narrow ones keep theirs and the rest share what is left equally (each at
/// least 1, so a very narrow screen still shows every column, wrapped).
fn column_widths(natural: &[usize], budget: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= budget {
        return natural.to_vec();
    }
    let mut widths = vec![0usize; natural.len()];
    let mut open: Vec<usize> = (0..natural.len()).collect();
    let mut left = budget;
    // Water-filling: a column under the fair share is done; the others split the rest.
    loop {
        let share = left / open.len().max(1);
        let (small, big): (Vec<usize>, Vec<usize>) =
            open.iter().partition(|&&c| natural[c] <= share);
        if small.is_empty() {
            let extra = left - share * big.len();
            for (k, &c) in big.iter().enumerate() {
                widths[c] = (share + usize::from(k < extra)).max(1);
            }
            return widths;
        }
        for &c in &small {
            widths[c] = natural[c].max(1);
            left = left.saturating_sub(natural[c]);
        }
        open = big;
        if open.is_empty() {
            return widths;
        }
    }
}
