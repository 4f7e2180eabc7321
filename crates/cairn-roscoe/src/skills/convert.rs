//! Converting a skill into a workflow in two steps (§15.2–15.3), with the model completion run by the host.
//!
//! `convert_skill` resolves the skill (by path or by name), reads its bundle and returns the converter prompt and the
//! arguments to finalize with. `finalize_skill_conversion` trusts nothing the host echoes back except the model's
//! text: it re-reads the skill from `skill_path`, extracts the YAML from the completion (the last fenced `yaml`
//! block, else a bare workflow), forces `name` to the id, validates it, copies the bundle's `scripts/` into the
//! workflow's asset folder and writes the file atomically. Each failure names its stage (`resolve`, `parse`,
//! `validate`, `write`); parse and validate failures carry the raw model output so the host can repair or re-run.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde::Serialize;
use serde_json::{Map, Value};

use super::{Skill, UserDirs, read_skill};
use crate::authoring_guide::{BUILTIN_DEFAULT_MODEL, GOTCHAS, executors};
use crate::definition;
use crate::error::{Error, Stage};
use crate::files::write_atomic;
use crate::scope::Scope;
use crate::actor::Actor;
use crate::service::{Body, LintWarning, Service, Subject, allow_scripts};
use crate::sources::{MAX_FILE_BYTES, Source, Sources, check_id};
use crate::yaml_edit::replace_scalar;

/// Bundle folders that are detected and reported but not copied.
const SKIPPED_DIRS: [&str; 3] = ["references", "examples", "assets"];
/// Bundled scripts shown in the prompt, and lines shown of each.
const PROMPT_SCRIPTS: usize = 20;
const PROMPT_SCRIPT_LINES: usize = 40;
/// The most of a bundled script read for its head in the prompt.
const PROMPT_SCRIPT_BYTES: u64 = 64 * 1024;

/// `convert_skill` input: the skill (exactly one of `skill_path` / `name`) and where the workflow will go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertRequest {
    /// The skill file, absolute or relative to `cwd`.
    pub skill_path: Option<String>,
    /// A skill name, matched case-insensitively among `list_skills`.
    pub name: Option<String>,
    /// The workflow id (default: the skill name as an id).
    pub id: Option<String>,
    /// The workflow source (default: repo when the project has one, else global).
    pub source: Option<Source>,
}

/// `finalize_skill_conversion` input: the host's completion plus the `finalize_args` of `convert_skill`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FinalizeRequest {
    /// The model's raw output.
    pub completion: String,
    /// The skill file (re-read; absolute or relative to `cwd`).
    pub skill_path: String,
    /// The workflow id.
    pub id: String,
    /// The workflow source (default as for `convert_skill`).
    pub source: Option<Source>,
    /// Replace an existing workflow of that id in that source.
    pub overwrite: bool,
}

/// The `convert_skill` handback: run `prompt` as your own completion, then finalize with `finalize_args`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Handback {
    /// Always `run_completion`.
    pub action: &'static str,
    /// The converter prompt.
    pub prompt: String,
    /// The suggested model (roscoe.yaml's default).
    pub model: String,
    /// The arguments to pass to `finalize_skill_conversion` beside `completion`.
    pub finalize_args: FinalizeArgs,
}

/// What `finalize_skill_conversion` needs besides the completion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FinalizeArgs {
    /// The canonical skill file.
    pub skill_path: String,
    /// The workflow id.
    pub id: String,
    /// The workflow source.
    pub source: Source,
}

/// A written conversion.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Converted {
    /// The workflow id.
    pub id: String,
    /// Where it was written.
    pub source: Source,
    /// The workflow file.
    pub path: PathBuf,
    /// Files copied from the bundle's `scripts/` into `<id>/scripts/`.
    pub asset_count: usize,
    /// Bundle folders found and not copied (`references`, `examples`, `assets`).
    pub skipped_bundle_dirs: Vec<String>,
    /// What to do about the skipped folders, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_note: Option<String>,
    /// Lint warnings of the written workflow (not errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<LintWarning>,
}

