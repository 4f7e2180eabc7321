//! Whether a run that nobody starts by hand (a schedule's or a webhook's) may execute its workflow's scripts: only on
//! the word of someone holding `roscoe:exec`.
//!
//! A global workflow lives in the operator's own home, so the runs its triggers start may run its scripts. A repo
//! workflow's file is the project's, which others change (a pull, a merged branch, a shared folder): the runs its
//! triggers start may run scripts only while the file's text is the very text an exec holder approved, by saving it
//! through the workflow tools or with `roscoe schedules approve` ([`Runs::approve_triggers`]). After any other change
//! the triggers still fire, but a start of a workflow with `script` nodes is refused, saying how to approve it. The
//! text is compared as the start reads it (the SHA-256 of the file the run snapshots), so a file swapped between the
//! check and the start is not run on the old approval.

use std::path::Path;

use cairn_store::approvals::{self, Approval};
use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{Runs, workflow_subject};
use crate::actor::Actor;
use crate::clock::{now_ms, rfc3339};
use crate::definition::NodeType;
use crate::error::Error;
use crate::scope::Scope;
use crate::source::Source;
use crate::sources::Sources;

/// The approval of a repo workflow's current text for its triggers' runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approved {
    /// The workflow.
    pub workflow_id: String,
    /// The SHA-256 of its file's text that was approved.
    pub text_sha256: String,
    /// Who approved it.
    pub approved_by: String,
    /// When (RFC 3339).
    pub approved_at: String,
}

/// The SHA-256 of a workflow file's text, in hex.
pub(super) fn text_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The refusal of a triggered run of workflow `id` whose text no exec holder approved.
pub(super) fn unapproved(id: &str, actor: &Actor) -> Error {
    Error::InsufficientScope(format!(
        "workflow '{id}' has `script` nodes, and its file is not the text someone holding roscoe:exec approved for \
         the runs its triggers start ({} started this one); approve the current file with `roscoe schedules approve \
         {id}`, or save it through the workflow tools with a token that has roscoe:exec",
        actor.name
    ))
}

impl Runs {
    /// For a run a trigger of workflow `id` in `scope` starts: the approved text's SHA-256 of a repo workflow, which
    /// the start compares with the file it reads; `None` when none was approved.
    pub(super) async fn approved_text(&self, scope: &Scope, id: &str) -> Result<Option<String>, Error> {
        let mut conn = self.inner.store.read().await?;
        let found = approvals::approval(&mut conn, scope.project_id(), id).await?;
        Ok(found.map(|a| a.text_sha256))
    }

    /// `roscoe schedules approve`: approves the current text of repo workflow `id` for the runs its triggers start,
    /// as `actor`, who must hold `roscoe:exec`. Recorded.
    pub async fn approve_triggers(&self, scope: &Scope, id: &str, actor: &Actor) -> Result<Approved, Error> {
        if !actor.may_exec {
            return Err(Error::InsufficientScope(format!(
                "approving workflow '{id}' for its triggers lets them run its scripts, and {} lacks the roscoe:exec \
                 scope; use a token that has it",
                actor.name
            )));
        }
        if scope.root().is_none() {
            return Err(Error::refused(
                "invalid_input",
                "global workflows need no approval: the runs their triggers start may run their scripts (the home is \
                 the operator's); approve a repo workflow from its project",
            ));
        }
        let located = Sources::new(self.home(), scope).resolve(id, Some(Source::Repo))?;
        let text = located.read()?;
        self.approve_text(scope, id, &text, actor).await
    }

    /// After `actor` saved workflow `id` of `scope` as file `path` (the workflow tools, the REST API, the web
    /// editor): approves its text for its triggers when it is a repo workflow with triggers and scripts and `actor`
    /// holds `roscoe:exec`. An unreadable or invalid file approves nothing. A failure is logged: the write happened.
    pub async fn approve_saved(&self, scope: &Scope, id: &str, path: &Path, actor: &Actor) {
        if !actor.may_exec || scope.root().is_none() {
            return;
        }
        let Ok(text) = tokio::fs::read_to_string(path).await else { return };
        if let Err(error) = self.approve_workflow_text(scope, id, &text, actor).await {
            tracing::warn!("workflow '{id}' was written but its triggers could not be approved: {error}");
        }
    }

    async fn approve_workflow_text(&self, scope: &Scope, id: &str, text: &str, actor: &Actor) -> Result<(), Error> {
        let Ok((workflow, _)) = self.inner.definitions.validated(id, text) else { return Ok(()) };
        if workflow.triggers.is_empty() || !workflow.nodes.iter().any(|n| n.kind == NodeType::Script) {
            return Ok(());
        }
        self.approve_text(scope, id, text, actor).await.map(|_| ())
    }

    async fn approve_text(&self, scope: &Scope, id: &str, text: &str, actor: &Actor) -> Result<Approved, Error> {
        let approval = Approval {
            project_id: scope.project_id().to_owned(),
            workflow_id: id.to_owned(),
            text_sha256: text_sha256(text),
            approved_by: actor.name.clone(),
            approved_at: now_ms(),
        };
        let mut tx = self.inner.store.begin_write().await?;
        approvals::approve(&mut tx, &approval).await?;
        tx.commit().await?;
        let detail = json!({ "textSha256": approval.text_sha256 });
        self.record(actor, "approve_triggers", &workflow_subject(scope, id), detail).await?;
        Ok(Approved {
            workflow_id: approval.workflow_id,
            text_sha256: approval.text_sha256,
            approved_by: approval.approved_by,
            approved_at: rfc3339(approval.approved_at),
        })
    }
}
