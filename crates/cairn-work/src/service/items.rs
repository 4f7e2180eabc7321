//! Work items: create, claim, update, hand off and list. Every change reads the item, lets the pure rules of
//! [`crate::item`] decide, and writes the new row with a compare-and-swap on its version plus its events, in one
//! transaction and all or nothing; a lost race is retried from the read, so two claims can never both win.

use cairn_store::batch::Batch;
use cairn_store::changes::Change;
use cairn_store::work::decisions;
use cairn_store::work::items::{self, EventRow, ItemFilter, ItemRow};
use serde::Serialize;
use serde_json::{Value, json};

use super::{ATTEMPTS, Service};
use crate::auth::Caller;
use crate::error::Error;
use crate::ids::new_id;
use crate::item::{self, Changes, Event, MAX_LINKS, STATES, Target, WorkItem};
use crate::page::page_size;
use crate::text;
use crate::time::{format_ms, now_ms};

/// An item and what happened to it.
#[derive(Debug, Clone, Serialize)]
pub struct ItemHistory {
    /// The item as it is.
    pub item: WorkItem,
    /// Its events, oldest first.
    pub events: Vec<ItemEvent>,
}

/// One entry of an item's history.
#[derive(Debug, Clone, Serialize)]
pub struct ItemEvent {
    /// 1, 2, … per item.
    pub seq: i64,
    /// RFC 3339.
    pub at: String,
    /// Who did it: the name the caller gave, or its display name.
    pub by: String,
    /// `created`, `claimed`, `state_changed`, `notes_changed`, `links_added` or `handed_off`.
    pub kind: String,
    /// What changed (the event's data as recorded).
    pub data: Value,
}

/// What `work_list` was asked for (raw arguments; checked by [`Service::list_items`]).
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// "" = the caller's own account.
    pub account_id: String,
    /// "" = the whole account.
    pub space_id: String,
    /// "" = any document.
    pub document_id: String,
    /// "" = every state but done.
    pub state: String,
    /// "" = anyone.
    pub claimed_by: String,
    /// 0 = 50.
    pub page_size: i64,
    /// "" = the first page.
    pub page_token: String,
}

/// One page of work items.
#[derive(Debug, Clone, Serialize)]
pub struct ItemList {
    /// Latest change first.
    pub items: Vec<WorkItem>,
    /// The token of the next page; "" on the last.
    pub next_page_token: String,
}

impl Service {
    /// `work_create`: a new open item in `space_id`, optionally implementing `document_id` of the same space.
    pub async fn create_item(
        &self,
        caller: &Caller,
        space_id: &str,
        title: &str,
        notes: &str,
        links: &[String],
        document_id: &str,
    ) -> Result<WorkItem, Error> {
        let title = text::single_line("title", title, 1, 200)?;
        let notes = text::multi_line("notes", notes, 0, 4000)?;
        let links = text::urls("links", links)?;
        if links.len() > MAX_LINKS {
            return Err(Error::InvalidArgument(format!("an item keeps at most ten links; {} were given", links.len())));
        }
        let space = self.space(caller, space_id, true).await?;
        let document_id = document_id.trim();
        if !document_id.is_empty() {
            decisions::get_document(self.store.pool(), document_id)
                .await?
                .filter(|d| d.space_id == space.id)
                .ok_or_else(|| Error::not_found("document", document_id))?;
        }
        let now = now_ms();
        let row = item::open_item(item::NewItem {
            id: new_id("wi_", now),
            account_id: space.account_id.clone(),
            space_id: space.id.clone(),
            document_id: document_id.to_owned(),
            title,
            notes,
            links: serde_json::to_string(&links).expect("a list of strings serializes"),
            created_by: caller.label(),
            now,
        });
        let data = json!({"title": row.title, "space_id": row.space_id, "document_id": row.document_id});
        let created = event(&row, caller, &caller.display_name, ("created", data), now);
        self.store.write(items::insert_item(&row, &created)).await?;
        self.store.changes().committed(Change::Item(row.id.clone()));
        Ok(WorkItem::from_row(&row))
    }

    /// `work_claim`: the item held by `claimant`; a repeat by the holder changes nothing.
    pub async fn claim_item(&self, caller: &Caller, account_id: &str, item_id: &str, claimant: &str) -> Result<WorkItem, Error> {
        let item_id = required_id(item_id)?;
        let claimant = text::single_line("claimant", claimant, 1, 100)?;
        let claimed = self
            .change_item(caller, account_id, &item_id, &claimant, |row, now| {
                Ok(item::claim(row, caller, &claimant, now)?.map(|(new, event)| (new, vec![event])))
            })
            .await;
        cairn_telemetry::metrics::work_claim(match &claimed {
            Ok((_, changed)) if changed.is_empty() => "unchanged",
            Ok(_) => "claimed",
            Err(error) => error.code(),
        });
        Ok(WorkItem::from_row(&claimed?.0))
    }

