//! `workflow_schedules`: per project, workflow and trigger, the last slot that started a run, whether the schedule is
//! paused, and what the last catch-up skipped; and the projects a scheduler looks in.
//!
//! A schedule's row is made when a scheduler first sees it ([`add_schedule`], which keeps a row already there). A
//! due slot is claimed with [`claim_slot`], a compare-and-set on `last_slot`: of any number of servers that see the
//! slot, one moves `last_slot` on and starts the run ([`set_schedule_run`] records it), and the others change
//! nothing. [`pause_schedules`] and [`resume_schedules`] act on every trigger of a workflow; resuming
//! sets `last_slot` to the moment of the resume, so the slots that passed while paused start nothing.

use sqlx::Row;

use crate::Error;
use crate::runs::Connection;

/// One schedule's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleRow {
    /// The project, `""` for the global namespace.
    pub project_id: String,
    /// The workflow id.
    pub workflow_id: String,
    /// The trigger: its kind and expression (`every 2s`, `schedule 0 9 * * 1-5 Europe/Paris`).
    pub trigger_key: String,
    /// The last slot that started a run, or when the schedule was first seen or resumed (epoch ms).
    pub last_slot: i64,
    /// Whether it is paused.
    pub paused: bool,
    /// The run the last slot started.
    pub last_run_id: Option<String>,
    /// How many slots the last catch-up passed over (kept until another catch-up).
    pub last_skipped: i64,
    /// When the row last changed (epoch ms).
    pub updated_at: i64,
}

/// What [`claim_slot`] claims: moving schedule `key`'s `last_slot` from `from` to `slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotClaim<'a> {
    /// The project (`""` = global).
    pub project_id: &'a str,
    /// The workflow id.
    pub workflow_id: &'a str,
    /// The trigger key.
    pub trigger_key: &'a str,
    /// The `last_slot` the claimer read.
    pub from: i64,
    /// The slot it starts a run for.
    pub slot: i64,
    /// The slots between `from` and `slot` that start nothing.
    pub skipped: i64,
    /// Now (epoch ms).
    pub now: i64,
}

/// The schedules of `project_id` (`""` = global), by workflow and trigger.
pub async fn schedules(conn: &mut Connection, project_id: &str) -> Result<Vec<ScheduleRow>, Error> {
    let rows = sqlx::query(
        "SELECT project_id, workflow_id, trigger_key, last_slot, paused, last_run_id, last_skipped, updated_at \
         FROM workflow_schedules WHERE project_id = $1 ORDER BY workflow_id, trigger_key",
    )
    .bind(project_id)
    .fetch_all(conn)
    .await?;
    rows.iter().map(schedule_row).collect()
}

/// Makes the row of a schedule first seen now, unless it has one; `paused` when its workflow's schedules are.
/// Returns whether it made it.
pub async fn add_schedule(conn: &mut Connection, row: &ScheduleRow) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO workflow_schedules (project_id, workflow_id, trigger_key, last_slot, paused, last_run_id, \
         last_skipped, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (project_id, workflow_id, trigger_key) DO NOTHING",
    )
    .bind(&row.project_id)
    .bind(&row.workflow_id)
    .bind(&row.trigger_key)
    .bind(row.last_slot)
    .bind(i64::from(row.paused))
    .bind(&row.last_run_id)
    .bind(row.last_skipped)
    .bind(row.updated_at)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Claims a due slot (see [`SlotClaim`]): true when this call moved `last_slot` on, false when another claimer did
