//! DeepWork's glob patterns: matching `.deepreview` include/exclude patterns, DeepSchema matchers and dynamic rule
//! patterns against relative paths (spec §9.4), expanding a pattern over a directory the way Python's
//! `pathlib.Path.glob` does (for "unchanged matching files", spec §9.6), and recognising catch-all rules.
//!
//! **Matching** ([`Glob`]) follows DeepWork's translation to an anchored, case-sensitive regular expression, read left
//! to right: `**/` is `(?:.+/)?` (zero or more leading directories), `**` not followed by `/` is `.*` (crosses `/`),
//! `*` is `[^/]*`, `?` is `[^/]`, and every other character is literal — `[abc]` and `{a,b}` are *not* special. As in
//! Python's `re`, `.` does not match a newline. Instead of a regex engine the pattern is compiled once into a short
//! token list: a literal prefix and suffix are compared directly and the common middles (`*`, `**`, `**/`, `**/*`)
//! have dedicated checks, so a match costs a few nanoseconds; anything else uses an exact matcher by dynamic
//! programming, without recursion, in time bounded by the pattern's size times the path's.
//!
//! **Expansion** ([`expand`]) is a different language: Python 3.11's `Path.glob`, where the pattern is split into
//! `/`-separated components, a component that is exactly `**` means "this directory and every directory below it"
//! (not descending into symlinked directories), and other components are `fnmatch` patterns matched against one
//! name (`*`, `?`, and `[...]` / `[!...]` character sets; hidden names are matched too).

use std::fs;
use std::path::{Path, PathBuf};

/// A compiled DeepWork glob pattern (spec §9.4). Build it once and keep it: [`Glob::is_match`] is cheap.
#[derive(Debug, Clone)]
pub struct Glob {
    pattern: String,
    /// Literal text every match starts with.
    prefix: String,
    /// Literal text every match ends with (never overlapping `prefix` in the pattern).
    suffix: String,
    /// What has to match between `prefix` and `suffix`.
    middle: Middle,
}

/// The part of a pattern between its literal prefix and suffix.
#[derive(Debug, Clone)]
enum Middle {
    /// Nothing: the pattern is a plain literal.
    Empty,
    /// `*`: anything without `/`.
    Star,
    /// `**` (not followed by `/`): anything without a newline.
    AnyNoNewline,
    /// `**/`: empty, or at least one non-newline character followed by `/`.
    Dirs,
    /// `**/*`: an optional `<dirs>/` part then a last component.
    DirsThenStar,
    /// Only `*`, `?` and literals without `/`: one path component matched by [`match_name`].
    Name(Vec<Token>),
    /// `**/` then a [`Middle::Name`]: an optional `<dirs>/` part then a last component matched by [`match_name`].
    DirsThenName(Vec<Token>),
    /// Anything else, matched by [`match_tokens`].
    General(Vec<Token>),
}

/// One element of a translated pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// Literal text.
    Lit(String),
    /// `?`: one character other than `/`.
    One,
    /// `*`: any run of characters other than `/`.
    Star,
    /// `**` not followed by `/`: any run of characters other than a newline.
    AnyRun,
    /// `**/`: empty, or one or more non-newline characters followed by `/`.
    Dirs,
}

impl Glob {
    /// Compiles `pattern`. Never fails: every character is either one of the wildcards or a literal.
    pub fn new(pattern: &str) -> Glob {
        let mut tokens = tokenize(pattern);
        let prefix = match tokens.first() {
            Some(Token::Lit(text)) => {
                let text = text.clone();
                tokens.remove(0);
                text
            }
            _ => String::new(),
        };
        let suffix = match tokens.last() {
            Some(Token::Lit(text)) => {
                let text = text.clone();
                tokens.pop();
                text
            }
            _ => String::new(),
        };
        let middle = match tokens.as_slice() {
            [] => Middle::Empty,
            [Token::Star] => Middle::Star,
            [Token::AnyRun] => Middle::AnyNoNewline,
            [Token::Dirs] => Middle::Dirs,
            [Token::Dirs, Token::Star] => Middle::DirsThenStar,
            _ if is_name(&tokens) => Middle::Name(tokens),
            [Token::Dirs, rest @ ..] if is_name(rest) => Middle::DirsThenName(rest.to_vec()),
            _ => Middle::General(tokens),
        };
        Glob { pattern: pattern.to_owned(), prefix, suffix, middle }
    }

