//! `.deepreview` files: project review rules, found anywhere in the project.
//!
//! A `.deepreview` file is a YAML mapping of rule names to rules (spec §9.1). [`parse_file`] reads one file into
//! [`ReviewRule`]s: the YAML is parsed, validated against cairn's JSON Schema (`deepreview.schema.json`, draft 7),
//! `instructions: {file: …}` is read, and paths are resolved against the file's directory, which is also the
//! directory the rule's patterns are relative to. The `.deepreview` file, its instructions file and its reference
//! files must resolve inside the project (see `confined`): a file whose instructions or reference files lead out
//! of it through `..`, an absolute path or a symbolic link fails to load, like one whose instructions file is missing.
//!
//! [`DeepreviewCache::load`] finds every `.deepreview` under a project root (spec §9.2, plus: directories and files
//! that git ignores and `.deepwork/tmp` are not searched — see `project_files`) and returns all rules, deepest
//! files first, then by path, rules in file order. A file that fails to parse contributes an error instead of rules.
//! Repeated calls re-stat the known directories and files and redo only what changed, so when nothing changed they
//! neither walk the tree nor parse YAML.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

use crate::confined::{self, MAX_DEFINITION_BYTES, Refused};
use crate::job::AdditionalContext;
use crate::confined::normalize;
use crate::project_files::{Seen, TreeScan};
use crate::review_rule::{ReferenceFile, ReviewRule, Strategy};
use cairn_yaml as yaml;

/// cairn's JSON Schema for `.deepreview` files.
pub const DEEPREVIEW_SCHEMA: &str = include_str!("deepreview.schema.json");

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(DEEPREVIEW_SCHEMA).expect("deepreview.schema.json is valid JSON");
    jsonschema::draft7::new(&schema).expect("deepreview.schema.json is a valid draft-7 schema")
});

/// The file name of review rule files.
pub const FILE_NAME: &str = ".deepreview";

/// Every rule of a project, and the files that could not be read.
#[derive(Debug, Default)]
pub struct RuleSet {
    /// Rules: files deepest first, then by path; rules in file order.
    pub rules: Vec<ReviewRule>,
    /// `(file, error)` for each `.deepreview` that failed to load (its rules are left out), in the same file order.
    pub errors: Vec<(PathBuf, String)>,
}

/// Remembers `.deepreview` files and their rules per project root, so unchanged files are not read again.
#[derive(Debug, Default)]
pub struct DeepreviewCache {
    roots: Mutex<HashMap<PathBuf, RootCache>>,
}

#[derive(Debug)]
struct RootCache {
    scan: TreeScan,
    files: HashMap<PathBuf, CachedFile>,
    /// The files of the last result, in order, and the result.
    last: Option<(Vec<PathBuf>, Arc<RuleSet>)>,
}

/// One parsed `.deepreview` and what it was built from.
#[derive(Debug)]
struct CachedFile {
    seen: Seen,
    /// Other files read while parsing (instruction files), as seen before reading them.
    dependencies: Vec<(PathBuf, Seen)>,
    rules: Result<Vec<ReviewRule>, String>,
}

impl CachedFile {
    fn still_valid(&self, now: &Seen) -> bool {
        self.seen.unchanged(now) && self.dependencies.iter().all(|(path, seen)| seen.unchanged(&Seen::of(path)))
    }
}