/// A failed step, boxed: the failure is large and travels up a few calls.
fn fail<T>(failure: Error) -> Result<T, Box<Error>> {
    Err(Box::new(failure))
}

/// A step's outcome: its result, or the stage that failed (a result either way; the tool marks failures `isError`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Staged<T> {
    /// The step succeeded.
    Done(T),
    /// The step failed at a stage.
    Failed(Error),
}

/// A skill and what its folder bundles.
struct Bundle {
    skill: Skill,
    markdown: String,
    /// The skill's folder, when the file is a `SKILL.md` (a loose `.md` file bundles nothing).
    dir: Option<PathBuf>,
    /// Files under `scripts/`, relative to it, sorted.
    scripts: Vec<PathBuf>,
    /// Skipped folders that exist.
    skipped: Vec<String>,
}

/// Step 1: the converter prompt for the host.
pub(super) fn handback(
    service: &Service,
    scope: &Scope,
    user: &UserDirs,
    request: &ConvertRequest,
) -> Result<Staged<Handback>, Error> {
    let path = match (&request.skill_path, &request.name) {
        (Some(path), None) => match skill_file(scope, path) {
            Ok(path) => path,
            Err(failure) => return Ok(Staged::Failed(*failure)),
        },
        (None, Some(name)) => match by_name(service, scope, user, name) {
            Ok(path) => path,
            Err(failure) => return Ok(Staged::Failed(*failure)),
        },
        _ => {
            return Err(Error::InvalidInput(
                "pass exactly one of `skill_path` (the skill file) or `name` (a name list_skills shows)".into(),
            ));
        }
    };
    let bundle = match read_bundle(&path) {
        Ok(bundle) => bundle,
        Err(failure) => return Ok(Staged::Failed(*failure)),
    };
    let id = match &request.id {
        Some(id) => id.clone(),
        None => id_from_name(&bundle.skill.name),
    };
    if let Err(e) = check_id(&id) {
        return Ok(Staged::Failed(Error::at_stage(Stage::Resolve, &e)));
    }
    let sources = Sources::new(service.home(), scope);
    let source = request.source.unwrap_or_else(|| sources.default_source());
    if let Err(e) = sources.dir(source) {
        return Ok(Staged::Failed(Error::at_stage(Stage::Resolve, &e)));
    }
    let model = service
        .models(scope)
        .map(|m| m.default)
        .unwrap_or_else(|_| BUILTIN_DEFAULT_MODEL.to_owned());
    Ok(Staged::Done(Handback {
        action: "run_completion",
        prompt: prompt(&bundle, &id),
        model,
        finalize_args: FinalizeArgs {
            skill_path: path.to_string_lossy().into_owned(),
            id,
            source,
        },
    }))
}

/// Step 2: extract, validate and write the workflow the host's completion holds.
pub(super) fn finalize(
    service: &Service,
    scope: &Scope,
    request: &FinalizeRequest,
    actor: &Actor,
) -> Result<Staged<Converted>, Error> {
    Ok(match finalize_staged(service, scope, request, actor) {
        Ok(converted) => Staged::Done(converted),
        Err(failure) => Staged::Failed(*failure),
    })
}

