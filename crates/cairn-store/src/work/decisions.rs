//! Decision spaces and their documents; every version of a document's title and body is kept.

use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Executor, Row};
use crate::Error;

/// A row of `decision_spaces`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceRow {
    /// `sp_…`.
    pub id: String,
    /// The account it belongs to.
    pub account_id: String,
    /// Its name, as given.
    pub name: String,
    /// The name lower-cased: unique per account.
    pub name_key: String,
    /// What it is for.
    pub description: String,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub updated_at: i64,
}

/// A row of `decision_documents` (the current version).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentRow {
    /// `doc_…`.
    pub id: String,
    /// The space it is in.
    pub space_id: String,
    /// The space's account.
    pub account_id: String,
    /// Its title.
    pub title: String,
    /// Markdown.
    pub body: String,
    /// 1 for a new document, +1 per change.
    pub version: i64,
    /// Who made it, e.g. `Ada (person)`.
    pub created_by: String,
    /// Who made the current version.
    pub updated_by: String,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub updated_at: i64,
}

/// Inserts a space.
pub async fn insert_space<'e, E: Executor<'e, Database = Any>>(db: E, row: &SpaceRow) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO decision_spaces (id, account_id, name, name_key, description, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&row.id)
    .bind(&row.account_id)
    .bind(&row.name)
    .bind(&row.name_key)
    .bind(&row.description)
    .bind(row.created_at)
    .bind(row.updated_at)
    .execute(db)
    .await?;
    Ok(())
}

const SPACE_COLUMNS: &str = "id, account_id, name, name_key, description, created_at, updated_at";