impl DeepreviewCache {
    /// Every `.deepreview` rule under `root` (an absolute path). The same `Arc` comes back while nothing changed.
    pub fn load(&self, root: &Path) -> Arc<RuleSet> {
        let mut roots = self.roots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let cache = roots.entry(root.to_path_buf()).or_insert_with(|| RootCache {
            scan: TreeScan::new(|name| name == FILE_NAME),
            files: HashMap::new(),
            last: None,
        });
        let mut paths = cache.scan.scan(root);
        order_deepest_first(&mut paths);
        let mut changed = cache.last.as_ref().is_none_or(|(last, _)| *last != paths);
        let mut previous = std::mem::take(&mut cache.files);
        for path in &paths {
            let now = Seen::of(path);
            let entry = match previous.remove(path) {
                Some(file) if file.still_valid(&now) => file,
                _ => {
                    changed = true;
                    let mut dependencies = Vec::new();
                    let rules = parse_tracking(path, root, &mut dependencies);
                    CachedFile { seen: now, dependencies, rules }
                }
            };
            cache.files.insert(path.clone(), entry);
        }
        if !changed && let Some((_, set)) = &cache.last {
            return set.clone();
        }
        let mut set = RuleSet::default();
        for path in &paths {
            match &cache.files[path].rules {
                Ok(rules) => set.rules.extend(rules.iter().cloned()),
                Err(error) => set.errors.push((path.clone(), error.clone())),
            }
        }
        let set = Arc::new(set);
        cache.last = Some((paths, set.clone()));
        set
    }
}

/// Every `.deepreview` file under `root`, deepest first, then by path (no caching).
pub fn find_files(root: &Path) -> Vec<PathBuf> {
    let mut paths = TreeScan::new(|name| name == FILE_NAME).scan(root);
    order_deepest_first(&mut paths);
    paths
}

/// Sorts paths by number of components, most first, then by path text.
fn order_deepest_first(paths: &mut [PathBuf]) {
    paths.sort_by_cached_key(|p| (std::cmp::Reverse(p.components().count()), p.to_string_lossy().into_owned()));
}

/// Reads one `.deepreview` file of the project at `root` into rules (in file order). An empty file has no rules.
pub fn parse_file(path: &Path, root: &Path) -> Result<Vec<ReviewRule>, String> {
    parse_tracking(path, root, &mut Vec::new())
}

/// [`parse_file`], noting every other file it looks at in `dependencies`.
fn parse_tracking(
    path: &Path,
    root: &Path,
    dependencies: &mut Vec<(PathBuf, Seen)>,
) -> Result<Vec<ReviewRule>, String> {
    let p = path.display();
    let text = confined::read_text(path, Some(root), Some(MAX_DEFINITION_BYTES))
        .map_err(|err| format!("Failed to parse {p}: Failed to read YAML file {p}: {err}"))?;
    parse_text(&text, path, root, dependencies)
}

/// Raw shape of one rule (already validated by the schema).
#[derive(Deserialize)]
struct RawRule {
    description: String,
    #[serde(rename = "match")]
    matcher: RawMatch,
    review: RawReview,
}

#[derive(Deserialize)]
struct RawMatch {
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
}

