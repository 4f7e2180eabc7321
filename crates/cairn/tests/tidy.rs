//! Tidy checks over the source tree: module docs, forbidden test attributes, one file per MCP tool, rmcp only in
//! `tools/`.

use std::path::{Path, PathBuf};

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
    assert_eq!(tool_files("cairn-roscoe").len(), 33, "the 13 authoring, 12 run, 3 skill and 5 docs tools");
    assert_eq!(tool_files("cairn-work").len(), 13, "the 7 work and 6 decisions tools");
}

#[test]
fn only_tools_modules_import_rmcp() {
    for krate in ["cairn-deepwork", "cairn-roscoe", "cairn-work"] {
        let src = workspace().join("crates").join(krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let rel = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            if rel == "tools.rs" || rel.starts_with("tools/") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(!text.contains("rmcp::"), "{krate}/src/{rel} uses rmcp outside tools/");
        }
    }
}
