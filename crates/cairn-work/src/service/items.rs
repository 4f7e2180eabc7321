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
    /// The items it waits for, done or not.
    pub blockers: Vec<ItemRef>,
    /// The items that wait for it.
    pub blocks: Vec<ItemRef>,
    /// Its children (items whose parent it is).
    pub children: Vec<ItemRef>,
    /// Its events, oldest first.
    pub events: Vec<ItemEvent>,
}

/// Another item named from this one: enough to tell what it is and where it stands.
#[derive(Debug, Clone, Serialize)]
pub struct ItemRef {
    /// `wi_…`.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its state.
    pub state: String,
    /// Who holds it; "".
    pub claimant: String,
}

/// What `work_create` was asked for (raw arguments; checked by [`Service::create_item`]).
#[derive(Debug, Clone, Default)]
pub struct NewItemInput {
    /// The space.
    pub space_id: String,
    /// 1 to 200 characters.
    pub title: String,
    /// Up to 4000 characters.
    pub notes: String,
    /// http(s) URLs, at most ten.
    pub links: Vec<String>,
    /// "" = none.
    pub document_id: String,
    /// 0 to 4; `None` = 2.
    pub priority: Option<i64>,
    /// At most twenty.
    pub labels: Vec<String>,
    /// "" = none.
    pub parent_id: String,
    /// Items of the same space it waits for.
    pub blocked_by: Vec<String>,
}

/// What `work_update` was asked for (raw arguments; checked by [`Service::update_item`]).
#[derive(Debug, Clone, Default)]
pub struct ItemUpdate {
    /// in_progress, blocked or done; "" = unchanged.
    pub state: String,
    /// "" = unchanged.
    pub notes: String,
    /// Links to add.
    pub links: Vec<String>,
    /// 0 to 4.
    pub priority: Option<i64>,
    /// Labels to add.
    pub add_labels: Vec<String>,
    /// Labels to take away.
    pub remove_labels: Vec<String>,
    /// Items it now waits for too.
    pub add_blocked_by: Vec<String>,
    /// Items it no longer waits for.
    pub remove_blocked_by: Vec<String>,
    /// The new parent; `Some("")` takes it away.
    pub parent_id: Option<String>,
}