    /// `work_update`: the item after the change and which of state / notes / links changed (empty on a repeat).
    pub async fn update_item(
        &self,
        caller: &Caller,
        account_id: &str,
        item_id: &str,
        state: &str,
        notes: &str,
        links: &[String],
    ) -> Result<(WorkItem, Vec<&'static str>), Error> {
        let item_id = required_id(item_id)?;
        let changes = Changes {
            state: match state.trim() {
                "" => None,
                state => Some(Target::parse(state)?),
            },
            notes: match notes.trim() {
                "" => None,
                _ => Some(text::multi_line("notes", notes, 1, 4000)?),
            },
            links: text::urls("links", links)?,
        };
        if changes.state.is_none() && changes.notes.is_none() && changes.links.is_empty() {
            return Err(Error::InvalidArgument("give at least one of state, notes or links".into()));
        }
        let (row, events) = self
            .change_item(caller, account_id, &item_id, &caller.display_name, |row, now| {
                item::update(row, caller, &changes, now)
            })
            .await?;
        let changed = events
            .iter()
            .map(|kind| match *kind {
                "state_changed" => "state",
                "notes_changed" => "notes",
                _ => "links",
            })
            .collect();
        Ok((WorkItem::from_row(&row), changed))
    }

    /// `work_handoff`: the item open again with nobody holding it, `note` and `to` kept as its last hand-off.
    pub async fn handoff_item(&self, caller: &Caller, account_id: &str, item_id: &str, note: &str, to: &str) -> Result<WorkItem, Error> {
        let item_id = required_id(item_id)?;
        let note = text::multi_line("note", note, 1, 4000)?;
        let to = text::single_line("to", to, 0, 100)?;
        let (row, _) = self
            .change_item(caller, account_id, &item_id, &caller.display_name, |row, now| {
                item::handoff_item(row, caller, &note, &to, now).map(|(new, event)| Some((new, vec![event])))
            })
            .await?;
        Ok(WorkItem::from_row(&row))
    }

    /// An item and its whole history (`work_events`), oldest first: what the web UI's item page shows.
    pub async fn item_history(&self, caller: &Caller, account_id: &str, item_id: &str) -> Result<ItemHistory, Error> {
        let item_id = required_id(item_id)?;
        let account = self.account_id(caller, account_id, false).await?;
        let row = items::get_item(self.store.pool(), &account, &item_id)
            .await?
            .ok_or_else(|| Error::not_found("work item", &item_id))?;
        let events = items::events(self.store.pool(), &item_id)
            .await?
            .into_iter()
            .map(|e| ItemEvent {
                seq: e.seq,
                at: format_ms(e.at),
                by: e.claimant,
                kind: e.kind,
                data: serde_json::from_str(&e.data).unwrap_or(Value::Null),
            })
            .collect();
        Ok(ItemHistory { item: WorkItem::from_row(&row), events })
    }

    /// `work_list`: one page of the items matching `query`, latest change first.
    pub async fn list_items(&self, caller: &Caller, query: &ListQuery) -> Result<ItemList, Error> {
        let limit = page_size(query.page_size)?;
        let state = query.state.trim();
        if !state.is_empty() && !STATES.contains(&state) {
            return Err(Error::InvalidArgument(format!(
                "state '{state}' is not one of open, claimed, in_progress, blocked, done (or empty for all but done)"
            )));
        }
        let claimed_by = text::single_line("claimed_by", &query.claimed_by, 0, 100)?;
        let account = self.account_id(caller, &query.account_id, false).await?;
        let space_id = query.space_id.trim();
        if !space_id.is_empty() {
            let space = self.space(caller, space_id, false).await?;
            if space.account_id != account {
                return Err(Error::not_found("space", space_id));
            }
        }
        let document_id = query.document_id.trim();
        if !document_id.is_empty() {
            decisions::get_document(self.store.pool(), document_id)
                .await?
                .filter(|d| d.account_id == account && (space_id.is_empty() || d.space_id == space_id))
                .ok_or_else(|| Error::not_found("document", document_id))?;
        }
        let claimant_key = text::name_key(&claimed_by);
        let filters = json!({
            "list": "work", "account": account, "space": space_id, "document": document_id, "state": state,
            "claimed_by": claimant_key,
        });
        let after = match query.page_token.trim() {
            "" => None,
            token => Some(self.cursor(token, &filters).await?),
        };
        let some = |value: &str| (!value.is_empty()).then(|| value.to_owned());
        let filter = ItemFilter {
            account_id: account.clone(),
            space_id: some(space_id),
            document_id: some(document_id),
            state: some(state),
            claimant_key: some(&claimant_key),
            after,
            limit: limit + 1,
        };
        let mut rows = items::list_items(self.store.pool(), &filter).await?;
        let next_page_token = if rows.len() as i64 > limit {
            rows.truncate(limit as usize);
            let last = rows.last().expect("a full page has a last row");
            self.page_key().await?.sign(&filters, json!([last.updated_at, last.id]))
        } else {
            String::new()
        };
        Ok(ItemList { items: rows.iter().map(WorkItem::from_row).collect(), next_page_token })
    }