#[derive(Deserialize)]
struct RawReview {
    strategy: String,
    instructions: RawInstructions,
    #[serde(default)]
    agent: IndexMap<String, String>,
    precomputed_info_for_reviewer_bash_command: Option<String>,
    #[serde(default)]
    reference_files: Vec<RawReference>,
    #[serde(default)]
    additional_context: AdditionalContext,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawInstructions {
    Text(String),
    File { file: String },
}

#[derive(Deserialize)]
struct RawReference {
    path: String,
    description: Option<String>,
}

fn parse_text(
    text: &str,
    path: &Path,
    root: &Path,
    dependencies: &mut Vec<(PathBuf, Seen)>,
) -> Result<Vec<ReviewRule>, String> {
    let p = path.display();
    let doc = yaml::parse(text).map_err(|err| format!("Failed to parse {p}: Failed to parse YAML file {p}: {err}"))?;
    if doc.value.is_null() {
        return Ok(Vec::new());
    }
    if let Some(message) = validation_error(&VALIDATOR, &doc, path) {
        return Err(format!("Schema validation failed for {p}: {message}"));
    }
    let Value::Object(map) = &doc.value else {
        unreachable!("the schema only accepts a mapping");
    };
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut rules = Vec::with_capacity(map.len());
    for (name, value) in map {
        let raw: RawRule = serde_json::from_value(value.clone())
            .map_err(|err| format!("Schema validation failed for {p}: rule '{name}': {err}"))?;
        let instructions = match raw.review.instructions {
            RawInstructions::Text(text) => text,
            RawInstructions::File { file } => {
                let file_path = normalize(&dir.join(&file));
                let seen = Seen::of(&file_path);
                dependencies.push((file_path.clone(), seen));
                match confined::read_text(&file_path, Some(root), Some(MAX_DEFINITION_BYTES)) {
                    Ok(text) => text,
                    Err(err) if err.is_not_found() => {
                        return Err(format!(
                            "Instructions file not found: {} (rule '{name}' in {p}; the path '{file}' is relative to \
                             the directory of the .deepreview file)",
                            file_path.display()
                        ));
                    }
                    Err(err) => {
                        return Err(format!(
                            "Failed to read instructions file {} (rule '{name}' in {p}): {err}",
                            file_path.display()
                        ));
                    }
                }
            }
        };
        let mut reference_files = Vec::with_capacity(raw.review.reference_files.len());
        for reference in raw.review.reference_files {
            let absolute = normalize(&dir.join(&reference.path));
            dependencies.push((absolute.clone(), Seen::of(&absolute)));
            // A missing reference is only noted where it would be inlined; one leading out of the project is an error.
            if let Err(err @ Refused::Outside { .. }) = confined::resolve(&absolute, Some(root)) {
                return Err(format!(
                    "Reference file '{}' of rule '{name}' in {p} cannot be used: {err}",
                    reference.path
                ));
            }
            reference_files.push(ReferenceFile {
                path: absolute,
                label: reference.path,
                description: reference.description,
                boundary: Some(root.to_path_buf()),
            });
        }
        rules.push(ReviewRule {
            name: name.clone(),
            description: raw.description,
            include: raw.matcher.include,
            exclude: raw.matcher.exclude,
            strategy: Strategy::parse(&raw.review.strategy).expect("the schema only accepts known strategies"),
            instructions,
            agent: raw.review.agent,
            all_changed_filenames: raw.review.additional_context.all_changed_filenames,
            unchanged_matching_files: raw.review.additional_context.unchanged_matching_files,
            reference_files,
            precompute_command: raw.review.precomputed_info_for_reviewer_bash_command,
            rule_dir: dir.to_path_buf(),
            source_file: path.to_path_buf(),
            source_line: rule_line(text, name, &doc),
        });
    }
    Ok(rules)
}

/// 1-based line of the top-level key `name`: the last unindented line `name:` (plain or quoted key), else the line
/// where its value starts, else 1.
fn rule_line(text: &str, name: &str, doc: &yaml::Document) -> usize {
    let mut found = None;
    for (index, line) in text.lines().enumerate() {
        if top_level_key(line) == Some(name) {
            found = Some(index + 1);
        }
    }
    found
        .or_else(|| {
            let pointer = format!("/{}", name.replace('~', "~0").replace('/', "~1"));
            doc.position(&pointer).map(|(line, _)| line as usize)
        })
        .unwrap_or(1)
}

/// The key of an unindented `key:` line.
fn top_level_key(line: &str) -> Option<&str> {
    let (key, rest) = match line.chars().next()? {
        quote @ ('"' | '\'') => {
            let end = line[1..].find(quote)? + 1;
            (&line[1..end], &line[end + 1..])
        }
        _ => {
            let end = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))?;
            (&line[..end], &line[end..])
        }
    };
    (!key.is_empty() && rest.trim_start().starts_with(':')).then_some(key)
}

