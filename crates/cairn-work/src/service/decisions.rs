//! The minimal decisions backend (§7): spaces, and documents whose every version is kept. Documents change only
//! against the version the writer read (`base_version`), so two writers never silently overwrite each other.

use cairn_store::work::decisions::{self, DocumentRow, SpaceRow};
use serde::Serialize;
use serde_json::{Value, json};

use super::{ATTEMPTS, Service};
use crate::auth::Caller;
use crate::error::Error;
use crate::ids::new_id;
use crate::page::page_size;
use crate::text;
use crate::time::{format_ms, now_ms};

/// The largest document body, in bytes.
const MAX_BODY_BYTES: usize = 512 * 1024;

/// A space.
#[derive(Debug, Clone, Serialize)]
pub struct Space {
    /// `sp_…`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// A document without its body, as lists show it.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentSummary {
    /// `doc_…`.
    pub id: String,
    /// Its space.
    pub space_id: String,
    /// Its title.
    pub title: String,
    /// 1, 2, …
    pub version: i64,
    /// RFC 3339.
    pub updated_at: String,
    /// Who made the current version.
    pub updated_by: String,
}

/// A document with its body.
#[derive(Debug, Clone, Serialize)]
pub struct Document {
    /// `doc_…`.
    pub id: String,
    /// Its space.
    pub space_id: String,
    /// Its title.
    pub title: String,
    /// Markdown.
    pub body: String,
    /// 1, 2, …
    pub version: i64,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
    /// Who made the current version.
    pub updated_by: String,
}

fn space(row: &SpaceRow) -> Space {
    Space {
        id: row.id.clone(),
        name: row.name.clone(),
        description: row.description.clone(),
        created_at: format_ms(row.created_at),
        updated_at: format_ms(row.updated_at),
    }
}

fn document(row: &DocumentRow) -> Document {
    Document {
        id: row.id.clone(),
        space_id: row.space_id.clone(),
        title: row.title.clone(),
        body: row.body.clone(),
        version: row.version,
        created_at: format_ms(row.created_at),
        updated_at: format_ms(row.updated_at),
        updated_by: row.updated_by.clone(),
    }
}

/// A document body: at most 512 KiB, no control characters but newline, carriage return and tab.
fn body(value: &str) -> Result<String, Error> {
    if value.len() > MAX_BODY_BYTES {
        return Err(Error::InvalidArgument(format!("body is at most 512 KiB; it has {} bytes", value.len())));
    }
    if value.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
        return Err(Error::InvalidArgument(
            "body may not contain control characters other than newline, carriage return and tab".into(),
        ));
    }
    Ok(value.to_owned())
}

impl Service {
    /// `decisions_list_spaces`: `{spaces, next_page_token}`, by name.
    pub async fn list_spaces(&self, caller: &Caller, account_id: &str, size: i64, token: &str) -> Result<Value, Error> {
        let limit = page_size(size)?;
        let account = self.account(caller, account_id, false).await?;
        let filters = json!({"list": "spaces", "account": account.id});
        let after = match token {
            "" => None,
            token => {
                let after = self.page_key().await?.verify(token, &filters)?;
                match (after[0].as_str(), after[1].as_str()) {
                    (Some(key), Some(id)) => Some((key.to_owned(), id.to_owned())),
                    _ => return Err(Error::InvalidArgument("page_token does not belong to this query".into())),
                }
            }
        };
        let after_ref = after.as_ref().map(|(k, i)| (k.as_str(), i.as_str()));
        let mut rows = decisions::list_spaces(self.store.pool(), &account.id, after_ref, limit + 1).await?;
        let next = if rows.len() as i64 > limit {
            rows.truncate(limit as usize);
            let last = rows.last().expect("a full page has a last row");
            self.page_key().await?.sign(&filters, json!([last.name_key, last.id]))
        } else {
            String::new()
        };
        Ok(json!({"spaces": rows.iter().map(space).collect::<Vec<_>>(), "next_page_token": next}))
    }

    /// `decisions_create_space`: `{space, created}`; a name the account already has returns that space.
    pub async fn create_space(&self, caller: &Caller, account_id: &str, name: &str, description: &str) -> Result<Value, Error> {
        let name = text::single_line("name", name, 1, 100)?;
        let description = text::multi_line("description", description, 0, 2000)?;
        let account = self.account(caller, account_id, true).await?;
        let key = name.to_lowercase();
        for _ in 0..ATTEMPTS {
            if let Some(existing) = decisions::find_space_by_name(self.store.pool(), &account.id, &key).await? {
                return Ok(json!({"space": space(&existing), "created": false}));
            }
            let now = now_ms();
            let row = SpaceRow {
                id: new_id("sp_", now),
                account_id: account.id.clone(),
                name: name.clone(),
                name_key: key.clone(),
                description: description.clone(),
                created_at: now,
                updated_at: now,
            };
            match decisions::insert_space(self.store.pool(), &row).await {
                Ok(()) => return Ok(json!({"space": space(&row), "created": true})),
                Err(error) if error.is_unique_violation() => continue,
                Err(error) => return Err(error.into()),
            }
        }
        Err(Error::Internal("the space kept changing while it was created".into()))
    }

