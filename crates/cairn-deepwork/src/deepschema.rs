//! DeepSchemas: what a kind of file must look like, turned into review rules (spec §10).
//!
//! A **named** schema is `<folder>/<name>/deepschema.yml`; the folders are searched in priority order
//! ([`schema_folders`]: the project's `.deepwork/schemas`, cairn's standard schemas, then each folder of
//! `DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS`), subdirectories in name order, and the first schema of a name wins. Its
//! `matchers` (glob patterns relative to the project root) select the files it governs. An **anonymous** schema is a
//! file `.deepschema.<file>.yml` anywhere in the project (found like `.deepreview` files) and governs the file
//! `<file>` beside it.
//!
//! A manifest found inside the project, and every file it names (`json_schema_path`, `examples`, `references`), must
//! resolve inside the project (see `confined`): a manifest leading out is reported as failing to parse, a file
//! entry leading out is reported and left out (the schema keeps the rest). A directory, a FIFO or a link to a device
//! named `deepschema.yml` (or `.deepschema.<file>.yml`) is reported like any broken manifest.
//!
//! Manifests are validated against cairn's JSON Schema (`deepschema.schema.json`, draft 7). A schema may extend named
//! schemas (`parent_deep_schemas`): it inherits their requirements (its own win), verification commands (parents'
//! first) and JSON Schema (its own, else the first parent's). Each schema with requirements becomes an `individual`
//! [`ReviewRule`] whose instructions start with the literal placeholder `{file_path}` (the task builder substitutes the
//! file under review), followed by the requirements; its references and JSON Schema are inlined as reference files.
//!
//! Unlike DeepWork 0.14.0, an anonymous schema in a subdirectory works: its rule lives in the schema's directory
//! (`rule_dir`) and includes the governed file's name, so it matches exactly that file.
//!
//! [`DeepschemaCache::load`] keeps parsed manifests and the last result per project root, and rebuilds only when a
//! manifest, a schema folder or a referenced file changed.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deepreview::validation_error;
use crate::confined::{self, MAX_DEFINITION_BYTES, boundary_for};
use crate::confined::normalize;
use crate::project_files::{Seen, TreeScan};
use crate::review_rule::{ReferenceFile, ReviewRule, Strategy};
use cairn_yaml as yaml;

/// cairn's JSON Schema for DeepSchema manifests.
pub const DEEPSCHEMA_SCHEMA: &str = include_str!("deepschema.schema.json");

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(DEEPSCHEMA_SCHEMA).expect("deepschema.schema.json is valid JSON");
    jsonschema::draft7::new(&schema).expect("deepschema.schema.json is a valid draft-7 schema")
});

/// File name of a named schema's manifest.
pub const MANIFEST_NAME: &str = "deepschema.yml";

/// What the reviewer is told before the requirements list.
const REQUIREMENTS_PREAMBLE: &str = "Review the file against each requirement below. A requirement stated with MUST, \
MUST NOT, SHALL or REQUIRED that is not met fails the review. A SHOULD requirement that is not met fails the review \
when meeting it would have been easy; otherwise mention it as feedback. Give feedback on anything else that applies \
without failing the review, and skip requirements that do not apply to this file.";

/// The folders searched for named schemas, in priority order.
pub fn schema_folders(root: &Path, standard_schemas: &Path, additional: &[PathBuf]) -> Vec<PathBuf> {
    let mut folders = vec![root.join(".deepwork").join("schemas"), standard_schemas.to_path_buf()];
    folders.extend(additional.iter().cloned());
    folders
}

/// The governed file's name for an anonymous schema file name (`.deepschema.settings.yml.yml` → `settings.yml`).
pub fn anonymous_target(file_name: &str) -> Option<&str> {
    let target = file_name.strip_prefix(".deepschema.")?.strip_suffix(".yml")?;
    (!target.is_empty()).then_some(target)
}

/// A DeepSchema manifest as written.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SchemaManifest {
    /// One line saying what kind of file this is.
    pub summary: Option<String>,
    /// How to write and change files of this kind.
    pub instructions: Option<String>,
    /// Requirement name → statement (RFC 2119 keywords), in file order.
    #[serde(default)]
    pub requirements: IndexMap<String, String>,
    /// Named schemas this one extends.
    #[serde(default)]
    pub parent_deep_schemas: Vec<String>,
    /// A JSON Schema governed files must satisfy, relative to the manifest's directory.
    pub json_schema_path: Option<String>,
    /// Commands that check a governed file (`bash -c <command> -- <file>`).
    #[serde(default)]
    pub verification_bash_command: Vec<String>,
    /// Example files, relative to the manifest's directory.
    #[serde(default)]
    pub examples: Vec<FileRef>,
    /// Documents for the reviewer, relative to the manifest's directory, or http(s) links.
    #[serde(default)]
    pub references: Vec<FileRef>,
    /// Glob patterns relative to the project root selecting the governed files (named schemas).
    #[serde(default)]
    pub matchers: Vec<String>,
}

