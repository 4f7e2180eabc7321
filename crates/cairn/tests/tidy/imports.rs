//! The import graph between the files of one crate, and its cycles.
//!
//! Every `use` and every inline path that starts at `crate::`, `super::`, `self::` or a child module is resolved to
//! the file of the module it names (following `use` declarations of that module, so `crate::Error` re-exported by
//! `lib.rs` from `error.rs` leads to `error.rs`). A module and its own submodules are one unit — a facade re-exporting
//! its parts while they use its types is no cycle — so an edge between files is lifted to the two sibling modules
//! that contain them under their nearest common ancestor: `runs/view.rs` using `crate::engine::Run` is the edge
//! `runs.rs → engine.rs`. A cycle is a set of siblings that reach each other. Test modules are not looked at.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use regex::Regex;

use super::code;

/// One file of the crate.
#[derive(Debug)]
struct Module {
    /// Relative to `src/`, `/`-separated.
    file: String,
    /// Its module path (`[]` for the crate root).
    path: Vec<String>,
    /// What its `use` declarations bring in: name → path as written.
    names: HashMap<String, String>,
    /// Every path it uses.
    uses: Vec<String>,
}

/// An import cycle: the sibling modules (by file) that reach each other, and the file-to-file imports behind it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Cycle {
    /// The modules' files, sorted.
    pub files: Vec<String>,
    /// `from → to` for each import between them, sorted.
    pub imports: Vec<(String, String)>,
}

impl std::fmt::Display for Cycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let imports: Vec<String> = self.imports.iter().map(|(a, b)| format!("{a} → {b}")).collect();
        write!(f, "{} (imports: {})", self.files.join(", "), imports.join("; "))
    }
}

/// The files of `src` as `(path relative to src, text)`; `src/bin/` holds crate roots of their own and is left out.
pub(crate) fn read_sources(src: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    super::rust_files(src, &mut files);
    let mut sources: Vec<(String, String)> = files
        .into_iter()
        .map(|f| (f.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/"), std::fs::read_to_string(&f).unwrap()))
        .filter(|(rel, _)| !rel.starts_with("bin/"))
        .collect();
    sources.sort();
    sources
}

/// The import cycles between the files of one crate, given as `(path relative to src, text)`.
pub(crate) fn cycles(sources: &[(String, String)]) -> Vec<Cycle> {
    let modules: Vec<Module> = sources.iter().map(|(file, text)| parse(file, text)).collect();
    let by_path: HashMap<&[String], usize> = modules.iter().enumerate().map(|(i, m)| (m.path.as_slice(), i)).collect();
    let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut behind: BTreeMap<(usize, usize), BTreeSet<(String, String)>> = BTreeMap::new();
    for (from, module) in modules.iter().enumerate() {
        for used in &module.uses {
            let Some(to) = resolve(&modules, &by_path, from, used, 0) else { continue };
            let (a, b) = (&module.path, &modules[to].path);
            if a.starts_with(b) || b.starts_with(a) {
                continue;
            }
            let common = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
            let lifted = (by_path[&a[..=common]], by_path[&b[..=common]]);
            edges.entry(lifted.0).or_default().insert(lifted.1);
            behind.entry(lifted).or_default().insert((module.file.clone(), modules[to].file.clone()));
        }
    }
    strongly_connected(modules.len(), &edges)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut files: Vec<String> = component.iter().map(|&i| modules[i].file.clone()).collect();
            files.sort();
            let imports = behind
                .iter()
                .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                .flat_map(|(_, pairs)| pairs.iter().cloned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            Cycle { files, imports }
        })
        .collect()
}

/// The module path of a file: `lib.rs` / `main.rs` → `[]`, `a/mod.rs` → `[a]`, `a/b.rs` → `[a, b]`.
fn module_path(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let mut parts: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if parts == ["lib"] || parts == ["main"] {
        return Vec::new();
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn parse(file: &str, text: &str) -> Module {
    let code = code::strip(&code::before_tests(text));
    let use_decl = Regex::new(r"(?s)(?:^|[^\w])use\s+([^;]+);").unwrap();
    let inline = Regex::new(r"(?:^|[^\w:$])((?:crate|super|self)(?:::\w+)+)").unwrap();
    let children = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;").unwrap();
    let children: BTreeSet<String> = children.captures_iter(&code).map(|c| c[1].to_owned()).collect();
    let mut names = HashMap::new();
    let mut uses = Vec::new();
    for declaration in use_decl.captures_iter(&code) {
        for (path, name) in expand(&declaration[1].split_whitespace().collect::<Vec<_>>().join(" ")) {
            let first = path.split("::").next().unwrap_or_default();
            let path = if children.contains(first) { format!("self::{path}") } else { path };
            if let Some(name) = name {
                names.insert(name, path.clone());
            }
            uses.push(path);
        }
    }
    uses.extend(inline.captures_iter(&code).map(|c| c[1].to_owned()));
    Module { file: file.to_owned(), path: module_path(file), names, uses }
}

/// The paths of a use tree with the name each brings in: `a::{b, c::d as e, self}` → `a::b` (b), `a::c::d` (e),
/// `a` (a); a glob brings in no name.
fn expand(tree: &str) -> Vec<(String, Option<String>)> {
    let tree = tree.trim().trim_start_matches("::");
    let Some(open) = tree.find('{') else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path.trim(), Some(alias.trim())),
            None => (tree, None),
        };
        let path = path.replace(' ', "");
        let last = path.rsplit("::").next().unwrap_or_default().to_owned();
        let name = alias.map(str::to_owned).or((last != "*").then_some(last)).filter(|n| n != "_");
        return vec![(path, name)];
    };
    let prefix = tree[..open].replace(' ', "");
    let inner = tree[open + 1..].trim_end().strip_suffix('}').unwrap_or(&tree[open + 1..]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut found = Vec::new();
    for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        if part == "self" || part.starts_with("self as ") {
            let path = prefix.trim_end_matches("::").to_owned();
            let last = path.rsplit("::").next().unwrap_or_default().to_owned();
            let name = part.strip_prefix("self as ").map(|a| a.trim().to_owned()).unwrap_or(last);
            found.push((path, Some(name)));
        } else {
            found.extend(expand(&format!("{prefix}{part}")));
        }
    }
    found
}

