//! The deepwork parsers under hostile input: job.yml, `.deepreview` files, DeepSchema manifests and the glob patterns
//! those files hold, fed random mutations of real examples (cairn's standard jobs and schemas, the job template and
//! the documented `.deepreview` examples), YAML alias bombs, deep nesting and very long scalars.
//!
//! Every input must be answered — parsed, or refused with an error — without a panic, a stack overflow or a hang: each
//! runs on a thread with the 2 MiB stack of the server's worker threads and must finish within [`LIMIT`] (generous:
//! it only catches hangs). Alias bombs, nesting beyond the limit and files over 1 MiB must be refused, and the error
//! must say which.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use cairn_deepwork::glob::{self, Glob};
use cairn_deepwork::{deepreview, deepschema, job};
use proptest::prelude::*;
use proptest::sample::Index;

/// The longest one input may take, four parsers and the patterns together. Generous: a document that expands to
/// 200 000 nodes takes about two seconds per parser in a debug build on a busy machine; only a hang fails this.
const LIMIT: Duration = Duration::from_secs(60);

/// The stack of a tokio worker or blocking thread, where the server parses.
const STACK: usize = 2 * 1024 * 1024;

/// The most bytes of a definition file (`MAX_DEFINITION_BYTES`).
const MAX_FILE: usize = 1024 * 1024;

/// The documents mutations start from.
fn seeds() -> Vec<&'static str> {
    let mut seeds = vec![
        include_str!("../standard_jobs/deepplan/job.yml"),
        include_str!("../standard_jobs/deepwork_jobs/job.yml"),
        include_str!("../standard_jobs/deepwork_reviews/job.yml"),
        include_str!("../standard_jobs/deepwork_jobs/templates/job.yml.example"),
        include_str!("../standard_schemas/claude_settings/deepschema.yml"),
        include_str!("../standard_schemas/deepreview/deepschema.yml"),
        include_str!("../standard_schemas/deepschema/deepschema.yml"),
        include_str!("../standard_schemas/job_yml/deepschema.yml"),
        include_str!("../standard_schemas/requirements_file/deepschema.yml"),
    ];
    for guide in [
        include_str!("../standard_jobs/deepwork_reviews/deepreview_format.md"),
        include_str!("../standard_jobs/deepwork_jobs/job_format.md"),
    ] {
        seeds.extend(guide.split("```yaml\n").skip(1).filter_map(|block| block.split("```").next()));
    }
    seeds
}

/// How each parser answered one input.
#[derive(Debug)]
struct Outcome {
    /// `parse_job` on the text (what `register_session_job` does).
    job_text: Result<(), String>,
    /// `load_job` on the text as `job.yml`.
    job_file: Result<(), String>,
    /// The text as a `.deepreview`.
    deepreview: Result<(), String>,
    /// The text as a DeepSchema manifest.
    deepschema: Result<(), String>,
}

impl Outcome {
    /// The outcomes of the three file parsers.
    fn files(&self) -> [&Result<(), String>; 3] {
        [&self.job_file, &self.deepreview, &self.deepschema]
    }
}

/// Runs `work` on a thread with a worker's stack and returns its result; fails when it panicked (or overflowed its
/// stack, which aborts the test) or did not finish within [`LIMIT`].
fn bounded<T: Send + 'static>(what: String, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let _ = sender.send(work());
        })
        .expect("spawn a parser thread");
    match receiver.recv_timeout(LIMIT) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("no answer within {LIMIT:?} for {what}"),
        Err(RecvTimeoutError::Disconnected) => panic!("the parser panicked on {what}"),
    }
}

/// A short description of an input for failure messages.
fn describe(text: &str) -> String {
    let head: String = text.chars().take(200).collect();
    format!("an input of {} bytes starting {head:?}", text.len())
}

