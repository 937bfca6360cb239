//! `config.example.toml` is valid, documents the three profiles and the demo tools, and every
//! optional key it shows commented out is a key the program knows, with its real default.

use std::collections::BTreeSet;
use std::path::Path;

use kimi_core::config::{Config, Profile};
use kimi_core::tools::{Approval, ToolSpec};
use kimi_protocol::Mode;
use serde_json::Value;

const EXAMPLE: &str = include_str!("../../config.example.toml");

fn parse(text: &str) -> Config {
    Config::parse(Path::new("config.example.toml"), text).unwrap_or_else(|e| panic!("{e}"))
}

/// Every key name of Config, Profile and ToolSpec, from serializing them with every optional
/// field set.
fn known_keys() -> BTreeSet<String> {
    let tool = ToolSpec {
        cwd: Some("d".into()),
        env: [("A".to_owned(), "b".to_owned())].into(),
        max_output_bytes: Some(1),
        inherit_env: Some(vec!["PATH".to_owned()]),
        ..ToolSpec::new("t", vec!["x".to_owned()])
    };
    let values = [
        serde_json::to_value(Config::default()).expect("json"),
        serde_json::to_value(Profile {
            temperature: Some(0.6),
            max_tokens: Some(1),
            template: Some(kimi_protocol::Template::K25),
            thinking: Some(true),
            context_window: Some(1),
            logprobs: 5,
            thinking_effort: Some("max".into()),
            tool_choice: Some("auto".into()),
            response_format: Some(serde_json::json!({"type": "json_object"})),
            ..Profile::new(Mode::Raw, "http://x/v1")
        })
        .expect("json"),
        serde_json::to_value(tool).expect("json"),
    ];
    values
        .iter()
        .flat_map(|v| v.as_object().expect("object").keys().cloned())
        .collect()
}

/// `(line index, key)` of each `# key = value` line.
fn commented_keys(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let key_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(rest.len());
            let (key, after) = rest.split_at(key_len);
            let after = after.trim_start();
            (!key.is_empty() && after.starts_with('=') && !after.starts_with("=="))
                .then(|| (i, key.to_owned()))
        })
        .collect()
}

#[test]
fn the_example_parses_with_three_profiles() {
    let c = parse(EXAMPLE);
    assert_eq!(c.default_profile.as_deref(), Some("local"));
    let names: Vec<&str> = c.profiles.keys().map(String::as_str).collect();
    assert_eq!(names, ["local", "local-chat", "moonshot"]);

    let local = &c.profiles["local"];
    assert_eq!(local.mode, Mode::Raw);
    assert_eq!(local.base_url, "http://127.0.0.1:8000/v1");
    assert_eq!(local.model, "moonshotai/Kimi-K2-Instruct");
    assert_eq!(local.api_key_env, None);

    let chat = &c.profiles["local-chat"];
    assert_eq!(chat.mode, Mode::Chat);
    assert_eq!(chat.base_url, "http://127.0.0.1:8000/v1");

    let moonshot = &c.profiles["moonshot"];
    assert_eq!(moonshot.mode, Mode::Chat);
    assert_eq!(moonshot.base_url, "https://api.moonshot.ai/v1");
    assert_eq!(moonshot.model, "kimi-k2-0905-preview");
    assert_eq!(moonshot.api_key_env.as_deref(), Some("MOONSHOT_API_KEY"));

    // The server command lines are in the comments.
    assert!(EXAMPLE.contains(
        "vllm serve moonshotai/Kimi-K2-Instruct --trust-remote-code --enable-auto-tool-choice --tool-call-parser kimi_k2"
    ));
    assert!(EXAMPLE.contains(
        "python -m sglang.launch_server --model-path moonshotai/Kimi-K2-Instruct --trust-remote-code --tool-call-parser kimi_k2"
    ));
    assert_eq!(
        EXAMPLE.matches("sk-").count(),
        EXAMPLE.matches("sk-...").count(),
        "no key in the example, only the placeholder"
    );
}

