//! Converting a skill into a workflow in two steps (§15.2–15.3), with the model completion run by the host.
//!
//! `convert_skill` resolves the skill (by path or by name), reads its bundle and returns the converter prompt and the
//! arguments to finalize with. `finalize_skill_conversion` trusts nothing the host echoes back except the model's
//! text: it re-reads the skill from `skill_path`, extracts the YAML from the completion (the last fenced `yaml`
//! block, else a bare workflow), forces `name` to the id, validates it, copies the bundle's `scripts/` into the
//! workflow's asset folder and writes the file atomically. Each failure names its stage (`resolve`, `parse`,
//! `validate`, `write`); parse and validate failures carry the raw model output so the host can repair or re-run.
//!
//! This file holds the requests, results and the stage failures both steps share, and reading the skill's bundle (the
//! `resolve` stage of both); [`prompt`] builds the converter prompt (`convert_skill`), and [`finalize`] runs the
//! parse → validate → write stages (`finalize_skill_conversion`).

pub(crate) mod finalize;
pub(crate) mod prompt;

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{MAX_SKILL_BYTES, Skill, UserDirs, discover, read_skill};
use crate::error::{Error, Stage};
use crate::reach::Reach;
use crate::scope::Scope;
use crate::service::LintWarning;
use crate::source::Source;

/// Bundle folders that are detected and reported but not copied.
const SKIPPED_DIRS: [&str; 3] = ["references", "examples", "assets"];

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
    /// Where `skill_path` may lead: anywhere (stdio), or inside the scope's project or a standard skill root
    /// (`cairn serve`).
    pub reach: Reach,
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
    /// Where `skill_path` may lead, as for `convert_skill`.
    pub reach: Reach,
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

/// The canonical skill file at `path` (absolute, or relative to the project `cwd`), or a `resolve` failure. Within
/// `reach` (a confined server) the file must be inside the scope's project or a standard skill root of `user`, by
/// its path before anything is read and by its real path after.
fn skill_file(scope: &Scope, path: &str, reach: &Reach, user: &UserDirs) -> Result<PathBuf, Box<Error>> {
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
    let roots = discover::user_roots(user);
    let outside = || {
        Error::stage(
            Stage::Resolve,
            "skill_outside_roots",
            format!(
                "skill_path '{path}' is outside the project and the standard skill roots (~/.claude/skills, \
                 ~/.agents/skills, $CODEX_HOME/skills, ~/.config/opencode/skills, ~/.gemini/skills of the server's \
                 user), and cairn serve reads skills only there; copy the skill into the project, or name one \
                 list_skills shows"
            ),
        )
    };
    if !reach.admits(scope, &full, &roots) {
        return fail(outside());
    }
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
    if !reach.admits(scope, &canonical, &roots) {
        return fail(outside());
    }
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

/// Reads the skill at the canonical `path` and lists its bundle.
fn read_bundle(path: &Path) -> Result<Bundle, Box<Error>> {
    let unreadable = |why: String| Error::stage(Stage::Resolve, "not_a_skill", why);
    let skill = read_skill(path)
        .ok_or_else(|| unreadable(format!("{} is no longer a readable skill", path.display())))?;
    let markdown = crate::files::read_regular(path, MAX_SKILL_BYTES)
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