/// Every parser on `text`, and every pattern of the rules that parse matched against a few paths and expanded over
/// a small tree.
fn parse_all(text: String) -> Outcome {
    bounded(describe(&text), move || {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path();
        let job_dir = root.join("job");
        std::fs::create_dir(&job_dir).expect("job directory");
        std::fs::write(job_dir.join("job.yml"), &text).expect("write job.yml");
        std::fs::write(root.join(".deepreview"), &text).expect("write .deepreview");
        std::fs::write(root.join("deepschema.yml"), &text).expect("write deepschema.yml");
        std::fs::create_dir_all(root.join("src/a")).expect("tree");
        std::fs::write(root.join("src/a/x.md"), "x").expect("tree");

        let job_text = job::parse_job(&text, &job_dir).map(|_| ());
        let job_file = job::load_job(&job_dir, Some(root)).map(|_| ());
        let rules = deepreview::parse_file(&root.join(".deepreview"), root);
        let schema = deepschema::parse_manifest(&root.join("deepschema.yml"), Some(root));
        let mut patterns: Vec<String> = Vec::new();
        if let Ok(rules) = &rules {
            for rule in rules {
                patterns.extend(rule.include.iter().chain(&rule.exclude).cloned());
            }
        }
        if let Ok(schema) = &schema {
            patterns.extend(schema.matchers.iter().cloned());
        }
        for pattern in &patterns {
            exercise_pattern(pattern, root);
        }
        Outcome {
            job_text,
            job_file,
            deepreview: rules.map(|_| ()),
            deepschema: schema.map(|_| ()),
        }
    })
}

/// Matches `pattern` against a few paths and expands it below `root`.
fn exercise_pattern(pattern: &str, root: &Path) {
    let glob = Glob::new(pattern);
    for path in ["src/a/x.md", "a.md", "", "src/a/b/c/d/e/f/g.py", "x\ny/z"] {
        glob.is_match(path);
    }
    let _ = glob::expand(root, pattern);
}

/// Something that changes a document.
#[derive(Debug, Clone)]
enum Mutation {
    /// Removes up to this many characters.
    Delete(Index, usize),
    /// Inserts text.
    Insert(Index, String),
    /// Copies up to this many characters to another place.
    Duplicate(Index, usize, Index),
    /// Replaces one character.
    Replace(Index, char),
    /// Cuts the document.
    Truncate(Index),
}

/// Text YAML gives a meaning to, and some it chokes on.
const SNIPPETS: &[&str] = &[
    "&a ", "*a", "&b [", "*b", "<<: *a\n", "[", "]", "{", "}", ": ", "- ", "\n", "\n  ", "    ", "\t", "'", "\"", "|\n",
    ">-\n", "# ", "!!str ", "!!binary ", "!tag ", "? ", "---\n", "...\n", "%YAML 1.2\n---\n", "\u{feff}", "\0", "é",
    "~", "null", "yes", "0o17", "0x1F", "1e999", ".nan", "-.inf", "2001-12-14", "\\", "\\u0000", "\r\n", "\r",
    "**/", "*", "?", "..", "../..", "/etc/passwd", "{file: ../x}",
];

fn snippet() -> impl Strategy<Value = String> {
    prop_oneof![3 => prop::sample::select(SNIPPETS).prop_map(str::to_owned), 1 => ".{0,16}"]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => (any::<Index>(), 1..40usize).prop_map(|(at, n)| Mutation::Delete(at, n)),
        4 => (any::<Index>(), snippet()).prop_map(|(at, text)| Mutation::Insert(at, text)),
        2 => (any::<Index>(), 1..400usize, any::<Index>()).prop_map(|(from, n, to)| Mutation::Duplicate(from, n, to)),
        2 => (any::<Index>(), prop::char::any()).prop_map(|(at, c)| Mutation::Replace(at, c)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
    ]
}

/// `seed` with `mutations` applied, in order.
fn mutate(seed: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = seed.chars().collect();
    for mutation in mutations {
        let at = |index: &Index, len: usize| if len == 0 { 0 } else { index.index(len + 1) };
        match mutation {
            Mutation::Delete(from, n) => {
                let start = at(from, chars.len());
                let end = (start + n).min(chars.len());
                chars.drain(start..end);
            }
            Mutation::Insert(place, text) => {
                let place = at(place, chars.len());
                chars.splice(place..place, text.chars());
            }
            Mutation::Duplicate(from, n, to) => {
                let start = at(from, chars.len());
                let copy: Vec<char> = chars[start..(start + n).min(chars.len())].to_vec();
                let place = at(to, chars.len());
                chars.splice(place..place, copy);
            }
            Mutation::Replace(place, c) => {
                if !chars.is_empty() {
                    let place = place.index(chars.len());
                    chars[place] = *c;
                }
            }
            Mutation::Truncate(place) => {
                let place = at(place, chars.len());
                chars.truncate(place);
            }
        }
    }
    chars.into_iter().collect()
}