#[test]
fn the_example_tools_use_the_demo_scripts() {
    let c = parse(EXAMPLE);
    let tools: Vec<(&str, Approval)> = c
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.approval))
        .collect();
    assert_eq!(
        tools,
        [
            ("get_weather", Approval::Ask),
            ("get_time", Approval::Auto),
            ("list_dir", Approval::Ask)
        ]
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for t in &c.tools {
        let program = &t.command[0];
        assert!(program.starts_with("./assets/tools/"), "{program}");
        assert!(root.join(program).is_file(), "{program} exists");
    }
    // None of them writes or uses the network: all run confined.
    for t in &c.tools {
        assert_eq!(
            t.sandbox_policy(),
            kimi_core::tools::sandbox::SandboxPolicy {
                mode: kimi_core::tools::sandbox::SandboxMode::ReadOnly,
                network: false
            },
            "{}",
            t.name
        );
    }
    let list_dir = &c.tools[2];
    assert_eq!(list_dir.parameters["required"], serde_json::json!(["path"]));
    assert_eq!(list_dir.parameters["properties"]["path"]["type"], "string");
    c.toolbox().expect("a valid toolbox");
}

#[test]
fn commented_keys_are_known() {
    let known = known_keys();
    // Sanity: the collection finds fields of all three structs.
    for k in [
        "default_profile",
        "idle_timeout_secs",
        "max_output_bytes",
        "cwd",
        "env",
    ] {
        assert!(known.contains(k), "{k} in {known:?}");
    }
    let found = commented_keys(EXAMPLE);
    assert!(found.len() >= 10, "{found:?}");
    for (i, key) in &found {
        assert!(
            known.contains(key),
            "config.example.toml:{}: `{key}` is not a config key (known: {known:?})",
            i + 1
        );
    }
    // The check itself catches a typo.
    let typo = commented_keys("# temprature = 0.6\n");
    assert!(typo.iter().any(|(_, k)| !known.contains(k)));
}

#[test]
fn each_commented_line_is_valid_and_shows_the_real_default() {
    let original = parse(EXAMPLE);
    let lines: Vec<&str> = EXAMPLE.lines().collect();
    // Keys without a default: the example shows a sample value.
    // Unset temperature and max_tokens depend on the template (thinking models), so setting them
    // changes the profile even to the value shown.
    let samples = [
        "api_key_env",
        "system_prompt",
        "cwd",
        "env",
        "inherit_env",
        "temperature",
        "max_tokens",
        "template",
        "thinking",
        "thinking_effort",
        "tool_choice",
        "response_format",
        "context_window",
    ];
    for (i, key) in commented_keys(EXAMPLE) {
        let mut edited: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        let uncommented = lines[i]
            .trim_start()
            .trim_start_matches('#')
            .trim_start()
            .to_owned();
        edited[i] = uncommented;
        let text = edited.join("\n");
        let c = Config::parse(Path::new("edited.toml"), &text)
            .unwrap_or_else(|e| panic!("uncommenting line {} (`{key}`): {e}", i + 1));
        if samples.contains(&key.as_str()) {
            let json = serde_json::to_string(&(&c.profiles, &c.tools)).expect("json");
            assert_ne!(
                json,
                serde_json::to_string(&(&original.profiles, &original.tools)).expect("json"),
                "line {} changes something",
                i + 1
            );
        } else {
            assert_eq!(
                c.profiles,
                original.profiles,
                "line {}: `{key}` shows its default",
                i + 1
            );
            // `max_output_bytes` unset means the default cap.
            let capped = |tools: &[ToolSpec]| -> Vec<ToolSpec> {
                tools
                    .iter()
                    .map(|t| ToolSpec {
                        max_output_bytes: Some(t.output_cap()),
                        ..t.clone()
                    })
                    .collect()
            };
            assert_eq!(
                capped(&c.tools),
                capped(&original.tools),
                "line {}: `{key}` shows its default",
                i + 1
            );
        }
    }
}

#[test]
fn config_init_writes_exactly_the_example() {
    assert_eq!(kimi_tui::commands::config_file::EXAMPLE, EXAMPLE);
    let _: Value = serde_json::to_value(parse(EXAMPLE).profiles).expect("serializable");
}