/// The file the path `used`, written in module `from`, leads to (`None` outside the crate).
fn resolve(modules: &[Module], by_path: &HashMap<&[String], usize>, from: usize, used: &str, depth: usize) -> Option<usize> {
    let mut segments = used.split("::").filter(|s| !s.is_empty()).peekable();
    let mut full: Vec<String> = match segments.peek().copied() {
        Some("crate") => {
            segments.next();
            Vec::new()
        }
        Some("self") => {
            segments.next();
            modules[from].path.clone()
        }
        Some("super") => {
            let mut base = modules[from].path.clone();
            while segments.peek() == Some(&"super") {
                segments.next();
                base.pop();
            }
            base
        }
        _ => return None,
    };
    full.extend(segments.map(str::to_owned));
    let found = (0..=full.len()).rev().find(|&n| by_path.contains_key(&full[..n]))?;
    let target = by_path[&full[..found]];
    // A name the target module imports from elsewhere: follow it there.
    if let Some(next) = full.get(found)
        && let Some(path) = modules[target].names.get(next)
        && depth < 8
        && let Some(further) = resolve(modules, by_path, target, path, depth + 1)
    {
        return Some(further);
    }
    Some(target)
}

/// Tarjan's strongly connected components of the graph on `0..n`.
fn strongly_connected(n: usize, edges: &BTreeMap<usize, BTreeSet<usize>>) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a BTreeMap<usize, BTreeSet<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.edges.get(&v).into_iter().flatten() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.found.push(component);
        }
    }
    let mut state = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(&mut state, v);
        }
    }
    state.found
}

fn sources(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files.iter().map(|(f, t)| (f.to_string(), t.to_string())).collect()
}

#[test]
fn sibling_cycles_are_found_through_re_exports_and_submodules() {
    let crate_files = sources(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod error;\npub use error::Error;\n"),
        ("error.rs", "use crate::a::Source;\npub enum Error {}\n"),
        // `crate::Error` is error.rs's, re-exported by lib.rs.
        ("a.rs", "mod inner;\npub use inner::Source;\n"),
        ("a/inner.rs", "use crate::Error;\npub struct Source;\n"),
        ("b.rs", "pub fn f() { crate::c::g() }\n"),
        ("c.rs", "use super::{b::{self as bee}};\npub fn g() {}\n#[cfg(test)]\nmod tests {\n    use crate::a::Source;\n}\n"),
    ]);
    let found = cycles(&crate_files);
    let files: Vec<Vec<String>> = found.iter().map(|c| c.files.clone()).collect();
    assert_eq!(files.len(), 2, "{found:?}");
    assert!(files.contains(&vec!["a.rs".to_owned(), "error.rs".to_owned()]), "{found:?}");
    assert!(files.contains(&vec!["b.rs".to_owned(), "c.rs".to_owned()]), "{found:?}");
    let lifted = found.iter().find(|c| c.files[0] == "a.rs").unwrap();
    assert!(lifted.imports.contains(&("a/inner.rs".to_owned(), "error.rs".to_owned())), "{lifted}");
}

#[test]
fn a_module_and_its_submodules_are_one_unit() {
    let crate_files = sources(&[
        ("lib.rs", "mod service;\npub use service::Service;\n"),
        ("service.rs", "mod items;\npub use items::Item;\npub struct Service;\n"),
        ("service/items.rs", "use super::Service;\nuse crate::Service as Again;\npub struct Item;\n"),
    ]);
    assert_eq!(cycles(&crate_files), Vec::new());
}
