//! Work items (one row each, changed only by compare-and-swap on `version`) and their append-only event log.

use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Executor, Row};

use super::opt_i64;
use crate::batch::{Batch, Value};
#[cfg(doc)]
use crate::Store;
use crate::Error;

/// A row of `work_items`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRow {
    /// `wi_…`.
    pub id: String,
    /// The account (the space's).
    pub account_id: String,
    /// The space it is in.
    pub space_id: String,
    /// The document it implements; "" for none.
    pub document_id: String,
    /// Its title.
    pub title: String,
    /// Its notes.
    pub notes: String,
    /// A JSON array of URLs.
    pub links: String,
    /// `open`, `claimed`, `in_progress`, `blocked` or `done`.
    pub state: String,
    /// The claimant's name as given; "" when nobody holds it.
    pub claimant: String,
    /// The claimant's name compared case- and space-insensitively.
    pub claimant_key: String,
    /// The kind of the principal that claimed it; "" when nobody holds it.
    pub claimant_kind: String,
    /// The principal that claimed it; "" when nobody holds it.
    pub claimant_principal_id: String,
    /// Epoch ms.
    pub claimed_at: Option<i64>,
    /// The last hand-off as JSON, if any.
    pub handoff: Option<String>,
    /// The comparison key of the last hand-off's `to` while the item is open; "" for anyone.
    pub handoff_to_key: String,
    /// Who made it, e.g. `Ada (person)`.
    pub created_by: String,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms of the last change.
    pub updated_at: i64,
    /// Epoch ms it became done.
    pub done_at: Option<i64>,
    /// Who marked it done, e.g. `claude-code worker (agent)`.
    pub done_by: String,
    /// +1 per change.
    pub version: i64,
    /// 0 (most urgent) to 4; 2 by default.
    pub priority: i64,
    /// A JSON array of labels.
    pub labels: String,
    /// The parent item; "" for none.
    pub parent_id: String,
    /// A JSON array of the ids of the items it waits for (as `work_blockers` holds them).
    pub blocked_by: String,
    /// Epoch ms the holder's lease runs out; `None` for no lease.
    pub lease_expires_at: Option<i64>,
    /// How long the holder's lease lasts from each renewal, in ms; 0 for no lease.
    pub lease_ms: i64,
}

/// A row of `work_events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// The item.
    pub item_id: String,
    /// 1, 2, … per item (assigned on insert).
    pub seq: i64,
    /// Epoch ms.
    pub at: i64,
    /// The principal behind the call.
    pub principal_id: String,
    /// The name the caller gave, or its display name.
    pub claimant: String,
    /// `created`, `claimed`, `state_changed`, `notes_changed`, `links_added` or `handed_off`.
    pub kind: String,
    /// JSON.
    pub data: String,
}

/// Which items [`list_items`] returns.
#[derive(Debug, Clone, Default)]
pub struct ItemFilter {
    /// The account.
    pub account_id: String,
    /// One space, or all of the account's.
    pub space_id: Option<String>,
    /// One document.
    pub document_id: Option<String>,
    /// One state, or every state but `done`.
    pub state: Option<String>,
    /// Items whose claimant key is this.
    pub claimant_key: Option<String>,
    /// Items carrying every one of these labels.
    pub labels: Vec<String>,
    /// Items of this priority.
    pub priority: Option<i64>,
    /// Items with every one of these words (lower case) in their title or notes.
    pub words: Vec<String>,
    /// Start after this `(updated_at, id)`.
    pub after: Option<(i64, String)>,
    /// At most this many.
    pub limit: i64,
}

const COLUMNS: &str = "id, account_id, space_id, document_id, title, notes, links, state, claimant, claimant_key, \
                       claimant_kind, claimant_principal_id, claimed_at, handoff, handoff_to_key, created_by, \
                       created_at, updated_at, done_at, done_by, version, priority, labels, parent_id, blocked_by, lease_expires_at, lease_ms";

