//! `/copy [N]` and `/copy code [N]`: what to put on the clipboard (the event loop writes it
//! through OSC 52, see `clipboard`).
//!
//! Numbering, as the transcript shows it: answers are the `◆ Kimi` cells, counted from 1 at the
//! top; `/copy` alone takes the last one that has text. Code blocks are counted from 1 within
//! one answer; `/copy code` takes the last block of the latest answer that has any (the block
//! the user just saw), `/copy code N` the Nth block of that same answer.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use super::clipboard::{MAX_COPY_BYTES, thousands};
use super::event::Effect;
use super::state::{App, Entry};

/// What `/copy` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// An answer: the last one with text, or the Nth (from 1).
    Answer(Option<usize>),
    /// A code block of the latest answer that has one: the last, or the Nth (from 1).
    Code(Option<usize>),
}

/// A fenced or indented code block of an answer: its language (first word of the info string)
/// and its text, as the Markdown source has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodeBlock {
    pub(crate) lang: Option<String>,
    pub(crate) text: String,
}

/// The code blocks of `markdown`, top to bottom.
pub(crate) fn code_blocks(markdown: &str) -> Vec<CodeBlock> {
    let mut blocks = Vec::new();
    let mut open: Option<CodeBlock> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .map(|w| w.split(',').next().unwrap_or(w).to_owned()),
                    CodeBlockKind::Indented => None,
                };
                open = Some(CodeBlock {
                    lang: lang.filter(|l| !l.is_empty()),
                    text: String::new(),
                });
            }
            Event::Text(t) => {
                if let Some(b) = open.as_mut() {
                    b.text.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(open.take()),
            _ => {}
        }
    }
    // A block still open at the end (an answer cut off inside a fence) is a block too.
    blocks.extend(open);
    blocks
}

/// The answers' texts, in transcript order (answer N is `[N - 1]`).
fn answers(app: &App) -> Vec<&str> {
    app.transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Assistant(t) => Some(t.text()),
            _ => None,
        })
        .collect()
}

/// The text `target` names and how the confirmation calls it, or why there is none.
pub(crate) fn pick(app: &App, target: Target) -> Result<(String, String), CopyError> {
    let answers = answers(app);
    let has_text = |t: &&str| !t.trim().is_empty();
    match target {
        Target::Answer(None) => {
            let Some(n) = answers.iter().rposition(&has_text) else {
                return Err(CopyError::NoText);
            };
            Ok((answers[n].to_owned(), format!("answer {}", n + 1)))
        }
        Target::Answer(Some(n)) => {
            let text =
                n.checked_sub(1)
                    .and_then(|i| answers.get(i))
                    .ok_or(CopyError::NoAnswer {
                        n,
                        count: answers.len(),
                    })?;
            if !has_text(text) {
                return Err(CopyError::OnlyToolCalls(n));
            }
            Ok(((*text).to_owned(), format!("answer {n}")))
        }
        Target::Code(which) => {
            let found = answers
                .iter()
                .enumerate()
                .rev()
                .map(|(i, t)| (i, code_blocks(t)))
                .find(|(_, blocks)| !blocks.is_empty());
            let Some((answer, blocks)) = found else {
                return Err(CopyError::NoCodeBlocks);
            };
            let k = which.unwrap_or(blocks.len());
            let Some(block) = k.checked_sub(1).and_then(|i| blocks.get(i)) else {
                return Err(CopyError::NoCodeBlock {
                    k,
                    answer: answer + 1,
                    count: blocks.len(),
                });
            };
            let lang = block
                .lang
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            Ok((
                block.text.clone(),
                format!(
                    "code block {k} of {}{lang} from answer {}",
                    blocks.len(),
                    answer + 1
                ),
            ))
        }
    }
}

/// Why `/copy` found nothing to copy: the notice, as a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CopyError {
    #[error("Nothing to copy: no answer has text yet.")]
    NoText,
    /// Answer `n` of `count` (numbered from 1) does not exist.
    #[error("{}", out_of_range(*n, *count))]
    NoAnswer { n: usize, count: usize },
    #[error("Answer {0} has no text (only tool calls); nothing copied.")]
    OnlyToolCalls(usize),
    #[error("No code block to copy: no answer has one.")]
    NoCodeBlocks,
    /// Block `k` of the `count` blocks of answer `answer` (numbered from 1) does not exist.
    #[error("No code block {k}: answer {answer} has {count} (/copy code 1 to {count}).")]
    NoCodeBlock {
        k: usize,
        answer: usize,
        count: usize,
    },
}

fn out_of_range(n: usize, count: usize) -> String {
    match count {
        0 => "Nothing to copy: there is no answer yet.".into(),
        1 => format!("No answer {n}: there is 1 answer (/copy 1)."),
        c => format!("No answer {n}: answers are numbered 1 to {c} from the top."),
    }
}

/// `/copy`: the effect that writes the text, or a notice saying why nothing was copied. The
/// text loses every control character but newlines and tabs (a hostile answer must not reach
/// the user's terminal or clipboard with an escape sequence in it).
pub(crate) fn copy(app: &mut App, target: Target, fx: &mut Vec<Effect>) {
    let (text, what) = match pick(app, target) {
        Ok(found) => found,
        Err(e) => return app.notice(e.to_string(), true),
    };
    let text = kimi_protocol::sanitize::for_terminal(&text).into_owned();
    if text.len() > MAX_COPY_BYTES {
        return app.notice(
            format!(
                "Not copied: {what} is {} bytes, and OSC 52 carries at most {} (terminals drop \
                 longer sequences); /export writes the whole conversation to a file.",
                thousands(text.len()),
                thousands(MAX_COPY_BYTES)
            ),
            true,
        );
    }
    fx.push(Effect::Copy { text, what });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_blocks_keep_their_source_and_language() {
        let md = "a\n\n```rust,ignore\nfn a() {}\n```\n\n    indented\n\n```\nplain\n```\n";
        let b = code_blocks(md);
        assert_eq!(b.len(), 3, "{b:?}");
        assert_eq!(b[0].lang.as_deref(), Some("rust"));
        assert_eq!(b[0].text, "fn a() {}\n");
        assert_eq!(
            (b[1].lang.as_deref(), b[1].text.as_str()),
            (None, "indented\n")
        );
        assert_eq!(
            (b[2].lang.as_deref(), b[2].text.as_str()),
            (None, "plain\n")
        );
        // Cut off inside the fence: still a block.
        let cut = code_blocks("```py\nprint(1)\n");
        assert_eq!(cut[0].text, "print(1)\n");
    }
}