/// One entry of an item's history.
#[derive(Debug, Clone, Serialize)]
pub struct ItemEvent {
    /// 1, 2, … per item; 0 for `evidence`, which is its pull request's, not the item's own log.
    pub seq: i64,
    /// RFC 3339.
    pub at: String,
    /// Who did it: the name the caller gave, or its display name.
    pub by: String,
    /// `created`, `claimed`, `state_changed`, `notes_changed`, `links_added`, `priority_changed`, `labels_changed`,
    /// `blockers_changed`, `parent_changed`, `handed_off`, `unblocked`, `lease_expired`, or `evidence` (a merge or roll
    /// of a pull request it links to).
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
    /// "" = every state but done; "ready" = what [`Service::ready_items`] lists (needs `space_id`).
    pub state: String,
    /// "" = anyone.
    pub claimed_by: String,
    /// Items carrying every one of these labels.
    pub labels: Vec<String>,
    /// Items of this priority.
    pub priority: Option<i64>,
    /// Words that must all appear in the title or notes; "" = no search.
    pub query: String,
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
    /// `work_create`: a new open item in `space_id`, optionally implementing `document_id` of the same space, waiting
    /// for `blocked_by` and under `parent_id` (items of the same space).
    pub async fn create_item(&self, caller: &Caller, input: &NewItemInput) -> Result<WorkItem, Error> {
        let title = text::single_line("title", &input.title, 1, 200)?;
        let notes = text::multi_line("notes", &input.notes, 0, 4000)?;
        let links = text::urls("links", &input.links)?;
        if links.len() > MAX_LINKS {
            return Err(Error::InvalidArgument(format!("an item keeps at most ten links; {} were given", links.len())));
        }
        let priority = text::priority(input.priority.unwrap_or(2))?;
        let labels = text::labels("labels", &input.labels)?;
        let blocked_by = text::item_ids("blocked_by", &input.blocked_by)?;
        let parent_id = text::single_line("parent_id", &input.parent_id, 0, 100)?;
        let space = self.space(caller, &input.space_id, true).await?;
        let document_id = input.document_id.trim();
        if !document_id.is_empty() {
            decisions::get_document(self.store.pool(), document_id)
                .await?
                .filter(|d| d.space_id == space.id)
                .ok_or_else(|| Error::not_found("document", document_id))?;
        }
        for id in blocked_by.iter().chain((!parent_id.is_empty()).then_some(&parent_id)) {
            self.item_in_space(&space.account_id, &space.id, id).await?;
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
            priority,
            labels,
            parent_id,
            blocked_by,
            created_by: caller.label(),
            now,
        });
        let mut data = json!({"title": row.title, "space_id": row.space_id, "document_id": row.document_id});
        if !row.parent_id.is_empty() {
            data["parent_id"] = row.parent_id.clone().into();
        }
        let waits_for = item::list(&row.blocked_by);
        if !waits_for.is_empty() {
            data["blocked_by"] = waits_for.clone().into();
        }
        let created = event(&row, caller, &caller.display_name, ("created", data), now);
        let mut write = items::insert_item(&row, &created);
        write.append(items::change_blockers(&row.id, &waits_for, &[]));
        self.store.write(write).await?;
        self.store.changes().committed(Change::Item(row.id.clone()));
        Ok(WorkItem::from_row(&row))
    }

    /// The item `id` if it is one of space `space` (of `account`); else `not_found`, naming the space.
    pub(super) async fn item_in_space(&self, account: &str, space: &str, id: &str) -> Result<ItemRow, Error> {
        let row = items::get_item(self.store.pool(), account, id).await?;
        row.filter(|row| row.space_id == space).ok_or_else(|| not_in_space(id, space))
    }

    /// `work_claim`: the item held by `claimant`, with a lease of `lease_seconds` (`None`: the server's default
    /// lease, if any); a repeat by the holder changes nothing but the lease.
    pub async fn claim_item(
        &self,
        caller: &Caller,
        account_id: &str,
        item_id: &str,
        claimant: &str,
        lease_seconds: Option<i64>,
    ) -> Result<WorkItem, Error> {
        let item_id = required_id(item_id)?;
        let claimant = text::single_line("claimant", claimant, 1, 100)?;
        let lease_ms = self.lease_ms(lease_seconds)?;
        let claimed = self
            .change_item(caller, account_id, &item_id, &claimant, |row, now| item::claim(row, caller, &claimant, lease_ms, now))
            .await;
        cairn_telemetry::metrics::work_claim(match &claimed {
            Ok((_, changed)) if changed.is_empty() => "unchanged",
            Ok(_) => "claimed",
            Err(error) => error.code(),
        });
        Ok(WorkItem::from_row(&claimed?.0))
    }

    /// `work_update`: the item after the change and which of its fields changed (`state`, `notes`, `links`,
    /// `priority`, `labels`, `blocked_by`, `parent_id`; empty on a repeat). An item made done tells the items that
    /// waited only for it that they are ready.
    pub async fn update_item(
        &self,
        caller: &Caller,
        account_id: &str,
        item_id: &str,
        update: &ItemUpdate,
    ) -> Result<(WorkItem, Vec<&'static str>), Error> {
        let item_id = required_id(item_id)?;
        let changes = Changes {
            state: match update.state.trim() {
                "" => None,
                state => Some(Target::parse(state)?),
            },
            notes: match update.notes.trim() {
                "" => None,
                _ => Some(text::multi_line("notes", &update.notes, 1, 4000)?),
            },
            links: text::urls("links", &update.links)?,
            priority: update.priority.map(text::priority).transpose()?,
            add_labels: text::labels("add_labels", &update.add_labels)?,
            remove_labels: text::labels("remove_labels", &update.remove_labels)?,
            add_blocked_by: text::item_ids("add_blocked_by", &update.add_blocked_by)?,
            remove_blocked_by: text::item_ids("remove_blocked_by", &update.remove_blocked_by)?,
            parent_id: update.parent_id.as_deref().map(|p| text::single_line("parent_id", p, 0, 100)).transpose()?,
        };
        if changes == Changes::default() {
            return Err(Error::InvalidArgument(
                "give at least one of state, notes, links, priority, add_labels, remove_labels, add_blocked_by, \
                 remove_blocked_by or parent_id"
                    .into(),
            ));
        }
        let (row, events) = if changes.touches_graph() {
            self.change_graph(caller, account_id, &item_id, &changes).await?
        } else {
            self.change_item(caller, account_id, &item_id, &caller.display_name, |row, now| {
                item::update(row, caller, &changes, now)
            })
            .await?
        };
        if events.contains(&"state_changed") && row.state == "done" {
            self.announce_unblocked(caller, &row).await;
        }
        let changed = events.iter().map(|kind| changed_field(kind)).collect();
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
        let (blocks, children) = items::dependents(self.store.pool(), &item_id).await?;
        let blockers = self.refs(&account, &item::list(&row.blocked_by)).await?;
        let blocks = self.refs(&account, &blocks).await?;
        let children = self.refs(&account, &children).await?;
        let mut events: Vec<ItemEvent> = items::events(self.store.pool(), &item_id)
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
        let item = WorkItem::from_row(&row);
        let linked = self.items_evidence(caller, std::slice::from_ref(&item)).await?;
        // Each record goes before the first of the item's own events that is later: those keep their order.
        for pull in linked.into_iter().flatten() {
            for record in pull.records {
                let (repository, number) = (&pull.repository, pull.number);
                let data = json!({"repository": repository, "pull_request": number, "evidence": record.evidence});
                let at = record.evidence.at.clone();
                let place = events.iter().position(|e| e.at > at).unwrap_or(events.len());
                events.insert(place, ItemEvent { seq: 0, at, by: record.recorded_by, kind: "evidence".into(), data });
            }
        }
        Ok(ItemHistory { item, blockers, blocks, children, events })
    }

    /// The items of the caller's account among `ids`, in that order, each once (ids of nothing are left out): what a
    /// page shows of the items others wait for.
    pub async fn item_refs(&self, caller: &Caller, ids: &[String]) -> Result<Vec<ItemRef>, Error> {
        let account = self.account_id(caller, "", false).await?;
        let mut unique: Vec<String> = Vec::new();
        for id in ids {
            if !unique.contains(id) {
                unique.push(id.clone());
            }
        }
        self.refs(&account, &unique).await
    }

    /// The items of `account` among `ids`, in that order.
    async fn refs(&self, account: &str, ids: &[String]) -> Result<Vec<ItemRef>, Error> {
        let mut out = Vec::new();
        for id in ids {
            if let Some(row) = items::get_item(self.store.pool(), account, id).await? {
                out.push(ItemRef { id: row.id, title: row.title, state: row.state, claimant: row.claimant });
            }
        }
        Ok(out)
    }

    /// `work_list`: one page of the items matching `query`, latest change first.
    pub async fn list_items(&self, caller: &Caller, query: &ListQuery) -> Result<ItemList, Error> {
        let limit = page_size(query.page_size)?;
        let state = query.state.trim();
        if state == "ready" {
            return self.ready_list(caller, query).await;
        }
        if !state.is_empty() && !STATES.contains(&state) {
            return Err(Error::InvalidArgument(format!(
                "state '{state}' is not one of open, claimed, in_progress, blocked, done, ready (or empty for all but \
                 done)"
            )));
        }
        let claimed_by = text::single_line("claimed_by", &query.claimed_by, 0, 100)?;
        let labels = text::labels("labels", &query.labels)?;
        let priority = query.priority.map(text::priority).transpose()?;
        let words = text::words("query", &query.query)?;
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
            "claimed_by": claimant_key, "labels": labels, "priority": priority, "query": words,
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
            labels,
            priority,
            words,
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
    pub(super) async fn change_item<F>(
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

/// The `not_found` of an item named as a blocker or parent that is not one of `space`'s.
pub(super) fn not_in_space(id: &str, space: &str) -> Error {
    Error::NotFound(format!(
        "work item '{id}' not found in space '{space}' (blockers and parents are items of the same space)"
    ))
}

/// The field an event of `work_update` changed.
fn changed_field(kind: &str) -> &'static str {
    match kind {
        "state_changed" => "state",
        "notes_changed" => "notes",
        "priority_changed" => "priority",
        "labels_changed" => "labels",
        "blockers_changed" => "blocked_by",
        "parent_changed" => "parent_id",
        _ => "links",
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
pub(super) fn required_id(item_id: &str) -> Result<String, Error> {
    match item_id.trim() {
        "" => Err(Error::InvalidArgument("item_id is required (work_list lists items)".into())),
        id => Ok(id.to_owned()),
    }
}

/// The log entry for `event` on `row`.
pub(super) fn event(row: &ItemRow, caller: &Caller, name: &str, (kind, data): Event, now: i64) -> EventRow {
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