fn finalize_staged(
    service: &Service,
    scope: &Scope,
    request: &FinalizeRequest,
    actor: &Actor,
) -> Result<Converted, Box<Error>> {
    // resolve: nothing echoed back is trusted; the bundle is read again from disk.
    let id = request.id.as_str();
    check_id(id).map_err(|e| Error::at_stage(Stage::Resolve, &e))?;
    let bundle = read_bundle(&skill_file(scope, &request.skill_path)?)?;
    let sources = Sources::new(service.home(), scope);
    let source = request.source.unwrap_or_else(|| sources.default_source());
    let dir = sources
        .dir(source)
        .map_err(|e| Error::at_stage(Stage::Resolve, &e))?
        .to_owned();

    // parse
    let completion = request.completion.as_str();
    let yaml = extract_yaml(completion).ok_or_else(|| {
        Error::stage(
            Stage::Parse,
            "no_workflow_yaml",
            "the completion holds no ```yaml block and is not a workflow itself; run the prompt again (it must end \
             with one fenced yaml block), or repair the output and call finalize_skill_conversion again"
                .into(),
        )
        .with_output(completion)
    })?;

    // validate
    let text = with_name(&yaml, id).ok_or_else(|| {
        Error::stage(
            Stage::Validate,
            "invalid_config",
            "the YAML is not a mapping of workflow keys (name, initial, nodes, …); repair it and retry".into(),
        )
        .with_output(completion)
    })?;
    if text.len() > MAX_FILE_BYTES {
        return fail(
            Error::stage(
                Stage::Validate,
                "invalid_config",
                "the workflow is larger than 1 MiB; split it into subworkflows".into(),
            )
            .with_output(completion),
        );
    }
    let subject = Subject::Body(Body::Yaml(text.clone()));
    let validated = service
        .validate_workflow(scope, &subject)
        .map_err(|e| Error::at_stage(Stage::Validate, &e).with_output(completion))?;
    if !validated.valid {
        let code = validated.code.unwrap_or("invalid_config");
        let failure = Error::stage(
            Stage::Validate,
            code,
            format!(
                "the converted workflow is not valid ({code}); fix every entry of `details` in the YAML and call \
                 finalize_skill_conversion again, or re-run the prompt — do not invent a workflow the skill does not \
                 describe"
            ),
        )
        .with_output(completion);
        return fail(failure.with_details(validated.errors));
    }
    if let Some(workflow) = definition::validate(&text, &definition::Options::default()).workflow {
        allow_scripts(&workflow, id, actor)
            .map_err(|e| Error::at_stage(Stage::Validate, &e).with_output(completion))?;
    }
    let warnings = service
        .lint_workflow(scope, &subject)
        .map(|linted| linted.warnings)
        .unwrap_or_default();

    // write
    let existing = sources
        .find(source, id)
        .map_err(|e| Error::at_stage(Stage::Write, &e))?;
    if let Some(existing) = &existing
        && !request.overwrite
    {
        let conflict = Error::Conflict {
            id: id.to_owned(),
            in_source: source,
            path: existing.path.clone(),
        };
        let message = format!("{conflict}; or pass `overwrite: true` to replace it");
        return fail(Error::stage(Stage::Write, conflict.as_code(), message));
    }
    let path = existing.map_or_else(|| dir.join(format!("{id}.yaml")), |l| l.path);
    write(&dir, &path, id, &text, &bundle)?;
    let skipped_note = (!bundle.skipped.is_empty()).then(|| {
        let list: Vec<String> = bundle.skipped.iter().map(|d| format!("{d}/")).collect();
        format!(
            "{} not copied: only scripts/ is bundled with a workflow. Move what the workflow needs into its prompts, \
             or copy files into {} by hand.",
            list.join(", "),
            dir.join(id).display()
        )
    });
    Ok(Converted {
        id: id.to_owned(),
        source,
        path,
        asset_count: bundle.scripts.len(),
        skipped_bundle_dirs: bundle.skipped,
        skipped_note,
        warnings,
    })
}

/// The canonical skill file at `path` (absolute, or relative to the project `cwd`), or a `resolve` failure.
fn skill_file(scope: &Scope, path: &str) -> Result<PathBuf, Box<Error>> {
    let given = Path::new(path);
    let full = if given.is_absolute() {
        given.to_owned()
    } else {
        match scope {
            Scope::Project { cwd, .. } => cwd.join(given),
            Scope::Global => {
                return fail(Error::stage(
                    Stage::Resolve,
                    "skill_not_found",
                    format!(
                        "skill_path '{path}' is relative and there is no cwd in global scope; pass an absolute path"
                    ),
                ));
            }
        }
    };
    let canonical = full.canonicalize().map_err(|_| {
        Error::stage(
            Stage::Resolve,
            "skill_not_found",
            format!(
                "no file at {}; call list_skills to see the skills found",
                full.display()
            ),
        )
    })?;
    if read_skill(&canonical).is_none() {
        return fail(Error::stage(
            Stage::Resolve,
            "not_a_skill",
            format!(
                "{} is not a skill: a skill is a .md file (up to 256 KiB) whose front matter has non-empty `name` and \
                 `description` and no blog-post keys",
                canonical.display()
            ),
        ));
    }
    Ok(canonical)
}