    /// `decisions_list_documents`: `{documents, next_page_token}`, latest change first, bodies left out.
    pub async fn list_documents(
        &self,
        caller: &Caller,
        account_id: &str,
        space_id: &str,
        query: &str,
        size: i64,
        token: &str,
    ) -> Result<Value, Error> {
        let limit = page_size(size)?;
        let query = text::single_line("query", query, 0, 200)?;
        let account = self.account(caller, account_id, false).await?;
        let space = self.space(caller, space_id, false).await?;
        if space.account_id != account.id {
            return Err(Error::not_found("space", &space.id));
        }
        let filters = json!({"list": "documents", "space": space.id, "query": query});
        let after = match token {
            "" => None,
            token => Some(self.cursor(token, &filters).await?),
        };
        let after_ref = after.as_ref().map(|(at, id)| (*at, id.as_str()));
        let mut rows = decisions::list_documents(self.store.pool(), &space.id, &query, after_ref, limit + 1).await?;
        let next = if rows.len() as i64 > limit {
            rows.truncate(limit as usize);
            let last = rows.last().expect("a full page has a last row");
            self.page_key().await?.sign(&filters, json!([last.updated_at, last.id]))
        } else {
            String::new()
        };
        let documents: Vec<DocumentSummary> = rows
            .iter()
            .map(|row| DocumentSummary {
                id: row.id.clone(),
                space_id: row.space_id.clone(),
                title: row.title.clone(),
                version: row.version,
                updated_at: format_ms(row.updated_at),
                updated_by: row.updated_by.clone(),
            })
            .collect();
        Ok(json!({"documents": documents, "next_page_token": next}))
    }

    /// The `(updated_at, id)` a verified page token continues after.
    pub(super) async fn cursor(&self, token: &str, filters: &Value) -> Result<(i64, String), Error> {
        let after = self.page_key().await?.verify(token, filters)?;
        match (after[0].as_i64(), after[1].as_str()) {
            (Some(at), Some(id)) => Ok((at, id.to_owned())),
            _ => Err(Error::InvalidArgument("page_token does not belong to this query".into())),
        }
    }

    /// The document `document_id` of space `space_id`, if the caller may read (or, with `write`, change) it.
    pub(super) async fn document_in(
        &self,
        caller: &Caller,
        space_id: &str,
        document_id: &str,
        write: bool,
    ) -> Result<(SpaceRow, DocumentRow), Error> {
        let document_id = document_id.trim();
        if document_id.is_empty() {
            return Err(Error::InvalidArgument("document_id is required (decisions_list_documents lists them)".into()));
        }
        let space = self.space(caller, space_id, write).await?;
        let document = decisions::get_document(self.store.pool(), document_id)
            .await?
            .filter(|d| d.space_id == space.id)
            .ok_or_else(|| Error::not_found("document", document_id))?;
        Ok((space, document))
    }

    /// `decisions_get_document`: `{document}` with its body.
    pub async fn get_document(&self, caller: &Caller, space_id: &str, document_id: &str) -> Result<Document, Error> {
        let (_, row) = self.document_in(caller, space_id, document_id, false).await?;
        Ok(document(&row))
    }

    /// `decisions_create_document`: the new document, version 1.
    pub async fn create_document(&self, caller: &Caller, space_id: &str, title: &str, text_body: &str) -> Result<Document, Error> {
        let title = text::single_line("title", title, 1, 200)?;
        let text_body = body(text_body)?;
        let space = self.space(caller, space_id, true).await?;
        let now = now_ms();
        let row = DocumentRow {
            id: new_id("doc_", now),
            space_id: space.id.clone(),
            account_id: space.account_id.clone(),
            title,
            body: text_body,
            version: 1,
            created_by: caller.label(),
            updated_by: caller.label(),
            created_at: now,
            updated_at: now,
        };
        let mut tx = self.store.begin_write().await?;
        decisions::insert_document(&mut tx, &row).await?;
        tx.commit().await?;
        Ok(document(&row))
    }

    /// `decisions_update_document`: the document at `base_version + 1`, or unchanged when nothing differs; `conflict`
    /// (with the current version) when someone changed it since `base_version`.
    pub async fn update_document(
        &self,
        caller: &Caller,
        space_id: &str,
        document_id: &str,
        base_version: i64,
        title: &str,
        text_body: &str,
    ) -> Result<Document, Error> {
        let title = match title.trim() {
            "" => None,
            _ => Some(text::single_line("title", title, 1, 200)?),
        };
        let text_body = match text_body {
            "" => None,
            "\n" => Some(String::new()),
            value => Some(body(value)?),
        };
        if base_version < 1 {
            return Err(Error::InvalidArgument("base_version must be the version you read (1 or more)".into()));
        }
        let (_, current) = self.document_in(caller, space_id, document_id, true).await?;
        if current.version != base_version {
            return Err(Error::Conflict {
                message: format!(
                    "the document is at version {} (you read version {base_version}); read it again, merge your change and pass base_version {}",
                    current.version, current.version
                ),
                details: json!({"current_version": current.version}),
            });
        }
        let new_title = title.unwrap_or_else(|| current.title.clone());
        let new_body = text_body.unwrap_or_else(|| current.body.clone());
        if new_title == current.title && new_body == current.body {
            return Ok(document(&current));
        }
        let now = now_ms().max(current.updated_at);
        let row = DocumentRow {
            title: new_title,
            body: new_body,
            version: current.version + 1,
            updated_by: caller.label(),
            updated_at: now,
            ..current.clone()
        };
        let mut tx = self.store.begin_write().await?;
        if !decisions::update_document(&mut tx, &row, base_version).await? {
            tx.rollback().await?;
            let latest = decisions::get_document(self.store.pool(), &current.id).await?.map_or(0, |d| d.version);
            return Err(Error::Conflict {
                message: format!("the document changed while you wrote (now version {latest}); read it again and retry"),
                details: json!({"current_version": latest}),
            });
        }
        tx.commit().await?;
        Ok(document(&row))
    }
}
