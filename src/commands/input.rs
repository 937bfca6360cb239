//! Reading a command's input file (or stdin) and decoding JSON with errors that say where.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;

/// Largest input `render` and `parse` accept: 64 MiB. Both hold the whole input (and more) in
/// memory, so an endless source such as `/dev/zero` must stop here rather than grow forever.
pub(crate) const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// The input's display name and its text, at most [`MAX_INPUT_BYTES`]. `None` or `-` reads
/// stdin.
pub(crate) fn read(file: Option<&Path>) -> Result<(String, String)> {
    read_capped(file, MAX_INPUT_BYTES)
}

/// [`read`] with a given cap. The read streams and stops one byte past the cap, so the size of
/// the source never matters.
pub(crate) fn read_capped(file: Option<&Path>, cap: u64) -> Result<(String, String)> {
    let (name, bytes) = match file {
        Some(p) if p != Path::new("-") => {
            let name = p.display().to_string();
            let f = std::fs::File::open(p).with_context(|| format!("cannot read {name}"))?;
            let bytes = take(f, cap).with_context(|| format!("cannot read {name}"))?;
            (name, bytes)
        }
        _ => {
            let bytes = take(std::io::stdin().lock(), cap).context("cannot read stdin")?;
            ("<stdin>".to_owned(), bytes)
        }
    };
    if bytes.len() as u64 > cap {
        anyhow::bail!(
            "{name}: input is larger than {}; render and parse read at most that much",
            size(cap)
        );
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| anyhow::anyhow!("{name}: not UTF-8 text ({})", e.utf8_error()))?;
    Ok((name, text))
}

/// Up to `cap + 1` bytes of `r`.
fn take(r: impl Read, cap: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    r.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `64 MiB`, or the exact bytes when not a whole number of MiB.
fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Decode `text` as `T`; an error names the input, the JSON path and the line and column.
pub(crate) fn json<T: DeserializeOwned>(name: &str, text: &str, expected: &str) -> Result<T> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            anyhow::anyhow!("{name}: invalid JSON: {inner}")
        } else if path == "." {
            anyhow::anyhow!("{name}: expected {expected}: {inner}")
        } else {
            anyhow::anyhow!("{name}: {path}: {inner}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_exact() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("in.txt");
        std::fs::write(&path, "abcd").expect("write");
        let (_, text) = read_capped(Some(&path), 4).expect("at the cap");
        assert_eq!(text, "abcd");
        let e = read_capped(Some(&path), 3).expect_err("over the cap");
        assert_eq!(
            e.to_string(),
            format!(
                "{}: input is larger than 3 bytes; render and parse read at most that much",
                path.display()
            )
        );
        assert_eq!(size(MAX_INPUT_BYTES), "64 MiB");
    }
}