/// first or the schedule is paused. The claimer then starts the slot's run and records it ([`set_schedule_run`]).
pub async fn claim_slot(conn: &mut Connection, claim: &SlotClaim<'_>) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE workflow_schedules SET last_slot = $5, last_run_id = NULL, updated_at = $7, \
         last_skipped = CASE WHEN $6 > 0 THEN $6 ELSE last_skipped END \
         WHERE project_id = $1 AND workflow_id = $2 AND trigger_key = $3 AND last_slot = $4 AND paused = 0",
    )
    .bind(claim.project_id)
    .bind(claim.workflow_id)
    .bind(claim.trigger_key)
    .bind(claim.from)
    .bind(claim.slot)
    .bind(claim.skipped)
    .bind(claim.now)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records that slot `slot` of schedule (`project_id`, `workflow_id`, `trigger_key`) started run `run_id` (unless a
/// later slot was claimed meanwhile).
pub async fn set_schedule_run(
    conn: &mut Connection,
    key: (&str, &str, &str),
    slot: i64,
    run_id: &str,
) -> Result<(), Error> {
    sqlx::query(
        "UPDATE workflow_schedules SET last_run_id = $5 \
         WHERE project_id = $1 AND workflow_id = $2 AND trigger_key = $3 AND last_slot = $4",
    )
    .bind(key.0)
    .bind(key.1)
    .bind(key.2)
    .bind(slot)
    .bind(run_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Pauses every schedule of workflow `workflow_id` in `project_id`; returns how many rows it changed.
pub async fn pause_schedules(
    conn: &mut Connection,
    project_id: &str,
    workflow_id: &str,
    now: i64,
) -> Result<u64, Error> {
    let done = sqlx::query(
        "UPDATE workflow_schedules SET paused = 1, updated_at = $3 \
         WHERE project_id = $1 AND workflow_id = $2 AND paused = 0",
    )
    .bind(project_id)
    .bind(workflow_id)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// Resumes every paused schedule of workflow `workflow_id` in `project_id` from `now` (the slots that passed while
/// it was paused start nothing); returns how many rows it changed.
pub async fn resume_schedules(
    conn: &mut Connection,
    project_id: &str,
    workflow_id: &str,
    now: i64,
) -> Result<u64, Error> {
    let done = sqlx::query(
        "UPDATE workflow_schedules SET paused = 0, last_slot = $3, updated_at = $3 \
         WHERE project_id = $1 AND workflow_id = $2 AND paused = 1",
    )
    .bind(project_id)
    .bind(workflow_id)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// Every project the database knows (a run was started there): `(project id, root path)`, by id.
pub async fn known_projects(conn: &mut Connection) -> Result<Vec<(String, String)>, Error> {
    let rows = sqlx::query("SELECT id, root_path FROM projects ORDER BY id").fetch_all(conn).await?;
    rows.iter().map(|r| Ok((r.try_get("id")?, r.try_get("root_path")?))).collect()
}

fn schedule_row(r: &sqlx::any::AnyRow) -> Result<ScheduleRow, Error> {
    Ok(ScheduleRow {
        project_id: r.try_get("project_id")?,
        workflow_id: r.try_get("workflow_id")?,
        trigger_key: r.try_get("trigger_key")?,
        last_slot: r.try_get("last_slot")?,
        paused: r.try_get::<i64, _>("paused")? != 0,
        last_run_id: r.try_get("last_run_id")?,
        last_skipped: r.try_get("last_skipped")?,
        updated_at: r.try_get("updated_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestStore;

    fn row(key: &str, last_slot: i64) -> ScheduleRow {
        ScheduleRow {
            project_id: "p".into(),
            workflow_id: "nightly".into(),
            trigger_key: key.into(),
            last_slot,
            paused: false,
            last_run_id: None,
            last_skipped: 0,
            updated_at: last_slot,
        }
    }

    fn claim(from: i64, slot: i64) -> SlotClaim<'static> {
        SlotClaim {
            project_id: "p",
            workflow_id: "nightly",
            trigger_key: "every 2s",
            from,
            slot,
            skipped: (slot - from) / 2_000 - 1,
            now: slot + 5,
        }
    }

    #[tokio::test]
    async fn a_slot_is_claimed_once_and_a_paused_schedule_not_at_all() {
        let test = TestStore::new().await;
        let mut tx = test.store.begin_write().await.unwrap();
        assert!(add_schedule(&mut tx, &row("every 2s", 1_000)).await.unwrap());
        assert!(!add_schedule(&mut tx, &row("every 2s", 9_000)).await.unwrap(), "a row already there is kept");
        assert!(claim_slot(&mut tx, &claim(1_000, 2_000)).await.unwrap());
        assert!(!claim_slot(&mut tx, &claim(1_000, 2_000)).await.unwrap(), "the second claimer read an old slot");
        assert!(claim_slot(&mut tx, &claim(2_000, 10_000)).await.unwrap());
        let on_time = claim_slot(&mut tx, &claim(10_000, 12_000)).await.unwrap();
        assert!(on_time, "a slot on time keeps the catch-up's count");
        set_schedule_run(&mut tx, ("p", "nightly", "every 2s"), 2_000, "r1").await.unwrap();
        set_schedule_run(&mut tx, ("p", "nightly", "every 2s"), 10_000, "r3").await.unwrap();
        set_schedule_run(&mut tx, ("p", "nightly", "every 2s"), 10_000, "r4").await.unwrap();
        tx.commit().await.unwrap();
        let mut conn = test.store.read().await.unwrap();
        let found = schedules(&mut conn, "p").await.unwrap();
        drop(conn);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].last_slot, found[0].last_skipped), (12_000, 3));
        assert_eq!(found[0].last_run_id, None, "the run of slot 12000 is not recorded yet");

        let mut tx = test.store.begin_write().await.unwrap();
        assert_eq!(pause_schedules(&mut tx, "p", "nightly", 11_000).await.unwrap(), 1);
        assert!(!claim_slot(&mut tx, &claim(12_000, 14_000)).await.unwrap(), "paused");
        assert_eq!(resume_schedules(&mut tx, "p", "nightly", 20_500).await.unwrap(), 1);
        assert_eq!(resume_schedules(&mut tx, "p", "nightly", 20_600).await.unwrap(), 0, "not paused any more");
        tx.commit().await.unwrap();
        let mut conn = test.store.read().await.unwrap();
        let found = schedules(&mut conn, "p").await.unwrap();
        assert_eq!((found[0].last_slot, found[0].paused, found[0].last_skipped), (20_500, false, 3));
        assert!(schedules(&mut conn, "").await.unwrap().is_empty());
        assert!(known_projects(&mut conn).await.unwrap().is_empty());
    }
}