    /// Whether `path` (relative, `/`-separated) matches the whole pattern, case-sensitively.
    pub fn is_match(&self, path: &str) -> bool {
        let (bytes, prefix, suffix) = (path.as_bytes(), self.prefix.as_bytes(), self.suffix.as_bytes());
        // (Empty prefixes and suffixes are skipped explicitly: comparing empty slices still calls `memcmp`.)
        if bytes.len() < prefix.len() + suffix.len()
            || (!suffix.is_empty() && !bytes.ends_with(suffix))
            || (!prefix.is_empty() && !bytes.starts_with(prefix))
        {
            return false;
        }
        // Both cuts fall on character boundaries: the prefix and suffix are whole strings.
        let middle = &path[self.prefix.len()..path.len() - self.suffix.len()];
        match &self.middle {
            Middle::Empty => middle.is_empty(),
            Middle::Star => !middle.contains('/'),
            Middle::AnyNoNewline => !middle.contains('\n'),
            Middle::Dirs => dirs_match(middle),
            Middle::DirsThenStar => match middle.rfind('/') {
                None => true,
                Some(slash) => dirs_match(&middle[..=slash]),
            },
            Middle::Name(tokens) => !middle.contains('/') && match_name(tokens, middle),
            Middle::DirsThenName(tokens) => match middle.rfind('/') {
                None => match_name(tokens, middle),
                Some(slash) => match_name(tokens, &middle[slash + 1..]) && dirs_match(&middle[..=slash]),
            },
            Middle::General(tokens) => match_tokens(tokens, middle),
        }
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }
}

/// Whether `text` matches `(?:.+/)?` in full: empty, or non-newline characters (at least one) then a final `/`.
fn dirs_match(text: &str) -> bool {
    text.is_empty() || (text.len() >= 2 && text.ends_with('/') && !text[..text.len() - 1].contains('\n'))
}

/// Whether `tokens` can only match within one path component: literals without `/`, `?` and `*`.
fn is_name(tokens: &[Token]) -> bool {
    tokens.iter().all(|token| match token {
        Token::Lit(text) => !text.contains('/'),
        Token::One | Token::Star => true,
        Token::AnyRun | Token::Dirs => false,
    })
}

/// Matches one path component (no `/` in `name`) against literals, `?` and `*` — plain wildcard matching, so the
/// classic algorithm that only backtracks to the latest `*` is exact and allocation-free.
fn match_name(tokens: &[Token], name: &str) -> bool {
    let (mut t, mut pos) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    loop {
        let advanced = match tokens.get(t) {
            Some(Token::Star) => {
                backtrack = Some((t, pos));
                t += 1;
                continue;
            }
            Some(Token::Lit(lit)) if name[pos..].starts_with(lit.as_str()) => Some(pos + lit.len()),
            Some(Token::One) => name[pos..].chars().next().map(|c| pos + c.len_utf8()),
            None if pos == name.len() => return true,
            _ => None,
        };
        if let Some(next) = advanced {
            t += 1;
            pos = next;
            continue;
        }
        // Let the latest `*` swallow one more character and retry after it.
        let Some((star, from)) = backtrack else {
            return false;
        };
        let Some(c) = name[from..].chars().next() else {
            return false;
        };
        backtrack = Some((star, from + c.len_utf8()));
        t = star + 1;
        pos = from + c.len_utf8();
    }
}