/// The one skill called `name` (case-insensitively) among those `list_skills` finds.
fn by_name(
    service: &Service,
    scope: &Scope,
    user: &UserDirs,
    name: &str,
) -> Result<PathBuf, Box<Error>> {
    let wanted = name.trim().to_lowercase();
    let matches: Vec<Skill> = service
        .list_skills(scope, user, true, None)
        .skills
        .into_iter()
        .filter(|s| s.name.to_lowercase() == wanted)
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.path.clone()),
        [] => fail(Error::stage(
            Stage::Resolve,
            "skill_not_found",
            format!(
                "no skill named '{name}'; call list_skills to see the names, or pass skill_path"
            ),
        )),
        several => {
            let paths: Vec<String> = several
                .iter()
                .map(|s| s.path.display().to_string())
                .collect();
            fail(Error::stage(
                Stage::Resolve,
                "ambiguous_skill",
                format!(
                    "{} skills are named '{name}': {}; pass skill_path to pick one",
                    several.len(),
                    paths.join(", ")
                ),
            ))
        }
    }
}

/// Reads the skill at the canonical `path` and lists its bundle.
fn read_bundle(path: &Path) -> Result<Bundle, Box<Error>> {
    let unreadable = |why: String| Error::stage(Stage::Resolve, "not_a_skill", why);
    let skill = read_skill(path)
        .ok_or_else(|| unreadable(format!("{} is no longer a readable skill", path.display())))?;
    let markdown = crate::files::read_regular(path, super::MAX_SKILL_BYTES)
        .map_err(|e| e.to_string())
        .and_then(|bytes| String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned()))
        .map_err(|e| unreadable(format!("cannot read {}: {e}", path.display())))?;
    let is_bundle = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.eq_ignore_ascii_case("SKILL.md"));
    let dir = path.parent().filter(|_| is_bundle).map(Path::to_owned);
    let mut scripts = Vec::new();
    let mut skipped = Vec::new();
    if let Some(dir) = &dir {
        list_files(&dir.join("scripts"), Path::new(""), &mut scripts);
        scripts.sort();
        skipped = SKIPPED_DIRS
            .iter()
            .filter(|d| dir.join(d).is_dir())
            .map(|d| (*d).to_owned())
            .collect();
    }
    Ok(Bundle {
        skill,
        markdown,
        dir,
        scripts,
        skipped,
    })
}

/// Adds the files under `dir` (paths relative to the bundle's `scripts/`) to `out`; linked directories are not
/// entered.
fn list_files(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let rel = rel.join(entry.file_name());
        if kind.is_dir() {
            list_files(&path, &rel, out);
        } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
            out.push(rel);
        }
    }
}

/// A workflow id from a skill name: lower-case, runs of other characters as `-`, at most 64 characters.
fn id_from_name(name: &str) -> String {
    let mut id = String::new();
    for c in name.trim().to_lowercase().chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            id.push(c);
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    let id = id.trim_start_matches('_').trim_end_matches('-');
    id.chars()
        .take(64)
        .collect::<String>()
        .trim_end_matches('-')
        .to_owned()
}