/// Where a hostile fragment goes: alone, or as the value of a key the parsers look into.
fn embed(fragment: &str, place: u8) -> String {
    let indented = |prefix: &str| fragment.lines().map(|line| format!("{prefix}{line}\n")).collect::<String>();
    match place % 4 {
        0 => fragment.to_owned(),
        1 => format!("name: j\nsummary: s\nstep_arguments: []\nworkflows:\n  w:\n{}", indented("    ")),
        2 => format!("rule:\n  description: d\n  match:\n    include:\n{}", indented("      ")),
        _ => format!("requirements:\n  r: x\nmatchers:\n{}", indented("  ")),
    }
}

/// A "billion laughs" document: `levels` levels of `fanout` aliases to the level below, in sequences, mappings or
/// merge keys.
fn alias_bomb(levels: u32, fanout: usize, style: u8) -> String {
    // Merge keys need mappings to merge.
    let mut text = match style % 3 {
        2 => String::from("a0: &a0 {l0: lol, l1: lol, l2: lol, l3: lol, l4: lol, l5: lol, l6: lol, l7: lol, l8: lol}\n"),
        _ => String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"),
    };
    for level in 1..levels {
        let below = format!("*a{}", level - 1);
        let body = match style % 3 {
            0 => format!("[{}]", vec![below.as_str(); fanout].join(", ")),
            1 => format!("{{{}}}", (0..fanout).map(|i| format!("k{i}: {below}")).collect::<Vec<_>>().join(", ")),
            _ => format!("{{<<: {below}, x: [{}]}}", vec![below.as_str(); fanout].join(", ")),
        };
        text.push_str(&format!("a{level}: &a{level} {body}\n"));
    }
    text
}

/// A document `depth` levels deep, in one of several styles.
fn nested(depth: usize, style: u8) -> String {
    match style % 5 {
        0 => (0..depth).map(|i| format!("{}-\n", " ".repeat(i))).collect(),
        1 => (0..depth).map(|i| format!("{}k{i}:\n", "  ".repeat(i))).collect(),
        2 => format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
        3 => format!("{}x{}", "{a: ".repeat(depth), "}".repeat(depth)),
        _ => format!("{}x\n", "- ".repeat(depth)),
    }
}

/// A scalar of `len` characters written in one of YAML's scalar styles, as the value (or key) of a mapping.
fn long_scalar(len: usize, c: char, style: u8) -> String {
    let body: String = std::iter::repeat_n(c, len).collect();
    match style % 6 {
        0 => format!("summary: {body}\n"),
        1 => format!("summary: \"{body}\"\n"),
        2 => format!("summary: '{body}'\n"),
        3 => format!("summary: |\n  {body}\n"),
        4 => format!("summary: >\n  {body}\n"),
        _ => format!("{body}: 1\n"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Mutated real documents: every parser answers, and whatever patterns the result holds can be used.
    #[test]
    fn mutated_real_documents_are_answered(
        seed in prop::sample::select(seeds()),
        mutations in prop::collection::vec(mutation(), 0..8),
    ) {
        parse_all(mutate(seed, &mutations));
    }

    /// Arbitrary text, also with control characters and invalid YAML.
    #[test]
    fn arbitrary_text_is_answered(text in ".{0,400}") {
        parse_all(text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, failure_persistence: None, ..ProptestConfig::default() })]

    /// Alias bombs are refused — by the reader's limits on values and alias expansion — with a message naming aliases.
    #[test]
    fn alias_bombs_are_refused(levels in 2..12u32, fanout in 2..12usize, style in any::<u8>(), place in any::<u8>()) {
        let outcome = parse_all(embed(&alias_bomb(levels, fanout, style), place));
        if (fanout as f64).powi(levels as i32 - 1) * 9.0 > 1e6 {
            for result in outcome.files().into_iter().chain([&outcome.job_text]) {
                let err = result.as_ref().expect_err("an alias bomb must be refused");
                prop_assert!(err.contains("aliases (`*name`)"), "{err}");
            }
        }
    }

    /// Nesting deeper than the parser allows is refused and says so (or, for a file, that it is too large);
    /// shallower nesting is answered either way.
    #[test]
    fn deep_nesting_is_refused(depth in 1..3000usize, style in any::<u8>(), place in any::<u8>()) {
        let outcome = parse_all(embed(&nested(depth, style), place));
        if depth > 40 {
            for result in outcome.files().into_iter().chain([&outcome.job_text]) {
                let err = result.as_ref().expect_err("deep nesting must be refused");
                let said = ["levels deep", "it is too large"].iter().any(|why| err.contains(why));
                prop_assert!(said, "{err}");
            }
        }
    }

    /// Long scalars are answered; a file over the 1 MiB limit is refused as too large without being parsed.
    #[test]
    fn long_scalars_are_answered_and_large_files_refused(
        len in prop_oneof![0..5000usize, 900_000..1_300_000usize],
        c in prop::sample::select(vec!['x', 'é', ' ', '#', '\'', '"', '\\', ':']),
        style in any::<u8>(),
        place in any::<u8>(),
    ) {
        let text = embed(&long_scalar(len, c, style), place);
        let size = text.len();
        let outcome = parse_all(text);
        if size > MAX_FILE {
            let too_large = format!("it is too large: {size} bytes, over the limit of {MAX_FILE} bytes");
            for result in outcome.files() {
                let err = result.as_ref().expect_err("a file over the limit must be refused");
                prop_assert!(err.contains(&too_large), "{err}");
            }
        }
    }
}

/// Glob pattern pieces, including long runs that the matcher must not handle by recursion.
fn pattern_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec!["*", "**", "**/", "?", "/", "a", "b", "ab", ".", "é", "\n", "[", "]", "[!a]", ".."])
            .prop_map(str::to_owned),
        (prop::sample::select(vec!["*", "*a", "?", "**/", "[", "a"]), 1..1500usize).prop_map(|(p, n)| p.repeat(n)),
    ]
}