/// Translates a pattern into tokens, left to right (`**/` before `**` before `*`), merging adjacent literals.
fn tokenize(pattern: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut literal = String::new();
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        let (token, len) = if rest.starts_with("**/") {
            (Some(Token::Dirs), 3)
        } else if rest.starts_with("**") {
            (Some(Token::AnyRun), 2)
        } else if c == '*' {
            (Some(Token::Star), 1)
        } else if c == '?' {
            (Some(Token::One), 1)
        } else {
            literal.push(c);
            (None, c.len_utf8())
        };
        if let Some(token) = token {
            if !literal.is_empty() {
                tokens.push(Token::Lit(std::mem::take(&mut literal)));
            }
            tokens.push(token);
        }
        rest = &rest[len..];
    }
    if !literal.is_empty() {
        tokens.push(Token::Lit(literal));
    }
    merge_wildcards(tokens)
}

/// Merges neighbouring wildcards that together mean what one of them means: `**` (or `**/`) beside `**` is `**`, and
/// `**/` beside `**/` is `**/` (each matches only text without a newline). `*` may match a newline, so it is kept.
/// A pattern then has at most two wildcards in a row, so its length is bounded by its literal parts.
fn merge_wildcards(tokens: Vec<Token>) -> Vec<Token> {
    let mut merged: Vec<Token> = Vec::with_capacity(tokens.len());
    for token in tokens {
        match (merged.last_mut(), &token) {
            (Some(last @ (Token::AnyRun | Token::Dirs)), Token::AnyRun) => *last = Token::AnyRun,
            (Some(Token::AnyRun), Token::Dirs) | (Some(Token::Dirs), Token::Dirs) => {}
            _ => merged.push(token),
        }
    }
    merged
}

/// Exact matcher for any token list, by dynamic programming over byte positions: after each token, `reach[p]` says
/// whether the tokens so far can match `text[..p]`. Time O(tokens × text) and memory O(text), without recursion, so
/// no pattern can exhaust the stack or the memory; a text shorter than the pattern's literal parts is refused at once.
fn match_tokens(tokens: &[Token], text: &str) -> bool {
    let min_len: usize = tokens
        .iter()
        .map(|token| match token {
            Token::Lit(lit) => lit.len(),
            Token::One => 1,
            Token::Star | Token::AnyRun | Token::Dirs => 0,
        })
        .sum();
    if text.len() < min_len {
        return false;
    }
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut reach = vec![false; n + 1];
    let mut next = vec![false; n + 1];
    reach[0] = true;
    for token in tokens {
        next.fill(false);
        match token {
            Token::Lit(lit) => {
                for p in (0..=n).filter(|&p| reach[p]) {
                    if bytes[p..].starts_with(lit.as_bytes()) {
                        next[p + lit.len()] = true;
                    }
                }
            }
            Token::One => {
                for p in (0..n).filter(|&p| reach[p]) {
                    // `reach` only holds character boundaries.
                    if let Some(c) = text[p..].chars().next().filter(|&c| c != '/') {
                        next[p + c.len_utf8()] = true;
                    }
                }
            }
            Token::Star | Token::AnyRun => {
                // From every reached position up to (and including) the next stop character.
                let stop = if *token == Token::Star { b'/' } else { b'\n' };
                let mut open = false;
                for q in 0..=n {
                    open |= reach[q];
                    if open && text.is_char_boundary(q) {
                        next[q] = true;
                    }
                    if q < n && bytes[q] == stop {
                        open = false;
                    }
                }
            }
            Token::Dirs => {
                // Empty, or `.+/`: at least one character after a reached position, no newline, ending in `/`.
                next.copy_from_slice(&reach);
                let mut earliest: Option<usize> = None;
                for q in 0..n {
                    if reach[q] && earliest.is_none() {
                        earliest = Some(q);
                    }
                    if bytes[q] == b'\n' {
                        earliest = None;
                    } else if bytes[q] == b'/' && earliest.is_some_and(|p| p < q) {
                        next[q + 1] = true;
                    }
                }
            }
        }
        std::mem::swap(&mut reach, &mut next);
        if !reach.contains(&true) {
            return false;
        }
    }
    reach[n]
}

