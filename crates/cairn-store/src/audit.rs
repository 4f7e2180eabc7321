//! `audit_events`: who did what — human decisions, cancels, retries, run starts, workflow writes, sign-ins. One row
//! per action, found again by its subject (`run:<root id>`, `workflow:<scope>/<id>`, `token:<id>`).

use sqlx::{Any, Executor, Row};

use crate::Error;

/// One row of `audit_events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    /// A unique id (time-ordered).
    pub id: String,
    /// Epoch ms.
    pub ts: i64,
    /// The principal's id (`prn_…`).
    pub principal_id: String,
    /// How people know it: `Ada (person)`.
    pub principal: String,
    /// Where the action came from: `mcp`, `web`, `api`, `cli`.
    pub via: String,
    /// What was done: `decide`, `cancel`, `retry`, `start`, `create_workflow`, …
    pub action: String,
    /// What it was done to.
    pub subject: String,
    /// JSON details (the choice made, the reason given, …).
    pub detail: String,
}

/// Records one action.
pub async fn record<'e, E: Executor<'e, Database = Any>>(db: E, row: &AuditRow) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO audit_events (id, ts, principal_id, principal, via, action, subject, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&row.id)
    .bind(row.ts)
    .bind(&row.principal_id)
    .bind(&row.principal)
    .bind(&row.via)
    .bind(&row.action)
    .bind(&row.subject)
    .bind(&row.detail)
    .execute(db)
    .await?;
    Ok(())
}

/// The actions done to `subject`, oldest first (at most 500).
pub async fn for_subject<'e, E: Executor<'e, Database = Any>>(db: E, subject: &str) -> Result<Vec<AuditRow>, Error> {
    let rows = sqlx::query(
        "SELECT id, ts, principal_id, principal, via, action, subject, detail FROM audit_events \
         WHERE subject = $1 ORDER BY ts, id LIMIT 500",
    )
    .bind(subject)
    .fetch_all(db)
    .await?;
    let found: Result<Vec<AuditRow>, sqlx::Error> = rows
        .iter()
        .map(|row| {
            Ok(AuditRow {
                id: row.try_get("id")?,
                ts: row.try_get("ts")?,
                principal_id: row.try_get("principal_id")?,
                principal: row.try_get("principal")?,
                via: row.try_get("via")?,
                action: row.try_get("action")?,
                subject: row.try_get("subject")?,
                detail: row.try_get("detail")?,
            })
        })
        .collect();
    Ok(found?)
}
