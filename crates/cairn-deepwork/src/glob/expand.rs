//! Expansion ([`expand`]): a pattern over a directory the way Python 3.11's `pathlib.Path.glob` does it, for
//! DeepWork's "unchanged matching files" (spec §9.6). The pattern is split into `/`-separated components; a component
//! that is exactly `**` means "this directory and every directory below it" (not descending into symlinked
//! directories), and other components are `fnmatch` patterns matched against one name (`*`, `?`, and `[...]` /
//! `[!...]` character sets; hidden names are matched too). Names are matched without recursion, in linear time.

use std::fs;
use std::path::{Path, PathBuf};

/// Every regular file under `dir` matching `pattern` with Python 3.11 `pathlib.Path.glob` semantics, as DeepWork's
/// "unchanged matching files" uses it: hidden names included, nothing skipped, `**` does not descend into symlinked
/// directories (a literal or wildcard component does pass through one, as in Python), symlinks to regular files
/// count as files. Returns absolute paths (if `dir` is absolute), sorted by their bytes, without duplicates.
///
/// Patterns Python rejects yield nothing: an empty or absolute pattern, or one with no components (`.`). Unlike
/// Python, a pattern with a `..` component yields nothing either: expansion stays below `dir`. A `**`
/// inside a longer component (`a**b`), which Python 3.11 rejects, acts like `*` (Python 3.13's reading). A pattern
/// ending in `/` selects only directories, so it yields nothing here.
///
/// Consecutive `**` components are one (they select the same directories). An expansion stops after
/// [`MAX_EXPANSION_STEPS`] directory visits and keeps what it found by then: wildcard components pass through
/// symbolic links, so a few links back up the tree could otherwise make `*/*/*/…` take forever.
pub fn expand(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    if pattern.is_empty() || pattern.starts_with('/') || pattern.ends_with('/') || !dir.is_dir() {
        return Vec::new();
    }
    // Python's parse_parts drops empty and `.` components.
    let parts: Vec<&str> = pattern.split('/').filter(|part| !part.is_empty() && *part != ".").collect();
    // A `..` would climb out of `dir` (and a `../../../**` would walk the whole file system).
    if parts.is_empty() || parts.contains(&"..") {
        return Vec::new();
    }
    let mut components: Vec<Component> = parts.into_iter().map(Component::parse).collect();
    components.dedup_by(|a, b| matches!((a, b), (Component::Recursive, Component::Recursive)));
    let mut found = Vec::new();
    let mut steps_left = MAX_EXPANSION_STEPS;
    select(dir.to_path_buf(), &components, &mut found, &mut steps_left);
    if steps_left == 0 {
        tracing::warn!("expanding {pattern:?} in {} stopped after {MAX_EXPANSION_STEPS} steps", dir.display());
    }
    found.retain(|path| fs::metadata(path).is_ok_and(|meta| meta.is_file()));
    found.sort_by(|a, b| a.as_os_str().as_encoded_bytes().cmp(b.as_os_str().as_encoded_bytes()));
    found.dedup();
    found
}

/// The most directory visits one [`expand`] makes.
pub const MAX_EXPANSION_STEPS: usize = 200_000;

/// One `/`-separated component of a `Path.glob` pattern.
#[derive(Debug)]
enum Component {
    /// `**`: this directory and all directories below it.
    Recursive,
    /// No wildcard characters: the name itself (checked for existence, not listed).
    Exact(String),
    /// An `fnmatch` pattern for one name.
    Wild(Vec<NameToken>),
}

impl Component {
    fn parse(part: &str) -> Component {
        if part == "**" {
            Component::Recursive
        } else if part.contains(['*', '?', '[']) {
            Component::Wild(fnmatch_tokens(part))
        } else {
            Component::Exact(part.to_owned())
        }
    }
}

