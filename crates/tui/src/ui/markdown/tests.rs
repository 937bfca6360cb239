//! Rendering tests: snapshots of the text, checks of styles, width properties, and the
//! streaming cache against whole renders.

use proptest::prelude::*;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

use super::*;

fn plain(lines: &[Line<'_>]) -> String {
    lines
        .iter()
        .map(crate::ui::line_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn md(text: &str, width: u16) -> Vec<Line<'static>> {
    render(text, width, &Theme::default())
}

/// Every line fits the width, as ratatui measures it.
fn assert_fits(lines: &[Line<'_>], width: u16, what: &str) {
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.width() <= width as usize,
            "line {i} is {} wide at width {width} ({what}): {l:?}",
            l.width()
        );
    }
}

/// The first span whose text is `text`, and its line number.
fn find_span<'l>(
    lines: &'l [Line<'static>],
    text: &str,
) -> (usize, &'l ratatui::text::Span<'static>) {
    for (i, l) in lines.iter().enumerate() {
        if let Some(s) = l.spans.iter().find(|s| s.content == text) {
            return (i, s);
        }
    }
    panic!("no span {text:?} in\n{}", plain(lines));
}

const DOC: &str = "# Title

Some *emphasis*, **strong**, ~~struck~~ and `code` with a [link](https://example.com) and \
<https://auto.example.com>.

## Lists

- one
- two
  - nested *a*
  - nested b
- three

3. third
4. fourth

- [x] done
- [ ] todo

> quoted text that is long enough to wrap around at a narrow width
> > nested quote

```rust
fn main() {
\tlet x = \"hi\"; // greet
    println!(\"{x}\");
}
```

```
plain code
```

| Name | Qty | Note |
|:-----|----:|:----:|
| apple | 3 | red |
| 香蕉 | 12 | yellow fruit |

---

北京今天晴，气温二十五度。这是一段很长的中文文本，用于测试换行。

Emoji: 👨‍👩‍👧 family, 👍🏽 thumbs, 🇫🇷 flag, e\u{301}t\u{301}e\u{301}.

Final line with a hard  
break and a soft
break.
";

#[test]
fn snapshot_headings() {
    let text = "# One\n\n## Two\n\n### Three *em*\n\n###### Six\n\nSetext\n======\n";
    let lines = md(text, 40);
    insta::assert_snapshot!("headings", plain(&lines));
    let theme = Theme::default();
    let (_, one) = find_span(&lines, "One");
    assert!(one.style.add_modifier.contains(Modifier::BOLD));
    assert!(one.style.add_modifier.contains(Modifier::UNDERLINED));
    assert_eq!(one.style.fg, theme.heading.fg);
    let (_, two) = find_span(&lines, "Two");
    assert!(two.style.add_modifier.contains(Modifier::BOLD));
    assert!(!two.style.add_modifier.contains(Modifier::UNDERLINED));
    let (_, em) = find_span(&lines, "em");
    assert!(
        em.style
            .add_modifier
            .contains(Modifier::BOLD | Modifier::ITALIC)
    );
}

#[test]
fn snapshot_inline_styles() {
    let text = "Some *emphasis*, **strong**, ~~struck~~ and `code` and a [link](https://e.com), \
                <https://auto.example.com>, [same](same) and ![alt](img.png).";
    let lines = md(text, 40);
    insta::assert_snapshot!("inline_styles", plain(&lines));
    let theme = Theme::default();
    assert!(
        find_span(&lines, "emphasis")
            .1
            .style
            .add_modifier
            .contains(Modifier::ITALIC)
    );
    assert!(
        find_span(&lines, "strong")
            .1
            .style
            .add_modifier
            .contains(Modifier::BOLD)
    );
    assert!(
        find_span(&lines, "struck")
            .1
            .style
            .add_modifier
            .contains(Modifier::CROSSED_OUT)
    );
    assert_eq!(find_span(&lines, "code").1.style, theme.code_inline);
    assert_eq!(find_span(&lines, "link").1.style, theme.link);
    assert_eq!(
        find_span(&lines, " (https://e.com)").1.style,
        theme.link_url
    );
    // Backticks are not shown; an autolink does not repeat its URL.
    let all = plain(&lines);
    assert!(!all.contains('`'));
    assert_eq!(all.matches("auto.example.com").count(), 1);
}

#[test]
fn snapshot_nested_lists() {
    let text = "- one\n- two that is long enough to wrap under the text\n  - nested a\n  - nested b\n    \
                - deeper\n- three\n\n8. eight\n9. nine\n10. ten\n\n- [x] done\n- [ ] todo\n\n\
                - loose a\n\n- loose b\n";
    let lines = md(text, 30);
    insta::assert_snapshot!("nested_lists", plain(&lines));
    let all = plain(&lines);
    // Continuation rows are indented under the text, not under the bullet.
    assert!(
        all.contains("• two that is long enough to\n  wrap under the text"),
        "{all}"
    );
    assert!(all.contains("  ◦ nested a"));
    assert!(all.contains(" 8. eight\n 9. nine\n10. ten"));
    let (_, bullet) = find_span(&lines, "• ");
    assert_eq!(bullet.style, Theme::default().list_bullet);
    // The loose list keeps a blank line between its items.
    assert!(all.contains("• loose a\n\n• loose b"));
}

#[test]
fn snapshot_quote() {
    let text = "> quoted text that is long enough to wrap around\n>\n> second paragraph\n> > nested \
                quote\n> - item in quote\n";
    let lines = md(text, 24);
    insta::assert_snapshot!("quote", plain(&lines));
    assert!(lines.iter().all(|l| l.spans[0].content.starts_with('│')));
    let (_, nested) = find_span(&lines, "nested quote");
    assert!(nested.style.add_modifier.contains(Modifier::ITALIC));
    assert!(plain(&lines).contains("│ │ nested quote"));
    assert_eq!(lines[0].spans[0].style, Theme::default().quote);
}

#[test]
fn snapshot_code_rust() {
    let text = "```rust\nfn main() {\n\tlet x = \"hi\"; // greet\n    let long_name = some_function_call(argument_one, 2);\n}\n```\n";
    let lines = md(text, 40);
    insta::assert_snapshot!("code_rust", plain(&lines));
    let theme = Theme::default();
    assert_eq!(lines[0].spans[0].content, " rust ");
    assert_eq!(lines[0].spans[0].style, theme.code_label);
    assert_eq!(find_span(&lines, "fn").1.style, theme.keyword);
    assert_eq!(find_span(&lines, "\"hi\"").1.style, theme.string);
    assert_eq!(find_span(&lines, "// greet").1.style, theme.comment);
    assert_eq!(find_span(&lines, "2").1.style, theme.number);
    assert_eq!(find_span(&lines, "▎ ").1.style, theme.code_bar);
    // The tab became spaces to the next 4-column stop; code is hard-wrapped, not re-flowed.
    let all = plain(&lines);
    assert!(all.contains("▎     let x"), "{all}");
    assert!(!all.contains('\t'));
    assert_fits(&lines, 40, "code");
}

#[test]
fn snapshot_code_without_language() {
    let text = "```\nplain  code   spacing kept\n```\n\n    indented code\n\n~~~python extra\nx = None\n~~~\n";
    let lines = md(text, 40);
    insta::assert_snapshot!("code_plain", plain(&lines));
    let all = plain(&lines);
    assert!(all.contains(" text \n▎ plain  code   spacing kept"));
    assert!(all.contains(" python \n"));
    assert_eq!(find_span(&lines, "None").1.style, Theme::default().number);
}

#[test]
fn unclosed_fence_renders_as_code() {
    let lines = md("Intro\n\n```python\ndef f():\n    return 1", 40);
    let all = plain(&lines);
    assert!(
        all.contains(" python \n▎ def f():\n▎     return 1"),
        "{all}"
    );
    assert_eq!(find_span(&lines, "def").1.style, Theme::default().keyword);
}

#[test]
fn snapshot_table() {
    let text = "| Name | Qty | Note |\n|:-----|----:|:----:|\n| apple | 3 | red |\n| 香蕉 | 12 | \
                yellow **fruit** |\n";
    let lines = md(text, 60);
    insta::assert_snapshot!("table", plain(&lines));
    let header = find_span(&lines, "Name").1;
    assert!(header.style.add_modifier.contains(Modifier::BOLD));
    assert_eq!(
        find_span(&lines, " │ ").1.style,
        Theme::default().table_border
    );
    // Too wide: the cells wrap inside their columns; nothing is cut off.
    let narrow = md(text, 12);
    assert_fits(&narrow, 12, "table");
    insta::assert_snapshot!("table_narrow", plain(&narrow));
    assert!(!plain(&narrow).contains('…'));
    let letters: String = plain(&narrow)
        .chars()
        .filter(|c| !c.is_whitespace() && !"│─┼".contains(*c))
        .collect();
    for c in "NameQtyNoteapple3red香蕉12yellowfruit".chars() {
        assert!(letters.contains(c), "{c} lost:\n{}", plain(&narrow));
    }
}

#[test]
fn table_cells_with_zwj_emoji_wrap_and_line_up() {
    let text = "| who | what |\n|---|---|\n| 👩‍💻 dev | writes code all day long in a terminal |\n| 🇫🇷 | bonjour |\n";
    let lines = md(text, 30);
    assert_fits(&lines, 30, "zwj table");
    let shown = plain(&lines);
    assert!(!shown.contains('…'), "{shown}");
    assert!(shown.contains("👩‍💻"), "the sequence stays whole: {shown}");
    for w in [
        "writes", "code", "all", "day", "long", "terminal", "bonjour",
    ] {
        assert!(shown.contains(w), "{w} lost:\n{shown}");
    }
    // Every row puts its separator at the same column: widths agree with the terminal's.
    let cols: Vec<usize> = shown
        .lines()
        .filter(|l| l.contains('│'))
        .map(|l| crate::ui::width::str_width(l.split('│').next().unwrap_or_default()))
        .collect();
    assert!(cols.windows(2).all(|w| w[0] == w[1]), "{cols:?}\n{shown}");
}

#[test]
fn snapshot_cjk_wrapped_at_20() {
    let text = "北京今天晴，气温二十五度。这是一段很长的中文文本，用于测试换行。Mixed 中文 and English words.";
    let lines = md(text, 20);
    insta::assert_snapshot!("cjk_20", plain(&lines));
    assert_fits(&lines, 20, "cjk");
    // Every wide char is intact: the text is all there, in order.
    let joined: String = plain(&lines).split('\n').collect::<Vec<_>>().join(" ");
    let squashed: String = joined.chars().filter(|c| *c != ' ').collect();
    let expected: String = text.chars().filter(|c| *c != ' ').collect();
    assert_eq!(squashed, expected);
    assert!(lines.len() > 3);
}

#[test]
fn snapshot_emoji() {
    let text =
        "Emoji: 👨‍👩‍👧 family, 👍🏽 thumbs, 🇫🇷 flag, e\u{301}t\u{301}e\u{301} accents, ❤\u{FE0F} heart.";
    for width in 1..=40 {
        let lines = md(text, width);
        assert_fits(&lines, width, "emoji");
        if width >= 2 {
            let all = plain(&lines);
            // Sequences are never split across rows.
            for seq in ["👨‍👩‍👧", "👍🏽", "🇫🇷", "e\u{301}", "❤\u{FE0F}"] {
                assert!(all.contains(seq), "{seq:?} split at width {width}: {all}");
            }
        }
    }
    insta::assert_snapshot!("emoji", plain(&md(text, 12)));
}

#[test]
fn snapshot_long_url() {
    let url = "https://example.com/a/very/long/path/that/does/not/fit/in/one/line?query=1&more=2";
    let text = format!("See <{url}> and [docs]({url}).");
    let lines = md(&text, 30);
    insta::assert_snapshot!("long_url", plain(&lines));
    assert_fits(&lines, 30, "url");
    let all = plain(&lines).replace('\n', "");
    assert!(all.contains(url));
    // Underlined link text across the break.
    let link = Theme::default().link;
    let rows_with_link = lines
        .iter()
        .filter(|l| l.spans.iter().any(|s| s.style == link))
        .count();
    assert!(rows_with_link >= 3, "{lines:?}");
}

#[test]
fn snapshot_document() {
    let lines = md(DOC, 50);
    insta::assert_snapshot!("document_50", plain(&lines));
    assert_fits(&lines, 50, "doc");
}

#[test]
fn rules_paragraphs_and_breaks() {
    let lines = md("a\nb  \nc\n\n---\n\nd", 10);
    assert_eq!(plain(&lines), "a b\nc\n\n──────────\n\nd");
    assert_eq!(lines[3].spans[0].style, Theme::default().rule);
    // Inside a quote, the rule fills what the prefix leaves.
    assert_eq!(plain(&md("> ---", 6)), "│ ────");
}

#[test]
fn every_width_fits_and_never_panics() {
    for width in 0..=120u16 {
        let lines = md(DOC, width);
        assert_fits(&lines, width, "doc");
        if width == 0 {
            assert!(lines.is_empty());
        } else {
            assert!(lines.len() > 20);
        }
    }
}

#[test]
fn br_tags_break_lines() {
    assert_eq!(plain(&md("one<br>two<BR/>three", 20)), "one\ntwo\nthree");
    let table = md("| a |\n|---|\n| x<br>y |\n", 20);
    assert!(plain(&table).contains("x y"), "{}", plain(&table));
    // Other inline HTML is shown as it is, dimmed.
    let lines = md("a <span>b</span>", 20);
    assert_eq!(plain(&lines), "a <span>b</span>");
    assert_eq!(find_span(&lines, "<span>").1.style, Theme::default().html);
}

#[test]
fn pathological_inputs_render_in_linear_time() {
    // Each is ~100 KB; anything quadratic would take minutes, linear takes milliseconds.
    let inputs = [
        format!("```sh\n{}\n```", "${".repeat(50_000)),
        format!("```rust\n{}\n```", "r#".repeat(50_000)),
        format!("```python\n{}", "'''\\".repeat(25_000)),
        "a\t".repeat(50_000),
        "x".repeat(100_000),
        "*a ".repeat(30_000),
        "`".repeat(100_000),
        format!("{}x", "> ".repeat(2_000)),
        "- a\n".repeat(25_000),
        "| a | b |\n|---|---|\n".to_string() + &"| 1 | 2 |\n".repeat(10_000),
        "中".repeat(30_000),
    ];
    for text in &inputs {
        let start = std::time::Instant::now();
        let lines = md(text, 80);
        let took = start.elapsed();
        assert_fits(&lines, 80, "pathological");
        assert!(!lines.is_empty());
        assert!(took.as_secs_f64() < 5.0, "{took:?} for {:?}…", &text[..20]);
    }
}

#[test]
fn tabs_in_prose_are_expanded() {
    let lines = md("a\tb", 20);
    assert_eq!(plain(&lines), "a   b");
}

/// Feed `text` in pieces of 1..=6 bytes (at char boundaries), checking the cache against a
/// whole render every `every` pieces and at the end.
fn stream_check(text: &str, width: u16, every: usize) {
    let theme = Theme::default();
    let mut cache = MarkdownCache::new();
    let mut pos = 0;
    let mut n = 0;
    while pos < text.len() {
        let mut end = (pos + 1 + (n * 7 + 3) % 6).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        cache.push_str(&text[pos..end]);
        pos = end;
        n += 1;
        if n % every == 0 {
            let expected = render(&text[..pos], width, &theme);
            assert_eq!(
                cache.lines(width, &theme),
                &expected[..],
                "at {pos} width {width}"
            );
        }
    }
    let expected = render(text, width, &theme);
    assert_eq!(
        cache.lines(width, &theme),
        &expected[..],
        "end, width {width}"
    );
    assert_eq!(cache.height(width, &theme), expected.len());
    assert_eq!(cache.cached_lines(), &expected[..]);
    assert_eq!(cache.text(), text);
}

#[test]
fn streaming_matches_render() {
    for width in [1, 7, 20, 33, 80, 120] {
        stream_check(DOC, width, 1);
    }
    let tricky = "para\n\n- a\n\n- b\n\n  more b\n\n1. x\n\n2. y\n\n```\ncode\n\nstill code\n```\n\n\
                  > q\n\n    indented\n\n    code\n\n- item\n  ```\n  unclosed\n\nafter\n\nend";
    for width in [5, 40] {
        stream_check(tricky, width, 1);
    }
}

#[test]
fn width_change_rewraps_everything() {
    let theme = Theme::default();
    let mut cache = MarkdownCache::new();
    cache.set_text(DOC);
    let wide = cache.lines(80, &theme).to_vec();
    assert_eq!(wide, render(DOC, 80, &theme));
    let before = cache.rendered_bytes();
    let narrow = cache.lines(30, &theme).to_vec();
    assert_eq!(narrow, render(DOC, 30, &theme));
    assert_ne!(wide, narrow);
    // Everything once, then nothing while nothing changes.
    assert_eq!(cache.rendered_bytes() - before, DOC.len() as u64);
    let again = cache.rendered_bytes();
    assert_eq!(cache.height(30, &theme), narrow.len());
    assert_eq!(cache.rendered_bytes(), again);
    assert_eq!(cache.lines(80, &theme), &wide[..]);
    // A theme change also renders again.
    let mut other = theme.clone();
    other.heading = Style::new();
    let recoloured = cache.lines(80, &other).to_vec();
    assert_eq!(recoloured, render(DOC, 80, &other));
    assert_ne!(recoloured, wide);
    // set_text replaces everything.
    cache.set_text("*new*");
    assert_eq!(plain(cache.lines(80, &theme)), "new");
}

#[test]
fn appending_to_a_large_message_renders_only_the_tail() {
    let theme = Theme::default();
    let mut text = String::new();
    let mut k = 0;
    while text.len() < 100_000 {
        text.push_str(&format!(
            "Paragraph {k} with some *styled* words and `code`, long enough to wrap.\n\n"
        ));
        if k % 10 == 0 {
            text.push_str("```rust\nlet x = 1;\n\nlet y = 2;\n```\n\n");
        }
        k += 1;
    }
    let mut cache = MarkdownCache::new();
    cache.set_text(&text);
    cache.lines(100, &theme);
    let start = cache.rendered_bytes();
    let tokens = [
        "The",
        " last",
        " paragraph",
        " streams",
        " in",
        ".\n\nNext",
        " one",
    ];
    for t in tokens {
        cache.push_str(t);
        let before = cache.rendered_bytes();
        cache.lines(100, &theme);
        let work = cache.rendered_bytes() - before;
        assert!(work < 200, "re-rendered {work} bytes after appending {t:?}");
    }
    assert!(cache.rendered_bytes() - start < 1000);
    let mut whole = text.clone();
    whole.push_str(&tokens.concat());
    assert_eq!(cache.lines(100, &theme), &render(&whole, 100, &theme)[..]);
}

#[test]
fn streaming_a_long_code_block_renders_only_its_open_line() {
    let theme = Theme::default();
    let mut cache = MarkdownCache::new();
    let mut text = String::from("Intro:\n```rust\n");
    cache.push_str(&text);
    let mut worst_late = 0;
    let mut worst_early = 0;
    for i in 0..2_000 {
        for t in [
            "    let", " v", " =", " f(", "\"s\"", ");", " /* c */", "\n",
        ] {
            cache.push_str(t);
            text.push_str(t);
            let before = cache.rendered_bytes();
            cache.lines(80, &theme);
            let work = cache.rendered_bytes() - before;
            if i < 10 {
                worst_early = worst_early.max(work);
            } else {
                worst_late = worst_late.max(work);
            }
        }
    }
    // Two short lines at most, at line 2,000 as at line 10.
    assert!(
        worst_late <= 120,
        "re-rendered {worst_late} bytes for one token"
    );
    assert!(
        worst_late <= worst_early.max(60) * 2,
        "{worst_late} vs {worst_early}"
    );
    assert_eq!(cache.lines(80, &theme), &render(&text, 80, &theme)[..]);
    // The closing fence ends the block: the text after it is rendered alone.
    for t in ["```", "\n", "After", " the", " code."] {
        cache.push_str(t);
        text.push_str(t);
        cache.lines(80, &theme);
    }
    let before = cache.rendered_bytes();
    cache.push_str(" More.");
    text.push_str(" More.");
    assert_eq!(cache.lines(80, &theme), &render(&text, 80, &theme)[..]);
    assert!(cache.rendered_bytes() - before < 40);
}

#[test]
fn a_fence_opened_in_column_zero_is_rendered_as_one_block_would_be() {
    // The split at the fence must not change what the text looks like.
    let cases = [
        "para\n```rust\nlet x = 1;\n```\nafter",
        "- item\n```\ncode\n```\n- next",
        "> quote\n```\ncode\n```\n\n1. a\n2. b",
        "| a | b |\n|---|---|\n| c | d |\n```\nx\n```",
        "<div>\n```\nnot a fence here\n\nafter",
        "```\nunclosed\n\n\nstill code",
    ];
    for text in cases {
        for width in [10u16, 80] {
            let mut whole = Vec::new();
            super::render::render_block(text, width as usize, &Theme::default(), &mut whole);
            assert_eq!(md(text, width), whole, "{text:?} at {width}");
        }
    }
}

fn code_fragment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "let ",
        "x",
        " = ",
        "1.5e+3",
        "0x1F",
        "\"str",
        "\"",
        "'",
        "'a'",
        "'\\u{1F600}'",
        "\\",
        "r#\"",
        "\"#",
        "/*",
        "*/",
        "//",
        " c",
        "#",
        "$V",
        "${x}",
        "\"\"\"",
        "'''",
        "\n",
        "\n",
        "\n",
        "\t",
        "  ",
        "```",
        "~~~",
        "+",
        "-",
        "@@",
        "北京",
        "key\": ",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn streamed_code_blocks_match_render(
        lang in prop::sample::select(vec!["rust", "python", "c", "bash", "json", "toml", "go", "diff", "", "js"]),
        parts in prop::collection::vec(code_fragment(), 0..60),
        width in 1u16..=40,
    ) {
        let theme = Theme::default();
        let mut cache = MarkdownCache::new();
        let mut text = format!("Some text\n```{lang}\n");
        cache.push_str(&text);
        for p in &parts {
            // One character at a time.
            for ch in p.chars() {
                let mut buf = [0u8; 4];
                let piece = ch.encode_utf8(&mut buf);
                cache.push_str(piece);
                text.push_str(piece);
                prop_assert_eq!(cache.lines(width, &theme), &render(&text, width, &theme)[..], "{:?}", text);
            }
        }
    }
}