fn item(row: AnyRow) -> Result<ItemRow, Error> {
    Ok(ItemRow {
        id: row.try_get("id")?,
        account_id: row.try_get("account_id")?,
        space_id: row.try_get("space_id")?,
        document_id: row.try_get("document_id")?,
        title: row.try_get("title")?,
        notes: row.try_get("notes")?,
        links: row.try_get("links")?,
        state: row.try_get("state")?,
        claimant: row.try_get("claimant")?,
        claimant_key: row.try_get("claimant_key")?,
        claimant_kind: row.try_get("claimant_kind")?,
        claimant_principal_id: row.try_get("claimant_principal_id")?,
        claimed_at: opt_i64(&row, "claimed_at")?,
        handoff: row.try_get::<Option<String>, _>("handoff")?,
        handoff_to_key: row.try_get("handoff_to_key")?,
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        done_at: opt_i64(&row, "done_at")?,
        done_by: row.try_get("done_by")?,
        version: row.try_get("version")?,
        priority: row.try_get("priority")?,
        labels: row.try_get("labels")?,
        parent_id: row.try_get("parent_id")?,
        blocked_by: row.try_get("blocked_by")?,
        lease_expires_at: opt_i64(&row, "lease_expires_at")?,
        lease_ms: row.try_get("lease_ms")?,
    })
}

/// The values of the columns a change may set, `lease_expires_at` to `handoff_to_key` (`$1…$16` of
/// [`replace_item`]'s update).
fn changing(row: &ItemRow) -> Vec<Value> {
    vec![
        row.lease_expires_at.into(),
        row.lease_ms.into(),
        row.priority.into(),
        (&row.labels).into(),
        (&row.parent_id).into(),
        (&row.blocked_by).into(),
        (&row.notes).into(),
        (&row.links).into(),
        (&row.state).into(),
        (&row.claimant).into(),
        (&row.claimant_key).into(),
        (&row.claimant_kind).into(),
        (&row.claimant_principal_id).into(),
        row.claimed_at.into(),
        (&row.handoff).into(),
        (&row.handoff_to_key).into(),
    ]
}

/// The statement that inserts `row`.
fn insert_statement(batch: &mut Batch, row: &ItemRow) {
    batch.push(
        "INSERT INTO work_items (id, account_id, space_id, document_id, title, lease_expires_at, lease_ms, \
         priority, labels, parent_id, blocked_by, notes, links, state, claimant, claimant_key, claimant_kind, \
         claimant_principal_id, claimed_at, handoff, handoff_to_key, created_by, created_at, updated_at, done_at, \
         done_by, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
         $19, $20, $21, $22, $23, $24, $25, $26, $27)",
        [
            vec![
                (&row.id).into(),
                (&row.account_id).into(),
                (&row.space_id).into(),
                (&row.document_id).into(),
                (&row.title).into(),
            ],
            changing(row),
            vec![
                (&row.created_by).into(),
                row.created_at.into(),
                row.updated_at.into(),
                row.done_at.into(),
                (&row.done_by).into(),
                row.version.into(),
            ],
        ]
        .concat(),
    );
}

/// The statement that appends `event` to its item's log, if the statement before it changed a row (its `seq` is
/// the next number; the one in `event` is ignored).
fn event_statement(batch: &mut Batch, event: &EventRow) {
    batch.push_if_changed(
        "INSERT INTO work_events (item_id, seq, at, principal_id, claimant, kind, data) \
         SELECT $1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM work_events WHERE item_id = $1), $2, $3, $4, $5, $6",
        vec![
            (&event.item_id).into(),
            event.at.into(),
            (&event.principal_id).into(),
            (&event.claimant).into(),
            (&event.kind).into(),
            (&event.data).into(),
        ],
    );
}

/// The write that inserts a new item with the first event of its log (for [`Store::write`]).
pub fn insert_item(row: &ItemRow, created: &EventRow) -> Batch {
    let mut batch = Batch::new();
    insert_statement(&mut batch, row);
    event_statement(&mut batch, created);
    batch.one_snapshot();
    batch
}

/// The item `id` of `account`.
pub async fn get_item<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: &str,
    id: &str,
) -> Result<Option<ItemRow>, Error> {
    sqlx::query(AssertSqlSafe(format!("SELECT {COLUMNS} FROM work_items WHERE id = $1 AND account_id = $2")))
        .bind(id)
        .bind(account)
        .fetch_optional(db)
        .await?
        .map(item)
        .transpose()
}