/// Walks `components` from `base`, pushing every path the last component selects (files and directories alike),
/// for at most `steps_left` more visits.
fn select(base: PathBuf, components: &[Component], out: &mut Vec<PathBuf>, steps_left: &mut usize) {
    if *steps_left == 0 {
        return;
    }
    *steps_left -= 1;
    let Some((first, rest)) = components.split_first() else {
        out.push(base);
        return;
    };
    // A component followed by more components only selects directories (following symlinks, like `is_dir()`).
    let need_dir = !rest.is_empty();
    match first {
        Component::Exact(name) => {
            let path = base.join(name);
            let selected = if need_dir { path.is_dir() } else { fs::symlink_metadata(&path).is_ok() };
            if selected {
                select(path, rest, out, steps_left);
            }
        }
        Component::Wild(tokens) => {
            for (name, path, is_dir, _) in list_dir(&base) {
                if (!need_dir || is_dir) && fnmatch(tokens, &name) {
                    select(path, rest, out, steps_left);
                }
            }
        }
        Component::Recursive => {
            let mut dirs = vec![base];
            while let Some(dir) = dirs.pop() {
                if *steps_left == 0 {
                    return;
                }
                for (_, path, is_dir, is_symlink) in list_dir(&dir) {
                    if is_dir && !is_symlink {
                        dirs.push(path);
                    }
                }
                select(dir, rest, out, steps_left);
            }
        }
    }
}

/// The entries of `dir` as (name, path, is a directory following symlinks, is a symlink); unreadable → empty.
fn list_dir(dir: &Path) -> Vec<(String, PathBuf, bool, bool)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| {
            let path = entry.path();
            let is_symlink = entry.file_type().is_ok_and(|t| t.is_symlink());
            let is_dir = if is_symlink { path.is_dir() } else { entry.file_type().is_ok_and(|t| t.is_dir()) };
            (entry.file_name().to_string_lossy().into_owned(), path, is_dir, is_symlink)
        })
        .collect()
}

/// One element of an `fnmatch` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NameToken {
    /// A literal character.
    Char(char),
    /// `?`: any one character.
    Any,
    /// `*` (runs collapsed): any run of characters.
    Star,
    /// `[...]`: one character in (or, negated, not in) the ranges.
    Set { negated: bool, ranges: Vec<(char, char)> },
}

/// Translates one name pattern the way Python's `fnmatch.translate` does: `*`, `?`, and `[...]` sets with `!`
/// negation, a leading `]` taken literally, `a-z` ranges (reversed ranges dropped), no backslash escapes; a `[`
/// without a closing `]` is literal. `**` collapses into one `*`.
fn fnmatch_tokens(pattern: &str) -> Vec<NameToken> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut tokens = Vec::new();
    // Once a `[` has no closing `]`, no later one has: they are all literal (and the pattern is read in linear time).
    let mut unclosed = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => {
                if tokens.last() != Some(&NameToken::Star) {
                    tokens.push(NameToken::Star);
                }
            }
            '?' => tokens.push(NameToken::Any),
            '[' if unclosed => tokens.push(NameToken::Char('[')),
            '[' => {
                let mut j = i;
                if j < chars.len() && chars[j] == '!' {
                    j += 1;
                }
                if j < chars.len() && chars[j] == ']' {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    unclosed = true;
                    tokens.push(NameToken::Char('['));
                } else {
                    tokens.push(parse_set(&chars[i..j]));
                    i = j + 1;
                }
            }
            _ => tokens.push(NameToken::Char(c)),
        }
    }
    tokens
}

/// The set for the text between `[` and its closing `]`, following `fnmatch.translate`.
fn parse_set(body: &[char]) -> NameToken {
    let negated = body.first() == Some(&'!');
    let start = usize::from(negated);
    // Split into chunks at the hyphens that form ranges; a hyphen right after the opening (or after `!`) is literal,
    // and the search resumes two characters after each range hyphen.
    let mut chunks: Vec<Vec<char>> = Vec::new();
    let mut chunk_start = start;
    let mut k = start + 1;
    while let Some(offset) = body.get(k..).and_then(|tail| tail.iter().position(|&c| c == '-')) {
        let hyphen = k + offset;
        chunks.push(body[chunk_start..hyphen].to_vec());
        chunk_start = hyphen + 1;
        k = hyphen + 3;
    }
    let last = body[chunk_start.min(body.len())..].to_vec();
    if last.is_empty() && !chunks.is_empty() {
        // A trailing hyphen is literal.
        chunks.last_mut().expect("non-empty").push('-');
    } else {
        chunks.push(last);
    }
    // Drop reversed ranges (`z-a`) together with both of their endpoints.
    let mut idx = chunks.len();
    while idx > 1 {
        idx -= 1;
        let (left, right) = (chunks[idx - 1].last().copied(), chunks[idx].first().copied());
        if let (Some(l), Some(r)) = (left, right)
            && l > r
        {
            let tail: Vec<char> = chunks[idx][1..].to_vec();
            chunks[idx - 1].pop();
            chunks[idx - 1].extend(tail);
            chunks.remove(idx);
        }
    }
    // The chunks joined by range hyphens, read the way Python's `re` reads the resulting class: a character followed
    // by a range hyphen and another character is a range; a hyphen with nothing after it is literal.
    let stream: Vec<Option<char>> = chunks
        .iter()
        .enumerate()
        .flat_map(|(n, chunk)| (n > 0).then_some(None).into_iter().chain(chunk.iter().map(|&c| Some(c))))
        .collect();
    let mut items: Vec<(char, char)> = Vec::new();
    let mut i = 0;
    while i < stream.len() {
        let lo = stream[i].unwrap_or('-');
        i += 1;
        if i < stream.len() && stream[i].is_none() {
            i += 1;
            match stream.get(i) {
                None => {
                    items.push((lo, lo));
                    items.push(('-', '-'));
                }
                Some(next) => {
                    let hi = next.unwrap_or('-');
                    i += 1;
                    if hi < lo {
                        // Python's `re` rejects the whole pattern ("bad character range"): match nothing.
                        return NameToken::Set { negated: false, ranges: Vec::new() };
                    }
                    items.push((lo, hi));
                }
            }
        } else {
            items.push((lo, lo));
        }
    }
    NameToken::Set { negated, ranges: items }
}