fn path_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec!["a", "b", "/", ".", "é", "\n", "ab", "["]).prop_map(str::to_owned),
        (prop::sample::select(vec!["a", "a/", "ab"]), 1..1500usize).prop_map(|(p, n)| p.repeat(n)),
    ]
}

/// DeepWork's translation of a pattern to a regular expression, the reference for matching.
fn reference(pattern: &str) -> Option<regex::Regex> {
    let mut re = String::from("^(?:");
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        let (piece, len) = if rest.starts_with("**/") {
            ("(?:.+/)?".to_owned(), 3)
        } else if rest.starts_with("**") {
            (".*".to_owned(), 2)
        } else if c == '*' {
            ("[^/]*".to_owned(), 1)
        } else if c == '?' {
            ("[^/]".to_owned(), 1)
        } else {
            (regex::escape(&c.to_string()), c.len_utf8())
        };
        re.push_str(&piece);
        rest = &rest[len..];
    }
    re.push_str(")$");
    // Very long patterns may exceed the regex crate's size limit: no reference then.
    regex::RegexBuilder::new(&re).size_limit(1 << 26).build().ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// Long and repetitive patterns against long paths: answered in bounded time, and the same answer as DeepWork's
    /// regular expression where that can be built.
    #[test]
    fn glob_patterns_are_matched_in_bounded_time(
        pattern in prop::collection::vec(pattern_piece(), 0..12).prop_map(|p| p.concat()),
        paths in prop::collection::vec(prop::collection::vec(path_piece(), 0..12).prop_map(|p| p.concat()), 1..6),
    ) {
        let what = format!("pattern {} and {} paths", describe(&pattern), paths.len());
        let (ours, theirs) = bounded(what, move || {
            let glob = Glob::new(&pattern);
            let ours: Vec<bool> = paths.iter().map(|path| glob.is_match(path)).collect();
            // The reference is checked where the regular expression engine is quick too.
            let longest = paths.iter().map(String::len).max().unwrap_or(0);
            let theirs: Option<Vec<bool>> = (pattern.len() * longest.max(1) <= 2_000_000)
                .then(|| reference(&pattern))
                .flatten()
                .map(|re| paths.iter().map(|p| re.is_match(p)).collect());
            let dir = tempfile::tempdir().expect("temporary directory");
            std::fs::create_dir_all(dir.path().join("a/b")).expect("tree");
            std::fs::write(dir.path().join("a/b/ab"), "").expect("tree");
            let found: Vec<PathBuf> = glob::expand(&dir.path().join("a"), &pattern);
            assert!(found.iter().all(|path| path.starts_with(dir.path().join("a"))), "{found:?}");
            (ours, theirs)
        });
        if let Some(theirs) = theirs {
            prop_assert_eq!(ours, theirs);
        }
    }
}