    /// Runs `change` on item `item_id` of the account and stores what it returns (compare-and-swap on the version,
    /// retried from the read when another writer won). Returns the item as it now is and the kinds of the events
    /// written (none when `change` left it as it was).
    async fn change_item<F>(
        &self,
        caller: &Caller,
        account_id: &str,
        item_id: &str,
        name: &str,
        change: F,
    ) -> Result<(ItemRow, Vec<&'static str>), Error>
    where
        F: Fn(&ItemRow, i64) -> Result<Option<(ItemRow, Vec<Event>)>, Error>,
    {
        let account = self.account_id(caller, account_id, true).await?;
        let decide = |row: Option<ItemRow>| -> Result<Decided, Error> {
            let row = row.ok_or_else(|| Error::not_found("work item", item_id))?;
            let Some((new, events)) = change(&row, now_ms())? else { return Ok(Decided::Unchanged(row)) };
            let kinds = events.iter().map(|(kind, _)| *kind).collect();
            let events: Vec<EventRow> =
                events.into_iter().map(|entry| event(&new, caller, name, entry, new.updated_at)).collect();
            let write = items::replace_item(&new, row.version, &events);
            Ok(Decided::Changed { new, kinds, write })
        };
        for attempt in 0..ATTEMPTS {
            // The first attempt reads and decides before it writes, and then writes the compare-and-swap and the log
            // entries as one batch — on SQLite the write lock is held for a single hand-off; on Postgres on the
            // connection that read, handed back clean for the next change — since most changes meet no other writer
            // of their item, and a refusal or a repeat writes nothing at all. A retry reads inside a write
            // transaction, where on SQLite nothing else can change the item.
            let (new, kinds, changed) = if attempt == 0 {
                let mut conn = self.store.read().await?;
                match decide(items::get_item(&mut *conn, &account, item_id).await?) {
                    Ok(Decided::Changed { new, kinds, write }) => (new, kinds, self.store.write_on(conn, write).await?),
                    Ok(Decided::Unchanged(row)) => {
                        self.store.release(conn);
                        return Ok((row, Vec::new()));
                    }
                    Err(refused) => {
                        self.store.release(conn);
                        return Err(refused);
                    }
                }
            } else {
                let mut tx = self.store.begin_write().await?;
                match decide(items::get_item(&mut *tx, &account, item_id).await?)? {
                    Decided::Unchanged(row) => return Ok((row, Vec::new())),
                    Decided::Changed { new, kinds, write } => {
                        let changed = write.run(&mut tx).await?;
                        tx.commit().await?;
                        (new, kinds, changed)
                    }
                }
            };
            if changed.first() == Some(&1) {
                self.store.changes().committed(Change::Item(new.id.clone()));
                return Ok((new, kinds));
            }
        }
        Err(Error::Internal("the item kept changing while this change was made".into()))
    }
}

/// What a change makes of an item as read.
enum Decided {
    /// Nothing to write: the item as it is.
    Unchanged(ItemRow),
    /// The item as it becomes, the kinds of the events the change logs, and the write that stores both.
    Changed { new: ItemRow, kinds: Vec<&'static str>, write: Batch },
}

/// An `item_id` argument, required.
fn required_id(item_id: &str) -> Result<String, Error> {
    match item_id.trim() {
        "" => Err(Error::InvalidArgument("item_id is required (work_list lists items)".into())),
        id => Ok(id.to_owned()),
    }
}

/// The log entry for `event` on `row`.
fn event(row: &ItemRow, caller: &Caller, name: &str, (kind, data): Event, now: i64) -> EventRow {
    EventRow {
        item_id: row.id.clone(),
        seq: 0,
        at: now,
        principal_id: caller.principal_id.clone(),
        claimant: name.to_owned(),
        kind: kind.to_owned(),
        data: data.to_string(),
    }
}