/// The workflow YAML in a completion: the last fenced `yaml`/`yml` block; else the last other fenced block, or the
/// whole text, that reads as a mapping with `nodes`.
fn extract_yaml(completion: &str) -> Option<String> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for event in Parser::new(completion) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let lang = info.split_whitespace().next().unwrap_or("").to_lowercase();
                current = Some((lang, String::new()));
            }
            Event::Text(text) => {
                if let Some((_, body)) = &mut current {
                    body.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    let is_workflow = |text: &str| {
        cairn_yaml::parse(text)
            .ok()
            .is_some_and(|doc| doc.value.get("nodes").is_some())
    };
    if let Some((_, body)) = blocks
        .iter()
        .rev()
        .find(|(lang, _)| lang == "yaml" || lang == "yml")
    {
        return Some(body.clone());
    }
    if let Some((_, body)) = blocks.iter().rev().find(|(_, body)| is_workflow(body)) {
        return Some(body.clone());
    }
    is_workflow(completion).then(|| completion.to_owned())
}

/// `yaml` with `name: <id>`: an existing name is rewritten in place (formatting kept), a missing one added on top;
/// when neither edit reads back right, the document is written out again. `None` when it is not a mapping.
fn with_name(yaml: &str, id: &str) -> Option<String> {
    let Value::Object(map) = cairn_yaml::parse(yaml).ok()?.value else {
        return None;
    };
    let mut expected = map.clone();
    expected.insert("name".into(), Value::String(id.to_owned()));
    let edited = match map.get("name") {
        Some(Value::String(name)) if name == id => return Some(yaml.to_owned()),
        Some(Value::String(name)) => replace_scalar(yaml, "/name", name, id),
        Some(_) => None,
        None => Some(format!("name: {id}\n{yaml}")),
    };
    let reads_back = |text: &String| {
        cairn_yaml::parse(text)
            .ok()
            .is_some_and(|doc| doc.value == Value::Object(expected.clone()))
    };
    if let Some(text) = edited.filter(reads_back) {
        return Some(text);
    }
    let mut named = Map::new();
    named.insert("name".into(), Value::String(id.to_owned()));
    named.extend(map.into_iter().filter(|(k, _)| k != "name"));
    serde_saphyr::to_string(&Value::Object(named)).ok()
}

/// Writes the workflow and its scripts: scripts are copied to a temp folder first, an old `<id>/scripts/` is moved
/// aside, and the YAML is written last; a failure puts everything back.
fn write(
    dir: &Path,
    path: &Path,
    id: &str,
    text: &str,
    bundle: &Bundle,
) -> Result<(), Box<Error>> {
    let io = |action: &'static str, at: &Path, e: std::io::Error| {
        Box::new(Error::at_stage(
            Stage::Write,
            &Error::io(action, at, &e),
        ))
    };
    fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let assets = dir.join(id);
    let target = assets.join("scripts");
    let staged = match (&bundle.dir, bundle.scripts.is_empty()) {
        (Some(skill_dir), false) => {
            let temp = tempfile::Builder::new()
                .prefix(&format!(".{id}.scripts."))
                .tempdir_in(dir)
                .map_err(|e| io("create", dir, e))?;
            for rel in &bundle.scripts {
                let to = temp.path().join(rel);
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent).map_err(|e| io("create", parent, e))?;
                }
                let from = skill_dir.join("scripts").join(rel);
                fs::copy(&from, &to).map_err(|e| io("copy", &from, e))?;
            }
            Some(temp)
        }
        _ => None,
    };
    let assets_existed = assets.exists();
    let backup = if target.exists() {
        let backup = dir.join(format!(".{id}.scripts.old.{}", std::process::id()));
        fs::rename(&target, &backup).map_err(|e| io("move", &target, e))?;
        Some(backup)
    } else {
        None
    };
    let placed = match &staged {
        Some(temp) => fs::create_dir_all(&assets)
            .and_then(|()| fs::rename(temp.path(), &target))
            .map_err(|e| io("move", &target, e)),
        None => Ok(()),
    };
    let written = placed.and_then(|()| write_atomic(path, text).map_err(|e| io("write", path, e)));
    match written {
        Ok(()) => {
            if let Some(backup) = backup {
                let _ = fs::remove_dir_all(backup);
            }
            Ok(())
        }
        Err(failure) => {
            let _ = fs::remove_dir_all(&target);
            if let Some(backup) = backup {
                let _ = fs::rename(backup, &target);
            }
            if !assets_existed {
                let _ = fs::remove_dir(&assets);
            }
            Err(failure)
        }
    }
}