/// A file (or link) named by a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FileRef {
    /// As written.
    pub path: String,
    /// What it is.
    pub description: String,
}

impl FileRef {
    fn is_link(&self) -> bool {
        self.path.starts_with("http://") || self.path.starts_with("https://")
    }
}

/// Reads one manifest, which must resolve inside `boundary` when given. An empty file is an empty schema.
pub fn parse_manifest(path: &Path, boundary: Option<&Path>) -> Result<SchemaManifest, String> {
    let p = path.display();
    let text = confined::read_text(path, boundary, Some(MAX_DEFINITION_BYTES))
        .map_err(|err| format!("Failed to parse {p}: Failed to read YAML file {p}: {err}"))?;
    let doc = yaml::parse(&text).map_err(|err| format!("Failed to parse {p}: Failed to parse YAML file {p}: {err}"))?;
    if doc.value.is_null() {
        return Ok(SchemaManifest::default());
    }
    if let Some(message) = validation_error(&VALIDATOR, &doc, path) {
        return Err(format!("Schema validation failed for {p}: {message}"));
    }
    serde_json::from_value(doc.value).map_err(|err| format!("Schema validation failed for {p}: {err}"))
}

/// A path named by a manifest, with where it points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// As written.
    pub written: String,
    /// Absolute, relative to the directory of the manifest that wrote it.
    pub absolute: PathBuf,
    /// Where it must resolve to be read: the project root when that manifest is in the project (see `confined`).
    pub boundary: Option<PathBuf>,
}

/// A schema with its inheritance applied.
#[derive(Debug, Clone)]
pub struct DeepSchema {
    /// Named: the directory name. Anonymous: the governed file's name.
    pub name: String,
    /// Anonymous schemas: the absolute path of the governed file; `None` for named schemas.
    pub target: Option<PathBuf>,
    /// The manifest file.
    pub manifest: PathBuf,
    /// One-line summary.
    pub summary: Option<String>,
    /// How to work with governed files.
    pub instructions: Option<String>,
    /// Requirements: inherited ones first, overridden by the schema's own.
    pub requirements: IndexMap<String, String>,
    /// Verification commands: parents' first.
    pub verification_bash_commands: Vec<String>,
    /// The schema's JSON Schema, or the first parent's.
    pub json_schema: Option<ResolvedPath>,
    /// Example files (relative to the manifest's directory).
    pub examples: Vec<FileRef>,
    /// References (relative to the manifest's directory, or links).
    pub references: Vec<FileRef>,
    /// Named schemas: glob patterns relative to the project root.
    pub matchers: Vec<String>,
}

/// A named schema as listed by `get_named_schemas`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedSchemaInfo {
    /// Directory name.
    pub name: String,
    /// The summary, `""` when there is none, or `(failed to parse <manifest>)`.
    pub summary: String,
    /// Glob patterns of governed files.
    pub matchers: Vec<String>,
}

/// Every DeepSchema of a project and the review rules they make.
#[derive(Debug, Default)]
pub struct SchemaSet {
    /// Named schemas that loaded, in discovery order.
    pub named: Vec<DeepSchema>,
    /// Anonymous schemas that loaded, by path.
    pub anonymous: Vec<DeepSchema>,
    /// Every named schema (also those that failed to parse), for `get_named_schemas`.
    pub named_schemas: Vec<NamedSchemaInfo>,
    /// Review rules: named schemas first, then anonymous ones.
    pub rules: Vec<ReviewRule>,
    /// `(manifest, error)`: manifests that failed to parse, inheritance problems, referenced files that are missing.
    /// Every message names its manifest itself, so it can be shown without the path (DeepWork lists them under the
    /// label `deepschema`).
    pub errors: Vec<(PathBuf, String)>,
}

/// `get_named_schemas` data for a project.
pub fn named_schema_list(cache: &DeepschemaCache, root: &Path, folders: &[PathBuf]) -> Vec<NamedSchemaInfo> {
    cache.load(root, folders).named_schemas.clone()
}

/// Remembers parsed manifests and the last [`SchemaSet`] per project root.
#[derive(Debug, Default)]
pub struct DeepschemaCache {
    roots: Mutex<HashMap<PathBuf, RootCache>>,
}

type Parsed = Result<Arc<SchemaManifest>, String>;