/// Whether `name` matches the `fnmatch` tokens in full (case-sensitive; `*` and `?` match any character).
fn fnmatch(tokens: &[NameToken], name: &str) -> bool {
    let chars: Vec<char> = name.chars().collect();
    // Classic wildcard matching with one backtracking point (there is only one kind of star).
    let (mut t, mut c) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while c < chars.len() {
        let step = match tokens.get(t) {
            Some(NameToken::Star) => {
                backtrack = Some((t, c));
                t += 1;
                continue;
            }
            Some(NameToken::Any) => true,
            Some(NameToken::Char(want)) => *want == chars[c],
            Some(NameToken::Set { negated, ranges }) => {
                ranges.iter().any(|&(lo, hi)| lo <= chars[c] && chars[c] <= hi) != *negated
            }
            None => false,
        };
        if step {
            t += 1;
            c += 1;
        } else if let Some((star, from)) = backtrack {
            backtrack = Some((star, from + 1));
            t = star + 1;
            c = from + 1;
        } else {
            return false;
        }
    }
    tokens[t..].iter().all(|token| *token == NameToken::Star)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unclosed_brackets_are_read_in_linear_time() {
        let pattern = "[".repeat(200_000);
        assert!(fnmatch(&fnmatch_tokens(&pattern), &pattern));
        assert!(fnmatch(&fnmatch_tokens("[[a]"), "[") && fnmatch(&fnmatch_tokens("[a]x["), "ax["));
    }

    #[test]
    fn fnmatch_names() {
        let m = |p: &str, n: &str| fnmatch(&fnmatch_tokens(p), n);
        assert!(m("*.py", "a.py"));
        assert!(m("*.py", ".hidden.py"));
        assert!(!m("*.py", "a.pyc"));
        assert!(m("[abc].txt", "b.txt"));
        assert!(!m("[abc].txt", "d.txt"));
        assert!(m("[!abc].txt", "d.txt"));
        assert!(!m("[!abc].txt", "a.txt"));
        assert!(m("[a-c]x", "bx"));
        assert!(!m("[a-c]x", "dx"));
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(m("[a-]", "-"));
        assert!(m("[-a]", "-"));
        assert!(m("[a-c-e]", "-"));
        assert!(m("[a-c-e]", "e"));
        assert!(!m("[a-c-e]", "d"));
        assert!(!m("[z-a]", "m"));
        assert!(m("[!z-a]", "m"));
        assert!(m("[", "["));
        assert!(m("a[b", "a[b"));
        assert!(m("?", "é"));
        assert!(!m("?", ""));
        assert!(m("a*b*c", "aXbYbc"));
        assert!(!m("a*b*c", "aXbYb"));
        assert!(m("[\\]", "\\"));
        assert!(m("*", ""));
        assert!(m("Ab", "Ab") && !m("Ab", "ab"));
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for file in [
            "app.py",
            ".hidden.py",
            "README.md",
            "src/main.py",
            "src/lib/util.py",
            "src/.secret/x.py",
            "src/data.json",
            "docs/a.md",
            "docs/deep/b.md",
            "docs/[x].md",
        ] {
            let path = dir.path().join(file);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(&path, "x").expect("write");
        }
        fs::create_dir_all(dir.path().join("empty.py")).expect("dir named like a file");
        dir
    }

    fn expanded(dir: &Path, pattern: &str) -> Vec<String> {
        expand(dir, pattern)
            .iter()
            .map(|p| p.strip_prefix(dir).expect("under dir").to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn expand_follows_path_glob() {
        let t = tree();
        let d = t.path();
        assert_eq!(
            expanded(d, "**/*.py"),
            [".hidden.py", "app.py", "src/.secret/x.py", "src/lib/util.py", "src/main.py"]
        );
        assert_eq!(expanded(d, "*.py"), [".hidden.py", "app.py"]);
        assert_eq!(expanded(d, "src/*"), ["src/data.json", "src/main.py"]);
        assert_eq!(expanded(d, "*/*.py"), ["src/main.py"]);
        assert_eq!(expanded(d, "docs/**/*.md"), ["docs/[x].md", "docs/a.md", "docs/deep/b.md"]);
        // `**` alone selects directories only; a trailing `/` too.
        assert!(expanded(d, "src/**").is_empty());
        assert!(expanded(d, "**").is_empty());
        assert!(expanded(d, "src/").is_empty());
        // `**/*` lists every file once.
        assert_eq!(expanded(d, "**/*").len(), 10);
        assert_eq!(expanded(d, "**/**/*.md"), ["README.md", "docs/[x].md", "docs/a.md", "docs/deep/b.md"]);
        // Character sets are real sets here (unlike Glob).
        assert_eq!(expanded(d, "docs/[ab].md"), ["docs/a.md"]);
        assert_eq!(expanded(d, "docs/[x.md"), Vec::<String>::new());
        assert_eq!(expanded(d, "./src//main.py"), ["src/main.py"]);
        assert_eq!(expanded(d, "README.md"), ["README.md"]);
        assert_eq!(expanded(d, "readme.md"), Vec::<String>::new());
        assert!(expanded(d, "missing/*.md").is_empty());
        // `**` inside a component acts like `*`.
        assert_eq!(expanded(d, "src/**.py"), ["src/main.py"]);
        for bad in ["", "/etc/*", ".", "../*", "src/../../*", "../../../../../../**/*.md"] {
            assert!(expand(d, bad).is_empty(), "{bad:?}");
        }
        assert!(expand(&d.join("nope"), "*").is_empty());
        let abs = expand(d, "app.py");
        assert!(abs[0].is_absolute());
    }

    #[cfg(unix)]
    #[test]
    fn expand_does_not_recurse_into_symlinked_dirs() {
        let t = tree();
        let d = t.path();
        std::os::unix::fs::symlink(d.join("src"), d.join("link")).expect("symlink");
        std::os::unix::fs::symlink(d.join("app.py"), d.join("alias.py")).expect("symlink");
        std::os::unix::fs::symlink(d.join("gone.py"), d.join("broken.py")).expect("symlink");
        let all = expanded(d, "**/*.py");
        assert!(!all.iter().any(|p| p.starts_with("link/")), "{all:?}");
        assert!(all.contains(&"alias.py".to_owned()));
        assert!(!all.contains(&"broken.py".to_owned()));
        // A literal or `*` component does go through the symlink, as in Python.
        assert_eq!(expanded(d, "link/main.py"), ["link/main.py"]);
        assert!(expanded(d, "*/main.py").contains(&"link/main.py".to_owned()));
    }

    #[cfg(unix)]
    #[test]
    fn expansion_work_is_bounded() {
        let t = tree();
        let d = t.path();
        // Two links back to the directory itself: `*/*/…/*` has 2^39 spellings of it before the links stop resolving.
        std::os::unix::fs::symlink(".", d.join("up1")).expect("symlink");
        std::os::unix::fs::symlink(".", d.join("up2")).expect("symlink");
        let found = expand(d, &format!("{}app.py", "*/".repeat(39)));
        assert!(!found.is_empty() && found.iter().all(|p| p.ends_with("app.py")), "{found:?}");
        // Thousands of `**` are one.
        assert_eq!(expanded(d, &format!("{}*.md", "**/".repeat(5000))), expanded(d, "**/*.md"));
    }
}