/// The converter prompt: the task, the rules, the format (executors, gotchas, JSON Schema), then the skill itself.
fn prompt(bundle: &Bundle, id: &str) -> String {
    let mut p = String::new();
    p.push_str(&format!(
        "You are converting an Agent Skill (a markdown playbook for an AI agent) into a cairn roscoe workflow: a state \
         machine written in YAML whose nodes are run by the workflow server, handed to an AI host, or put to a human.\n\n\
         Read the skill below and design the workflow that carries it out step by step. Answer with a short plan \
         (a few lines) followed by exactly ONE fenced ```yaml block holding the whole workflow, with `name: {id}`. \
         Nothing after the block.\n\n"
    ));
    p.push_str("## How to convert\n\n");
    for rule in CONVERSION_RULES {
        p.push_str("- ");
        p.push_str(rule);
        p.push('\n');
    }
    if !bundle.scripts.is_empty() {
        p.push_str(
            "- This skill bundles scripts. They will be copied to `$ROSCOE_WORKFLOW_DIR/scripts/` beside the \
             workflow. Run each one from a `script` node with `script: scripts/<file>` (a path relative to \
             $ROSCOE_WORKFLOW_DIR; add `interpreter: bash` or `python3` when the file is not executable), or with \
             `command:` and \"$ROSCOE_WORKFLOW_DIR/scripts/<file>\". Never paste a script's body into a prompt.\n",
        );
    }
    if !bundle.skipped.is_empty() {
        let list: Vec<String> = bundle.skipped.iter().map(|d| format!("{d}/")).collect();
        p.push_str(&format!(
            "- The skill's {} folder(s) will NOT be copied. Do not reference their files by path; put what a step \
             needs from them into its prompt.\n",
            list.join(", ")
        ));
    }
    p.push_str("\n## Gotchas of the format\n\n");
    for gotcha in GOTCHAS {
        p.push_str("- ");
        p.push_str(gotcha);
        p.push('\n');
    }
    p.push_str("\n## Node types\n\n");
    for executor in executors() {
        let keys: Vec<String> = executor
            .config_keys
            .iter()
            .map(|k| {
                if k.required {
                    format!("{} (required)", k.name)
                } else {
                    k.name.to_owned()
                }
            })
            .collect();
        p.push_str(&format!(
            "- `{}`: {} Config keys: {}.\n",
            executor.kind.as_str(),
            executor.description,
            keys.join(", ")
        ));
    }
    p.push_str("\n## JSON Schema of the workflow file\n\n```json\n");
    p.push_str(definition::schema().trim_end());
    p.push_str("\n```\n\n## The skill\n\n");
    p.push_str(&format!(
        "Name: {}\nDescription: {}\nFile: {}\n\n<skill>\n{}\n</skill>\n",
        bundle.skill.name,
        bundle.skill.description,
        bundle.skill.path.display(),
        bundle.markdown.trim_end()
    ));
    if let Some(dir) = &bundle.dir
        && !bundle.scripts.is_empty()
    {
        p.push_str("\n## Bundled scripts\n");
        for rel in bundle.scripts.iter().take(PROMPT_SCRIPTS) {
            // Only the head is shown, so only the head is read.
            let mut bytes = Vec::new();
            let _ = crate::files::open_regular(&dir.join("scripts").join(rel))
                .and_then(|file| file.take(PROMPT_SCRIPT_BYTES).read_to_end(&mut bytes));
            let text = String::from_utf8_lossy(&bytes);
            let head: Vec<&str> = text.lines().take(PROMPT_SCRIPT_LINES).collect();
            p.push_str(&format!(
                "\n### scripts/{} (first {} lines)\n\n```\n{}\n```\n",
                rel.display(),
                head.len(),
                head.join("\n")
            ));
        }
        if bundle.scripts.len() > PROMPT_SCRIPTS {
            p.push_str(&format!(
                "\n…and {} more files under scripts/.\n",
                bundle.scripts.len() - PROMPT_SCRIPTS
            ));
        }
    }
    p
}

