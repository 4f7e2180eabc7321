//! `trigger_approvals`: the version of a repo workflow (the SHA-256 of its file's text) that someone holding
//! `roscoe:exec` approved for the runs its schedule and webhook triggers start, and who did.

use sqlx::Row;

use crate::Error;
use crate::runs::Connection;

/// One approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The project.
    pub project_id: String,
    /// The workflow id.
    pub workflow_id: String,
    /// The SHA-256 (hex) of the workflow file's text that was approved.
    pub text_sha256: String,
    /// Who approved it: `Ada (person)`.
    pub approved_by: String,
    /// When (epoch ms).
    pub approved_at: i64,
}

/// Records `approval`, replacing the workflow's earlier one.
pub async fn approve(conn: &mut Connection, approval: &Approval) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO trigger_approvals (project_id, workflow_id, text_sha256, approved_by, approved_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, workflow_id) DO UPDATE SET \
         text_sha256 = excluded.text_sha256, approved_by = excluded.approved_by, approved_at = excluded.approved_at",
    )
    .bind(&approval.project_id)
    .bind(&approval.workflow_id)
    .bind(&approval.text_sha256)
    .bind(&approval.approved_by)
    .bind(approval.approved_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// The approval of workflow `workflow_id` of project `project_id`, if it has one.
pub async fn approval(conn: &mut Connection, project_id: &str, workflow_id: &str) -> Result<Option<Approval>, Error> {
    let row = sqlx::query(
        "SELECT project_id, workflow_id, text_sha256, approved_by, approved_at FROM trigger_approvals \
         WHERE project_id = $1 AND workflow_id = $2",
    )
    .bind(project_id)
    .bind(workflow_id)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(Approval {
            project_id: row.try_get(0)?,
            workflow_id: row.try_get(1)?,
            text_sha256: row.try_get(2)?,
            approved_by: row.try_get(3)?,
            approved_at: row.try_get(4)?,
        })
    })
    .transpose()
}
