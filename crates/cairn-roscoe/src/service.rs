//! The roscoe facade for workflow authoring (§13.1, §13.2): list, get, create, update, delete, references, move,
//! duplicate, rename, validate and lint, each taking a resolved [`Scope`] and returning a plain result struct.
//!
//! Results serialise with the seed's camelCase field names; errors are [`Error`]s with the seed's codes. Writes are
//! atomic per file, and the multi-file operations (move, rename with its reference cascade) keep an undo journal so a
//! failure half-way restores every file. The facade holds configuration only (the cairn home) and is cheap to clone;
//! it knows nothing about MCP, HTTP or the database.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::actor::Actor;
use crate::authoring_guide::{
    ConfigError, ConfigFile, Models, WorkflowSchemaInfo, load_models, workflow_schema_info,
};
use crate::definition::{self, Diagnostic, NodeType, Options, Severity, Stage};
use crate::diagram::{Diagram, diagram};
use crate::error::{Error, Referrer};
use crate::files::{copy_tree, move_tree, write_atomic};
use crate::summaries::Summaries;
use crate::references::{NodeRef, subworkflow_refs};
use crate::scope::Scope;
use crate::sources::{Located, MAX_FILE_BYTES, Source, Sources, check_id};
use crate::yaml_edit::replace_scalar;

/// Workflow authoring operations over the repo and global sources.
#[derive(Clone, Debug)]
pub struct Service {
    home: PathBuf,
    /// What `list_workflows` shows of each file, re-read only when the file changes.
    summaries: Arc<Summaries>,
}

/// A workflow's contents as given to a writer: YAML text or a config object (`yaml` / `config` inputs).
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// YAML text, written as given.
    Yaml(String),
    /// A config object, written as YAML.
    Config(Value),
}

impl Body {
    /// Exactly one of `config` / `yaml`; `invalid_input` otherwise.
    pub fn from_inputs(config: Option<Value>, yaml: Option<String>) -> Result<Body, Error> {
        match (config, yaml) {
            (Some(config), None) => Ok(Body::Config(config)),
            (None, Some(yaml)) => Ok(Body::Yaml(yaml)),
            _ => Err(Error::InvalidInput(
                "pass exactly one of `config` (an object) or `yaml` (text)".into(),
            )),
        }
    }

    /// The text to write for workflow `id` (a config without `name` gets `name: <id>` first).
    fn text(&self, id: &str) -> Result<String, Error> {
        match self {
            Body::Yaml(text) => Ok(text.clone()),
            Body::Config(Value::Object(config)) => {
                let mut named = Map::new();
                if !config.contains_key("name") {
                    named.insert("name".into(), Value::String(id.to_owned()));
                }
                named.extend(config.clone());
                serde_saphyr::to_string(&Value::Object(named)).map_err(|e| Error::InvalidConfig {
                    message: format!("the config cannot be written as YAML: {e}"),
                    details: Vec::new(),
                })
            }
            Body::Config(_) => Err(Error::InvalidInput(
                "`config` must be an object (the workflow as JSON)".into(),
            )),
        }
    }
}

/// What `validate_workflow` / `lint_workflow` check: given contents, or a stored workflow.
#[derive(Clone, Debug, PartialEq)]
pub enum Subject {
    /// Contents given inline.
    Body(Body),
    /// A stored workflow.
    Stored {
        /// Its id.
        id: String,
        /// Its source, when not repo-first.
        source: Option<Source>,
    },
}

impl Subject {
    /// Exactly one of `config` / `yaml` / `id`; `invalid_input` otherwise.
    pub fn from_inputs(
        config: Option<Value>,
        yaml: Option<String>,
        id: Option<String>,
        source: Option<Source>,
    ) -> Result<Subject, Error> {
        match (config, yaml, id) {
            (None, None, Some(id)) => Ok(Subject::Stored { id, source }),
            (config, yaml, None) => {
                Body::from_inputs(config, yaml)
                    .map(Subject::Body)
                    .map_err(|_| {
                        Error::InvalidInput("pass exactly one of `config`, `yaml` or `id`".into())
                    })
            }
            _ => Err(Error::InvalidInput(
                "pass exactly one of `config`, `yaml` or `id`".into(),
            )),
        }
    }
}

/// One entry of `list_workflows`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowSummary {
    /// The id (file stem).
    pub id: String,
    /// The `name` field, else the id.
    pub name: String,
    /// The description, `null` when there is none or the file cannot be read.
    pub description: Option<String>,
    /// Where it lives.
    pub source: Source,
    /// A global workflow hidden by a repo workflow of the same id.
    pub shadowed: bool,
    /// Why the file cannot be read, so it can be found and fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `get_workflow`: the workflow as written, plus where it lives.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkflowDetail {
    /// The workflow config (the YAML document as JSON; `name` filled in when the file omits it).
    #[serde(flatten)]
    pub config: Map<String, Value>,
    /// Where it lives.
    pub source: Source,
    /// Its file.
    pub path: PathBuf,
}

/// A non-fatal lint finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LintWarning {
    /// Stable code, e.g. `dead_state`.
    pub code: String,
    /// What and how to fix it.
    pub message: String,
    /// The node concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

/// `create_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Created {
    /// The id.
    pub id: String,
    /// Where it was written.
    pub source: Source,
    /// The new file.
    pub path: PathBuf,
    /// Lint warnings (not errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<LintWarning>,
}

/// `update_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Updated {
    /// Always `true`.
    pub ok: bool,
    /// Where it lives.
    pub source: Source,
    /// The file written.
    pub path: PathBuf,
    /// Lint warnings (not errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<LintWarning>,
}

/// `delete_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deleted {
    /// Always `true`.
    pub ok: bool,
    /// The file deleted.
    pub path: PathBuf,
    /// Where it lived.
    pub source: Source,
}

/// `list_workflow_references`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct References {
    /// One entry per subworkflow node naming the id.
    pub referrers: Vec<Referrer>,
    /// Files that could not be read and were skipped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `move_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Moved {
    /// Always `true`.
    pub ok: bool,
    /// The id.
    pub id: String,
    /// The source it left.
    pub from: Source,
    /// The source it is in now.
    pub to: Source,
    /// The new file.
    pub path: PathBuf,
}

/// `duplicate_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Duplicated {
    /// The new id.
    pub id: String,
    /// The new copy's source.
    pub source: Source,
    /// The new file.
    pub path: PathBuf,
}

/// `rename_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Renamed {
    /// The new id.
    pub id: String,
    /// Its source.
    pub source: Source,
    /// Its file (the old one again when rolled back).
    pub path: PathBuf,
    /// Referring workflows rewritten to the new id (empty when rolled back).
    pub rewritten: Vec<String>,
    /// Referring workflows that could not be rewritten.
    pub failed: Vec<String>,
    /// Whether a failure undid the whole rename.
    pub rolled_back: bool,
    /// With `rolledBack`: what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With `rolledBack`: `io_error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
}

/// `validate_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Validated {
    /// Whether schema + integrity pass.
    pub valid: bool,
    /// When invalid: `invalid_config`, `integrity_error` or `not_found`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// One line per problem.
    pub errors: Vec<String>,
}

