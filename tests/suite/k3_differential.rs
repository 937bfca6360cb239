//! The K3 renderer against llama.cpp's Jinja port of K3's encoder, rendered by a real Jinja
//! engine (jinja2 from PyPI, set up as Hugging Face transformers sets its own): hundreds of
//! random requests per layer, byte for byte, refusals included. Layer B emulates Moonshot's
//! encoder on top of the port (see `tests/fixtures/k3_oracle/SOURCES.md`).

use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;

/// The jinja2 the check was written against; `.ci/run` installs the same.
const JINJA: &str = "jinja2==3.1.6";

fn jinja() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let present = Command::new("python3")
            .args(["-c", "import jinja2.sandbox"])
            .status()
            .is_ok_and(|s| s.success());
        if !present {
            let ok = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", JINJA])
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "pip install {JINJA} failed");
        }
    });
}

fn differential(layer: &str, seed: u32) {
    jinja();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k3_oracle/differential.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_kimi-tui"))
        .args([
            "--layer",
            layer,
            "--seed",
            &seed.to_string(),
            "--cases",
            "250",
        ])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("mismatches 0"), "{stdout}");
}

#[test]
fn the_template_alone_renders_as_the_jinja_port_does() {
    differential("a", 11);
}

#[test]
fn raw_mode_renders_as_moonshots_encoder_does() {
    differential("b", 12);
}
