//! `node_runs`: one row per visit of a node (and per child of a fan-out node run), inserted or replaced as the run
//! moves, read back in execution order. A script's node run that ends takes its live output (`script_output`) with
//! it.

use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};

use super::Connection;
use crate::Error;

/// One row of `node_runs`: one visit of a node, or a child of a fan-out node run.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRunRow {
    /// Lower-case alphanumeric id.
    pub id: String,
    /// Its run.
    pub run_id: String,
    /// The fan-out node run this is a child of.
    pub parent_node_run_id: Option<String>,
    /// Order within the run.
    pub seq: i64,
    /// The workflow node.
    pub node_id: String,
    /// The executor type, or a child kind (`consensus_agent`, `map_branch`, …).
    pub node_type: String,
    /// Node-run status.
    pub status: String,
    /// 1-based visit number.
    pub iteration: i64,
    /// Submissions / executions so far.
    pub attempts: i64,
    /// Current fan-out phase.
    pub phase: Option<String>,
    /// JSON phase bookkeeping.
    pub phase_state: Option<String>,
    /// Model used.
    pub model: Option<String>,
    /// JSON input.
    pub input: Option<String>,
    /// JSON output.
    pub output: Option<String>,
    /// Error text.
    pub error: Option<String>,
    /// Event emitted.
    pub event: Option<String>,
    /// JSON array of warnings.
    pub warnings: Option<String>,
    /// The child run of a subworkflow node.
    pub child_run_id: Option<String>,
    /// Epoch ms.
    pub started_at: i64,
    /// Epoch ms.
    pub completed_at: Option<i64>,
    /// Milliseconds.
    pub duration_ms: Option<i64>,
    /// USD.
    pub cost_usd: Option<f64>,
    /// Tokens.
    pub input_tokens: Option<i64>,
    /// Tokens.
    pub output_tokens: Option<i64>,
    /// JSON usage: the cost split by billing, cache tokens and each model call made.
    pub usage: Option<String>,
}

const NODE_COLUMNS: &str = "id, run_id, parent_node_run_id, seq, node_id, node_type, status, iteration, attempts, \
    phase, phase_state, model, input, output, error, event, warnings, child_run_id, started_at, completed_at, \
    duration_ms, cost_usd, input_tokens, output_tokens, usage";

/// The columns of a node run fixed when it is made: its id, its run and its place in the run. Every index on
/// `node_runs` is over these alone, so replacing a node run rewrites no index.
pub(crate) const FIXED_NODE_COLUMNS: [&str; 3] = ["id", "run_id", "seq"];

/// Inserts or replaces a node run (all but [`FIXED_NODE_COLUMNS`], which stay as it was made).
pub async fn upsert_node_run(conn: &mut Connection, n: &NodeRunRow) -> Result<(), Error> {
    let updates: Vec<String> = NODE_COLUMNS
        .split(", ")
        .filter(|column| !FIXED_NODE_COLUMNS.contains(column))
        .map(|column| format!("{column} = excluded.{column}"))
        .collect();
    let sql = format!(
        "INSERT INTO node_runs ({NODE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
         $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25) ON CONFLICT (id) DO UPDATE SET {}",
        updates.join(", ")
    );
    sqlx::query(AssertSqlSafe(sql))
        .bind(&n.id)
        .bind(&n.run_id)
        .bind(&n.parent_node_run_id)
        .bind(n.seq)
        .bind(&n.node_id)
        .bind(&n.node_type)
        .bind(&n.status)
        .bind(n.iteration)
        .bind(n.attempts)
        .bind(&n.phase)
        .bind(&n.phase_state)
        .bind(&n.model)
        .bind(&n.input)
        .bind(&n.output)
        .bind(&n.error)
        .bind(&n.event)
        .bind(&n.warnings)
        .bind(&n.child_run_id)
        .bind(n.started_at)
        .bind(n.completed_at)
        .bind(n.duration_ms)
        .bind(n.cost_usd)
        .bind(n.input_tokens)
        .bind(n.output_tokens)
        .bind(&n.usage)
        .execute(&mut *conn)
        .await?;
    if n.node_type == "script" && n.status != "running" {
        // Its whole output is stored now; what it printed while running is superseded.
        super::clear_script_output(conn, &n.id).await?;
    }
    Ok(())
}

fn node_from(row: &AnyRow) -> Result<NodeRunRow, sqlx::Error> {
    Ok(NodeRunRow {
        id: row.try_get("id")?,
        run_id: row.try_get("run_id")?,
        parent_node_run_id: row.try_get("parent_node_run_id")?,
        seq: row.try_get("seq")?,
        node_id: row.try_get("node_id")?,
        node_type: row.try_get("node_type")?,
        status: row.try_get("status")?,
        iteration: row.try_get("iteration")?,
        attempts: row.try_get("attempts")?,
        phase: row.try_get("phase")?,
        phase_state: row.try_get("phase_state")?,
        model: row.try_get("model")?,
        input: row.try_get("input")?,
        output: row.try_get("output")?,
        error: row.try_get("error")?,
        event: row.try_get("event")?,
        warnings: row.try_get("warnings")?,
        child_run_id: row.try_get("child_run_id")?,
        started_at: row.try_get("started_at")?,
        completed_at: row.try_get("completed_at")?,
        duration_ms: row.try_get("duration_ms")?,
        cost_usd: row.try_get("cost_usd")?,
        input_tokens: row.try_get("input_tokens")?,
        output_tokens: row.try_get("output_tokens")?,
        usage: row.try_get("usage")?,
    })
}

/// One node run by id.
pub async fn get_node_run(conn: &mut Connection, id: &str) -> Result<Option<NodeRunRow>, Error> {
    let sql = format!("SELECT {NODE_COLUMNS} FROM node_runs WHERE id = $1");
    let row = sqlx::query(AssertSqlSafe(sql)).bind(id).fetch_optional(conn).await?;
    Ok(row.as_ref().map(node_from).transpose()?)
}

/// The top-level node run `run_id` is sitting on (running or paused), if any.
pub async fn open_node_run(conn: &mut Connection, run_id: &str) -> Result<Option<NodeRunRow>, Error> {
    let sql = format!(
        "SELECT {NODE_COLUMNS} FROM node_runs WHERE run_id = $1 AND parent_node_run_id IS NULL \
         AND status IN ('running', 'paused') ORDER BY seq DESC LIMIT 1"
    );
    let row = sqlx::query(AssertSqlSafe(sql)).bind(run_id).fetch_optional(conn).await?;
    Ok(row.as_ref().map(node_from).transpose()?)
}

/// Every node run of `run_id` (children included), in execution order.
pub async fn node_runs(conn: &mut Connection, run_id: &str) -> Result<Vec<NodeRunRow>, Error> {
    let sql = format!("SELECT {NODE_COLUMNS} FROM node_runs WHERE run_id = $1 ORDER BY seq, id");
    let rows = sqlx::query(AssertSqlSafe(sql)).bind(run_id).fetch_all(conn).await?;
    Ok(rows.iter().map(node_from).collect::<Result<_, _>>()?)
}

/// The highest node-run `seq` of `run_id` (0 when it has none).
pub async fn last_node_seq(conn: &mut Connection, run_id: &str) -> Result<i64, Error> {
    let row = sqlx::query("SELECT MAX(seq) AS seq FROM node_runs WHERE run_id = $1").bind(run_id).fetch_one(conn).await?;
    Ok(row.try_get::<Option<i64>, _>("seq")?.unwrap_or(0))
}
