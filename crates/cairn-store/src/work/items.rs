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
    /// Start after this `(updated_at, id)`.
    pub after: Option<(i64, String)>,
    /// At most this many.
    pub limit: i64,
}

const COLUMNS: &str = "id, account_id, space_id, document_id, title, notes, links, state, claimant, claimant_key, \
                       claimant_kind, claimant_principal_id, claimed_at, handoff, handoff_to_key, created_by, \
                       created_at, updated_at, done_at, done_by, version";

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
    })
}

/// The values of the columns a change may set, `notes` to `handoff_to_key` (`$1…$10` of [`replace_item`]'s update).
fn changing(row: &ItemRow) -> Vec<Value> {
    vec![
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
        format!(
            "INSERT INTO work_items ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
             $15, $16, $17, $18, $19, $20, $21)"
        ),
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
        "UPDATE work_items SET notes = $1, links = $2, state = $3, claimant = $4, claimant_key = $5, \
         claimant_kind = $6, claimant_principal_id = $7, claimed_at = $8, handoff = $9, handoff_to_key = $10, \
         updated_at = $11, done_at = $12, done_by = $13, version = $14 \
         WHERE id = $15 AND account_id = $16 AND version = $17",
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