/// The write that puts `row` over the stored item if that is still at `expected_version` (compare-and-swap;
/// `row.version` should be `expected_version + 1`) and appends `events` to its log. Run it with [`Store::write`] or
/// [`Batch::run`]; it changed the item when the first count is 1, and wrote nothing at all otherwise.
pub fn replace_item(row: &ItemRow, expected_version: i64, events: &[EventRow]) -> Batch {
    let mut batch = Batch::new();
    batch.push(
        "UPDATE work_items SET lease_expires_at = $1, lease_ms = $2, priority = $3, labels = $4, parent_id = $5, \
         blocked_by = $6, notes = $7, links = $8, state = $9, claimant = $10, claimant_key = $11, claimant_kind = $12, \
         claimant_principal_id = $13, claimed_at = $14, handoff = $15, handoff_to_key = $16, updated_at = $17, \
         done_at = $18, done_by = $19, version = $20 WHERE id = $21 AND account_id = $22 AND version = $23",
        [
            changing(row),
            vec![
                row.updated_at.into(),
                row.done_at.into(),
                (&row.done_by).into(),
                row.version.into(),
                (&row.id).into(),
                (&row.account_id).into(),
                expected_version.into(),
            ],
        ]
        .concat(),
    );
    for event in events {
        event_statement(&mut batch, event);
    }
    // Each entry is numbered after the highest before it: a second one reads the first's write.
    if events.len() <= 1 {
        batch.one_snapshot();
    }
    batch
}

/// The events of item `id`, oldest first.
pub async fn events<'e, E: Executor<'e, Database = Any>>(db: E, id: &str) -> Result<Vec<EventRow>, Error> {
    let rows = sqlx::query(
        "SELECT item_id, seq, at, principal_id, claimant, kind, data FROM work_events WHERE item_id = $1 ORDER BY seq",
    )
    .bind(id)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|row| {
            Ok(EventRow {
                item_id: row.try_get("item_id")?,
                seq: row.try_get("seq")?,
                at: row.try_get("at")?,
                principal_id: row.try_get("principal_id")?,
                claimant: row.try_get("claimant")?,
                kind: row.try_get("kind")?,
                data: row.try_get("data")?,
            })
        })
        .collect()
}

/// Items matching `filter`, latest change first (then id, descending).
pub async fn list_items<'e, E: Executor<'e, Database = Any>>(db: E, filter: &ItemFilter) -> Result<Vec<ItemRow>, Error> {
    let mut sql = format!("SELECT {COLUMNS} FROM work_items WHERE account_id = $1");
    let mut binds: Vec<String> = Vec::new();
    let mut push = |sql: &mut String, clause: &str, value: &str| {
        binds.push(value.to_owned());
        sql.push_str(&clause.replace('?', &format!("${}", binds.len() + 1)));
    };
    if let Some(space) = &filter.space_id {
        push(&mut sql, " AND space_id = ?", space);
    }
    if let Some(document) = &filter.document_id {
        push(&mut sql, " AND document_id = ?", document);
    }
    match &filter.state {
        Some(state) => push(&mut sql, " AND state = ?", state),
        None => sql.push_str(" AND state <> 'done'"),
    }
    if let Some(key) = &filter.claimant_key {
        push(&mut sql, " AND claimant_key = ?", key);
    }
    for label in &filter.labels {
        push(&mut sql, LABEL_CLAUSE, &label_pattern(label));
    }
    if let Some(priority) = filter.priority {
        sql.push_str(&format!(" AND priority = {priority}"));
    }
    for word in &filter.words {
        let pattern = like_pattern(word);
        push(&mut sql, " AND (LOWER(title) LIKE ? ESCAPE '\\'", &pattern);
        push(&mut sql, " OR LOWER(notes) LIKE ? ESCAPE '\\')", &pattern);
    }
    let n = binds.len() + 2;
    sql.push_str(&format!(
        " AND (updated_at < ${n} OR (updated_at = ${n} AND id < ${})) ORDER BY updated_at DESC, id DESC LIMIT ${}",
        n + 1,
        n + 2
    ));
    let (after_at, after_id) = filter.after.clone().unwrap_or((i64::MAX, String::new()));
    let mut query = sqlx::query(AssertSqlSafe(sql)).bind(&filter.account_id);
    for value in &binds {
        query = query.bind(value);
    }
    let rows = query.bind(after_at).bind(after_id).bind(filter.limit).fetch_all(db).await?;
    rows.into_iter().map(item).collect()
}

