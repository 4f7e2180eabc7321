//! Tidy checks over the source tree: module docs, forbidden test attributes, one file per MCP tool, and the
//! boundaries of docs/architecture.md — which crates may import which, `cairn serve` over the facades only (no
//! `cairn_store` in cairn-web), rmcp only in cairn-mcp and the surfaces' `tools` adapters, at most 600 lines of code
//! per file (tests not counted) and no import cycle between the files of a crate.

#[path = "tidy/code.rs"]
mod code;
#[path = "tidy/imports.rs"]
mod imports;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().parent().unwrap().to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let krate = krate.unwrap().path();
        for sub in ["src", "tests"] {
            if krate.join(sub).is_dir() {
                rust_files(&krate.join(sub), &mut files);
            }
        }
    }
    assert!(files.len() > 20, "found the sources");
    files
}

#[test]
fn every_file_opens_with_a_module_doc() {
    let missing: Vec<_> = all_sources()
        .into_iter()
        .filter(|f| !std::fs::read_to_string(f).unwrap().starts_with("//!"))
        .collect();
    assert!(missing.is_empty(), "files without a //! module doc: {missing:?}");
}

#[test]
fn no_ignored_or_should_panic_tests() {
    let forbidden = [format!("#[{}]", "ignore"), format!("#[{}", "should_panic")];
    for file in all_sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        for pattern in &forbidden {
            assert!(!text.contains(pattern.as_str()), "{} uses {pattern}", file.display());
        }
    }
}

/// Each file in `<crate>/src/tools/` is one tool, named by its file: registered in `tools.rs` (an unregistered one
/// would be dead code, which the compiler reports). Returns the tool names found.
fn tool_files(krate: &str) -> Vec<String> {
    let src = workspace().join("crates").join(krate).join("src");
    let router = std::fs::read_to_string(src.join("tools.rs")).unwrap();
    let mut tools: Vec<String> = std::fs::read_dir(src.join("tools"))
        .unwrap()
        .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    tools.sort();
    for tool in &tools {
        assert!(router.contains(&format!("tool!({tool},")), "{krate} {tool}: not registered");
        let file = std::fs::read_to_string(src.join("tools").join(format!("{tool}.rs"))).unwrap();
        assert!(file.contains(&format!("\"{tool}\",")), "{krate} {tool}: the file does not name its tool");
    }
    tools
}

#[test]
fn each_tool_has_its_own_file() {
    assert_eq!(tool_files("cairn-deepwork").len(), 11, "DeepWork's 11 tools");
    let roscoe = tool_files("cairn-roscoe").len();
    assert_eq!(roscoe, 35, "the 13 authoring, 14 run (fork_run beyond the seed), 3 skill and 5 docs tools");
    assert_eq!(
        tool_files("cairn-work").len(),
        17,
        "the 7 work tools of the seed, work_get, work_ready, work_claim_next, work_heartbeat and 6 decisions tools"
    );
}

/// Which workspace crates each crate may depend on (docs/architecture.md): `cairn` → `cairn-web` → the surfaces →
/// `cairn-mcp`, `cairn-store`, `cairn-docs` → `cairn-yaml`. cairn-web goes through the surfaces' facades, never the
/// store; surfaces never import each other; the libraries below them import no surface, and cairn-mcp, cairn-store
/// and cairn-yaml no workspace crate at all. Only cairn-store talks to the database.
const LAYERS: &[(&str, &[&str])] = &[
    ("cairn", &["cairn-web", "cairn-deepwork", "cairn-roscoe", "cairn-work", "cairn-mcp", "cairn-store", "cairn-docs", "cairn-yaml", "cairn-telemetry"]),
    ("cairn-web", &["cairn-deepwork", "cairn-roscoe", "cairn-work", "cairn-mcp", "cairn-yaml", "cairn-telemetry"]),
    ("cairn-deepwork", &["cairn-mcp", "cairn-store", "cairn-docs", "cairn-yaml", "cairn-telemetry"]),
    ("cairn-roscoe", &["cairn-mcp", "cairn-store", "cairn-docs", "cairn-yaml", "cairn-telemetry"]),
    ("cairn-work", &["cairn-mcp", "cairn-store", "cairn-docs", "cairn-yaml", "cairn-telemetry"]),
    ("cairn-docs", &["cairn-yaml"]),
    ("cairn-mcp", &["cairn-telemetry"]),
    ("cairn-store", &[]),
    ("cairn-yaml", &[]),
    ("cairn-telemetry", &[]),
];

/// The surfaces: each serves its tools through its own `tools.rs` + `tools/`.
const SURFACES: [&str; 3] = ["cairn-deepwork", "cairn-roscoe", "cairn-work"];

/// The most lines of code a file under `crates/*/src` may have before its test module.
const LINE_BUDGET: usize = 600;

/// The workspace's crates, by directory name.
fn crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The dependencies `krate`'s Cargo.toml names in `[dependencies]`, `[dev-dependencies]` or `[build-dependencies]`
/// (of any target): `(section, name)`.
fn manifest_dependencies(krate: &str) -> Vec<(String, String)> {
    let manifest = std::fs::read_to_string(workspace().join("crates").join(krate).join("Cargo.toml")).unwrap();
    let mut section = String::new();
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_owned();
        } else if section.ends_with("dependencies") && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['.', '=', ' ']).next().unwrap_or_default().trim_matches('"');
            found.push((section.clone(), name.to_owned()));
        }
    }
    found
}