/// The conversion guidance of the seed, in our words.
const CONVERSION_RULES: &[&str] = &[
    "One node per distinct step of the skill. Deterministic steps (running a command, a check, a build) are `script` \
     nodes; steps that need judgement or writing are `ai_agent` nodes; decisions between paths are `ai_judge` nodes; \
     points where the skill asks the user to confirm or choose are `human` nodes.",
    "Whenever a step uses \"the previous result\", \"the gathered context\" or similar, pass it explicitly with a \
     template: `{{ nodeId.field }}` (e.g. `{{ gather.text }}` for an agent's answer, `{{ tests.stdout }}` for a \
     script's output). Each prompt must stand on its own: the host sees only that prompt.",
    "A template may reference a node only if that node runs on every path that reaches the referencing node (it \
     dominates it). After a branch, reference a node both branches pass through, or give a fallback: \
     `{{ fix.summary || \"no fix was needed\" }}`.",
    "Route routine decisions with one `ai_judge` (its transition keys are the verdicts). Use `consensus` with 3 to 5 \
     agents and a quorum only for high-stakes gates: production deploys, security severity, migration safety, data \
     deletion.",
    "Loops (verify → fix → verify again) must be capped: put `maxIterations` on at least one node of the cycle and \
     route its `max_iterations` event somewhere sensible (often a human node), unless a human node is itself part of \
     the loop.",
    "End paths explicitly: `$end` completes the run, `$fail` fails it; route `failure` of script nodes.",
    "Keep what the skill says; do not invent steps, tools or files it does not mention.",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_names() {
        assert_eq!(id_from_name("PDF Forms"), "pdf-forms");
        assert_eq!(id_from_name("  _weird__ name!! "), "weird__-name");
        assert_eq!(id_from_name("émoji 🎉 helper"), "moji-helper");
        assert_eq!(id_from_name(&"a".repeat(80)).len(), 64);
        assert_eq!(id_from_name("!!!"), "");
    }

    #[test]
    fn yaml_is_found_fenced_or_bare() {
        let fenced =
            "Plan: two steps.\n\n```yaml\nname: a\n```\n\nand\n\n```yml\nname: b\nnodes: {}\n```\n";
        assert_eq!(extract_yaml(fenced).unwrap(), "name: b\nnodes: {}\n");
        let unlabeled = "```\nnot: it\n```\n```\ninitial: x\nnodes: { x: {} }\n```\n";
        assert_eq!(
            extract_yaml(unlabeled).unwrap(),
            "initial: x\nnodes: { x: {} }\n"
        );
        let bare = "initial: x\nnodes:\n  x: { type: script }\n";
        assert_eq!(extract_yaml(bare).unwrap(), bare);
        assert!(extract_yaml("I could not convert this skill.").is_none());
        assert!(extract_yaml("```json\n{\"nodes\": 1}\n```\nsorry").is_some());
    }

    #[test]
    fn name_is_forced_to_the_id() {
        assert_eq!(
            with_name("name: x  # keep\ninitial: a\n", "y").unwrap(),
            "name: y  # keep\ninitial: a\n"
        );
        assert_eq!(
            with_name("initial: a\n", "y").unwrap(),
            "name: y\ninitial: a\n"
        );
        assert_eq!(with_name("name: y\n", "y").unwrap(), "name: y\n");
        let flow = with_name("{initial: a, nodes: {}}", "y").unwrap();
        let doc = cairn_yaml::parse(&flow).unwrap();
        assert_eq!(doc.value["name"], "y");
        assert_eq!(doc.value["initial"], "a");
        assert!(with_name("- a\n- b\n", "y").is_none());
    }
}