fn space(row: AnyRow) -> Result<SpaceRow, Error> {
    Ok(SpaceRow {
        id: row.try_get("id")?,
        account_id: row.try_get("account_id")?,
        name: row.try_get("name")?,
        name_key: row.try_get("name_key")?,
        description: row.try_get("description")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// The space `id`, in any account.
pub async fn get_space<'e, E: Executor<'e, Database = Any>>(db: E, id: &str) -> Result<Option<SpaceRow>, Error> {
    sqlx::query(AssertSqlSafe(format!("SELECT {SPACE_COLUMNS} FROM decision_spaces WHERE id = $1")))
        .bind(id)
        .fetch_optional(db)
        .await?
        .map(space)
        .transpose()
}

/// The space of `account` whose lower-cased name is `name_key`.
pub async fn find_space_by_name<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: &str,
    name_key: &str,
) -> Result<Option<SpaceRow>, Error> {
    sqlx::query(AssertSqlSafe(format!("SELECT {SPACE_COLUMNS} FROM decision_spaces WHERE account_id = $1 AND name_key = $2")))
        .bind(account)
        .bind(name_key)
        .fetch_optional(db)
        .await?
        .map(space)
        .transpose()
}

/// Up to `limit` spaces of `account` ordered by name key then id, starting after `(name_key, id)` when given.
pub async fn list_spaces<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: &str,
    after: Option<(&str, &str)>,
    limit: i64,
) -> Result<Vec<SpaceRow>, Error> {
    let rows = match after {
        None => {
            sqlx::query(AssertSqlSafe(format!(
                "SELECT {SPACE_COLUMNS} FROM decision_spaces WHERE account_id = $1 ORDER BY name_key, id LIMIT $2"
            )))
            .bind(account)
            .bind(limit)
            .fetch_all(db)
            .await?
        }
        Some((key, id)) => {
            sqlx::query(AssertSqlSafe(format!(
                "SELECT {SPACE_COLUMNS} FROM decision_spaces WHERE account_id = $1 \
                 AND (name_key > $2 OR (name_key = $2 AND id > $3)) ORDER BY name_key, id LIMIT $4"
            )))
            .bind(account)
            .bind(key)
            .bind(id)
            .bind(limit)
            .fetch_all(db)
            .await?
        }
    };
    rows.into_iter().map(space).collect()
}

const DOCUMENT_COLUMNS: &str =
    "id, space_id, account_id, title, body, version, created_by, updated_by, created_at, updated_at";

fn document(row: AnyRow) -> Result<DocumentRow, Error> {
    Ok(DocumentRow {
        id: row.try_get("id")?,
        space_id: row.try_get("space_id")?,
        account_id: row.try_get("account_id")?,
        title: row.try_get("title")?,
        body: row.try_get("body")?,
        version: row.try_get("version")?,
        created_by: row.try_get("created_by")?,
        updated_by: row.try_get("updated_by")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// Inserts a document and its first version.
pub async fn insert_document(tx: &mut sqlx::AnyConnection, row: &DocumentRow) -> Result<(), Error> {
    sqlx::query(AssertSqlSafe(format!(
        "INSERT INTO decision_documents ({DOCUMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    )))
    .bind(&row.id)
    .bind(&row.space_id)
    .bind(&row.account_id)
    .bind(&row.title)
    .bind(&row.body)
    .bind(row.version)
    .bind(&row.created_by)
    .bind(&row.updated_by)
    .bind(row.created_at)
    .bind(row.updated_at)
    .execute(&mut *tx)
    .await?;
    insert_version(tx, row).await
}

async fn insert_version(tx: &mut sqlx::AnyConnection, row: &DocumentRow) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO decision_document_versions (document_id, version, title, body, author, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&row.id)
    .bind(row.version)
    .bind(&row.title)
    .bind(&row.body)
    .bind(&row.updated_by)
    .bind(row.updated_at)
    .execute(tx)
    .await?;
    Ok(())
}

/// Replaces the current version of a document with `row` if it is still at `base_version` (compare-and-swap), and
/// keeps `row` as a new version. False when another change got there first.
pub async fn update_document(
    tx: &mut sqlx::AnyConnection,
    row: &DocumentRow,
    base_version: i64,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE decision_documents SET title = $1, body = $2, version = $3, updated_by = $4, updated_at = $5 \
         WHERE id = $6 AND version = $7",
    )
    .bind(&row.title)
    .bind(&row.body)
    .bind(row.version)
    .bind(&row.updated_by)
    .bind(row.updated_at)
    .bind(&row.id)
    .bind(base_version)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    insert_version(tx, row).await?;
    Ok(true)
}

/// The document `id` (current version), in any space.
pub async fn get_document<'e, E: Executor<'e, Database = Any>>(db: E, id: &str) -> Result<Option<DocumentRow>, Error> {
    sqlx::query(AssertSqlSafe(format!("SELECT {DOCUMENT_COLUMNS} FROM decision_documents WHERE id = $1")))
        .bind(id)
        .fetch_optional(db)
        .await?
        .map(document)
        .transpose()
}

/// How many versions of document `id` are kept.
pub async fn count_versions<'e, E: Executor<'e, Database = Any>>(db: E, id: &str) -> Result<i64, Error> {
    let row = sqlx::query("SELECT COUNT(*) AS n FROM decision_document_versions WHERE document_id = $1")
        .bind(id)
        .fetch_one(db)
        .await?;
    Ok(row.try_get("n")?)
}

/// Up to `limit` documents of `space` (bodies included), latest change first, starting after `(updated_at, id)`
/// when given; `title_like` narrows to titles containing it (case-insensitive; "" for all).
pub async fn list_documents<'e, E: Executor<'e, Database = Any>>(
    db: E,
    space: &str,
    title_like: &str,
    after: Option<(i64, &str)>,
    limit: i64,
) -> Result<Vec<DocumentRow>, Error> {
    let pattern = format!("%{}%", escape_like(&title_like.to_lowercase()));
    let (after_at, after_id) = after.unwrap_or((i64::MAX, ""));
    let rows = sqlx::query(AssertSqlSafe(format!(
        "SELECT {DOCUMENT_COLUMNS} FROM decision_documents WHERE space_id = $1 AND LOWER(title) LIKE $2 ESCAPE '\\' \
         AND (updated_at < $3 OR (updated_at = $3 AND id < $4)) ORDER BY updated_at DESC, id DESC LIMIT $5"
    )))
    .bind(space)
    .bind(pattern)
    .bind(after_at)
    .bind(after_id)
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.into_iter().map(document).collect()
}

/// `text` with LIKE's wildcards and the escape character escaped by `\`.
fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}
