//! Statements that make one change together, sent to the database in as few round trips as the backend allows.
//!
//! A SQLite connection runs on a thread of its own, and every statement sent to it is a hand-off to that thread and
//! back; inside a write transaction those hand-offs are what the process's other writers wait for. So a [`Batch`]
//! goes to SQLite as one multi-statement query — one hand-off however many statements it holds, and as a transaction
//! of its own ([`Store::write`](crate::Store::write)) the `BEGIN IMMEDIATE` and `COMMIT` travel in the same query.
//! Postgres, whose extended protocol takes one statement per query, gets the statements one by one — or, for a batch
//! whose statements do not read each other's writes ([`Batch::one_snapshot`]), all of them as one statement:
//! data-modifying `WITH` queries, which share one snapshot, with the guards written into it. As a transaction of its
//! own that write is then one round trip, with no `BEGIN` or `COMMIT`.
//!
//! A statement can be guarded ([`Batch::push_if_changed`]): it runs only if the one before it changed a row. That is
//! how a compare-and-swap and the log entries that go with it are one batch: if the swap loses, nothing is written.
//! SQLite checks the guard in SQL (`changes()`), Postgres between statements, or in SQL too when the batch is one
//! statement (`EXISTS` on the statement before). Each statement is written with
//! its own placeholders `$1…$n` (and no other `$`); the batch numbers them on for SQLite.
//!
//! sqlx calls several statements in one SQLite query a deprecated behaviour (launchbadge/sqlx#3108) but keeps it in
//! 0.9; this module's tests pin it down, and should it go, [`Batch::run`] would send SQLite the statements one by one
//! as it does Postgres.

use futures::TryStreamExt;
use sqlx::{AnyConnection, AssertSqlSafe, Either, Executor, Row};

use crate::Backend;
use crate::Error;

/// A value bound to a placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Text.
    Text(String),
    /// A 64-bit integer.
    Int(i64),
    /// A 64-bit integer or NULL.
    OptionalInt(Option<i64>),
    /// Text or NULL.
    OptionalText(Option<String>),
}

impl From<&str> for Value {
    fn from(value: &str) -> Value {
        Value::Text(value.to_owned())
    }
}

impl From<&String> for Value {
    fn from(value: &String) -> Value {
        Value::Text(value.clone())
    }
}

impl From<i64> for Value {
    fn from(value: i64) -> Value {
        Value::Int(value)
    }
}

impl From<Option<i64>> for Value {
    fn from(value: Option<i64>) -> Value {
        Value::OptionalInt(value)
    }
}

impl From<&Option<String>> for Value {
    fn from(value: &Option<String>) -> Value {
        Value::OptionalText(value.clone())
    }
}

/// `INSERT`, `UPDATE` and `DELETE` statements to run in order, as a transaction of their own
/// ([`Store::write`](crate::Store::write)) or inside one ([`Batch::run`]).
#[derive(Debug, Clone, Default)]
pub struct Batch {
    statements: Vec<Statement>,
    /// No statement reads what an earlier one writes: Postgres may run them as one statement.
    one_snapshot: bool,
}

#[derive(Debug, Clone)]
struct Statement {
    sql: String,
    values: Vec<Value>,
    /// Runs only if the statement before it changed a row.
    guarded: bool,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Adds `sql`, whose placeholders `$1…$n` take `values` in order.
    pub fn push(&mut self, sql: impl Into<String>, values: Vec<Value>) {
        self.statements.push(Statement { sql: sql.into(), values, guarded: false });
    }

    /// Adds `insert_select` — an `INSERT … SELECT …` without a `WHERE` — to run only if the statement before it (an
    /// `INSERT`, `UPDATE` or `DELETE`) changed a row, so a compare-and-swap that lost, and everything guarded after
    /// it, changes nothing.
    ///
    /// # Panics
    /// As the first statement: a guard needs a statement before it.
    pub fn push_if_changed(&mut self, insert_select: impl Into<String>, values: Vec<Value>) {
        assert!(!self.statements.is_empty(), "a guarded statement needs a statement before it");
        self.statements.push(Statement { sql: insert_select.into(), values, guarded: true });
    }