/// Every Rust file of `krate` (its `src`, `tests`, `benches` and `examples`, and `build.rs`).
fn crate_sources(krate: &str) -> Vec<PathBuf> {
    let dir = workspace().join("crates").join(krate);
    let mut files = Vec::new();
    for sub in ["src", "tests", "benches", "examples"] {
        if dir.join(sub).is_dir() {
            rust_files(&dir.join(sub), &mut files);
        }
    }
    if dir.join("build.rs").is_file() {
        files.push(dir.join("build.rs"));
    }
    files
}

#[test]
fn crates_depend_only_downward() {
    let known: Vec<&str> = LAYERS.iter().map(|(k, _)| *k).collect();
    let name = Regex::new(r"(?:^|[^\w])(cairn_[a-z]+)\b").unwrap();
    let mut wrong = Vec::new();
    for krate in crates() {
        let Some((_, allowed)) = LAYERS.iter().find(|(k, _)| *k == krate) else {
            wrong.push(format!("{krate} is a new crate: give it its place in LAYERS (tidy.rs) and docs/architecture.md"));
            continue;
        };
        for (section, dependency) in manifest_dependencies(&krate) {
            let layered = known.contains(&dependency.as_str()) && !allowed.contains(&dependency.as_str());
            if layered || (dependency.starts_with("sqlx") && krate != "cairn-store") {
                wrong.push(format!("{krate}/Cargo.toml [{section}] depends on {dependency}"));
            }
        }
        for file in crate_sources(&krate) {
            let text = code::strip(&std::fs::read_to_string(&file).unwrap());
            if krate != "cairn-store" && text.contains("sqlx::") {
                wrong.push(format!("{} uses sqlx", file.strip_prefix(workspace()).unwrap().display()));
            }
            let named: BTreeSet<String> = name.captures_iter(&text).map(|c| c[1].replace('_', "-")).collect();
            for other in named.iter().filter(|n| **n != krate && known.contains(&n.as_str())) {
                if !allowed.contains(&other.as_str()) {
                    wrong.push(format!("{} uses {}", file.strip_prefix(workspace()).unwrap().display(), other.replace('-', "_")));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the crate layers of docs/architecture.md:\n{}", wrong.join("\n"));
}

#[test]
fn cairn_web_serves_the_facades_not_the_store() {
    let web = workspace().join("crates/cairn-web");
    assert!(
        !manifest_dependencies("cairn-web").iter().any(|(_, d)| d == "cairn-store" || d == "sqlx"),
        "cairn-web/Cargo.toml must not depend on cairn-store or sqlx: go through the surfaces' facades"
    );
    for file in crate_sources("cairn-web") {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("cairn_store") && !text.contains("sqlx::"),
            "{} names the store; cairn-web calls the facades (roscoe's Runs and Service, cairn_work::Service, Deepwork)",
            file.strip_prefix(&web).unwrap().display()
        );
    }
}

/// rmcp belongs to cairn-mcp and to each surface's MCP adapter (`tools.rs` and `tools/`); cairn-web mounts the
/// services cairn-mcp builds without naming rmcp, and the binary uses it only in tests (its MCP clients).
#[test]
fn rmcp_only_in_cairn_mcp_and_the_tools_adapters() {
    let mut wrong = Vec::new();
    for krate in crates() {
        let in_manifest = manifest_dependencies(&krate).into_iter().filter(|(_, d)| d == "rmcp");
        for (section, _) in in_manifest {
            let allowed = krate == "cairn-mcp" || SURFACES.contains(&krate.as_str()) || section == "dev-dependencies";
            if !allowed {
                wrong.push(format!("{krate}/Cargo.toml [{section}] depends on rmcp"));
            }
        }
        if krate == "cairn-mcp" {
            continue;
        }
        let src = workspace().join("crates").join(&krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let rel = file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            if SURFACES.contains(&krate.as_str()) && (rel == "tools.rs" || rel.starts_with("tools/")) {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let checked = if krate == "cairn" { code::before_tests(&text) } else { text };
            if checked.contains("rmcp::") {
                wrong.push(format!("{krate}/src/{rel} uses rmcp"));
            }
        }
    }
    assert!(wrong.is_empty(), "rmcp outside cairn-mcp and the surfaces' tools.rs + tools/:\n{}", wrong.join("\n"));
}

#[test]
fn every_file_keeps_to_the_line_budget() {
    let mut over = Vec::new();
    for krate in crates() {
        let src = workspace().join("crates").join(&krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let lines = code::test_module_line(&std::fs::read_to_string(&file).unwrap()) - 1;
            if lines > LINE_BUDGET {
                over.push(format!("{krate}/src/{} has {lines}", file.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    over.sort();
    assert!(
        over.is_empty(),
        "files over {LINE_BUDGET} lines of code before their tests; split them along their seams:\n{}",
        over.join("\n")
    );
}

#[test]
fn no_import_cycle_between_the_files_of_a_crate() {
    let mut found = Vec::new();
    for krate in crates() {
        let src = workspace().join("crates").join(&krate).join("src");
        for cycle in imports::cycles(&imports::read_sources(&src)) {
            found.push(format!("{krate}/src: {cycle}"));
        }
    }
    assert!(
        found.is_empty(),
        "import cycles between files (move what both need to one side, or below both):\n{}",
        found.join("\n")
    );
}
