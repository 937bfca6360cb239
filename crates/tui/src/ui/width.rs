//! The display-width measure of the UI: text is measured grapheme cluster by grapheme cluster
//! (`unicode-segmentation`), each cluster by `unicode-width`, so an emoji ZWJ sequence (👩‍💻), a
//! flag or an accented letter counts as the terminal draws it and is never split. The markdown
//! renderer's own cluster walker (faster on its hot path) is tested to measure the same.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The columns `s` takes: the sum of its clusters' widths.
pub(crate) fn str_width(s: &str) -> usize {
    // Printable ASCII, the common case: one column per byte.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.len();
    }
    s.graphemes(true).map(cluster_width).sum()
}

/// `s` in at most `cols` columns: whole when it fits, else cut at a cluster boundary and
/// ended with `…` (which takes one of the columns).
pub(crate) fn ellipsize(s: &str, cols: usize) -> String {
    if str_width(s) <= cols {
        return s.to_owned();
    }
    if cols == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for (g, w) in clusters(s) {
        if used + w + 1 > cols {
            break;
        }
        out.push_str(g);
        used += w;
    }
    out.push('…');
    out
}

/// The columns one grapheme cluster takes.
pub(crate) fn cluster_width(g: &str) -> usize {
    g.width()
}

/// The clusters of `s` with their widths, in order.
pub(crate) fn clusters(s: &str) -> impl Iterator<Item = (&str, usize)> {
    s.graphemes(true).map(|g| (g, cluster_width(g)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zwj_sequences_flags_and_marks_count_as_drawn() {
        assert_eq!(str_width("abc"), 3);
        assert_eq!(str_width("👩‍💻"), 2, "a ZWJ sequence is one wide cluster");
        assert_eq!(str_width("👨‍👩‍👧‍👦 family"), 9);
        assert_eq!(str_width("🇫🇷"), 2);
        assert_eq!(str_width("e\u{301}"), 1);
        assert_eq!(str_width("北京"), 4);
        assert_eq!(clusters("a👩‍💻").map(|(_, w)| w).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn ellipsize_cuts_whole_clusters_and_marks_the_cut() {
        assert_eq!(ellipsize("get_weather", 20), "get_weather");
        assert_eq!(ellipsize("get_weather", 11), "get_weather");
        assert_eq!(ellipsize("get_weather", 6), "get_w…");
        // A wide cluster that would cross the edge is left out whole.
        assert_eq!(ellipsize("北京abc", 4), "北…");
        assert_eq!(str_width(&ellipsize("北京abc", 4)), 3);
        assert_eq!(ellipsize("abc", 1), "…");
        assert_eq!(ellipsize("abc", 0), "");
    }
}

#[cfg(test)]
mod agreement {
    /// Markdown keeps its own cluster walker (it is on the hot path of streaming: a grapheme
    /// cursor per character cost 35% in the markdown bench); it must measure as this module does.
    #[test]
    fn markdown_measures_as_the_ui_does() {
        for s in [
            "plain ascii",
            "👩‍💻 codes",
            "👨‍👩‍👧‍👦",
            "🇫🇷🇩🇪",
            "e\u{301}te\u{301}",
            "北京 and 東京",
            "👍🏽 ok",
            "a\u{200d}b",
        ] {
            assert_eq!(
                crate::ui::markdown::wrap::str_width(s),
                super::str_width(s),
                "{s:?}"
            );
        }
    }
}
