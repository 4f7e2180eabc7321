//! Moving runs between databases (`cairn export` / `cairn import`): the rows of the run tables read as plain cells,
//! column by column, so a column a later migration adds travels without this file changing, and written back in one
//! transaction, all or nothing.

use sqlx::any::{AnyRow, AnyTypeInfoKind};
use sqlx::{AssertSqlSafe, Column, Row, ValueRef};

use crate::{Error, Store};

/// The tables that hold runs, in the order rows can be inserted (a row's references come before it), each with the
/// order its rows are read in.
pub const RUN_TABLES: &[(&str, &str)] = &[
    ("projects", "id"),
    ("workflow_runs", "depth, started_at, id"),
    ("node_runs", "run_id, seq, id"),
    ("run_events", "run_id, seq"),
    ("run_timers", "run_id"),
    ("audit_events", "ts, id"),
    ("workflow_schedules", "project_id, workflow_id, trigger_key"),
    ("trigger_approvals", "project_id, workflow_id"),
    ("webhook_deliveries", "hook, delivery_id"),
];

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// SQL `NULL`.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
}

/// One row of one of [`RUN_TABLES`]: its columns and values, in the table's order.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    /// The table.
    pub table: String,
    /// `(column, value)`.
    pub cells: Vec<(String, Cell)>,
}

impl Store {
    /// Every row of [`RUN_TABLES`], table by table.
    pub async fn export_runs(&self) -> Result<Vec<TableRow>, Error> {
        let mut rows = Vec::new();
        for (table, order) in RUN_TABLES {
            let sql = format!("SELECT * FROM {table} ORDER BY {order}");
            let read = sqlx::query(AssertSqlSafe(sql)).fetch_all(&self.pool).await?;
            for row in &read {
                rows.push(TableRow { table: (*table).to_owned(), cells: cells(row)? });
            }
        }
        Ok(rows)
    }

    /// Inserts `rows` (of [`RUN_TABLES`], in their order) in one write transaction: a row whose key is already there,
    /// a table that is not a run table, or a column the table does not have fails the import and writes nothing.
    /// `NULL` cells are left out, so the column takes its default.
    pub async fn import_runs(&self, rows: &[TableRow]) -> Result<(), Error> {
        let mut tx = self.begin_write().await?;
        for row in rows {
            // Names go into the SQL text: the table must be one of ours and each column a plain name.
            let Some((table, _)) = RUN_TABLES.iter().find(|(table, _)| *table == row.table) else {
                return Err(Error::Import(format!("'{}' is not a table of runs", row.table)));
            };
            let given: Vec<&(String, Cell)> = row.cells.iter().filter(|(_, cell)| *cell != Cell::Null).collect();
            if let Some((column, _)) = given.iter().find(|(c, _)| !c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')) {
                return Err(Error::Import(format!("'{column}' is not a column name")));
            }
            let columns: Vec<&str> = given.iter().map(|(c, _)| c.as_str()).collect();
            let places: Vec<String> = (1..=given.len()).map(|n| format!("${n}")).collect();
            let sql = format!("INSERT INTO {table} ({}) VALUES ({})", columns.join(", "), places.join(", "));
            let mut query = sqlx::query(AssertSqlSafe(sql));
            for (_, cell) in &given {
                query = match cell {
                    Cell::Int(n) => query.bind(*n),
                    Cell::Real(x) => query.bind(*x),
                    Cell::Text(text) => query.bind(text.clone()),
                    Cell::Null => query, // left out above
                };
            }
            query.execute(&mut *tx).await.map_err(|e| Error::Import(refused(row, &e)))?;
        }
        tx.commit().await
    }
}

/// Why the database refused `row`: a row already there is named (the project's folder, the run and its workflow),
/// not given as the database's constraint text.
fn refused(row: &TableRow, error: &sqlx::Error) -> String {
    let what = row_name(row);
    match error.as_database_error() {
        Some(db) if db.is_unique_violation() => format!(
            "{what} is already in this database (an export is imported once; to import it again, use another \
             database or delete what it holds first)"
        ),
        _ => format!("{what}: {error}"),
    }
}

/// A row as a person knows it: `project /src/app (id …)`, `run … of workflow ship`.
fn row_name(row: &TableRow) -> String {
    let cell = |column: &str| {
        let found = row.cells.iter().find(|(name, _)| name == column).map(|(_, cell)| cell);
        match found {
            Some(Cell::Text(text)) => text.clone(),
            Some(Cell::Int(n)) => n.to_string(),
            _ => "?".to_owned(),
        }
    };
    match row.table.as_str() {
        "projects" => format!("the project {} (id {})", cell("root_path"), cell("id")),
        "workflow_runs" => format!("run {} of workflow {}", cell("id"), cell("workflow_id")),
        "node_runs" => format!("node run {} of run {}", cell("id"), cell("run_id")),
        "run_events" => format!("event {} of run {}", cell("seq"), cell("run_id")),
        "run_timers" => format!("the timer of run {}", cell("run_id")),
        table => format!("a row of {table} (id {})", cell("id")),
    }
}

fn cells(row: &AnyRow) -> Result<Vec<(String, Cell)>, Error> {
    let mut cells = Vec::with_capacity(row.columns().len());
    for (i, column) in row.columns().iter().enumerate() {
        let raw = row.try_get_raw(i)?;
        let kind = if raw.is_null() { AnyTypeInfoKind::Null } else { raw.type_info().kind() };
        let cell = match kind {
            AnyTypeInfoKind::Null => Cell::Null,
            AnyTypeInfoKind::Bool => Cell::Int(i64::from(row.try_get::<bool, _>(i)?)),
            AnyTypeInfoKind::SmallInt | AnyTypeInfoKind::Integer | AnyTypeInfoKind::BigInt => Cell::Int(row.try_get(i)?),
            AnyTypeInfoKind::Real | AnyTypeInfoKind::Double => Cell::Real(row.try_get(i)?),
            AnyTypeInfoKind::Text => Cell::Text(row.try_get(i)?),
            AnyTypeInfoKind::Blob => {
                return Err(Error::Import(format!("column {} holds bytes, which an export cannot carry", column.name())));
            }
        };
        cells.push((column.name().to_owned(), cell));
    }
    Ok(cells)
}