fn fragment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "word ",
        "longerword ",
        "a",
        " ",
        "  ",
        "\n",
        "\n\n",
        "# ",
        "## ",
        "- ",
        "  - ",
        "1. ",
        "> ",
        "> > ",
        "```rust\n",
        "```\n",
        "    ",
        "\t",
        "*em* ",
        "**strong** ",
        "`code` ",
        "[link](https://example.com/x) ",
        "<https://example.com/a/long/url/with/many/segments> ",
        "| a | b |\n|---|---|\n| c | d |\n",
        "---\n",
        "北京今天晴",
        "，",
        "👨‍👩‍👧",
        "👍🏽",
        "🇫🇷",
        "e\u{301}",
        "❤\u{FE0F}",
        "\u{200B}",
        "supercalifragilisticexpialidocious",
        "- [x] ",
        "<div>\n",
        "fn main() { let x = \"s\"; } // c\n",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn no_line_exceeds_the_width(parts in prop::collection::vec(fragment(), 0..40), width in 1u16..=120) {
        let text: String = parts.concat();
        let lines = md(&text, width);
        for l in &lines {
            prop_assert!(l.width() <= width as usize, "{} > {width}: {l:?}\n{text:?}", l.width());
        }
    }

    #[test]
    fn cache_matches_render(parts in prop::collection::vec(fragment(), 0..30), width in 1u16..=60) {
        let theme = Theme::default();
        let mut cache = MarkdownCache::new();
        let mut text = String::new();
        for (i, p) in parts.iter().enumerate() {
            cache.push_str(p);
            text.push_str(p);
            if i % 3 == 0 {
                prop_assert_eq!(cache.lines(width, &theme), &render(&text, width, &theme)[..]);
            }
        }
        prop_assert_eq!(cache.lines(width, &theme), &render(&text, width, &theme)[..]);
    }
}

