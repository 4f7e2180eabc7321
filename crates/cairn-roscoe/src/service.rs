//! The roscoe facade for workflow authoring (§13.1, §13.2): list, get, create, update, delete, references, move,
//! duplicate, rename and the checks, each taking a resolved [`Scope`] and returning a plain result struct.
//!
//! Results serialise with the seed's camelCase field names; errors are [`Error`]s with the seed's codes. Writes are
//! atomic per file, and the multi-file operations (move, rename with its reference cascade) keep an undo journal so a
//! failure half-way restores every file. The facade holds configuration only (the cairn home) and is cheap to clone;
//! it knows nothing about MCP, HTTP or the database.
//!
//! This file holds the [`Service`] type, the inputs its methods share ([`Body`], [`Subject`]) and the helpers its
//! parts share (the writer check, the scope's ids and call graph, referrers, diagnostics to errors and warnings). The
//! methods live beside the code they need:
//! - [`crud`]: list, get, create, update, delete and references;
//! - [`relocate`]: move, duplicate and rename, with their rollback journal;
//! - [`check`]: validate, lint, the schema and models of `roscoe.yaml`, and the diagram;
//! - [`settings`]: the effective `roscoe.yaml` for people, and the prices runs are charged by.

pub(crate) mod check;
pub(crate) mod crud;
pub(crate) mod relocate;
pub(crate) mod settings;

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::actor::Actor;
use crate::definition::{self, Diagnostic, NodeType, Options, Severity, Stage};
use crate::error::Error;
use crate::references::{NodeRef, subworkflow_refs};
use crate::scope::Scope;
use crate::source::Source;
use crate::sources::{Located, MAX_FILE_BYTES, Sources};
use crate::summaries::Summaries;

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

/// A referring file and its subworkflow nodes that name the target.
type FileRefs = (Located, Vec<NodeRef>);

fn detail(d: &Diagnostic) -> String {
    d.to_string()
}

/// One line per error of a validation (lint warnings left out).
fn errors(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(detail)
        .collect()
}

/// Turns a failed validation into the writer error of its stage.
fn invalid(diagnostics: &[Diagnostic]) -> Error {
    let details = errors(diagnostics);
    let first = diagnostics.iter().find(|d| d.severity == Severity::Error);
    match first.map(|d| d.code.stage()) {
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
            if let Entry::Vacant(slot) = calls.entry(located.id.clone()) {
                slot.insert(self.summaries.heading(&located).calls);
            }
        }
        Ok(calls)
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
}

/// Refuses workflow `id` when it has `script` nodes and `actor` may not make the server run scripts.
pub(crate) fn allow_scripts(workflow: &definition::Workflow, id: &str, actor: &Actor) -> Result<(), Error> {
    if !actor.may_exec && workflow.nodes.iter().any(|n| n.kind == NodeType::Script) {
        return Err(Error::InsufficientScope(actor.exec_refusal(&format!("workflow '{id}'"))));
    }
    Ok(())
}
