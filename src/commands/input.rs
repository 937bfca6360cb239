//! Reading a command's input file (or stdin) and decoding JSON with errors that say where.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;

/// The input's display name and its text. `None` or `-` reads stdin.
pub fn read(file: Option<&Path>) -> Result<(String, String)> {
    match file {
        Some(p) if p != Path::new("-") => {
            let name = p.display().to_string();
            let bytes = std::fs::read(p).with_context(|| format!("cannot read {name}"))?;
            let text = String::from_utf8(bytes)
                .map_err(|e| anyhow::anyhow!("{name}: not UTF-8 text ({})", e.utf8_error()))?;
            Ok((name, text))
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read stdin as UTF-8 text")?;
            Ok(("<stdin>".to_owned(), text))
        }
    }
}

/// Decode `text` as `T`; an error names the input, the JSON path and the line and column.
pub fn json<T: DeserializeOwned>(name: &str, text: &str, expected: &str) -> Result<T> {
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
