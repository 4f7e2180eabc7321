//! Preparing a new run: the workflow resolved, read and validated, its config snapshotted with the model settings of
//! `roscoe.yaml` (default, aliases, prices), the input checked, and the row that stores it — started by whom, with
//! which right to run scripts — inserted. Top-level runs, child runs and test runs all start here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_store::runs::{self as rows, RunRow};
use serde_json::Value;

use super::trigger_exec::text_sha256;
use super::lease::LEASE_MS;
use super::settings::Settings;
use super::{Runs, convert, prices};
use crate::actor::Actor;
use crate::authoring_guide::{BUILTIN_DEFAULT_MODEL, Models};
use crate::clock::now_ms;
use crate::definition::Workflow;
use crate::engine::{self, ModelSettings, Run, RunStatus};
use crate::error::Error;
use crate::scope::Scope;
use crate::source::Source;
use crate::sources::Sources;

/// Who a new run is started by, as its row keeps it.
#[derive(Debug, Clone)]
pub(super) struct Starter {
    /// `mcp`, `web`, `cli` or `test`.
    pub(super) origin: String,
    /// The principal's name.
    pub(super) name: Option<String>,
    /// Whether the run may run scripts.
    pub(super) exec_allowed: bool,
}

impl Starter {
    /// The starter of a run `actor` starts.
    pub(super) fn of(actor: &Actor) -> Starter {
        Starter { origin: actor.via.to_owned(), name: Some(actor.name.clone()), exec_allowed: actor.may_exec }
    }
}

/// A workflow ready to run.
pub(super) struct Prepared {
    pub(super) workflow: Arc<Workflow>,
    pub(super) config: Value,
    pub(super) models: ModelSettings,
    pub(super) source: Source,
    pub(super) path: String,
    pub(super) dir: String,
    /// The SHA-256 of the file's text (what a trigger's approval names; `trigger_exec.rs`).
    pub(super) text_sha256: String,
}

/// The scope a run was started in.
pub(super) fn run_scope(run: &Run) -> Scope {
    match &run.project_root {
        Some(root) => Scope::Project {
            cwd: PathBuf::from(root),
            root: PathBuf::from(root),
            project_id: run.project_id.clone(),
        },
        None => Scope::Global,
    }
}

impl Runs {
    /// Resolves, reads and validates a workflow for a new run (validated again only when its file changed).
    pub(super) fn prepare(&self, scope: &Scope, id: &str, source: Option<Source>) -> Result<Prepared, Error> {
        self.prepare_read(scope, id, source, &Settings::read(self.home(), scope.root()))
    }

    /// [`Runs::prepare`] with `roscoe.yaml` already read as `settings` (its prices; when it cannot be read, the
    /// built-in ones).
    pub(super) fn prepare_read(
        &self,
        scope: &Scope,
        id: &str,
        source: Option<Source>,
        settings: &Result<Settings, String>,
    ) -> Result<Prepared, Error> {
        let sources = Sources::new(self.home(), scope);
        let located = sources.resolve(id, source)?;
        let text = located.read()?;
        let (workflow, config) = self.inner.definitions.validated(id, &text)?;
        Ok(Prepared {
            models: self.model_settings_read(scope, settings),
            workflow,
            config,
            source: located.source,
            path: located.path.display().to_string(),
            dir: located.assets().display().to_string(),
            text_sha256: text_sha256(&text),
        })
    }

    /// The model settings of `scope`: the default model and aliases, and the prices — cairn's built-in Claude prices
    /// with `roscoe.yaml`'s over them.
    pub(super) fn model_settings(&self, scope: &Scope) -> ModelSettings {
        self.model_settings_read(scope, &Settings::read(self.home(), scope.root()))
    }

    /// [`Runs::model_settings`] with `roscoe.yaml` already read as `settings`.
    fn model_settings_read(&self, scope: &Scope, settings: &Result<Settings, String>) -> ModelSettings {
        let models = self.inner.service.models(scope).unwrap_or_else(|_| Models {
            default: BUILTIN_DEFAULT_MODEL.to_owned(),
            available: Vec::new(),
            aliases: Vec::new(),
        });
        // A roscoe.yaml that cannot be read has no prices of its own: the built-in ones apply.
        let pricing = settings.as_ref().map_or_else(|_| prices::builtin(), |s| s.pricing.clone());
        ModelSettings {
            default: models.default,
            aliases: models.aliases.into_iter().collect(),
            pricing,
        }
    }

    /// The row of a new run of `prepared` in `scope` with `input` (checked against the workflow's `inputs`), started
    /// by `starter`; a child run's when `parent` is given. Held by this process until its first pause.
    pub(super) fn new_run_row(
        &self,
        scope: &Scope,
        prepared: &Prepared,
        input: Option<&Value>,
        starter: &Starter,
        kind: &str,
        parent: Option<&Run>,
    ) -> Result<RunRow, Error> {
        let input = engine::validate_inputs(&prepared.workflow, input).map_err(|message| {
            Error::InvalidInput(format!("{message}; see the workflow's `inputs`"))
        })?;
        let id = crate::clock::new_id();
        let now = now_ms();
        Ok(RunRow {
            root_run_id: parent.map_or_else(|| id.clone(), |p| p.root_run_id.clone()),
            parent_run_id: parent.map(|p| p.id.clone()),
            parent_node_run_id: None,
            depth: parent.map_or(0, |p| i64::from(p.depth) + 1),
            id,
            project_id: scope.project_id().to_owned(),
            project_root: scope.root().map(|r| r.display().to_string()),
            workflow_id: prepared.workflow.id.clone(),
            workflow_name: prepared.workflow.id.clone(),
            workflow_description: prepared.workflow.description.clone(),
            workflow_source: prepared.source.as_str().to_owned(),
            workflow_path: prepared.path.clone(),
            workflow_dir: prepared.dir.clone(),
            workflow_snapshot: convert::snapshot(&prepared.config, &prepared.models),
            source: starter.origin.clone(),
            kind: kind.to_owned(),
            status: RunStatus::Running.as_str().to_owned(),
            current_node_id: None,
            pending_step: None,
            awaiting_child_run_id: None,
            input: input.to_string(),
            context: "{}".into(),
            output: None,
            error: None,
            error_code: None,
            host: None,
            owner_pid: Some(i64::from(self.inner.pid)),
            lease_expires_at: Some(now + LEASE_MS),
            attempt: 1,
            total_cost_usd: 0.0,
            metered_cost_usd: 0.0,
            subscription_equiv_cost_usd: 0.0,
            billing_mode: "none".into(),
            input_tokens: 0,
            output_tokens: 0,
            started_at: now,
            completed_at: None,
            updated_at: now,
            started_by: starter.name.clone(),
            exec_allowed: starter.exec_allowed,
            execution: "host".into(),
            budget: None,
            usage: None,
            version: 0,
        })
    }

    /// Inserts a new run's row (and records that its project was used).
    pub(super) async fn insert(&self, row: &RunRow) -> Result<(), Error> {
        let mut tx = rows::begin(&self.inner.store).await?;
        if let Some(root) = &row.project_root {
            let name = Path::new(root)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            rows::touch_project(&mut tx, &row.project_id, root, &name, row.started_at).await?;
        }
        rows::insert_run(&mut tx, row).await?;
        rows::commit(tx).await?;
        if row.parent_run_id.is_none() {
            super::followed::note(&row.id);
        }
        Ok(())
    }
}