/// How many items of `document` are in each state but done: `(state, count)` pairs.
pub async fn count_open_by_state<'e, E: Executor<'e, Database = Any>>(
    db: E,
    document: &str,
) -> Result<Vec<(String, i64)>, Error> {
    let rows = sqlx::query(
        "SELECT state, COUNT(*) AS n FROM work_items WHERE document_id = $1 AND state <> 'done' GROUP BY state",
    )
    .bind(document)
    .fetch_all(db)
    .await?;
    rows.into_iter().map(|row| Ok((row.try_get("state")?, row.try_get("n")?))).collect()
}

/// The clause that keeps items carrying a label, with its `LIKE` pattern ([`label_pattern`]) bound at `?`.
const LABEL_CLAUSE: &str = " AND labels LIKE ? ESCAPE '\\'";

/// The `LIKE` pattern that finds `label` (lower case, as stored) as an element of the `labels` JSON array.
fn label_pattern(label: &str) -> String {
    like_pattern(&format!("\"{label}\""))
}

/// The `LIKE … ESCAPE '\'` pattern that finds `text` anywhere.
fn like_pattern(text: &str) -> String {
    let escaped: String = text.chars().flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] }).collect();
    format!("%{escaped}%")
}

/// The items of every account whose holder's lease ran out before `now` (id and account), at most `limit`, the
/// longest overdue first.
pub async fn expired_leases<'e, E: Executor<'e, Database = Any>>(db: E, now: i64, limit: i64) -> Result<Vec<(String, String)>, Error> {
    let rows = sqlx::query(
        "SELECT id, account_id FROM work_items WHERE lease_expires_at < $1 AND claimant <> '' \
         ORDER BY lease_expires_at LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.into_iter().map(|row| Ok((row.try_get(0)?, row.try_get(1)?))).collect()
}

/// Which items [`ready_items`] returns.
#[derive(Debug, Clone, Default)]
pub struct ReadyFilter {
    /// The account.
    pub account_id: String,
    /// The space.
    pub space_id: String,
    /// Items carrying every one of these labels.
    pub labels: Vec<String>,
    /// Items handed off to someone else than this claimant key are left out (`None`: none are).
    pub for_claimant_key: Option<String>,
    /// Start after this `(priority, created_at, id)`.
    pub after: Option<(i64, i64, String)>,
    /// At most this many.
    pub limit: i64,
}

/// The open items nobody holds whose blockers are all done, most urgent first, then oldest (then by id).
pub async fn ready_items<'e, E: Executor<'e, Database = Any>>(db: E, filter: &ReadyFilter) -> Result<Vec<ItemRow>, Error> {
    let mut sql = format!(
        "SELECT {COLUMNS} FROM work_items WHERE account_id = $1 AND space_id = $2 AND state = 'open' AND claimant = '' \
         AND NOT EXISTS (SELECT 1 FROM work_blockers b JOIN work_items x ON x.id = b.blocker_id \
         WHERE b.item_id = work_items.id AND x.state <> 'done')"
    );
    let mut binds: Vec<String> = Vec::new();
    let mut push = |sql: &mut String, clause: &str, value: String| {
        binds.push(value);
        sql.push_str(&clause.replace('?', &format!("${}", binds.len() + 2)));
    };
    for label in &filter.labels {
        push(&mut sql, LABEL_CLAUSE, label_pattern(label));
    }
    if let Some(key) = &filter.for_claimant_key {
        push(&mut sql, " AND handoff_to_key IN ('', ?)", key.clone());
    }
    let (priority, created, id) = filter.after.clone().unwrap_or((-1, 0, String::new()));
    let n = binds.len() + 3;
    sql.push_str(&format!(
        " AND (priority > ${n} OR (priority = ${n} AND (created_at > ${a} OR (created_at = ${a} AND id > ${b})))) \
         ORDER BY priority, created_at, id LIMIT ${c}",
        a = n + 1,
        b = n + 2,
        c = n + 3
    ));
    let mut query = sqlx::query(AssertSqlSafe(sql)).bind(&filter.account_id).bind(&filter.space_id);
    for value in &binds {
        query = query.bind(value);
    }
    let rows = query.bind(priority).bind(created).bind(id).bind(filter.limit).fetch_all(db).await?;
    rows.into_iter().map(item).collect()
}

/// The write that records that `item_id` waits for each of `added` and no longer for any of `removed` (edges that
/// are there, and not there, respectively: the row's `blocked_by` says which). Run it inside the transaction that
/// swapped the item's row, after the swap succeeded.
pub fn change_blockers(item_id: &str, added: &[String], removed: &[String]) -> Batch {
    let mut batch = Batch::new();
    for blocker in added {
        batch.push("INSERT INTO work_blockers (item_id, blocker_id) VALUES ($1, $2)", vec![item_id.into(), blocker.into()]);
    }
    for blocker in removed {
        batch.push("DELETE FROM work_blockers WHERE item_id = $1 AND blocker_id = $2", vec![item_id.into(), blocker.into()]);
    }
    batch
}

/// Every `(item, blocker)` edge and every `(item, parent)` link of the items of `space`: the graph a new edge or
/// parent is checked against for cycles.
pub async fn space_graph(conn: &mut sqlx::AnyConnection, space: &str) -> Result<(Vec<(String, String)>, Vec<(String, String)>), Error> {
    let pairs = |rows: Vec<AnyRow>| -> Result<Vec<(String, String)>, Error> {
        rows.into_iter().map(|row| Ok((row.try_get(0)?, row.try_get(1)?))).collect()
    };
    let edges = sqlx::query(
        "SELECT b.item_id, b.blocker_id FROM work_blockers b JOIN work_items i ON i.id = b.item_id WHERE i.space_id = $1",
    )
    .bind(space)
    .fetch_all(&mut *conn)
    .await?;
    let parents = sqlx::query("SELECT id, parent_id FROM work_items WHERE space_id = $1 AND parent_id <> ''")
        .bind(space)
        .fetch_all(&mut *conn)
        .await?;
    Ok((pairs(edges)?, pairs(parents)?))
}

/// The ids of the items that wait for `id`, and of its children, each by id.
pub async fn dependents<'e, E: Executor<'e, Database = Any> + Copy>(db: E, id: &str) -> Result<(Vec<String>, Vec<String>), Error> {
    let blocks = sqlx::query("SELECT item_id FROM work_blockers WHERE blocker_id = $1 ORDER BY item_id").bind(id).fetch_all(db).await?;
    let children = sqlx::query("SELECT id FROM work_items WHERE parent_id = $1 ORDER BY id").bind(id).fetch_all(db).await?;
    let ids = |rows: Vec<AnyRow>| -> Result<Vec<String>, Error> { rows.into_iter().map(|row| Ok(row.try_get(0)?)).collect() };
    Ok((ids(blocks)?, ids(children)?))
}

/// How many of the blockers of `id` are not done.
pub async fn unfinished_blockers<'e, E: Executor<'e, Database = Any>>(db: E, id: &str) -> Result<i64, Error> {
    let row = sqlx::query(
        "SELECT COUNT(*) FROM work_blockers b JOIN work_items x ON x.id = b.blocker_id \
         WHERE b.item_id = $1 AND x.state <> 'done'",
    )
    .bind(id)
    .fetch_one(db)
    .await?;
    Ok(row.try_get(0)?)
}

/// Locks space `space` for a change of its items' graph (blockers, parents) until the transaction on `conn` ends:
/// on PostgreSQL its row `FOR UPDATE`; SQLite's write transaction already excludes every other writer.
pub async fn lock_space(conn: &mut sqlx::AnyConnection, space: &str) -> Result<(), Error> {
    let lock = crate::dialect::Backend::of(conn).lock_rows();
    sqlx::query(AssertSqlSafe(format!("SELECT id FROM decision_spaces WHERE id = $1{lock}")))
        .bind(space)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(())
}
