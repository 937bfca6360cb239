//! The crate graph is the architecture: `cargo metadata` (the resolved graph, not our reading
//! of the Cargo.toml files) must show protocol <- client <- core <- ui <- binary, with the mock
//! on the protocol only, and no I/O crate under the protocol.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Each package's normal (not dev, not build) dependencies, by name.
struct Graph {
    deps: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    fn load() -> Graph {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let out = Command::new(cargo)
            .args(["metadata", "--format-version", "1"])
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
            .output()
            .expect("run cargo metadata");
        assert!(
            out.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta: Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
        let names: BTreeMap<&str, &str> = meta["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
            .collect();
        let mut deps = BTreeMap::new();
        for node in meta["resolve"]["nodes"].as_array().expect("resolve.nodes") {
            let name = names[node["id"].as_str().unwrap()].to_owned();
            let normal: BTreeSet<String> = node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| {
                    d["dep_kinds"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k["kind"].is_null())
                })
                .map(|d| names[d["pkg"].as_str().unwrap()].to_owned())
                .collect();
            deps.entry(name)
                .or_insert_with(BTreeSet::new)
                .extend(normal);
        }
        Graph { deps }
    }

    fn direct(&self, package: &str) -> &BTreeSet<String> {
        self.deps
            .get(package)
            .unwrap_or_else(|| panic!("{package} is not in the workspace graph"))
    }

    /// Everything `package` links, directly or not.
    fn closure(&self, package: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![package.to_owned()];
        while let Some(p) = todo.pop() {
            for d in self.direct(&p) {
                if seen.insert(d.clone()) {
                    todo.push(d.clone());
                }
            }
        }
        seen
    }

    fn assert_none(&self, package: &str, forbidden: &[&str]) {
        let closure = self.closure(package);
        let found: Vec<_> = forbidden.iter().filter(|f| closure.contains(**f)).collect();
        assert!(
            found.is_empty(),
            "{package} must not depend on {found:?} (directly or not)"
        );
    }
}

const OURS: [&str; 5] = [
    "kimi-protocol",
    "kimi-client",
    "kimi-core",
    "kimi-mock",
    "kimi-ui",
];

#[test]
fn the_protocol_reaches_nothing_with_io() {
    let g = Graph::load();
    g.assert_none(
        "kimi-protocol",
        &[
            "tokio",
            "reqwest",
            "hyper",
            "ratatui",
            "crossterm",
            "axum",
            "mio",
            "clap",
            "anyhow",
        ],
    );
    g.assert_none("kimi-protocol", &OURS[1..]);
}

#[test]
fn each_layer_depends_only_downwards() {
    let g = Graph::load();
    g.assert_none(
        "kimi-client",
        &["kimi-core", "kimi-ui", "kimi-mock", "clap", "anyhow"],
    );
    g.assert_none(
        "kimi-core",
        &[
            "kimi-ui",
            "kimi-mock",
            "ratatui",
            "crossterm",
            "clap",
            "anyhow",
        ],
    );
    g.assert_none("kimi-ui", &["kimi-mock", "clap", "axum"]);
    // HTTP is the client's: the engine reaches it only through kimi-client, and the UI only
    // through kimi-core (it holds no client, endpoint or key). Errors become text in the
    // binary alone (ratatui's termwiz links anyhow: only direct use counts).
    for (crate_, banned) in [
        (
            "kimi-ui",
            &["kimi-client", "reqwest", "hyper", "url", "anyhow"][..],
        ),
        ("kimi-core", &["reqwest", "hyper", "url", "anyhow"][..]),
    ] {
        let direct = g.direct(crate_);
        let found: Vec<_> = banned.iter().filter(|b| direct.contains(**b)).collect();
        assert!(
            found.is_empty(),
            "{crate_} must not depend on {found:?} directly"
        );
    }
    // The graph is real: the layers do link what they exist for.
    assert!(g.closure("kimi-client").contains("reqwest"));
    assert!(g.closure("kimi-ui").contains("ratatui"));
    assert!(g.direct("kimi-client").contains("kimi-protocol"));
    assert!(g.direct("kimi-core").contains("kimi-client"));
    assert!(g.direct("kimi-ui").contains("kimi-core"));
    assert!(g.direct("kimi-tui").contains("kimi-ui"));
}

#[test]
fn the_mock_depends_on_the_protocol_only_among_ours() {
    let g = Graph::load();
    let ours: BTreeSet<&str> = g
        .closure("kimi-mock")
        .iter()
        .filter_map(|d| OURS.iter().copied().find(|o| o == d))
        .collect();
    assert_eq!(ours, BTreeSet::from(["kimi-protocol"]));
    g.assert_none("kimi-mock", &["clap", "anyhow", "reqwest", "ratatui"]);
}

#[test]
fn only_the_binary_parses_the_command_line() {
    let g = Graph::load();
    let with_clap: Vec<&String> = g
        .deps
        .keys()
        .filter(|p| p.starts_with("kimi-") && g.direct(p).contains("clap"))
        .collect();
    assert_eq!(with_clap, ["kimi-tui"]);
}
