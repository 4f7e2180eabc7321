//! `script_output`: what running script nodes have printed so far, for live views in any process. Per node run and
//! stream, the last whole lines (bounded by the writer) and the count of bytes of whole lines printed in all; the
//! process running the script replaces its rows ([`put_script_output`], only while the node run is `running`), and
//! they are removed when the node run ends ([`clear_script_output`], in the transaction that stores its output).
//! None of it touches `workflow_runs`, so these writes never meet a run's compare-and-swap.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::Connection;
use crate::Error;
use crate::batch::Batch;

/// One stream of a running script, as last written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutputRow {
    /// The script's node run.
    pub node_run_id: String,
    /// `stdout` or `stderr`.
    pub stream: String,
    /// The node run's run.
    pub run_id: String,
    /// The workflow node.
    pub node_id: String,
    /// The last whole lines printed (starting at a line's start).
    pub tail: String,
    /// Bytes of whole lines printed in all; the tail is the end of them.
    pub total_bytes: i64,
    /// When it was written (epoch ms).
    pub updated_at: i64,
}

const COLUMNS: &str = "o.node_run_id, o.stream, o.run_id, o.node_id, o.tail, o.total_bytes, o.updated_at";

/// The write (for [`Store::write`](crate::Store::write)) that replaces each row of `streams`, as long as its node
/// run is still running: a late write after the node run ended changes nothing.
pub fn put_script_output(streams: &[ScriptOutputRow]) -> Batch {
    let mut batch = Batch::new();
    for row in streams {
        batch.push(
            "INSERT INTO script_output (node_run_id, stream, run_id, node_id, tail, total_bytes, updated_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS \
             (SELECT 1 FROM node_runs WHERE id = $8 AND status = 'running') \
             ON CONFLICT (node_run_id, stream) DO UPDATE SET tail = excluded.tail, \
             total_bytes = excluded.total_bytes, updated_at = excluded.updated_at",
            vec![
                (&row.node_run_id).into(),
                (&row.stream).into(),
                (&row.run_id).into(),
                (&row.node_id).into(),
                (&row.tail).into(),
                row.total_bytes.into(),
                row.updated_at.into(),
                (&row.node_run_id).into(),
            ],
        );
    }
    batch
}

/// The streams of node run `node_run_id` while it runs (none once it ended), stdout first.
pub async fn script_output(conn: &mut Connection, node_run_id: &str) -> Result<Vec<ScriptOutputRow>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM script_output o JOIN node_runs n ON n.id = o.node_run_id \
         WHERE o.node_run_id = $1 AND n.status = 'running' ORDER BY o.stream DESC"
    )))
    .bind(node_run_id)
    .fetch_all(conn)
    .await?;
    Ok(rows.iter().map(row_from).collect::<Result<_, _>>()?)
}

/// The streams of every script still running in the run tree rooted at `root_run_id`.
pub async fn tree_script_output(conn: &mut Connection, root_run_id: &str) -> Result<Vec<ScriptOutputRow>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM script_output o JOIN node_runs n ON n.id = o.node_run_id \
         JOIN workflow_runs r ON r.id = o.run_id WHERE r.root_run_id = $1 AND n.status = 'running' \
         ORDER BY o.node_run_id, o.stream DESC"
    )))
    .bind(root_run_id)
    .fetch_all(conn)
    .await?;
    Ok(rows.iter().map(row_from).collect::<Result<_, _>>()?)
}

/// Removes node run `node_run_id`'s streams (it ended; its output is stored with it).
pub async fn clear_script_output(conn: &mut Connection, node_run_id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM script_output WHERE node_run_id = $1").bind(node_run_id).execute(conn).await?;
    Ok(())
}

fn row_from(row: &AnyRow) -> Result<ScriptOutputRow, sqlx::Error> {
    Ok(ScriptOutputRow {
        node_run_id: row.try_get("node_run_id")?,
        stream: row.try_get("stream")?,
        run_id: row.try_get("run_id")?,
        node_id: row.try_get("node_id")?,
        tail: row.try_get("tail")?,
        total_bytes: row.try_get("total_bytes")?,
        updated_at: row.try_get("updated_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{NodeRunRow, insert_run, upsert_node_run};
    use crate::testing::{TestStore, node_row, run_row};

    fn script_node(id: &str, status: &str) -> NodeRunRow {
        let node = node_row(id, "r1", 1);
        NodeRunRow { node_id: "build".into(), node_type: "script".into(), status: status.into(), attempts: 1, ..node }
    }

    fn stream(name: &str, tail: &str, total: i64) -> ScriptOutputRow {
        ScriptOutputRow {
            node_run_id: "n1".into(),
            stream: name.into(),
            run_id: "r1".into(),
            node_id: "build".into(),
            tail: tail.into(),
            total_bytes: total,
            updated_at: 5,
        }
    }

    #[tokio::test]
    async fn a_running_scripts_streams_are_replaced_and_go_when_it_ends() {
        let test = TestStore::new().await;
        let store = test.store.clone();
        let mut tx = store.begin_write().await.unwrap();
        insert_run(&mut tx, &run_row("r1", "p", 1)).await.unwrap();
        upsert_node_run(&mut tx, &script_node("n1", "running")).await.unwrap();
        tx.commit().await.unwrap();

        store.write(put_script_output(&[stream("stdout", "one\n", 4), stream("stderr", "oops\n", 5)])).await.unwrap();
        store.write(put_script_output(&[stream("stdout", "one\ntwo\n", 8)])).await.unwrap();
        let mut conn = store.read().await.unwrap();
        let run = crate::runs::get_run(&mut conn, "r1").await.unwrap().unwrap();
        assert_eq!(run, run_row("r1", "p", 1), "the run's row (and its version) is untouched");
        let rows = script_output(&mut conn, "n1").await.unwrap();
        assert_eq!(rows, [stream("stdout", "one\ntwo\n", 8), stream("stderr", "oops\n", 5)], "stdout first, replaced");
        assert_eq!(tree_script_output(&mut conn, "r1").await.unwrap(), rows, "the tree's running scripts");
        drop(conn);

        let mut tx = store.begin_write().await.unwrap();
        upsert_node_run(&mut tx, &script_node("n1", "completed")).await.unwrap();
        tx.commit().await.unwrap();
        let mut conn = store.read().await.unwrap();
        let count = sqlx::query("SELECT COUNT(*) AS n FROM script_output").fetch_one(&mut *conn).await.unwrap();
        let left: i64 = count.get("n");
        assert_eq!(left, 0, "the ended node run's live output is gone");
        drop(conn);
        store.write(put_script_output(&[stream("stdout", "late\n", 13)])).await.unwrap();
        let mut conn = store.read().await.unwrap();
        assert!(script_output(&mut conn, "n1").await.unwrap().is_empty(), "a late write changes nothing");
    }
}