/// `lint_workflow`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Linted {
    /// Schema and integrity errors (lint runs only without them).
    pub errors: Vec<String>,
    /// Lint findings.
    pub warnings: Vec<LintWarning>,
}

/// A referring file and its subworkflow nodes that name the target.
type FileRefs = (Located, Vec<NodeRef>);

/// Undo steps of a multi-file operation, run newest first.
#[derive(Default)]
struct Journal {
    undo: Vec<Undo>,
}

enum Undo {
    Remove(PathBuf),
    Restore(PathBuf, String),
    MoveBack { from: PathBuf, to: PathBuf },
    RemoveTree(PathBuf),
}

impl Journal {
    /// Undoes everything recorded (best effort: every step is tried).
    fn roll_back(self) {
        for step in self.undo.into_iter().rev() {
            let _ = match step {
                Undo::Remove(path) => fs::remove_file(path),
                Undo::Restore(path, text) => restore(&path, &text),
                Undo::MoveBack { from, to } => move_tree(&from, &to),
                Undo::RemoveTree(path) => fs::remove_dir_all(path),
            };
        }
    }
}

/// Writes `text` back to `path`, even when it has since been made read-only.
fn restore(path: &Path, text: &str) -> std::io::Result<()> {
    match write_atomic(path, text) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => fs::write(path, text),
        other => other,
    }
}

fn detail(d: &Diagnostic) -> String {
    d.to_string()
}

/// Turns a failed validation into the writer error of its stage.
fn invalid(diagnostics: &[Diagnostic]) -> Error {
    let errors: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    let details = errors.iter().map(|d| detail(d)).collect();
    match errors.first().map(|d| d.code.stage()) {
        Some(Stage::Integrity) => Error::IntegrityError { details },
        _ => Error::InvalidConfig {
            message: "the workflow does not match the schema; fix every entry of `details` (get_workflow_schema shows the format)".into(),
            details,
        },
    }
}

fn warnings(diagnostics: &[Diagnostic]) -> Vec<LintWarning> {
    diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Error)
        .map(|d| LintWarning {
            code: d.code.as_str().to_owned(),
            message: d.message.clone(),
            state: d.node.clone(),
        })
        .collect()
}

fn too_large(text: &str) -> Result<(), Error> {
    if text.len() > MAX_FILE_BYTES {
        return Err(Error::InvalidConfig {
            message: "the workflow is larger than 1 MiB; split it into subworkflows".into(),
            details: Vec::new(),
        });
    }
    Ok(())
}

/// `text` with its `name:` changed from `old` to `new` (unchanged when there is no `name`).
fn rename_name(text: &str, old: &str, new: &str) -> Result<String, Error> {
    let named = cairn_yaml::parse(text)
        .ok()
        .is_some_and(|doc| doc.value.get("name").is_some());
    if !named {
        return Ok(text.to_owned());
    }
    replace_scalar(text, "/name", old, new).ok_or_else(|| Error::InvalidConfig {
        message: format!(
            "cannot rewrite `name: {old}` to `name: {new}` in place; set `name: {old}` as a plain scalar and retry"
        ),
        details: Vec::new(),
    })
}