#[derive(Debug)]
struct RootCache {
    scan: TreeScan,
    manifests: HashMap<PathBuf, (Seen, Parsed)>,
    last: Option<Last>,
}

#[derive(Debug)]
struct Last {
    named: Vec<(String, PathBuf)>,
    anonymous: Vec<PathBuf>,
    /// Referenced files whose existence the result depends on.
    checked: Vec<(PathBuf, Seen)>,
    set: Arc<SchemaSet>,
}

impl DeepschemaCache {
    /// Every schema for `root` (absolute) with named schemas from `folders` (see [`schema_folders`]). The same `Arc`
    /// comes back while nothing changed.
    pub fn load(&self, root: &Path, folders: &[PathBuf]) -> Arc<SchemaSet> {
        let mut roots = self.roots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let cache = roots.entry(root.to_path_buf()).or_insert_with(|| RootCache {
            scan: TreeScan::new(|name| anonymous_target(name).is_some()),
            manifests: HashMap::new(),
            last: None,
        });
        let named = list_named(folders);
        let mut anonymous = cache.scan.scan(root);
        anonymous.sort();
        let mut changed = false;
        let mut previous = std::mem::take(&mut cache.manifests);
        for path in named.iter().map(|(_, p)| p).chain(&anonymous) {
            let now = Seen::of(path);
            let entry = match previous.remove(path) {
                Some((seen, parsed)) if seen.unchanged(&now) => (seen, parsed),
                _ => {
                    changed = true;
                    (now, parse_manifest(path, boundary_for(path, root)).map(Arc::new))
                }
            };
            cache.manifests.insert(path.clone(), entry);
        }
        if !changed
            && let Some(last) = &cache.last
            && last.named == named
            && last.anonymous == anonymous
            && last.checked.iter().all(|(path, seen)| seen.unchanged(&Seen::of(path)))
        {
            return last.set.clone();
        }
        let parsed = |path: &PathBuf| cache.manifests[path].1.clone();
        let named_parsed: IndexMap<String, (PathBuf, Parsed)> =
            named.iter().map(|(name, path)| (name.clone(), (path.clone(), parsed(path)))).collect();
        let anonymous_parsed: Vec<(PathBuf, Parsed)> = anonymous.iter().map(|p| (p.clone(), parsed(p))).collect();
        let mut checked = Vec::new();
        let set = Arc::new(build(root, &named_parsed, &anonymous_parsed, &mut checked));
        cache.last = Some(Last { named, anonymous, checked, set: set.clone() });
        set
    }
}

/// Named schema directories: `(name, manifest)`, first of each name.
fn list_named(folders: &[PathBuf]) -> Vec<(String, PathBuf)> {
    let mut names = HashSet::new();
    let mut found = Vec::new();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else { continue };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            let manifest = child.join(MANIFEST_NAME);
            // Whatever the manifest is (a directory, a FIFO…): reading it reports what is wrong with it.
            if let Some(name) = child.file_name().and_then(|n| n.to_str())
                && std::fs::symlink_metadata(&manifest).is_ok()
                && names.insert(name.to_owned())
            {
                found.push((name.to_owned(), manifest));
            }
        }
    }
    found
}

/// Builds schemas and rules from parsed manifests, noting the referenced files checked in `checked`.
fn build(
    root: &Path,
    named: &IndexMap<String, (PathBuf, Parsed)>,
    anonymous: &[(PathBuf, Parsed)],
    checked: &mut Vec<(PathBuf, Seen)>,
) -> SchemaSet {
    let mut set = SchemaSet::default();
    for (name, (path, parsed)) in named {
        set.named_schemas.push(match parsed {
            Ok(manifest) => NamedSchemaInfo {
                name: name.clone(),
                summary: manifest.summary.clone().unwrap_or_default(),
                matchers: manifest.matchers.clone(),
            },
            Err(_) => NamedSchemaInfo {
                name: name.clone(),
                summary: format!("(failed to parse {})", path.display()),
                matchers: Vec::new(),
            },
        });
    }
    let resolve = |name: &str, path: &Path, parsed: &Parsed, target: Option<PathBuf>, errors: &mut Vec<_>| {
        let manifest = match parsed {
            Ok(manifest) => manifest,
            Err(error) => {
                errors.push((path.to_path_buf(), error.clone()));
                return None;
            }
        };
        let mut chain = if target.is_none() { vec![name.to_owned()] } else { Vec::new() };
        let mut problems = Vec::new();
        let inherited = inherit(name, manifest, path, root, named, &mut chain, &mut problems);
        errors.extend(problems.into_iter().map(|p| (path.to_path_buf(), format!("{}: {p}", path.display()))));
        let inherited = match inherited {
            Ok(inherited) => inherited,
            Err(error) => {
                errors.push((path.to_path_buf(), format!("{}: {error}", path.display())));
                return None;
            }
        };
        Some(DeepSchema {
            name: name.to_owned(),
            target,
            manifest: path.to_path_buf(),
            summary: manifest.summary.clone(),
            instructions: manifest.instructions.clone(),
            requirements: inherited.requirements,
            verification_bash_commands: inherited.verification,
            json_schema: inherited.json_schema,
            examples: manifest.examples.clone(),
            references: manifest.references.clone(),
            matchers: manifest.matchers.clone(),
        })
    };
    let mut errors = Vec::new();
    for (name, (path, parsed)) in named {
        set.named.extend(resolve(name, path, parsed, None, &mut errors));
    }
    for (path, parsed) in anonymous {
        let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let target = anonymous_target(file_name).unwrap_or_default();
        let target_path = path.with_file_name(target);
        set.anonymous.extend(resolve(target, path, parsed, Some(target_path), &mut errors));
    }
    for schema in set.named.iter().chain(&set.anonymous) {
        set.rules.extend(rule_for(schema, root, checked, &mut errors));
    }
    set.errors = errors;
    set
}