/// The most relevant schema violation of a document (the one nearest its top), as
/// `Validation error at <a -> b>: <message> (<file>:<line>:<column>)`.
pub(crate) fn validation_error(validator: &jsonschema::Validator, doc: &yaml::Document, path: &Path) -> Option<String> {
    let error = validator.iter_errors(&doc.value).min_by_key(|e| e.instance_path().iter().count())?;
    let pointer = error.instance_path().as_str().to_owned();
    let segments: Vec<String> = pointer.split('/').skip(1).map(|s| s.replace("~1", "/").replace("~0", "~")).collect();
    let at = if segments.is_empty() { "root".to_owned() } else { segments.join(" -> ") };
    let location = match doc.position(&pointer) {
        Some((line, column)) => format!(" ({}:{line}:{column})", path.display()),
        None => format!(" ({})", path.display()),
    };
    Some(format!("Validation error at {at}: {error}{location}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project_files::tests::age;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const FULL: &str = "\
# Project review rules

python_style:
  description: Python code follows the style guide.
  match:
    include: [\"**/*.py\"]
    exclude: [\"vendor/**\"]
  review:
    strategy: individual
    instructions:
      file: guides/python.md
    agent:
      claude: python-reviewer
    precomputed_info_for_reviewer_bash_command: scripts/context.sh
    reference_files:
      - path: ../docs/style.md
        description: The style guide.
      - path: notes.txt
    additional_context:
      all_changed_filenames: true

\"docs\":
  # comment before the first key
  description: Docs are current.
  match: {include: [\"*.md\"]}
  review: {strategy: matches_together, instructions: Check the docs., additional_context: {unchanged_matching_files: true}}
";

    #[test]
    fn parses_every_field() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        write(&src.join("guides/python.md"), "Check PEP 8.\n");
        let path = src.join(".deepreview");
        write(&path, FULL);
        let rules = parse_file(&path, dir.path()).unwrap();
        assert_eq!(rules.len(), 2);
        let python = &rules[0];
        assert_eq!(python.name, "python_style");
        assert_eq!(python.source_line, 3);
        assert_eq!(python.include, ["**/*.py"]);
        assert_eq!(python.exclude, ["vendor/**"]);
        assert_eq!(python.strategy, Strategy::Individual);
        assert_eq!(python.instructions, "Check PEP 8.\n");
        assert_eq!(python.agent["claude"], "python-reviewer");
        assert_eq!(python.precompute_command.as_deref(), Some("scripts/context.sh"));
        assert!(python.all_changed_filenames && !python.unchanged_matching_files);
        assert_eq!(
            python.reference_files,
            [
                ReferenceFile {
                    path: dir.path().join("docs/style.md"),
                    label: "../docs/style.md".into(),
                    description: Some("The style guide.".into()),
                    boundary: Some(dir.path().to_path_buf()),
                },
                ReferenceFile {
                    path: src.join("notes.txt"),
                    label: "notes.txt".into(),
                    description: None,
                    boundary: Some(dir.path().to_path_buf()),
                },
            ]
        );
        assert_eq!(python.rule_dir, src);
        assert_eq!(python.source_file, path);
        let docs = &rules[1];
        assert_eq!((docs.name.as_str(), docs.source_line), ("docs", 22));
        assert_eq!(docs.strategy, Strategy::MatchesTogether);
        assert_eq!(docs.instructions, "Check the docs.");
        assert!(docs.unchanged_matching_files && docs.exclude.is_empty() && docs.precompute_command.is_none());
    }

    #[test]
    fn empty_files_have_no_rules() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".deepreview");
        for text in ["", "# nothing yet\n", "null\n", "{}\n"] {
            write(&path, text);
            assert!(parse_file(&path, dir.path()).unwrap().is_empty(), "{text:?}");
        }
    }

    #[test]
    fn reports_yaml_schema_and_instruction_file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".deepreview");
        let p = path.display().to_string();
        let check = |text: &str| {
            write(&path, text);
            parse_file(&path, dir.path()).unwrap_err()
        };
        let err = check("a: [\n");
        assert!(err.starts_with(&format!("Failed to parse {p}: Failed to parse YAML file {p}: ")), "{err}");
        let err = check(
            "good:\n  description: d\n  match: {include: [x]}\n  review: {strategy: individual, instructions: i}\nbad_rule:\n  description: d\n  review: {strategy: individual, instructions: i}\n",
        );
        assert!(err.starts_with(&format!("Schema validation failed for {p}: Validation error at bad_rule: ")), "{err}");
        assert!(err.contains("\"match\" is a required property") && err.ends_with(&format!("({p}:6:3)")), "{err}");
        let err = check(
            "bad name:\n  description: d\n  match: {include: [x]}\n  review: {strategy: individual, instructions: i}\n",
        );
        assert!(err.starts_with(&format!("Schema validation failed for {p}: Validation error at root: ")), "{err}");
        let err = check("- a\n");
        assert!(err.starts_with(&format!("Schema validation failed for {p}: Validation error at root: ")), "{err}");
        let err =
            check("r:\n  description: d\n  match: {include: []}\n  review: {strategy: individual, instructions: i}\n");
        assert!(err.contains("Validation error at r -> match -> include: "), "{err}");
        let err =
            check("r:\n  description: d\n  match: {include: [x]}\n  review: {strategy: sometimes, instructions: i}\n");
        assert!(err.contains("Validation error at r -> review -> strategy: "), "{err}");
        let err = check(
            "r:\n  description: d\n  match: {include: [x]}\n  review: {strategy: individual, instructions: {file: missing.md}}\n",
        );
        let missing = dir.path().join("missing.md");
        assert!(err.starts_with(&format!("Instructions file not found: {}", missing.display())), "{err}");
    }

    #[test]
    fn instructions_files_over_the_limit_are_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".deepreview");
        write(&path, &RULE.replace("i.md", "big.md"));
        std::fs::File::create(dir.path().join("big.md")).unwrap().set_len(MAX_DEFINITION_BYTES + 1).unwrap();
        let err = parse_file(&path, dir.path()).unwrap_err();
        let big = dir.path().join("big.md");
        assert_eq!(
            err,
            format!(
                "Failed to read instructions file {} (rule 'r' in {}): it is too large: 1048577 bytes, over the limit \
                 of 1048576 bytes",
                big.display(),
                path.display()
            )
        );
    }

    #[test]
    fn finds_files_deepest_first_then_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for path in ["", "b/", "a/", "a/x/", "b/y/", ".deepwork/jobs/j/", "node_modules/m/", "out/", ".deepwork/tmp/"] {
            write(&root.join(path).join(".deepreview"), "");
        }
        write(&root.join(".gitignore"), "out/\n");
        let found: Vec<String> =
            find_files(root).iter().map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(
            found,
            [
                ".deepwork/jobs/j/.deepreview",
                "a/x/.deepreview",
                "b/y/.deepreview",
                "a/.deepreview",
                "b/.deepreview",
                ".deepreview"
            ]
        );
    }

    const RULE: &str =
        "r:\n  description: d\n  match: {include: [x]}\n  review: {strategy: individual, instructions: {file: i.md}}\n";

    #[test]
    fn cache_reuses_results_until_something_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join(".deepreview"), RULE);
        write(&root.join("i.md"), "first");
        write(&root.join("sub/.deepreview"), "broken: [\n");
        age(root);
        let cache = DeepreviewCache::default();
        let first = cache.load(root);
        assert_eq!(first.rules.len(), 1);
        assert_eq!(first.errors.len(), 1);
        assert_eq!(first.errors[0].0, root.join("sub/.deepreview"));
        assert!(Arc::ptr_eq(&first, &cache.load(root)));

        // An instruction file changes.
        write(&root.join("i.md"), "second");
        let second = cache.load(root);
        assert_eq!(second.rules[0].instructions, "second");
        age(root);
        let second = cache.load(root);
        assert!(Arc::ptr_eq(&second, &cache.load(root)));

        // A new file in a new directory, and a fixed file.
        write(&root.join("sub/deeper/.deepreview"), &RULE.replace("r:", "deep:").replace("{file: i.md}", "inline"));
        write(&root.join("sub/.deepreview"), "");
        let third = cache.load(root);
        let names: Vec<&str> = third.rules.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["deep", "r"]);
        assert!(third.errors.is_empty());
        assert_eq!(third.rules[0].rule_dir, root.join("sub/deeper"));

        // A removed file.
        std::fs::remove_file(root.join("sub/deeper/.deepreview")).unwrap();
        assert_eq!(cache.load(root).rules.len(), 1);
    }
}
