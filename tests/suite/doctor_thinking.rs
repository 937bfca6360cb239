//! `kimi-tui doctor` on thinking models: the family line (thinking or not, the template raw
//! mode renders) and whether the server's reasoning parser is on, against the mock.

use std::process::Command;

use kimi_mock::{MockOptions, MockServer};

async fn doctor(opts: MockOptions, mode: &str, extra: &str) -> (Option<i32>, String) {
    let model = opts.model.clone();
    let server = MockServer::start(opts, 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[profiles.test]\nmode = \"{mode}\"\nbase_url = \"{}\"\nmodel = \"{model}\"\n{extra}\n",
            server.base_url()
        ),
    )
    .expect("write config");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    cmd.arg("doctor")
        .arg("--config")
        .arg(&cfg)
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"));
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    server.shutdown().await;
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{out}"))
}

fn thinking() -> MockOptions {
    MockOptions {
        model: "moonshotai/Kimi-K2-Thinking".into(),
        ..MockOptions::default()
    }
}

#[tokio::test]
async fn a_thinking_model_with_its_reasoning_parser_on_passes() {
    let (code, out) = doctor(thinking(), "chat", "").await;
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        line(&out, "✓ model family: "),
        "✓ model family: thinking model (always thinks); raw mode renders the k2-thinking \
         template (chosen from the model name)"
    );
    assert_eq!(
        line(&out, "✓ reasoning: "),
        "✓ reasoning: the server's reasoning parser is on (reasoning arrives in `reasoning_content`)"
    );
    let (_, out) = doctor(
        MockOptions {
            reasoning_key: "reasoning".into(),
            ..thinking()
        },
        "chat",
        "",
    )
    .await;
    assert!(line(&out, "✓ reasoning: ").contains("`reasoning`"), "{out}");
}

#[tokio::test]
async fn reasoning_in_content_says_to_enable_the_parser() {
    let (_, out) = doctor(
        MockOptions {
            reasoning_in_content: true,
            ..thinking()
        },
        "chat",
        "",
    )
    .await;
    assert!(
        line(&out, "! reasoning: ").contains("reasoning parser is off"),
        "{out}"
    );
    assert!(
        out.contains("fix: start vLLM or SGLang with --reasoning-parser kimi_k2"),
        "{out}"
    );
}

#[tokio::test]
async fn the_family_line_names_the_template_and_the_switch() {
    let (_, out) = doctor(MockOptions::default(), "raw", "").await;
    assert!(
        line(&out, "✓ model family: ").starts_with(
            "✓ model family: not a thinking model; raw mode renders the k2-instruct template"
        ),
        "{out}"
    );
    assert!(!out.contains("reasoning:"), "{out}");
    let (_, out) = doctor(
        MockOptions {
            model: "m".into(),
            ..MockOptions::default()
        },
        "raw",
        "template = \"k2.5\"\nthinking = false",
    )
    .await;
    assert_eq!(
        line(&out, "✓ model family: "),
        "✓ model family: thinking model, thinking off (thinking = false); raw mode renders the \
         k2.5 template (set by the profile's `template`)"
    );
}