fn prose_fragment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "word ",
        "word ",
        "longerword ",
        "some more plain text here ",
        "a",
        " ",
        "  ",
        "**strong** ",
        "*em* ",
        "_under_ ",
        "~~gone~~ ",
        "`code` ",
        "[link](https://example.com/x) ",
        "*",
        "**",
        "_",
        "`",
        "[",
        "](u) ",
        "<b>",
        "<",
        " * ",
        "snake_case ",
        "R&D ",
        "&amp; ",
        "\\*",
        "北京今天晴",
        "supercalifragilisticexpialidocious",
        "\n",
        "\n\n",
        "===",
        "- ",
        "Next ",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// A long paragraph streamed a few bytes at a time, with inline markup opened and closed
    /// anywhere: the committed rows never differ from a whole render.
    #[test]
    fn streamed_paragraphs_match_render(
        parts in prop::collection::vec(prose_fragment(), 0..120),
        width in 8u16..=50,
        lead in prop::sample::select(vec!["Start ", "Intro\n\nStart ", "```\nx\n```\nStart ", "**Bold** start "]),
    ) {
        let theme = Theme::default();
        let mut cache = MarkdownCache::new();
        let mut text = String::from(lead);
        cache.push_str(lead);
        for p in &parts {
            let mut at = 0;
            while at < p.len() {
                let mut end = (at + 3).min(p.len());
                while !p.is_char_boundary(end) {
                    end += 1;
                }
                cache.push_str(&p[at..end]);
                text.push_str(&p[at..end]);
                at = end;
                prop_assert_eq!(cache.lines(width, &theme), &render(&text, width, &theme)[..], "{:?}", text);
            }
        }
    }

    /// Rows dropped far from the viewport come back exactly as they were.
    #[test]
    fn evicted_rows_are_laid_out_again_exactly(
        parts in prop::collection::vec(fragment(), 0..40),
        width in 1u16..=60,
        keep in 0usize..40,
    ) {
        let theme = Theme::default();
        let mut cache = MarkdownCache::new();
        for p in &parts {
            cache.push_str(p);
            cache.height(width, &theme);
        }
        let whole = cache.lines(width, &theme).to_vec();
        let (_, layout) = cache.layout_mut();
        layout.retain(keep..keep + 3);
        prop_assert!(layout.live_rows() <= whole.len());
        prop_assert_eq!(cache.lines(width, &theme), &whole[..]);
    }
}

