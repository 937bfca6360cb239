//! `exec`'s prompt: the argument, or with `-` the whole of stdin (a prompt piped from a file
//! or another command).

use std::io::Read;

use anyhow::{Context, Result, bail};

/// Largest prompt read from stdin: 1 MiB, more than a Kimi K2 context holds, as the TUI's
/// paste limit.
const MAX_PROMPT_BYTES: u64 = 1 << 20;

/// The prompt `arg` names: itself, or for `-` what `stdin` holds, its final newline dropped.
pub(crate) fn read(arg: &str, stdin: impl Read) -> Result<String> {
    if arg != "-" {
        return Ok(arg.to_owned());
    }
    let mut bytes = Vec::new();
    (stdin.take(MAX_PROMPT_BYTES + 1))
        .read_to_end(&mut bytes)
        .context("cannot read the prompt from stdin")?;
    if bytes.len() as u64 > MAX_PROMPT_BYTES {
        bail!("the prompt on stdin is larger than 1 MiB");
    }
    let Ok(text) = String::from_utf8(bytes) else {
        bail!("the prompt on stdin is not UTF-8 text");
    };
    let text = text.strip_suffix('\n').unwrap_or(&text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.trim().is_empty() {
        bail!("the prompt on stdin is empty (`exec -` reads the prompt from stdin)");
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(input: &[u8]) -> String {
        read("-", input).expect_err("refused").to_string()
    }

    #[test]
    fn a_dash_reads_stdin_and_anything_else_is_the_prompt() {
        assert_eq!(read("hi", &b"ignored"[..]).expect("arg"), "hi");
        assert_eq!(
            read("-", &b"two\nlines\n"[..]).expect("stdin"),
            "two\nlines"
        );
        assert!(err(b"\n").contains("empty"));
        assert!(err(&[0xff]).contains("UTF-8"));
        assert!(err(&vec![b'a'; (MAX_PROMPT_BYTES + 1) as usize]).contains("1 MiB"));
    }
}