    /// The batches one after another, as one (for the writer's group commit).
    pub(crate) fn concat<'b>(batches: impl IntoIterator<Item = &'b Batch>) -> Batch {
        let statements = batches.into_iter().flat_map(|batch| batch.statements.clone()).collect();
        Batch { statements, one_snapshot: false }
    }

    /// Whether `other` has the very statements of this batch (values aside): batches of one kind, which the writer
    /// commits together, so that their combined query repeats and stays prepared.
    pub(crate) fn same_statements(&self, other: &Batch) -> bool {
        self.statements.len() == other.statements.len()
            && self.statements.iter().zip(&other.statements).all(|(a, b)| a.sql == b.sql && a.guarded == b.guarded)
    }

    /// How many statements it holds.
    pub(crate) fn len(&self) -> usize {
        self.statements.len()
    }

    /// Declares that no statement of the batch reads rows an earlier one writes (its guard aside), so that every
    /// statement may see the database as it was before the batch. Postgres then runs the batch as one statement:
    /// one round trip, and as a transaction of its own no `BEGIN` or `COMMIT`. SQLite runs the batch as before.
    ///
    /// Two log entries of one item, each numbered after the highest before it, read each other's writes: a batch
    /// with those must not be declared so. Nor should one whose reads could be stale: every statement reads the
    /// database as it was when the batch began, even after the first waited for a row another writer held. A batch
    /// that opens with a compare-and-swap on an exact version is safe: if another writer changed the row meanwhile,
    /// the swap fails and its guarded statements do not run.
    pub fn one_snapshot(&mut self) {
        self.one_snapshot = true;
    }

    /// Adds the statements of `other` after these; the whole runs statement by statement unless both batches could
    /// run as one.
    pub fn append(&mut self, other: Batch) {
        if other.statements.is_empty() {
            return;
        }
        self.one_snapshot = self.one_snapshot && other.one_snapshot;
        self.statements.extend(other.statements);
    }

    /// Whether Postgres runs the batch as one statement.
    pub(crate) fn is_one_snapshot(&self) -> bool {
        self.one_snapshot
    }

    /// Runs the statements in order on `conn`, inside the caller's write transaction, and returns how many rows each
    /// one changed (0 for a guarded statement that did not run). The first statement that fails stops the batch:
    /// roll the transaction back then.
    pub async fn run(&self, conn: &mut AnyConnection) -> Result<Vec<u64>, Error> {
        match Backend::of(conn) {
            Backend::Sqlite => Ok(run_sqlite(conn, &self.sqlite_sql("", ""), self.values()).await?),
            Backend::Postgres if self.one_snapshot => self.run_postgres_at_once(conn).await,
            Backend::Postgres => {
                let mut changed: Vec<u64> = Vec::with_capacity(self.statements.len());
                for statement in &self.statements {
                    if statement.guarded && changed.last() == Some(&0) {
                        changed.push(0);
                        continue;
                    }
                    let query = bind(sqlx::query(AssertSqlSafe(statement.sql.clone())), &statement.values);
                    changed.push(query.execute(&mut *conn).await?.rows_affected());
                }
                Ok(changed)
            }
        }
    }

    /// Runs the batch on Postgres `conn` as one statement (see [`Batch::one_snapshot`]).
    async fn run_postgres_at_once(&self, conn: &mut AnyConnection) -> Result<Vec<u64>, Error> {
        if self.statements.is_empty() {
            return Ok(Vec::new());
        }
        let (sql, values) = self.postgres_sql();
        let row = bind(sqlx::query(AssertSqlSafe(sql)), &values).fetch_one(conn).await?;
        (0..self.statements.len())
            .map(|index| Ok(u64::try_from(row.try_get::<i64, _>(index)?).unwrap_or_default()))
            .collect()
    }

    /// The batch as one Postgres statement and its values: each statement a `WITH` query `s<i>` returning a row per
    /// row it changed, a guarded one run only if `s<i-1>` returned any, and a final `SELECT` of how many rows each
    /// statement changed.
    fn postgres_sql(&self) -> (String, Vec<Value>) {
        // `(name, query)` of each `WITH` query, in order.
        let mut queries: Vec<(String, String)> = Vec::new();
        let mut values: Vec<Value> = Vec::new();
        for (index, statement) in self.statements.iter().enumerate() {
            let mut query = renumber(&statement.sql, values.len());
            if statement.guarded {
                query.push_str(&format!(" WHERE EXISTS (SELECT 1 FROM s{})", index - 1));
            }
            queries.push((format!("s{index}"), format!("{query} RETURNING 1")));
            values.extend(statement.values.iter().cloned());
        }
        let with: Vec<String> = queries.iter().map(|(name, query)| format!("{name} AS ({query})")).collect();
        let counts: Vec<String> = queries.iter().map(|(name, _)| format!("(SELECT count(*) FROM {name})")).collect();
        (format!("WITH {} SELECT {}", with.join(", "), counts.join(", ")), values)
    }

    /// The statements as one SQLite query between `before` and `after`, each guard written out and the
    /// placeholders numbered on.
    fn sqlite_sql(&self, before: &str, after: &str) -> String {
        let mut sql = String::from(before);
        let mut offset = 0;
        for statement in &self.statements {
            sql.push_str(&renumber(&statement.sql, offset));
            if statement.guarded {
                sql.push_str(" WHERE changes() > 0");
            }
            sql.push_str(";\n");
            offset += statement.values.len();
        }
        sql.push_str(after);
        sql
    }

    fn values(&self) -> impl Iterator<Item = &Value> {
        self.statements.iter().flat_map(|statement| &statement.values)
    }

    /// Runs the batch on SQLite `conn` as a transaction of its own in one query — `BEGIN IMMEDIATE`, the statements,
    /// `COMMIT` — and rolls back if any of it fails.
    pub(crate) async fn write_sqlite(&self, conn: &mut AnyConnection) -> Result<Vec<u64>, sqlx::Error> {
        let sql = self.sqlite_sql("BEGIN IMMEDIATE;\n", "COMMIT;");
        match run_sqlite(conn, &sql, self.values()).await {
            Ok(mut changed) => {
                // The results of BEGIN and COMMIT.
                changed.pop();
                changed.remove(0);
                Ok(changed)
            }
            Err(error) => {
                // Fails harmlessly when BEGIN itself failed and there is nothing to roll back.
                let _ = conn.execute("ROLLBACK").await;
                Err(error)
            }
        }
    }
}