#[test]
fn streaming_a_long_paragraph_lays_out_only_its_last_rows() {
    let theme = Theme::default();
    let mut cache = MarkdownCache::new();
    let mut text = String::from("Intro.\n\n");
    cache.push_str(&text);
    let words = [
        "The",
        " quick",
        " **brown**",
        " fox",
        " jumps",
        " over",
        " the",
        " `lazy`",
        " dog,",
    ];
    let mut worst_early = 0;
    let mut worst_late = 0;
    for i in 0..4_000 {
        let w = words[i % words.len()];
        cache.push_str(w);
        text.push_str(w);
        let before = cache.rendered_bytes();
        cache.height(100, &theme);
        let work = cache.rendered_bytes() - before;
        if i < 400 {
            worst_early = worst_early.max(work);
        } else {
            worst_late = worst_late.max(work);
        }
    }
    // A few rows' worth per token, at 25 KB of paragraph as at 2 KB.
    assert!(
        worst_late <= 1_000,
        "laid out {worst_late} bytes for one token"
    );
    assert!(
        worst_late <= worst_early * 2,
        "{worst_late} vs {worst_early}"
    );
    assert_eq!(cache.lines(100, &theme), &render(&text, 100, &theme)[..]);
    // The paragraph ends: its committed rows are kept, the next block is laid out alone.
    for t in ["\n", "\n", "After", " it.", "\n"] {
        cache.push_str(t);
        text.push_str(t);
        cache.height(100, &theme);
    }
    let before = cache.rendered_bytes();
    cache.push_str(" More.");
    text.push_str(" More.");
    assert_eq!(cache.lines(100, &theme), &render(&text, 100, &theme)[..]);
    assert!(cache.rendered_bytes() - before < 40);
}