/// What a schema inherits, merged with its own.
struct Inherited {
    requirements: IndexMap<String, String>,
    verification: Vec<String>,
    json_schema: Option<ResolvedPath>,
}

/// Applies the parents of `manifest` (recursively). `chain` holds the named schemas being resolved; a parent already
/// in it is a cycle (an error that drops the schema). Unknown or broken parents are skipped and reported in
/// `problems` (only those of `manifest` itself: each parent reports its own when it is resolved).
fn inherit(
    name: &str,
    manifest: &SchemaManifest,
    path: &Path,
    root: &Path,
    named: &IndexMap<String, (PathBuf, Parsed)>,
    chain: &mut Vec<String>,
    problems: &mut Vec<String>,
) -> Result<Inherited, String> {
    let mut result = Inherited { requirements: IndexMap::new(), verification: Vec::new(), json_schema: None };
    for parent in &manifest.parent_deep_schemas {
        if chain.contains(parent) {
            return Err(format!(
                "Circular parent reference detected: '{parent}' is in its own inheritance chain ({} -> {parent}). \
                 Remove one of the parent_deep_schemas entries that form the loop.",
                chain.join(" -> ")
            ));
        }
        match named.get(parent) {
            None => {
                let known: Vec<&str> = named.keys().map(String::as_str).collect();
                problems.push(format!(
                    "Schema '{name}' references unknown parent '{parent}' (it is ignored). Named schemas: {}",
                    known.join(", ")
                ));
            }
            Some((_, Err(_))) => problems.push(format!(
                "Schema '{name}' references parent '{parent}', which failed to parse (it is ignored until its \
                 manifest is fixed)"
            )),
            Some((parent_path, Ok(parent_manifest))) => {
                chain.push(parent.clone());
                let mut ignored = Vec::new();
                let from_parent = inherit(parent, parent_manifest, parent_path, root, named, chain, &mut ignored);
                chain.pop();
                let from_parent = from_parent?;
                result.requirements.extend(from_parent.requirements);
                result.verification.extend(from_parent.verification);
                if result.json_schema.is_none() {
                    result.json_schema = from_parent.json_schema;
                }
            }
        }
    }
    result.requirements.extend(manifest.requirements.iter().map(|(k, v)| (k.clone(), v.clone())));
    result.verification.extend(manifest.verification_bash_command.iter().cloned());
    if let Some(own) = &manifest.json_schema_path {
        let dir = path.parent().unwrap_or(Path::new("/"));
        result.json_schema = Some(ResolvedPath {
            written: own.clone(),
            absolute: normalize(&dir.join(own)),
            boundary: boundary_for(path, root).map(Path::to_path_buf),
        });
    }
    Ok(result)
}