/// A "catch-all" rule (spec §9.6): every include pattern is non-empty and made only of `*` and `/` (`*`, `**`,
/// `**/*`, `*/**`, ...). An empty list is not a catch-all (it matches nothing anyway).
pub fn is_catch_all(patterns: &[String]) -> bool {
    !patterns.is_empty() && patterns.iter().all(|p| !p.is_empty() && p.chars().all(|c| c == '*' || c == '/'))
}

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
    use regex::Regex;

    /// The spec's translation, literally, as a regex — the reference the fast matcher is checked against.
    fn reference_regex(pattern: &str) -> Regex {
        let mut re = String::from("^");
        let mut rest = pattern;
        while let Some(c) = rest.chars().next() {
            if rest.starts_with("**/") {
                re.push_str("(?:.+/)?");
                rest = &rest[3..];
            } else if rest.starts_with("**") {
                re.push_str(".*");
                rest = &rest[2..];
            } else {
                match c {
                    '*' => re.push_str("[^/]*"),
                    '?' => re.push_str("[^/]"),
                    _ => re.push_str(&regex::escape(&c.to_string())),
                }
                rest = &rest[c.len_utf8()..];
            }
        }
        re.push('$');
        Regex::new(&re).expect("valid reference regex")
    }

    #[test]
    fn spec_examples() {
        let py = Glob::new("**/*.py");
        assert!(py.is_match("app.py"));
        assert!(py.is_match("a/b/app.py"));
        assert!(!py.is_match("app.pyc"));
        assert!(!Glob::new("reports/*.md").is_match("reports/x/y.md"));
        assert!(Glob::new("reports/*.md").is_match("reports/y.md"));
        let src = Glob::new("src/**");
        assert!(src.is_match("src/a/b"));
        assert!(!src.is_match("src"));
        assert_eq!(src.pattern(), "src/**");
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str, bool)] = &[
            ("*.md", "README.md", true),
            ("*.md", "docs/README.md", false),
            ("*.md", ".md", true),
            ("docs/**/*.md", "docs/a.md", true),
            ("docs/**/*.md", "docs/x/y/a.md", true),
            ("docs/**/*.md", "docs.md", false),
            ("docs/**/*.md", "other/docs/a.md", false),
            ("**", "", true),
            ("**", "a/b/c", true),
            ("*", "", true),
            ("*", "a/b", false),
            ("**/*", "a/b/c", true),
            ("**/", "", true),
            ("**/", "a/", true),
            ("**/", "/", false),
            ("**/x", "/x", false),
            ("**/x", "a//x", true),
            ("a?c", "abc", true),
            ("a?c", "a/c", false),
            ("a?c", "ac", false),
            ("a?c", "aéc", true),
            ("[abc].txt", "[abc].txt", true),
            ("[abc].txt", "a.txt", false),
            ("{a,b}.txt", "{a,b}.txt", true),
            ("{a,b}.txt", "a.txt", false),
            ("a.b", "axb", false),
            ("a+b(c)", "a+b(c)", true),
            ("File.MD", "file.md", false),
            ("", "", true),
            ("", "a", false),
            ("a**b", "a/x/b", true),
            ("a**b", "ab", true),
            ("***", "a/b", true),
            ("*/**", "a", false),
            ("*/**", "a/", true),
            ("*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
            ("**/**/x", "x", true),
            ("**/**/x", "a/b/c/x", true),
            ("**/*.py", "a\nb/c.py", false),
            ("**", "a\nb", false),
            ("*", "a\nb", true),
            ("ab*ba", "aba", false),
            ("ab*ba", "abba", true),
            ("**/test_*.py", "test_.py", true),
            ("**/test_*.py", "a/b/test_x.py", true),
            ("**/test_*.py", "a/xtest_x.py", false),
            ("**/test_*.py", "test_a/b.py", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "abc", true),
            ("a*b*c", "a/b/c", false),
            ("x?y*", "xéy", true),
            ("docs/**/*.md", "docs/a/b.md", true),
            ("src/**/mod.rs", "src/mod.rs", true),
            ("src/**/mod.rs", "src/a/mod.rs", true),
            ("src/**/mod.rs", "src/amod.rs", false),
            ("a/**/b/**/c", "a/b/c", true),
            ("a/**/b/**/c", "a/x/b/y/z/c", true),
            ("a/**/b/**/c", "a/x/c", false),
        ];
        for &(pattern, path, expected) in cases {
            assert_eq!(Glob::new(pattern).is_match(path), expected, "pattern {pattern:?} vs path {path:?}");
            assert_eq!(reference_regex(pattern).is_match(path), expected, "reference: {pattern:?} vs {path:?}");
        }
    }

    /// A tiny deterministic xorshift generator, so the property test needs no extra crate and never flakes.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }
        fn string(&mut self, pieces: &[&str], max: u64) -> String {
            let n = self.next() % (max + 1);
            (0..n).map(|_| self.pick(pieces)).collect()
        }
    }

    #[test]
    fn matches_the_reference_regex_on_random_inputs() {
        let pattern_pieces = ["*", "**", "**/", "?", "/", "a", "b", "ab", ".", "é", "\n", "[", "]"];
        let path_pieces = ["a", "b", "/", ".", "é", "\n", "ab", "[", "]"];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..5000 {
            let pattern = rng.string(&pattern_pieces, 6);
            let glob = Glob::new(&pattern);
            let reference = reference_regex(&pattern);
            for _ in 0..40 {
                let path = rng.string(&path_pieces, 8);
                assert_eq!(glob.is_match(&path), reference.is_match(&path), "pattern {pattern:?} vs path {path:?}");
            }
        }
    }

    #[test]
    fn agrees_with_the_reference_on_a_realistic_workload() {
        let patterns = ["**/*.py", "src/**", "docs/**/*.md", "*.toml", "**/test_*.py", "src/**/*.rs", "**/*", "a/*/b"];
        let files: Vec<String> = (0..2000)
            .map(|i| {
                format!("{}/sub{}/test_file{i}.{}", ["src", "docs", "a"][i % 3], i % 13, ["py", "md", "rs"][i % 3])
            })
            .chain(["Cargo.toml", "a/x/b", "docs/x.md"].map(String::from))
            .collect();
        for pattern in patterns {
            let (glob, reference) = (Glob::new(pattern), reference_regex(pattern));
            let ours: Vec<&String> = files.iter().filter(|f| glob.is_match(f)).collect();
            let theirs: Vec<&String> = files.iter().filter(|f| reference.is_match(f)).collect();
            assert_eq!(ours, theirs, "{pattern}");
        }
    }

    #[test]
    fn long_patterns_need_neither_deep_recursion_nor_a_table_of_pattern_times_path() {
        // One token per `*` and per `a`: the old matcher recursed once per token and kept a byte per (token, position).
        let pattern = "*a".repeat(6000);
        let glob = Glob::new(&format!("x/{pattern}?"));
        assert!(glob.is_match(&format!("x/{}b", "a".repeat(6000))));
        assert!(!glob.is_match(&format!("x/{}b", "a".repeat(5999))));
        // A million stars are one wildcard.
        let stars = Glob::new(&format!("a{}b", "*".repeat(1_000_000)));
        assert!(stars.is_match("a/x/y/b") && !stars.is_match("a/x\ny/b"));
        // Far longer than the path: refused before any work.
        assert!(!Glob::new(&"?*".repeat(500_000)).is_match("short/path"));
    }

    #[test]
    fn wildcards_are_merged_only_where_the_meaning_stays() {
        assert_eq!(tokenize("****"), [Token::AnyRun]);
        assert_eq!(tokenize("**/**"), [Token::AnyRun]);
        assert_eq!(tokenize("**/**/"), [Token::Dirs]);
        assert_eq!(tokenize("*****"), [Token::AnyRun, Token::Star]);
        // `*` matches a newline, `**` does not.
        assert!(Glob::new("a*****b").is_match("a\nb") && !Glob::new("a****b").is_match("a\nb"));
    }

    #[test]
    fn catch_all() {
        let s = |v: &[&str]| v.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
        assert!(is_catch_all(&s(&["*"])));
        assert!(is_catch_all(&s(&["**", "**/*", "*/**"])));
        assert!(!is_catch_all(&s(&["**/*.py"])));
        assert!(!is_catch_all(&s(&["**", "src/**"])));
        assert!(!is_catch_all(&s(&["**", ""])));
        assert!(!is_catch_all(&[]));
    }

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