impl Service {
    /// A service whose global source is `<home>/workflows`.
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Service { home: home.into(), summaries: Arc::default() }
    }

    /// The cairn home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    fn sources(&self, scope: &Scope) -> Sources {
        Sources::new(&self.home, scope)
    }

    /// Validates `text` for id `id` (schema + integrity + lint); the lint warnings, or the writer error.
    fn check(&self, sources: &Sources, text: &str, id: &str, actor: &Actor) -> Result<Vec<LintWarning>, Error> {
        too_large(text)?;
        let mut ids = self.ids(sources)?;
        ids.insert(id.to_owned());
        let validation = definition::validate(
            text,
            &Options {
                id: Some(id.to_owned()),
                lint: true,
                models: None,
                workflows: Some(ids.into_iter().collect()),
                calls: Some(self.calls(sources)?),
            },
        );
        if !validation.is_valid() {
            return Err(invalid(&validation.diagnostics));
        }
        if let Some(workflow) = &validation.workflow {
            allow_scripts(workflow, id, actor)?;
        }
        Ok(warnings(&validation.diagnostics))
    }

    fn ids(&self, sources: &Sources) -> Result<BTreeSet<String>, Error> {
        Ok(sources.list()?.into_iter().map(|l| l.id).collect())
    }

    /// The call graph of the scope: each workflow id (the one that resolves: repo shadows global) → the ids its
    /// subworkflow nodes call (remembered per file until it changes). Files that cannot be read call nothing.
    fn calls(&self, sources: &Sources) -> Result<BTreeMap<String, Vec<String>>, Error> {
        let mut calls = BTreeMap::new();
        for located in sources.list()? {
            if !calls.contains_key(&located.id) {
                let heading = self.summaries.heading(&located);
                calls.insert(located.id, heading.calls);
            }
        }
        Ok(calls)
    }

    /// `list_workflows`: every workflow in scope (or in `source`), by id, repo before global.
    pub fn list_workflows(
        &self,
        scope: &Scope,
        source: Option<Source>,
    ) -> Result<Vec<WorkflowSummary>, Error> {
        let sources = self.sources(scope);
        if let Some(source) = source {
            sources.dir(source)?;
        }
        let all = sources.list()?;
        let repo_ids: BTreeSet<&str> = all
            .iter()
            .filter(|l| l.source == Source::Repo)
            .map(|l| l.id.as_str())
            .collect();
        Ok(all
            .iter()
            .filter(|l| source.is_none_or(|s| s == l.source))
            .map(|l| {
                let mut summary = WorkflowSummary {
                    id: l.id.clone(),
                    name: l.id.clone(),
                    description: None,
                    source: l.source,
                    shadowed: l.source == Source::Global && repo_ids.contains(l.id.as_str()),
                    error: None,
                };
                let heading = self.summaries.heading(l);
                if let Some(name) = heading.name {
                    summary.name = name;
                }
                summary.description = heading.description;
                summary.error = heading.error;
                summary
            })
            .collect())
    }

    /// `get_workflow`: the config as written, repo first unless `source` is given.
    pub fn get_workflow(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
    ) -> Result<WorkflowDetail, Error> {
        let located = self.sources(scope).resolve(id, source)?;
        let text = located.read()?;
        let validation = definition::validate(
            &text,
            &Options {
                id: Some(id.to_owned()),
                ..Options::default()
            },
        );
        if validation.workflow.is_none() {
            return Err(Error::InvalidConfig {
                message: format!(
                    "{} is not a valid workflow; fix every entry of `details`",
                    located.path.display()
                ),
                details: validation.diagnostics.iter().map(detail).collect(),
            });
        }
        let doc = definition::read_yaml(&text).map_err(|message| Error::InvalidConfig {
            message,
            details: Vec::new(),
        })?;
        let Value::Object(config) = doc.value else {
            unreachable!("schema-valid workflows are mappings")
        };
        let mut named = Map::new();
        if !config.contains_key("name") {
            named.insert("name".into(), Value::String(id.to_owned()));
        }
        named.extend(config);
        Ok(WorkflowDetail {
            config: named,
            source: located.source,
            path: located.path,
        })
    }

    /// `create_workflow`: validates, then writes a new file (default source: repo when it exists, else global).
    pub fn create_workflow(
        &self,
        scope: &Scope,
        id: &str,
        body: &Body,
        source: Option<Source>,
        actor: &Actor,
    ) -> Result<Created, Error> {
        check_id(id)?;
        let sources = self.sources(scope);
        let source = source.unwrap_or_else(|| sources.default_source());
        let dir = sources.dir(source)?.to_owned();
        if let Some(existing) = sources.find(source, id)? {
            return Err(Error::Conflict {
                id: id.to_owned(),
                in_source: source,
                path: existing.path,
            });
        }
        let text = body.text(id)?;
        let warnings = self.check(&sources, &text, id, actor)?;
        fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, &e))?;
        let path = sources.new_path(source, id)?;
        write_atomic(&path, &text).map_err(|e| Error::io("write", &path, &e))?;
        Ok(Created {
            id: id.to_owned(),
            source,
            path,
            warnings,
        })
    }

    /// `update_workflow`: validates, then replaces the file that resolves (or the one in `source`).
    pub fn update_workflow(
        &self,
        scope: &Scope,
        id: &str,
        body: &Body,
        source: Option<Source>,
        actor: &Actor,
    ) -> Result<Updated, Error> {
        let sources = self.sources(scope);
        let located = sources.resolve(id, source)?;
        let text = body.text(id)?;
        let warnings = self.check(&sources, &text, id, actor)?;
        write_atomic(&located.path, &text).map_err(|e| Error::io("write", &located.path, &e))?;
        Ok(Updated {
            ok: true,
            source: located.source,
            path: located.path,
            warnings,
        })
    }

    /// Referrers of `target` in scope: every subworkflow node naming its id that can resolve to its source
    /// (the target itself excluded), plus the files that could not be read.
    fn referrers_of(
        &self,
        sources: &Sources,
        target: &Located,
    ) -> Result<(Vec<FileRefs>, Vec<String>), Error> {
        let mut found = Vec::new();
        let mut skipped = Vec::new();
        for file in sources.list()? {
            if file.path == target.path {
                continue;
            }
            match file
                .read()
                .map_err(|e| e.to_string())
                .and_then(|text| subworkflow_refs(&text, &target.id))
            {
                Ok(refs) => {
                    let refs: Vec<NodeRef> = refs
                        .into_iter()
                        .filter(|r| r.can_reach(target.source))
                        .collect();
                    if !refs.is_empty() {
                        found.push((file, refs));
                    }
                }
                Err(e) => skipped.push(format!("skipped {}: {e}", file.path.display())),
            }
        }
        Ok((found, skipped))
    }

    /// `delete_workflow`: needs `confirm`; refuses while referenced unless `force`. Removes the file and its assets.
    pub fn delete_workflow(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        confirm: bool,
        force: bool,
    ) -> Result<Deleted, Error> {
        let sources = self.sources(scope);
        let located = sources.resolve(id, source)?;
        if !confirm {
            return Err(Error::ConfirmRequired { path: located.path });
        }
        if !force {
            let (referrers, _) = self.referrers_of(&sources, &located)?;
            if !referrers.is_empty() {
                return Err(Error::Referenced {
                    id: id.to_owned(),
                    referenced_by: flatten(referrers),
                });
            }
        }
        fs::remove_file(&located.path).map_err(|e| Error::io("delete", &located.path, &e))?;
        let assets = located.assets();
        if assets.is_dir() {
            fs::remove_dir_all(&assets).map_err(|e| Error::io("delete", &assets, &e))?;
        }
        Ok(Deleted {
            ok: true,
            path: located.path,
            source: located.source,
        })
    }

    /// `list_workflow_references`: every subworkflow node in scope naming `id`, whatever its source.
    pub fn list_workflow_references(&self, scope: &Scope, id: &str) -> Result<References, Error> {
        check_id(id)?;
        let sources = self.sources(scope);
        let mut referrers = Vec::new();
        let mut warnings = Vec::new();
        for file in sources.list()? {
            match file
                .read()
                .map_err(|e| e.to_string())
                .and_then(|text| subworkflow_refs(&text, id))
            {
                Ok(refs) => referrers.extend(refs.into_iter().map(|r| Referrer {
                    workflow_id: file.id.clone(),
                    node_id: r.node_id,
                    source: file.source,
                })),
                Err(e) => warnings.push(format!("skipped {}: {e}", file.path.display())),
            }
        }
        Ok(References {
            referrers,
            warnings,
        })
    }

    /// `move_workflow`: moves file and assets to `to`; `from` defaults to where the id resolves.
    pub fn move_workflow(
        &self,
        scope: &Scope,
        id: &str,
        to: Source,
        from: Option<Source>,
    ) -> Result<Moved, Error> {
        let sources = self.sources(scope);
        let to_dir = sources.dir(to)?.to_owned();
        let located = sources.resolve(id, from)?;
        if located.source == to {
            return Err(Error::InvalidInput(format!(
                "workflow '{id}' is already in the {to} source; pass the other source as `to`"
            )));
        }
        let target = Located {
            id: id.to_owned(),
            source: to,
            path: to_dir.join(
                located
                    .path
                    .file_name()
                    .expect("a workflow file has a name"),
            ),
        };
        self.refuse_existing(&sources, &target)?;
        let text = located.read()?;
        let mut journal = Journal::default();
        let result = (|| {
            fs::create_dir_all(&to_dir).map_err(|e| Error::io("create", &to_dir, &e))?;
            write_atomic(&target.path, &text).map_err(|e| Error::io("write", &target.path, &e))?;
            journal.undo.push(Undo::Remove(target.path.clone()));
            self.carry_assets(&located, &target, &mut journal)?;
            fs::remove_file(&located.path).map_err(|e| Error::io("delete", &located.path, &e))?;
            Ok(())
        })();
        if let Err(e) = result {
            journal.roll_back();
            return Err(e);
        }
        Ok(Moved {
            ok: true,
            id: id.to_owned(),
            from: located.source,
            to,
            path: target.path,
        })
    }

    /// `conflict` when `target`'s id already has a file or an asset folder in its source.
    fn refuse_existing(&self, sources: &Sources, target: &Located) -> Result<(), Error> {
        let existing = sources
            .find(target.source, &target.id)?
            .map(|l| l.path)
            .or_else(|| Some(target.assets()).filter(|a| a.exists()));
        match existing {
            Some(path) => Err(Error::Conflict {
                id: target.id.clone(),
                in_source: target.source,
                path,
            }),
            None => Ok(()),
        }
    }

    /// Moves `from`'s asset folder to `to`'s, recording the undo step.
    fn carry_assets(
        &self,
        from: &Located,
        to: &Located,
        journal: &mut Journal,
    ) -> Result<(), Error> {
        let (old, new) = (from.assets(), to.assets());
        if old.is_dir() {
            move_tree(&old, &new).map_err(|e| Error::io("move", &old, &e))?;
            journal.undo.push(Undo::MoveBack { from: new, to: old });
        }
        Ok(())
    }

    /// `duplicate_workflow`: copies file and assets to `to_id` (in `to_source`, default the same source), with
    /// `name` rewritten.
    pub fn duplicate_workflow(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        to_id: &str,
        to_source: Option<Source>,
    ) -> Result<Duplicated, Error> {
        check_id(to_id)?;
        let sources = self.sources(scope);
        let located = sources.resolve(id, source)?;
        let to = to_source.unwrap_or(located.source);
        let to_dir = sources.dir(to)?.to_owned();
        let target = Located {
            id: to_id.to_owned(),
            source: to,
            path: to_dir.join(format!("{to_id}.yaml")),
        };
        self.refuse_existing(&sources, &target)?;
        let text = rename_name(&located.read()?, id, to_id)?;
        let mut journal = Journal::default();
        let result = (|| {
            fs::create_dir_all(&to_dir).map_err(|e| Error::io("create", &to_dir, &e))?;
            write_atomic(&target.path, &text).map_err(|e| Error::io("write", &target.path, &e))?;
            journal.undo.push(Undo::Remove(target.path.clone()));
            let (old, new) = (located.assets(), target.assets());
            if old.is_dir() {
                journal.undo.push(Undo::RemoveTree(new.clone()));
                copy_tree(&old, &new).map_err(|e| Error::io("copy", &old, &e))?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            journal.roll_back();
            return Err(e);
        }
        Ok(Duplicated {
            id: to_id.to_owned(),
            source: to,
            path: target.path,
        })
    }

    /// `rename_workflow`: renames file, `name` and assets; with `rewrite_references`, rewrites every referrer's
    /// `workflow:` scalar in place. All or nothing: on any failure every file is restored and `rolled_back` is set.
    pub fn rename_workflow(
        &self,
        scope: &Scope,
        id: &str,
        new_id: &str,
        source: Option<Source>,
        rewrite_references: bool,
    ) -> Result<Renamed, Error> {
        check_id(new_id)?;
        let sources = self.sources(scope);
        let located = sources.resolve(id, source)?;
        if new_id == id {
            return Err(Error::InvalidInput(format!(
                "the workflow is already called '{id}'; pass a different `new_id`"
            )));
        }
        let target = Located {
            id: new_id.to_owned(),
            source: located.source,
            path: located.path.with_file_name(format!(
                "{new_id}.{}",
                located
                    .path
                    .extension()
                    .and_then(|e| e.to_str())
                    .unwrap_or("yaml")
            )),
        };
        self.refuse_existing(&sources, &target)?;
        let original = located.read()?;
        let mut renamed = rename_name(&original, id, new_id)?;

        // Plan every referrer edit before touching anything.
        let mut edits: Vec<(Located, String, String)> = Vec::new();
        let mut failed = Vec::new();
        if rewrite_references {
            let self_refs = subworkflow_refs(&original, id).unwrap_or_default();
            for r in self_refs.iter().filter(|r| r.can_reach(located.source)) {
                match replace_scalar(&renamed, &r.pointer(), id, new_id) {
                    Some(text) => renamed = text,
                    None => failed.push(id.to_owned()),
                }
            }
            let (referrers, _) = self.referrers_of(&sources, &located)?;
            for (file, refs) in referrers {
                let before = file.read()?;
                let after = refs.iter().try_fold(before.clone(), |text, r| {
                    replace_scalar(&text, &r.pointer(), id, new_id)
                });
                match after {
                    Some(after) => edits.push((file, before, after)),
                    None => failed.push(file.id.clone()),
                }
            }
        }
        let rolled_back = |failed: Vec<String>, error: String| Renamed {
            id: id.to_owned(),
            source: located.source,
            path: located.path.clone(),
            rewritten: Vec::new(),
            failed,
            rolled_back: true,
            error: Some(error),
            code: Some("io_error"),
        };
        if !failed.is_empty() {
            let error = format!(
                "could not rewrite the reference to '{id}' in place in: {}; nothing was changed — edit those references by hand or pass rewrite_references: false",
                failed.join(", ")
            );
            return Ok(rolled_back(failed, error));
        }

        let mut journal = Journal::default();
        let mut rewritten = Vec::new();
        let step = (|| {
            write_atomic(&target.path, &renamed)
                .map_err(|e| Error::io("write", &target.path, &e))?;
            journal.undo.push(Undo::Remove(target.path.clone()));
            self.carry_assets(&located, &target, &mut journal)?;
            fs::remove_file(&located.path).map_err(|e| Error::io("delete", &located.path, &e))?;
            journal
                .undo
                .push(Undo::Restore(located.path.clone(), original.clone()));
            for (file, before, after) in &edits {
                if let Err(e) = write_atomic(&file.path, after) {
                    failed.push(file.id.clone());
                    return Err(Error::io("write", &file.path, &e));
                }
                journal
                    .undo
                    .push(Undo::Restore(file.path.clone(), before.clone()));
                rewritten.push(file.id.clone());
            }
            Ok(())
        })();
        if let Err(e) = step {
            journal.roll_back();
            return Ok(rolled_back(
                failed,
                format!("{e}; the rename was undone and every file restored"),
            ));
        }
        Ok(Renamed {
            id: new_id.to_owned(),
            source: located.source,
            path: target.path,
            rewritten,
            failed,
            rolled_back: false,
            error: None,
            code: None,
        })
    }

    /// The text and id of a validate/lint subject; `Ok(Err(..))` when a stored id is not found.
    fn subject_text(
        &self,
        scope: &Scope,
        subject: &Subject,
    ) -> Result<Result<(String, Option<String>), Error>, Error> {
        match subject {
            Subject::Body(body) => {
                let id = match body {
                    Body::Config(config) => config.get("name").and_then(Value::as_str),
                    Body::Yaml(_) => None,
                };
                Ok(Ok((body.text(id.unwrap_or("workflow"))?, None)))
            }
            Subject::Stored { id, source } => match self.sources(scope).resolve(id, *source) {
                Ok(located) => Ok(Ok((located.read()?, Some(id.clone())))),
                Err(e @ Error::NotFound { .. }) => Ok(Err(e)),
                Err(e) => Err(e),
            },
        }
    }

    /// `validate_workflow`: schema + integrity, no writes. An invalid workflow is a result, not an error.
    pub fn validate_workflow(&self, scope: &Scope, subject: &Subject) -> Result<Validated, Error> {
        let (text, id) = match self.subject_text(scope, subject)? {
            Ok(found) => found,
            Err(e) => {
                return Ok(Validated {
                    valid: false,
                    code: Some(e.as_code()),
                    errors: vec![e.to_string()],
                });
            }
        };
        let validation = definition::validate(
            &text,
            &Options {
                id,
                ..Options::default()
            },
        );
        if validation.is_valid() {
            return Ok(Validated {
                valid: true,
                code: None,
                errors: Vec::new(),
            });
        }
        let error = invalid(&validation.diagnostics);
        Ok(Validated {
            valid: false,
            code: Some(error.as_code()),
            errors: validation
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(detail)
                .collect(),
        })
    }

    /// The effective models of `roscoe.yaml` (§2.2): `<cairn home>/roscoe.yaml`, replaced section-wise by
    /// `<project root>/roscoe.yaml` in project scope.
    pub fn models(&self, scope: &Scope) -> Result<Models, ConfigError> {
        let global = read_config(&self.home.join("roscoe.yaml"))?;
        let project = match scope.root() {
            Some(root) => read_config(&root.join("roscoe.yaml"))?,
            None => None,
        };
        load_models(
            global.as_ref().map(config_file),
            project.as_ref().map(config_file),
        )
    }

    /// `get_workflow_schema`: the JSON Schema, the executors, the models of `roscoe.yaml` in scope and the gotchas.
    pub fn workflow_schema(&self, scope: &Scope) -> WorkflowSchemaInfo {
        workflow_schema_info(&self.models(scope))
    }

    /// `get_workflow_diagram`: the diagram of a stored or given workflow. A workflow that passes the schema stage is
    /// drawn even when it breaks integrity rules (a dangling target shows as such); one that does not is
    /// `invalid_config`.
    pub fn workflow_diagram(&self, scope: &Scope, subject: &Subject) -> Result<Diagram, Error> {
        let (text, id) = self.subject_text(scope, subject)??;
        let validation = definition::validate(
            &text,
            &Options {
                id,
                ..Options::default()
            },
        );
        match &validation.workflow {
            Some(workflow) => Ok(diagram(workflow)),
            None => Err(invalid(&validation.diagnostics)),
        }
    }

    /// `lint_workflow`: schema + integrity errors, then (only without them) lint warnings.
    pub fn lint_workflow(&self, scope: &Scope, subject: &Subject) -> Result<Linted, Error> {
        let (text, id) = match self.subject_text(scope, subject)? {
            Ok(found) => found,
            Err(e) => {
                return Ok(Linted {
                    errors: vec![e.to_string()],
                    warnings: Vec::new(),
                });
            }
        };
        let sources = self.sources(scope);
        let mut ids = self.ids(&sources)?;
        if let Some(id) = &id {
            ids.insert(id.clone());
        }
        let validation = definition::validate(
            &text,
            &Options {
                id,
                lint: true,
                models: self.models(scope).ok().map(|m| m.permitted()),
                workflows: Some(ids.into_iter().collect()),
                calls: Some(self.calls(&sources)?),
            },
        );
        Ok(Linted {
            errors: validation
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(detail)
                .collect(),
            warnings: warnings(&validation.diagnostics),
        })
    }
}

/// A `roscoe.yaml` file's path and text, `None` when it does not exist. It is read like a workflow file: a regular
/// file of at most 1 MiB, never waited on.
fn read_config(path: &Path) -> Result<Option<(String, String)>, ConfigError> {
    let shown = path.display().to_string();
    match crate::files::read_regular(path, MAX_FILE_BYTES as u64) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Ok(Some((shown, text))),
            Err(_) => Err(ConfigError { path: shown, message: "is not UTF-8 text; save it as UTF-8".into() }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError {
            path: shown,
            message: format!("cannot be read ({e}); make it a readable YAML file of at most 1 MiB, or remove it"),
        }),
    }
}

