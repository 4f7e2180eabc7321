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
//! **Expansion** ([`expand`], in `glob/expand.rs`) is a different language: Python 3.11's `Path.glob`, where the
//! pattern is split into `/`-separated components, a component that is exactly `**` means "this directory and every
//! directory below it" (not descending into symlinked directories), and other components are `fnmatch` patterns
//! matched against one name (`*`, `?`, and `[...]` / `[!...]` character sets; hidden names are matched too).

mod expand;

pub use expand::{MAX_EXPANSION_STEPS, expand};

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
}