/// The review rule of a schema: only for schemas with requirements (named ones also need matchers).
fn rule_for(
    schema: &DeepSchema,
    root: &Path,
    checked: &mut Vec<(PathBuf, Seen)>,
    errors: &mut Vec<(PathBuf, String)>,
) -> Option<ReviewRule> {
    if schema.requirements.is_empty() || (schema.target.is_none() && schema.matchers.is_empty()) {
        return None;
    }
    let dir = schema.manifest.parent().unwrap_or(Path::new("/"));
    let boundary = boundary_for(&schema.manifest, root);
    let shown = |path: &Path| path.strip_prefix(root).unwrap_or(path).display().to_string();
    let name = &schema.name;
    // A named file is usable when it resolves inside the boundary; `required` ones must also exist.
    let mut usable = |written: &str, absolute: &Path, boundary: Option<&Path>, kind: &str, required: bool| {
        checked.push((absolute.to_path_buf(), Seen::of(absolute)));
        let problem = match confined::resolve(absolute, boundary) {
            Ok(_) => return true,
            Err(err) if err.is_not_found() && !required => return true,
            Err(err) if err.is_not_found() => format!("not found (resolved to {})", absolute.display()),
            Err(err) => format!("cannot be used: {err}"),
        };
        let message = format!("{}: {kind} entry '{written}' {problem}", schema.manifest.display());
        errors.push((schema.manifest.clone(), message));
        false
    };
    let examples: Vec<(PathBuf, &FileRef)> = schema
        .examples
        .iter()
        .map(|example| (normalize(&dir.join(&example.path)), example))
        .filter(|(path, example)| usable(&example.path, path, boundary, "examples", false))
        .collect();
    let mut reference_files = Vec::new();
    for reference in schema.references.iter().filter(|r| !r.is_link()) {
        let absolute = normalize(&dir.join(&reference.path));
        if usable(&reference.path, &absolute, boundary, "references", true) {
            let description = (!reference.description.is_empty()).then(|| reference.description.clone());
            let boundary = boundary.map(Path::to_path_buf);
            let label = reference.path.clone();
            reference_files.push(ReferenceFile { path: absolute, label, description, boundary });
        }
    }
    if let Some(json_schema) = &schema.json_schema {
        let boundary = json_schema.boundary.as_deref();
        if usable(&json_schema.written, &json_schema.absolute, boundary, "json_schema_path", true) {
            reference_files.push(ReferenceFile {
                path: json_schema.absolute.clone(),
                label: json_schema.written.clone(),
                description: Some(format!("JSON Schema for {name}")),
                boundary: json_schema.boundary.clone(),
            });
        }
    }

    let mut text = match &schema.target {
        None => {
            let mut text = format!("{{file_path}} must follow the DeepSchema '{name}'.");
            if let Some(summary) = schema.summary.as_deref().filter(|s| !s.trim().is_empty()) {
                text.push_str(&format!("\n{}", summary.trim_end()));
            }
            text
        }
        Some(_) => {
            format!("{{file_path}} must follow the requirements of its DeepSchema, {}.", shown(&schema.manifest))
        }
    };
    if let Some(instructions) = schema.instructions.as_deref().filter(|s| !s.trim().is_empty()) {
        text.push_str(&format!("\n\nHow to work with these files:\n{}", instructions.trim_end()));
    }
    text.push_str("\n\n");
    text.push_str(REQUIREMENTS_PREAMBLE);
    text.push('\n');
    for (key, requirement) in &schema.requirements {
        text.push_str(&format!("\n- **{key}**: {}", requirement.trim_end()));
    }
    if !examples.is_empty() {
        text.push_str("\n\nExample files you may read for comparison:");
        for (path, example) in &examples {
            text.push_str(&format!("\n- `{}`{}", shown(path), dash(&example.description)));
        }
    }
    let links: Vec<&FileRef> = schema.references.iter().filter(|r| r.is_link()).collect();
    if !links.is_empty() {
        text.push_str("\n\nFurther reading:");
        for link in links {
            text.push_str(&format!("\n- {}{}", link.path, dash(&link.description)));
        }
    }

    let (rule_name, description, include, rule_dir) = match &schema.target {
        None => (
            format!("{name} DeepSchema Compliance"),
            format!("DeepSchema compliance review for {name}"),
            schema.matchers.clone(),
            root.to_path_buf(),
        ),
        Some(target) => (
            format!("{name} DeepSchema Compliance"),
            format!("DeepSchema compliance review for {}", shown(target)),
            vec![name.clone()],
            dir.to_path_buf(),
        ),
    };
    Some(ReviewRule {
        name: rule_name,
        description,
        include,
        exclude: Vec::new(),
        strategy: Strategy::Individual,
        instructions: text,
        agent: IndexMap::new(),
        all_changed_filenames: false,
        unchanged_matching_files: false,
        reference_files,
        precompute_command: None,
        rule_dir,
        source_file: schema.manifest.clone(),
        source_line: 0,
    })
}