fn config_file((path, text): &(String, String)) -> ConfigFile<'_> {
    ConfigFile { path, text }
}

fn flatten(referrers: Vec<FileRefs>) -> Vec<Referrer> {
    referrers
        .into_iter()
        .flat_map(|(file, refs)| {
            refs.into_iter().map(move |r| Referrer {
                workflow_id: file.id.clone(),
                node_id: r.node_id,
                source: file.source,
            })
        })
        .collect()
}

/// Refuses workflow `id` when it has `script` nodes and `actor` may not make the server run scripts.
pub(crate) fn allow_scripts(workflow: &definition::Workflow, id: &str, actor: &Actor) -> Result<(), Error> {
    if !actor.may_exec && workflow.nodes.iter().any(|n| n.kind == NodeType::Script) {
        return Err(Error::InsufficientScope(actor.exec_refusal(&format!("workflow '{id}'"))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::tests::git_init;
    use serde_json::json;
    use tempfile::TempDir;

    const CHILD: &str = "name: child\ninitial: step\nnodes:\n  step:\n    type: script\n    config: { command: \"echo hi\" }\n    transitions: { success: $end, failure: $fail }\n";

    fn parent(name: &str, child: &str) -> String {
        format!(
            "# {name}: calls {child}\nname: {name}   # keep me\ndescription: \"Calls the child\"\ninitial: call\nnodes:\n  call:\n    type: subworkflow\n    config:\n      workflow: \"{child}\"   # the child\n      inputs: {{}}\n    transitions: {{ success: $end, failure: $fail }}\n"
        )
    }

    struct Env {
        home: TempDir,
        proj: TempDir,
        service: Service,
        scope: Scope,
    }

    impl Env {
        fn new() -> Env {
            let home = tempfile::tempdir().unwrap();
            let proj = tempfile::tempdir().unwrap();
            git_init(proj.path());
            let sub = proj.path().join("src");
            fs::create_dir_all(&sub).unwrap();
            let scope = Scope::project(sub.to_str().unwrap()).unwrap();
            Env {
                service: Service::new(home.path()),
                home,
                proj,
                scope,
            }
        }

        fn repo_dir(&self) -> PathBuf {
            self.proj
                .path()
                .canonicalize()
                .unwrap()
                .join(".roscoe/workflows")
        }

        fn global_dir(&self) -> PathBuf {
            self.home.path().join("workflows")
        }

        fn create(&self, id: &str, text: &str, source: Option<Source>) -> Created {
            self.service
                .create_workflow(&self.scope, id, &Body::Yaml(text.into()), source, &Actor::local("mcp"))
                .unwrap()
        }
    }

    fn code<T: std::fmt::Debug>(r: Result<T, Error>) -> &'static str {
        r.unwrap_err().as_code()
    }

    #[test]
    fn fixtures_are_valid() {
        assert!(definition::parse(CHILD, Some("child")).is_ok());
        let p = parent("parent", "child");
        assert!(
            definition::parse(&p, Some("parent")).is_ok(),
            "{:?}",
            definition::parse(&p, Some("parent"))
        );
    }

    #[test]
    fn create_defaults_to_global_without_a_repo_source_and_to_repo_with_one() {
        let env = Env::new();
        let created = env.create("child", CHILD, None);
        assert_eq!(created.source, Source::Global);
        assert_eq!(created.path, env.global_dir().join("child.yaml"));
        assert_eq!(fs::read_to_string(&created.path).unwrap(), CHILD);

        fs::create_dir_all(env.repo_dir()).unwrap();
        let created = env.create("other", &CHILD.replace("name: child", "name: other"), None);
        assert_eq!(created.source, Source::Repo);
        assert_eq!(created.path, env.repo_dir().join("other.yaml"));
    }

    #[test]
    fn create_with_explicit_repo_creates_the_directory() {
        let env = Env::new();
        let created = env.create("child", CHILD, Some(Source::Repo));
        assert_eq!(created.path, env.repo_dir().join("child.yaml"));
    }

    #[test]
    fn create_errors() {
        let env = Env::new();
        let s = &env.service;
        let body = Body::Yaml(CHILD.into());
        assert_eq!(
            code(s.create_workflow(&env.scope, "../evil", &body, None, &Actor::local("mcp"))),
            "invalid_id"
        );
        assert_eq!(
            code(s.create_workflow(&Scope::Global, "child", &body, Some(Source::Repo), &Actor::local("mcp"))),
            "no_repo_source"
        );
        assert_eq!(
            code(s.create_workflow(&env.scope, "child", &Body::Yaml("name: [".into()), None, &Actor::local("mcp"))),
            "invalid_config"
        );
        let broken = CHILD.replace("success: $end", "success: nowhere");
        let err = s
            .create_workflow(&env.scope, "child", &Body::Yaml(broken), None, &Actor::local("mcp"))
            .unwrap_err();
        assert_eq!(err.as_code(), "integrity_error");
        assert!(
            err.body()["details"][0]
                .as_str()
                .unwrap()
                .contains("unknown_target")
        );
        assert!(!env.global_dir().join("child.yaml").exists());

        env.create("child", CHILD, None);
        let err = s
            .create_workflow(&env.scope, "child", &body, None, &Actor::local("mcp"))
            .unwrap_err();
        assert_eq!(err.as_code(), "conflict");
        assert_eq!(
            code(Body::from_inputs(Some(json!({})), Some(String::new()))),
            "invalid_input"
        );
    }

    #[test]
    fn create_from_a_config_object_defaults_the_name() {
        let env = Env::new();
        let config = json!({
            "initial": "step",
            "nodes": { "step": { "type": "script", "config": { "command": "true" },
                                "transitions": { "success": "$end", "failure": "$fail" } } }
        });
        let created = env
            .service
            .create_workflow(&env.scope, "fromjson", &Body::Config(config), None, &Actor::local("mcp"))
            .unwrap();
        let got = env
            .service
            .get_workflow(&env.scope, "fromjson", None)
            .unwrap();
        assert_eq!(got.config["name"], "fromjson");
        assert_eq!(got.path, created.path);
    }

    #[test]
    fn get_is_repo_first_and_reports_errors() {
        let env = Env::new();
        env.create("child", CHILD, Some(Source::Global));
        let repo_child = CHILD.replace("echo hi", "echo repo");
        env.create("child", &repo_child, Some(Source::Repo));
        let got = env.service.get_workflow(&env.scope, "child", None).unwrap();
        assert_eq!(got.source, Source::Repo);
        assert_eq!(
            got.config["nodes"]["step"]["config"]["command"],
            "echo repo"
        );
        let json = serde_json::to_value(&got).unwrap();
        assert_eq!(json["source"], "repo");
        assert_eq!(json["initial"], "step");
        let global = env
            .service
            .get_workflow(&env.scope, "child", Some(Source::Global))
            .unwrap();
        assert_eq!(global.source, Source::Global);

        assert_eq!(
            code(env.service.get_workflow(&env.scope, "nope", None)),
            "not_found"
        );
        assert_eq!(
            code(
                env.service
                    .get_workflow(&Scope::Global, "child", Some(Source::Repo))
            ),
            "no_repo_source"
        );
        fs::write(env.global_dir().join("bad.yaml"), "nodes: [").unwrap();
        let err = env
            .service
            .get_workflow(&env.scope, "bad", None)
            .unwrap_err();
        assert_eq!(err.as_code(), "invalid_config");
        assert!(!err.body()["details"].as_array().unwrap().is_empty());
    }

    #[test]
    fn list_marks_shadowed_globals_and_unreadable_files() {
        let env = Env::new();
        env.create("child", CHILD, Some(Source::Global));
        env.create("child", CHILD, Some(Source::Repo));
        env.create("parent", &parent("parent", "child"), Some(Source::Global));
        fs::write(env.global_dir().join("broken.yaml"), "nodes: [").unwrap();
        let list = env.service.list_workflows(&env.scope, None).unwrap();
        let rows: Vec<(&str, Source, bool)> = list
            .iter()
            .map(|w| (w.id.as_str(), w.source, w.shadowed))
            .collect();
        assert_eq!(
            rows,
            [
                ("broken", Source::Global, false),
                ("child", Source::Repo, false),
                ("child", Source::Global, true),
                ("parent", Source::Global, false),
            ]
        );
        assert!(list[0].error.is_some());
        assert_eq!(list[0].description, None);
        assert_eq!(list[3].description.as_deref(), Some("Calls the child"));
        let json = serde_json::to_value(&list[1]).unwrap();
        assert_eq!(
            json,
            json!({"id": "child", "name": "child", "description": null, "source": "repo", "shadowed": false})
        );

        let repo_only = env
            .service
            .list_workflows(&env.scope, Some(Source::Repo))
            .unwrap();
        assert_eq!(repo_only.len(), 1);
        let global = env.service.list_workflows(&Scope::Global, None).unwrap();
        assert!(
            global
                .iter()
                .all(|w| w.source == Source::Global && !w.shadowed)
        );
        assert_eq!(
            code(
                env.service
                    .list_workflows(&Scope::Global, Some(Source::Repo))
            ),
            "no_repo_source"
        );
    }

    #[test]
    fn two_projects_never_see_each_others_repo_workflows() {
        let a = Env::new();
        let b = Service::new(a.home.path());
        let other = tempfile::tempdir().unwrap();
        git_init(other.path());
        let other_scope = Scope::project(other.path().to_str().unwrap()).unwrap();
        a.create("child", CHILD, Some(Source::Repo));
        assert_ne!(a.scope.project_id(), other_scope.project_id());
        assert!(b.list_workflows(&other_scope, None).unwrap().is_empty());
        assert_eq!(
            code(b.get_workflow(&other_scope, "child", None)),
            "not_found"
        );
        assert_eq!(a.service.list_workflows(&a.scope, None).unwrap().len(), 1);
    }

    #[test]
    fn update_validates_and_replaces() {
        let env = Env::new();
        env.create("child", CHILD, None);
        let new = CHILD.replace("echo hi", "echo bye");
        let updated = env
            .service
            .update_workflow(&env.scope, "child", &Body::Yaml(new.clone()), None, &Actor::local("mcp"))
            .unwrap();
        assert!(updated.ok);
        assert_eq!(fs::read_to_string(&updated.path).unwrap(), new);
        let broken = Body::Yaml(CHILD.replace("initial: step", "initial: nope"));
        assert_eq!(
            code(
                env.service
                    .update_workflow(&env.scope, "child", &broken, None, &Actor::local("mcp"))
            ),
            "integrity_error"
        );
        assert_eq!(fs::read_to_string(&updated.path).unwrap(), new);
        assert_eq!(
            code(
                env.service
                    .update_workflow(&env.scope, "ghost", &Body::Yaml(CHILD.into()), None, &Actor::local("mcp"))
            ),
            "not_found"
        );
        assert_eq!(
            code(env.service.update_workflow(
                &env.scope,
                "child",
                &Body::Yaml("name: other\ninitial: step\nnodes: {}\n".into()),
                None,
                &Actor::local("mcp"),
            )),
            "invalid_config"
        );
    }

    #[test]
    fn delete_needs_confirm_and_refuses_when_referenced() {
        let env = Env::new();
        let child = env.create("child", CHILD, None);
        fs::create_dir_all(env.global_dir().join("child/scripts")).unwrap();
        env.create("parent", &parent("parent", "child"), None);
        let s = &env.service;
        let err = s
            .delete_workflow(&env.scope, "child", None, false, false)
            .unwrap_err();
        assert_eq!(err.as_code(), "confirm_required");
        assert_eq!(err.body()["path"], json!(child.path));
        let err = s
            .delete_workflow(&env.scope, "child", None, true, false)
            .unwrap_err();
        assert_eq!(err.as_code(), "referenced");
        assert_eq!(
            err.body()["referencedBy"],
            json!([{"workflowId": "parent", "nodeId": "call", "source": "global"}])
        );
        assert!(child.path.exists());
        let deleted = s
            .delete_workflow(&env.scope, "child", None, true, true)
            .unwrap();
        assert!(deleted.ok);
        assert!(!child.path.exists());
        assert!(!env.global_dir().join("child").exists());
        assert_eq!(
            code(s.delete_workflow(&env.scope, "child", None, true, false)),
            "not_found"
        );
        // An unreferenced workflow goes without force.
        s.delete_workflow(&env.scope, "parent", None, true, false)
            .unwrap();
    }

    #[test]
    fn references_scan_every_source() {
        let env = Env::new();
        env.create("child", CHILD, Some(Source::Global));
        env.create("p1", &parent("p1", "child"), Some(Source::Repo));
        env.create("p2", &parent("p2", "child"), Some(Source::Global));
        env.create("p3", &parent("p3", "p1"), Some(Source::Global));
        fs::write(env.global_dir().join("junk.yaml"), "nodes: [").unwrap();
        let refs = env
            .service
            .list_workflow_references(&env.scope, "child")
            .unwrap();
        let ids: Vec<(&str, &str, Source)> = refs
            .referrers
            .iter()
            .map(|r| (r.workflow_id.as_str(), r.node_id.as_str(), r.source))
            .collect();
        assert_eq!(
            ids,
            [("p1", "call", Source::Repo), ("p2", "call", Source::Global)]
        );
        assert_eq!(refs.warnings.len(), 1);
        let json = serde_json::to_value(&refs).unwrap();
        assert_eq!(json["referrers"][0]["workflowId"], "p1");
        // Global scope sees only the global referrer.
        let global = env
            .service
            .list_workflow_references(&Scope::Global, "child")
            .unwrap();
        assert_eq!(global.referrers.len(), 1);
        assert_eq!(
            code(env.service.list_workflow_references(&env.scope, "A/b")),
            "invalid_id"
        );
    }

    #[test]
    fn move_carries_assets_both_ways() {
        let env = Env::new();
        let created = env.create("child", CHILD, Some(Source::Global));
        fs::create_dir_all(env.global_dir().join("child/scripts")).unwrap();
        fs::write(env.global_dir().join("child/scripts/run.sh"), "echo").unwrap();
        let moved = env
            .service
            .move_workflow(&env.scope, "child", Source::Repo, None)
            .unwrap();
        assert_eq!((moved.from, moved.to), (Source::Global, Source::Repo));
        assert_eq!(moved.path, env.repo_dir().join("child.yaml"));
        assert!(!created.path.exists());
        assert!(!env.global_dir().join("child").exists());
        assert_eq!(
            fs::read_to_string(env.repo_dir().join("child/scripts/run.sh")).unwrap(),
            "echo"
        );
        assert_eq!(fs::read_to_string(&moved.path).unwrap(), CHILD);
        let json = serde_json::to_value(&moved).unwrap();
        assert_eq!(json["ok"], true);
        assert_eq!(json["to"], "repo");

        let back = env
            .service
            .move_workflow(&env.scope, "child", Source::Global, None)
            .unwrap();
        assert_eq!(back.path, created.path);
        assert!(env.global_dir().join("child/scripts/run.sh").is_file());
    }

    #[test]
    fn move_errors() {
        let env = Env::new();
        env.create("child", CHILD, Some(Source::Global));
        let s = &env.service;
        assert_eq!(
            code(s.move_workflow(&env.scope, "child", Source::Global, None)),
            "invalid_input"
        );
        assert_eq!(
            code(s.move_workflow(&Scope::Global, "child", Source::Repo, None)),
            "no_repo_source"
        );
        assert_eq!(
            code(s.move_workflow(&env.scope, "ghost", Source::Repo, None)),
            "not_found"
        );
        env.create("child", CHILD, Some(Source::Repo));
        assert_eq!(
            code(s.move_workflow(&env.scope, "child", Source::Repo, Some(Source::Global))),
            "conflict"
        );
        assert!(env.global_dir().join("child.yaml").exists());
    }

    #[test]
    fn duplicate_copies_assets_and_rewrites_name_only() {
        let env = Env::new();
        let text = parent("parent", "child");
        env.create("child", CHILD, Some(Source::Global));
        env.create("parent", &text, Some(Source::Global));
        fs::create_dir_all(env.global_dir().join("parent/scripts")).unwrap();
        fs::write(env.global_dir().join("parent/scripts/a.sh"), "a").unwrap();
        let dup = env
            .service
            .duplicate_workflow(
                &env.scope,
                "parent",
                None,
                "parent-copy",
                Some(Source::Repo),
            )
            .unwrap();
        assert_eq!(dup.source, Source::Repo);
        assert_eq!(
            fs::read_to_string(&dup.path).unwrap(),
            text.replace("name: parent ", "name: parent-copy ")
        );
        assert!(env.repo_dir().join("parent-copy/scripts/a.sh").is_file());
        assert!(env.global_dir().join("parent/scripts/a.sh").is_file());
        assert!(
            env.service
                .get_workflow(&env.scope, "parent-copy", None)
                .is_ok()
        );

        let s = &env.service;
        assert_eq!(
            code(s.duplicate_workflow(&env.scope, "parent", None, "Bad Id", None)),
            "invalid_id"
        );
        assert_eq!(
            code(s.duplicate_workflow(&env.scope, "parent", None, "child", None)),
            "conflict"
        );
        assert_eq!(
            code(s.duplicate_workflow(&env.scope, "ghost", None, "x", None)),
            "not_found"
        );
        assert_eq!(
            code(s.duplicate_workflow(&Scope::Global, "parent", None, "x", Some(Source::Repo))),
            "no_repo_source"
        );
    }

    #[test]
    fn rename_cascades_keeping_formatting() {
        let env = Env::new();
        env.create(
            "child",
            &CHILD.replace("name: child", "name: 'child'  # quoted"),
            Some(Source::Global),
        );
        fs::create_dir_all(env.global_dir().join("child/scripts")).unwrap();
        let p1 = parent("p1", "child");
        let p2 = parent("p2", "child");
        env.create("p1", &p1, Some(Source::Repo));
        env.create("p2", &p2, Some(Source::Global));
        let explicit =
            parent("p3", "child").replace("inputs: {}", "source: repo\n      inputs: {}");
        env.create("p3", &explicit, Some(Source::Global));

        let renamed = env
            .service
            .rename_workflow(&env.scope, "child", "kid", None, true)
            .unwrap();
        assert!(!renamed.rolled_back, "{renamed:?}");
        assert_eq!(renamed.id, "kid");
        assert_eq!(renamed.rewritten, ["p1", "p2"]);
        assert!(renamed.failed.is_empty());
        assert_eq!(renamed.path, env.global_dir().join("kid.yaml"));
        assert_eq!(
            fs::read_to_string(&renamed.path).unwrap(),
            CHILD.replace("name: child", "name: 'kid'  # quoted")
        );
        assert!(!env.global_dir().join("child.yaml").exists());
        assert!(env.global_dir().join("kid/scripts").is_dir());
        assert!(!env.global_dir().join("child").exists());
        let edit = |t: &str| t.replace("workflow: \"child\"", "workflow: \"kid\"");
        assert_eq!(
            fs::read_to_string(env.repo_dir().join("p1.yaml")).unwrap(),
            edit(&p1)
        );
        assert_eq!(
            fs::read_to_string(env.global_dir().join("p2.yaml")).unwrap(),
            edit(&p2)
        );
        // A node pinned to the repo source does not point at the global child.
        assert_eq!(
            fs::read_to_string(env.global_dir().join("p3.yaml")).unwrap(),
            explicit
        );
        let json = serde_json::to_value(&renamed).unwrap();
        assert_eq!(json["rolledBack"], false);
        assert!(json.get("code").is_none());
    }

    #[test]
    fn rename_without_cascade_leaves_references() {
        let env = Env::new();
        env.create("child", CHILD, None);
        let p = parent("p", "child");
        env.create("p", &p, None);
        let renamed = env
            .service
            .rename_workflow(&env.scope, "child", "kid", None, false)
            .unwrap();
        assert!(renamed.rewritten.is_empty());
        assert_eq!(
            fs::read_to_string(env.global_dir().join("p.yaml")).unwrap(),
            p
        );
        let lint = env
            .service
            .lint_workflow(
                &env.scope,
                &Subject::Stored {
                    id: "p".into(),
                    source: None,
                },
            )
            .unwrap();
        assert!(
            lint.warnings
                .iter()
                .any(|w| w.code == "unknown_subworkflow"),
            "{lint:?}"
        );
    }

    #[test]
    fn rename_rolls_back_every_file_when_a_referrer_write_fails() {
        let env = Env::new();
        let child = CHILD.to_owned();
        env.create("child", &child, Some(Source::Global));
        fs::create_dir_all(env.global_dir().join("child/scripts")).unwrap();
        let a = parent("a-parent", "child");
        let b = parent("b-parent", "child");
        env.create("a-parent", &a, Some(Source::Global));
        env.create("b-parent", &b, Some(Source::Global));
        let locked = env.global_dir().join("b-parent.yaml");
        let mut perms = fs::metadata(&locked).unwrap().permissions();
        perms.set_readonly(true);
        fs::set_permissions(&locked, perms).unwrap();

        let renamed = env
            .service
            .rename_workflow(&env.scope, "child", "kid", None, true)
            .unwrap();
        assert!(renamed.rolled_back);
        assert_eq!(renamed.failed, ["b-parent"]);
        assert!(renamed.rewritten.is_empty());
        assert_eq!(renamed.code, Some("io_error"));
        assert_eq!(renamed.path, env.global_dir().join("child.yaml"));
        assert_eq!(
            fs::read_to_string(env.global_dir().join("child.yaml")).unwrap(),
            child
        );
        assert!(!env.global_dir().join("kid.yaml").exists());
        assert!(env.global_dir().join("child/scripts").is_dir());
        assert!(!env.global_dir().join("kid").exists());
        assert_eq!(
            fs::read_to_string(env.global_dir().join("a-parent.yaml")).unwrap(),
            a
        );
        assert_eq!(fs::read_to_string(&locked).unwrap(), b);
        let names: Vec<String> = fs::read_dir(env.global_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn rename_errors() {
        let env = Env::new();
        env.create("child", CHILD, None);
        env.create("other", &CHILD.replace("name: child", "name: other"), None);
        let s = &env.service;
        assert_eq!(
            code(s.rename_workflow(&env.scope, "child", "other", None, true)),
            "conflict"
        );
        assert_eq!(
            code(s.rename_workflow(&env.scope, "child", "../x", None, true)),
            "invalid_id"
        );
        assert_eq!(
            code(s.rename_workflow(&env.scope, "ghost", "x", None, true)),
            "not_found"
        );
        assert_eq!(
            code(s.rename_workflow(&env.scope, "child", "child", None, true)),
            "invalid_input"
        );
    }

    #[test]
    fn validate_and_lint_by_text_and_id() {
        let env = Env::new();
        env.create("child", CHILD, None);
        let s = &env.service;
        let ok = s
            .validate_workflow(&env.scope, &Subject::Body(Body::Yaml(CHILD.into())))
            .unwrap();
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            json!({"valid": true, "errors": []})
        );
        let stored = Subject::Stored {
            id: "child".into(),
            source: None,
        };
        assert!(s.validate_workflow(&env.scope, &stored).unwrap().valid);
        let bad = Subject::Body(Body::Yaml(
            CHILD.replace("success: $end", "success: nowhere"),
        ));
        let v = s.validate_workflow(&env.scope, &bad).unwrap();
        assert_eq!((v.valid, v.code), (false, Some("integrity_error")));
        assert!(!v.errors.is_empty());
        let v = s
            .validate_workflow(&env.scope, &Subject::Body(Body::Yaml("x: [".into())))
            .unwrap();
        assert_eq!(v.code, Some("invalid_config"));
        let missing = Subject::Stored {
            id: "ghost".into(),
            source: None,
        };
        assert_eq!(
            s.validate_workflow(&env.scope, &missing).unwrap().code,
            Some("not_found")
        );
        assert_eq!(
            code(Subject::from_inputs(
                Some(json!({})),
                None,
                Some("x".into()),
                None
            )),
            "invalid_input"
        );
        assert_eq!(
            code(Subject::from_inputs(None, None, None, None)),
            "invalid_input"
        );

        let lint = s.lint_workflow(&env.scope, &stored).unwrap();
        assert!(lint.errors.is_empty());
        let dead = CHILD.replace("nodes:\n", "nodes:\n  orphan:\n    type: script\n    config: { command: \"true\" }\n    transitions: { success: $end, failure: $fail }\n");
        let lint = s
            .lint_workflow(&env.scope, &Subject::Body(Body::Yaml(dead)))
            .unwrap();
        assert!(lint.errors.is_empty(), "{lint:?}");
        assert!(
            lint.warnings
                .iter()
                .any(|w| w.state.as_deref() == Some("orphan")),
            "{lint:?}"
        );
        let lint = s.lint_workflow(&env.scope, &bad).unwrap();
        assert!(!lint.errors.is_empty());
        assert!(lint.warnings.is_empty());
    }
}