#[test]
fn a_paragraph_set_whole_commits_its_rows_at_once() {
    // A restored or bulk-appended paragraph whose last rows start with styled words.
    let theme = Theme::default();
    let mut cache = MarkdownCache::new();
    let mut text = String::from("Here it is:\n\nStart");
    for i in 0..20_000 {
        text.push_str(
            [
                " The",
                " quick",
                " **brown**",
                " fox",
                " jumps",
                " over",
                " `lazy`",
                " dogs.",
            ][i % 8],
        );
    }
    cache.push_str(&text);
    cache.height(120, &theme);
    let before = cache.rendered_bytes();
    cache.push_str(" word");
    text.push_str(" word");
    assert_eq!(cache.lines(120, &theme), &render(&text, 120, &theme)[..]);
    assert!(
        cache.rendered_bytes() - before < 2_000,
        "{}",
        cache.rendered_bytes() - before
    );
}

#[test]
fn an_open_emphasis_keeps_a_paragraph_uncommitted_until_it_closes() {
    // `*` opened early and closed 3 KB later restyles everything between: nothing before it
    // may be committed, and the result must still equal a whole render.
    let theme = Theme::default();
    let mut cache = MarkdownCache::new();
    let mut text = String::from("Start *open ");
    cache.push_str(&text);
    for _ in 0..300 {
        cache.push_str("more text ");
        text.push_str("more text ");
        assert_eq!(cache.lines(40, &theme), &render(&text, 40, &theme)[..]);
    }
    cache.push_str("closed* end");
    text.push_str("closed* end");
    assert_eq!(cache.lines(40, &theme), &render(&text, 40, &theme)[..]);
}

/// A case the cache once got wrong: a quote marker streamed last, one column wide.
#[test]
fn cache_matches_render_for_a_trailing_quote_marker_at_width_one() {
    let theme = Theme::default();
    let parts = ["北京今天晴", "\n\n", " ", "> "];
    let mut cache = MarkdownCache::new();
    let mut text = String::new();
    for (i, p) in parts.iter().enumerate() {
        cache.push_str(p);
        text.push_str(p);
        if i % 3 == 0 {
            assert_eq!(
                cache.lines(1, &theme),
                &render(&text, 1, &theme)[..],
                "after {i}"
            );
        }
    }
    assert_eq!(cache.lines(1, &theme), &render(&text, 1, &theme)[..]);
}