/// ` — <description>`, or nothing for an empty description.
fn dash(description: &str) -> String {
    if description.trim().is_empty() { String::new() } else { format!(" — {}", description.trim()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glob::Glob;
    use crate::project_files::tests::age;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Whether `rule` selects `file` (relative to `root`), as the review pipeline matches (spec §9.5).
    fn selects(rule: &ReviewRule, root: &Path, file: &str) -> bool {
        let dir = rule.rule_dir.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let relative = if dir.is_empty() {
            file
        } else {
            match file.strip_prefix(&format!("{dir}/")) {
                Some(rest) => rest,
                None => return false,
            }
        };
        rule.include.iter().any(|p| Glob::new(p).is_match(relative))
    }

    fn load(root: &Path, folders: &[PathBuf]) -> Arc<SchemaSet> {
        DeepschemaCache::default().load(root, folders)
    }

    fn project_folders(root: &Path) -> Vec<PathBuf> {
        schema_folders(root, &root.join("no-standard-schemas"), &[])
    }

    const API_DOC: &str = "\
summary: An API reference page.
instructions: Keep one endpoint per page.
requirements:
  has_examples: Every endpoint MUST show a request and a response.
  short_intro: The introduction SHOULD be one paragraph.
matchers: [\"docs/api/**/*.md\"]
json_schema_path: front_matter.schema.json
examples:
  - {path: examples/users.md, description: A complete page}
references:
  - {path: style.md, description: House style}
  - {path: \"https://example.com/rfc2119\", description: The keywords}
  - {path: gone.md, description: Missing}
";

    #[test]
    fn named_schemas_become_rules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let schema_dir = root.join(".deepwork/schemas/api_doc");
        let manifest = schema_dir.join(MANIFEST_NAME);
        write(&manifest, API_DOC);
        write(&schema_dir.join("front_matter.schema.json"), "{}");
        write(&schema_dir.join("style.md"), "Be brief.");
        let set = load(root, &project_folders(root));
        assert_eq!(
            set.named_schemas,
            [NamedSchemaInfo {
                name: "api_doc".into(),
                summary: "An API reference page.".into(),
                matchers: vec!["docs/api/**/*.md".into()],
            }]
        );
        assert_eq!(
            set.errors,
            [(
                manifest.clone(),
                format!(
                    "{}: references entry 'gone.md' not found (resolved to {})",
                    manifest.display(),
                    schema_dir.join("gone.md").display()
                )
            )]
        );
        let [rule] = &set.rules[..] else { panic!("{:?}", set.rules) };
        assert_eq!(rule.name, "api_doc DeepSchema Compliance");
        assert_eq!(rule.description, "DeepSchema compliance review for api_doc");
        assert_eq!(rule.include, ["docs/api/**/*.md"]);
        assert_eq!(rule.strategy, Strategy::Individual);
        assert_eq!(
            (rule.rule_dir.as_path(), rule.source_file.as_path(), rule.source_line),
            (root, manifest.as_path(), 0)
        );
        assert!(rule.agent.is_empty() && !rule.all_changed_filenames && !rule.unchanged_matching_files);
        let text = &rule.instructions;
        assert!(
            text.starts_with("{file_path} must follow the DeepSchema 'api_doc'.\nAn API reference page.\n\n"),
            "{text}"
        );
        assert!(text.contains("How to work with these files:\nKeep one endpoint per page.\n\n"), "{text}");
        assert!(text.contains(&format!("{REQUIREMENTS_PREAMBLE}\n\n- **has_examples**: Every endpoint MUST show a request and a response.\n- **short_intro**: ")), "{text}");
        assert!(text.contains("Example files you may read for comparison:\n- `.deepwork/schemas/api_doc/examples/users.md` — A complete page"), "{text}");
        assert!(text.ends_with("Further reading:\n- https://example.com/rfc2119 — The keywords"), "{text}");
        assert_eq!(
            rule.reference_files,
            [
                ReferenceFile {
                    path: schema_dir.join("style.md"),
                    label: "style.md".into(),
                    description: Some("House style".into()),
                    boundary: Some(root.to_path_buf()),
                },
                ReferenceFile {
                    path: schema_dir.join("front_matter.schema.json"),
                    label: "front_matter.schema.json".into(),
                    description: Some("JSON Schema for api_doc".into()),
                    boundary: Some(root.to_path_buf()),
                },
            ]
        );
        assert!(selects(rule, root, "docs/api/users.md") && selects(rule, root, "docs/api/v2/users.md"));
        assert!(!selects(rule, root, "docs/guide.md"));
    }

    #[test]
    fn folders_are_searched_in_priority_order_and_broken_manifests_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let standard = dir.path().join("standard");
        let extra = dir.path().join("extra");
        let schema = "summary: S\nrequirements: {r: MUST r}\nmatchers: ['*.md']\n";
        for (folder, name) in [
            (&root.join(".deepwork/schemas"), "b"),
            (&root.join(".deepwork/schemas"), "a"),
            (&standard, "a"),
            (&standard, "s"),
            (&extra, "s"),
            (&extra, "z"),
        ] {
            write(
                &folder.join(name).join(MANIFEST_NAME),
                &schema.replace('S', &format!("{name} from {}", folder.display())),
            );
        }
        write(&root.join(".deepwork/schemas/broken").join(MANIFEST_NAME), "matchers: 3\n");
        std::fs::create_dir_all(root.join(".deepwork/schemas/no_manifest")).unwrap();
        let set = load(&root, &schema_folders(&root, &standard, std::slice::from_ref(&extra)));
        let listed: Vec<(&str, &str)> =
            set.named_schemas.iter().map(|s| (s.name.as_str(), s.summary.as_str())).collect();
        let broken = root.join(".deepwork/schemas/broken").join(MANIFEST_NAME);
        let failed = format!("(failed to parse {})", broken.display());
        assert_eq!(listed.iter().map(|l| l.0).collect::<Vec<_>>(), ["a", "b", "broken", "s", "z"]);
        assert!(listed[0].1.ends_with(".deepwork/schemas"));
        assert_eq!(listed[2].1, failed);
        assert!(listed[3].1.ends_with("standard"));
        assert!(set.named_schemas[2].matchers.is_empty());
        let [(path, error)] = &set.errors[..] else { panic!("{:?}", set.errors) };
        assert_eq!(path, &broken);
        assert!(
            error.starts_with(&format!(
                "Schema validation failed for {}: Validation error at matchers: ",
                broken.display()
            )),
            "{error}"
        );
        assert_eq!(set.rules.len(), 4);
        assert_eq!(set.named.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["a", "b", "s", "z"]);
        assert_eq!(
            named_schema_list(&DeepschemaCache::default(), &root, &schema_folders(&root, &standard, &[extra])).len(),
            5
        );
    }

    #[test]
    fn inheritance_merges_parents_first_and_reports_unknown_parents_and_cycles() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let schemas = root.join(".deepwork/schemas");
        write(
            &schemas.join("base").join(MANIFEST_NAME),
            "requirements: {r1: base one, r2: base two}\nverification_bash_command: [c1]\njson_schema_path: base.json\n",
        );
        write(&schemas.join("base/base.json"), "{}");
        write(
            &schemas.join("child").join(MANIFEST_NAME),
            "parent_deep_schemas: [base, nowhere]\nrequirements: {r2: child two, r3: child three}\n\
             verification_bash_command: [c2]\nmatchers: ['*.txt']\n",
        );
        write(
            &schemas.join("loop_a").join(MANIFEST_NAME),
            "parent_deep_schemas: [loop_b]\nrequirements: {a: b}\nmatchers: ['*']\n",
        );
        write(&schemas.join("loop_b").join(MANIFEST_NAME), "parent_deep_schemas: [loop_a]\n");
        write(&root.join(".deepschema.notes.txt.yml"), "parent_deep_schemas: [child]\n");
        let set = load(root, &project_folders(root));

        let child = set.named.iter().find(|s| s.name == "child").unwrap();
        let requirements: Vec<(&str, &str)> =
            child.requirements.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(requirements, [("r1", "base one"), ("r2", "child two"), ("r3", "child three")]);
        assert_eq!(child.verification_bash_commands, ["c1", "c2"]);
        assert_eq!(
            child.json_schema,
            Some(ResolvedPath {
                written: "base.json".into(),
                absolute: schemas.join("base/base.json"),
                boundary: Some(root.to_path_buf()),
            })
        );
        // The anonymous schema inherits through `child` from `base`.
        let notes = &set.anonymous[0];
        assert_eq!(notes.requirements.len(), 3);
        assert_eq!(notes.target.as_deref(), Some(root.join("notes.txt").as_path()));

        let errors: Vec<String> = set
            .errors
            .iter()
            .map(|(path, e)| {
                assert!(e.starts_with(&format!("{}: ", path.display())));
                e.replace(&format!("{}/", root.display()), "")
            })
            .collect();
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(
            errors[0].starts_with(
                ".deepwork/schemas/child/deepschema.yml: Schema 'child' references unknown parent 'nowhere'"
            ),
            "{errors:#?}"
        );
        assert!(errors[1].starts_with(".deepwork/schemas/loop_a/deepschema.yml: Circular parent reference detected: 'loop_a' is in its own inheritance chain"), "{errors:#?}");
        assert!(errors[2].starts_with(".deepwork/schemas/loop_b/deepschema.yml: Circular parent reference detected: 'loop_b' is in its own inheritance chain"), "{errors:#?}");
        let names: Vec<&str> = set.named.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["base", "child"]);
        // `base` has no matchers, so no rule; `child` and the anonymous schema have one each.
        let rules: Vec<&str> = set.rules.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(rules, ["child DeepSchema Compliance", "notes.txt DeepSchema Compliance"]);
        assert_eq!(set.rules[0].reference_files[0].label, "base.json");
    }

    #[test]
    fn anonymous_schemas_match_their_file_at_the_root_and_in_subdirectories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join(".deepschema.settings.yml.yml"), "requirements: {valid: It MUST parse.}\n");
        write(&root.join("config/.deepschema.app.json.yml"), "requirements: {port: The port MUST be set.}\n");
        write(&root.join("config/.deepschema.empty.yml"), "summary: no requirements, no rule\n");
        write(&root.join("node_modules/.deepschema.x.yml"), "requirements: {a: b}\n");
        write(&root.join(".deepschema..yml"), "requirements: {a: b}\n");
        let set = load(root, &project_folders(root));
        assert!(set.errors.is_empty(), "{:?}", set.errors);
        assert_eq!(
            set.anonymous.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["settings.yml", "app.json", "empty"]
        );
        let [top, sub] = &set.rules[..] else { panic!("{:?}", set.rules) };
        assert_eq!((top.name.as_str(), top.rule_dir.as_path()), ("settings.yml DeepSchema Compliance", root));
        assert_eq!(sub.name, "app.json DeepSchema Compliance");
        assert_eq!(sub.description, "DeepSchema compliance review for config/app.json");
        assert_eq!((sub.rule_dir.clone(), sub.include.clone()), (root.join("config"), vec!["app.json".to_owned()]));
        assert_eq!(sub.source_file, root.join("config/.deepschema.app.json.yml"));
        assert!(sub.instructions.starts_with(
            "{file_path} must follow the requirements of its DeepSchema, config/.deepschema.app.json.yml.\n\n"
        ));
        assert!(sub.instructions.ends_with("\n\n- **port**: The port MUST be set."), "{}", sub.instructions);
        assert!(selects(top, root, "settings.yml") && !selects(top, root, "config/settings.yml"));
        assert!(selects(sub, root, "config/app.json"));
        assert!(!selects(sub, root, "app.json") && !selects(sub, root, "config/deeper/app.json"));
    }

    #[test]
    fn cache_rebuilds_only_after_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let schema_dir = root.join(".deepwork/schemas/doc");
        write(
            &schema_dir.join(MANIFEST_NAME),
            "requirements: {a: b}\nmatchers: ['*.md']\nreferences: [{path: ref.md, description: r}]\n",
        );
        write(&root.join("sub/.deepschema.a.txt.yml"), "requirements: {a: b}\n");
        age(root);
        let cache = DeepschemaCache::default();
        let folders = project_folders(root);
        let first = cache.load(root, &folders);
        assert_eq!(first.errors.len(), 1);
        assert!(Arc::ptr_eq(&first, &cache.load(root, &folders)));
        // The missing reference appears.
        write(&schema_dir.join("ref.md"), "text");
        let second = cache.load(root, &folders);
        assert!(second.errors.is_empty());
        assert_eq!(second.rules[0].reference_files.len(), 1);
        // A manifest changes, and a new anonymous schema appears.
        write(&schema_dir.join(MANIFEST_NAME), "requirements: {a: b}\nmatchers: ['*.txt']\n");
        write(&root.join("sub/deeper/.deepschema.b.txt.yml"), "requirements: {a: b}\n");
        let third = cache.load(root, &folders);
        assert_eq!(third.rules[0].include, ["*.txt"]);
        assert_eq!(third.rules.len(), 3);
        age(root);
        let third = cache.load(root, &folders);
        assert!(Arc::ptr_eq(&third, &cache.load(root, &folders)));
    }

    #[test]
    fn manifest_errors_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MANIFEST_NAME);
        let p = path.display().to_string();
        write(&path, "");
        assert!(parse_manifest(&path, None).unwrap().requirements.is_empty());
        write(&path, "summary: [\n");
        assert!(
            parse_manifest(&path, None)
                .unwrap_err()
                .starts_with(&format!("Failed to parse {p}: Failed to parse YAML file {p}: "))
        );
        write(&path, "summary: s\nbogus: 1\n");
        let err = parse_manifest(&path, None).unwrap_err();
        assert!(
            err.starts_with(&format!("Schema validation failed for {p}: Validation error at root: "))
                && err.contains("bogus"),
            "{err}"
        );
        write(&path, "examples: [{path: a.md}]\n");
        let err = parse_manifest(&path, None).unwrap_err();
        assert!(err.contains("Validation error at examples -> 0: \"description\" is a required property"), "{err}");
    }
}