/// Runs the multi-statement `sql` with `values` on SQLite `conn`: how many rows each statement changed.
async fn run_sqlite<'v>(
    conn: &mut AnyConnection,
    sql: &str,
    values: impl IntoIterator<Item = &'v Value>,
) -> Result<Vec<u64>, sqlx::Error> {
    conn.fetch_many(bind(sqlx::query(AssertSqlSafe(sql.to_owned())), values))
        .try_filter_map(|result| async move {
            Ok(match result {
                Either::Left(done) => Some(done.rows_affected()),
                Either::Right(_) => None,
            })
        })
        .try_collect()
        .await
}

type Query<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// `query` with `values` bound in order.
fn bind<'q, 'v>(query: Query<'q>, values: impl IntoIterator<Item = &'v Value>) -> Query<'q> {
    values.into_iter().fold(query, |query, value| match value {
        Value::Text(text) => query.bind(text.clone()),
        Value::Int(n) => query.bind(*n),
        Value::OptionalInt(n) => query.bind(*n),
        Value::OptionalText(text) => query.bind(text.clone()),
    })
}

/// `sql` with every placeholder `$n` turned into `$(n + offset)`.
fn renumber(sql: &str, offset: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + offset).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestStore;
    use sqlx::Row;

    #[test]
    fn placeholders_are_numbered_on() {
        assert_eq!(renumber("UPDATE t SET a = $1 WHERE b = $2 AND c = $12", 3), "UPDATE t SET a = $4 WHERE b = $5 AND c = $15");
        assert_eq!(renumber("SELECT 1", 7), "SELECT 1");
    }

    async fn table(test: &TestStore, name: &str) {
        let sql = format!("CREATE TABLE {name} (k TEXT PRIMARY KEY, n BIGINT, note TEXT)");
        sqlx::query(AssertSqlSafe(sql)).execute(test.store.pool()).await.unwrap();
    }

    /// [`table`] `name` holding the row `item` at 0, for [`swap`].
    async fn table_of(test: &TestStore, name: &str) {
        table(test, name).await;
        let sql = format!("INSERT INTO {name} (k, n) VALUES ('item', 0)");
        sqlx::query(AssertSqlSafe(sql)).execute(test.store.pool()).await.unwrap();
    }

    async fn rows(test: &TestStore, name: &str) -> Vec<(String, i64, Option<String>)> {
        let sql = format!("SELECT k, COALESCE(n, 0) AS n, note FROM {name} ORDER BY k");
        let rows = sqlx::query(AssertSqlSafe(sql)).fetch_all(test.store.pool()).await.unwrap();
        rows.iter().map(|r| (r.get("k"), r.get("n"), r.get("note"))).collect()
    }

    #[tokio::test]
    async fn a_write_reports_each_statements_changes_and_binds_each_its_own_values() {
        let test = TestStore::new().await;
        table(&test, "batch_t").await;
        let mut batch = Batch::new();
        batch.push("INSERT INTO batch_t (k, n, note) VALUES ($1, $2, $3)", vec!["a".into(), 1.into(), (&None).into()]);
        batch.push("INSERT INTO batch_t (k, n, note) VALUES ($1, $2, $3)", vec!["b".into(), Some(2).into(), (&Some("x".to_owned())).into()]);
        batch.push("UPDATE batch_t SET n = n + $1 WHERE k <> $2", vec![10.into(), "zzz".into()]);
        batch.push("UPDATE batch_t SET n = 0 WHERE k = $1", vec!["missing".into()]);
        assert_eq!(test.store.write(batch).await.unwrap(), vec![1, 1, 2, 0]);
        assert_eq!(rows(&test, "batch_t").await, vec![("a".into(), 11, None), ("b".into(), 12, Some("x".into()))]);
    }

    /// A compare-and-swap on `table` with two log entries guarded on it, as the work items write them, declared
    /// [`Batch::one_snapshot`] if `one_snapshot`.
    fn swap(table: &str, expected: i64, note: &str, one_snapshot: bool) -> Batch {
        let mut batch = Batch::new();
        batch.push(
            format!("UPDATE {table} SET n = $1 WHERE k = 'item' AND n = $2"),
            vec![(expected + 1).into(), expected.into()],
        );
        let entry = format!("INSERT INTO {table} (k, n, note) SELECT $1, $2, $3");
        batch.push_if_changed(entry, vec![note.into(), expected.into(), note.into()]);
        let second = format!("INSERT INTO {table} (k, n, note) SELECT $1 || '+', $2, $1");
        batch.push_if_changed(second, vec![note.into(), expected.into()]);
        if one_snapshot {
            batch.one_snapshot();
        }
        batch
    }

    #[tokio::test]
    async fn guarded_statements_run_only_after_a_change_alone_and_inside_a_transaction_in_one_statement_or_not() {
        let test = TestStore::new().await;
        for (table, one) in [("batch_s", false), ("batch_o", true)] {
            table_of(&test, table).await;
            assert_eq!(test.store.write(swap(table, 0, "won", one)).await.unwrap(), vec![1, 1, 1]);
            assert_eq!(test.store.write(swap(table, 0, "lost", one)).await.unwrap(), vec![0, 0, 0]);
            let mut tx = test.store.begin_write().await.unwrap();
            assert_eq!(swap(table, 0, "lost again", one).run(&mut tx).await.unwrap(), vec![0, 0, 0]);
            assert_eq!(swap(table, 1, "won again", one).run(&mut tx).await.unwrap(), vec![1, 1, 1]);
            tx.commit().await.unwrap();
            let keys: Vec<String> = rows(&test, table).await.into_iter().map(|(k, _, _)| k).collect();
            assert_eq!(keys, vec!["item", "won", "won again", "won again+", "won+"], "{table}");
            let taken = swap(table, 2, "won", one);
            assert!(test.store.write(taken).await.is_err(), "{table}: the swap goes through, but its entry's key is taken");
            assert_eq!(rows(&test, table).await.len(), 5, "{table}: so nothing was written");
            assert_eq!(test.store.write(swap(table, 2, "third", one)).await.unwrap(), vec![1, 1, 1], "{table}");
        }
    }

    #[tokio::test]
    async fn a_write_on_the_connection_that_read_goes_through_in_one_statement_or_in_a_transaction() {
        let test = TestStore::new().await;
        for (table, one) in [("batch_rs", false), ("batch_ro", true)] {
            table_of(&test, table).await;
            let sql = format!("SELECT n FROM {table} WHERE k = 'item'");
            let read = || async {
                let mut conn = test.store.read().await.unwrap();
                let n: i64 = sqlx::query(AssertSqlSafe(sql.clone())).fetch_one(&mut *conn).await.unwrap().get("n");
                (conn, n)
            };
            let (conn, n) = read().await;
            assert_eq!(test.store.write_on(conn, swap(table, n, "won", one)).await.unwrap(), vec![1, 1, 1]);
            let (conn, _) = read().await;
            assert_eq!(test.store.write_on(conn, swap(table, n, "lost", one)).await.unwrap(), vec![0, 0, 0]);
            let (conn, n) = read().await;
            assert!(test.store.write_on(conn, swap(table, n, "won", one)).await.is_err(), "{table}: the key is taken");
            let keys: Vec<String> = rows(&test, table).await.into_iter().map(|(k, _, _)| k).collect();
            assert_eq!(keys, vec!["item", "won", "won+"], "{table}: the failed write left nothing");
            assert_eq!(rows(&test, table).await[0].1, 1, "{table}");
        }
    }

    #[tokio::test]
    async fn a_failing_write_changes_nothing_and_the_next_write_goes_through() {
        let test = TestStore::new().await;
        table(&test, "batch_u").await;
        let mut batch = Batch::new();
        batch.push("INSERT INTO batch_u (k) VALUES ($1)", vec!["a".into()]);
        batch.push("INSERT INTO batch_u (k) VALUES ($1)", vec!["a".into()]);
        batch.push("INSERT INTO batch_u (k) VALUES ($1)", vec!["b".into()]);
        assert!(test.store.write(batch).await.is_err(), "the duplicate key fails");
        assert_eq!(rows(&test, "batch_u").await, vec![]);
        let mut batch = Batch::new();
        batch.push("INSERT INTO batch_u (k) VALUES ($1)", vec!["c".into()]);
        assert_eq!(test.store.write(batch).await.unwrap(), vec![1], "the writer is usable again");
        let mut tx = test.store.begin_write().await.unwrap();
        sqlx::query("INSERT INTO batch_u (k) VALUES ('d')").execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(rows(&test, "batch_u").await.len(), 2, "and so are transactions");
    }
}
