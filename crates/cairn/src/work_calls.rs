//! The calls `cairn work items …` and `cairn work evidence …` make ([`Call`]), and the two ways of making one: on
//! the local database through the work facade ([`locally`], scopes checked as the work tools check them), or through
//! the REST API of a `cairn serve` ([`over_rest`]). Both answer with the same JSON, the work tools' shapes.

use cairn_work::{Caller, EvidenceInput, ItemUpdate, ListQuery, NewItemInput, Service, WORK_READ, WORK_WRITE};
use reqwest::Method;
use serde::Serialize;
use serde_json::{Value, json};

use crate::work_remote::{Failure, Remote};

/// One call of the work facade, as a command asks for it (raw arguments: the facade checks them).
#[derive(Debug, Clone)]
pub(crate) enum Call {
    List(ListQuery),
    Ready { space: String, labels: Vec<String>, page_size: i64 },
    Show { account: String, id: String },
    Create(NewItemInput),
    Claim { account: String, id: String, claimant: String, lease: Option<i64> },
    Heartbeat { account: String, id: String, claimant: String },
    Next { space: String, claimant: String, labels: Vec<String>, lease: Option<i64> },
    Update { account: String, id: String, update: ItemUpdate },
    Handoff { account: String, id: String, note: String, to: String },
    Evidence(EvidenceInput),
}

/// The call made on the local database, scopes checked as the work tools check them.
pub(crate) async fn locally(service: &Service, caller: &Caller, call: Call) -> Result<Value, Failure> {
    caller.require(call.tool(), if call.writes() { &WORK_WRITE } else { &WORK_READ })?;
    // A claim made here must not be refused for a lease that ran out while no server was sweeping.
    service.expire_leases().await?;
    Ok(match call {
        Call::List(query) => value(service.list_items(caller, &query).await?),
        Call::Ready { space, labels, page_size } => {
            json!({ "items": service.ready_items(caller, &space, &labels, page_size).await? })
        }
        Call::Show { account, id } => value(service.item_history(caller, &account, &id).await?),
        Call::Create(input) => json!({ "item": service.create_item(caller, &input).await? }),
        Call::Claim { account, id, claimant, lease } => {
            json!({ "item": service.claim_item(caller, &account, &id, &claimant, lease).await? })
        }
        Call::Heartbeat { account, id, claimant } => {
            json!({ "item": service.heartbeat(caller, &account, &id, &claimant).await? })
        }
        Call::Next { space, claimant, labels, lease } => {
            value(service.claim_next(caller, &space, &claimant, &labels, lease).await?)
        }
        Call::Update { account, id, update } => {
            let (item, changed) = service.update_item(caller, &account, &id, &update).await?;
            json!({ "item": item, "changed": changed })
        }
        Call::Handoff { account, id, note, to } => {
            json!({ "item": service.handoff_item(caller, &account, &id, &note, &to).await? })
        }
        Call::Evidence(input) => service.record_evidence(caller, &input).await?,
    })
}

/// The call made through the REST API (`/api/work/…`, `/api/spaces/…`); single items come back wrapped as
/// `{"item"}`, as the work tools and the local commands print them.
pub(crate) async fn over_rest(remote: &Remote, call: Call) -> Result<Value, Failure> {
    let item = |answer: Value| json!({ "item": answer });
    let number = |n: Option<i64>| n.map(|n| n.to_string()).unwrap_or_default();
    match call {
        Call::List(q) => {
            let size = (q.page_size > 0).then_some(q.page_size);
            let query = [
                ("account_id", q.account_id),
                ("space_id", q.space_id),
                ("document_id", q.document_id),
                ("state", q.state),
                ("claimed_by", q.claimed_by),
                ("labels", q.labels.join(",")),
                ("priority", number(q.priority)),
                ("query", q.query),
                ("page_size", number(size)),
                ("page_token", q.page_token),
            ];
            remote.get(&["api", "work", "items"], &query).await
        }
        Call::Ready { space, labels, page_size } => {
            let query = [("labels", labels.join(",")), ("page_size", number((page_size > 0).then_some(page_size)))];
            remote.get(&["api", "spaces", &space, "ready"], &query).await
        }
        Call::Show { account, id } => remote.get(&["api", "work", "items", &id], &[("account_id", account)]).await,
        Call::Create(i) => {
            let body = json!({
                "space_id": i.space_id, "title": i.title, "notes": i.notes, "links": i.links,
                "document_id": i.document_id, "priority": i.priority, "labels": i.labels, "parent_id": i.parent_id,
                "blocked_by": i.blocked_by,
            });
            remote.send_json(Method::POST, &["api", "work", "items"], body).await.map(item)
        }
        Call::Claim { account, id, claimant, lease } => {
            let body = json!({ "claimant": claimant, "lease_seconds": lease, "account_id": account });
            remote.send_json(Method::POST, &["api", "work", "items", &id, "claim"], body).await.map(item)
        }
        Call::Heartbeat { account, id, claimant } => {
            let body = json!({ "claimant": claimant, "account_id": account });
            remote.send_json(Method::POST, &["api", "work", "items", &id, "heartbeat"], body).await.map(item)
        }
        Call::Next { space, claimant, labels, lease } => {
            let body = json!({ "claimant": claimant, "labels": labels, "lease_seconds": lease });
            remote.send_json(Method::POST, &["api", "spaces", &space, "next"], body).await
        }
        Call::Update { account, id, update: u } => {
            let body = json!({
                "state": u.state, "notes": u.notes, "links": u.links, "priority": u.priority,
                "add_labels": u.add_labels, "remove_labels": u.remove_labels, "add_blocked_by": u.add_blocked_by,
                "remove_blocked_by": u.remove_blocked_by, "parent_id": u.parent_id, "account_id": account,
            });
            remote.send_json(Method::PATCH, &["api", "work", "items", &id], body).await
        }
        Call::Handoff { account, id, note, to } => {
            let body = json!({ "note": note, "to": to, "account_id": account });
            remote.send_json(Method::POST, &["api", "work", "items", &id, "handoff"], body).await.map(item)
        }
        Call::Evidence(e) => {
            let body = json!({
                "kind": e.kind, "repository": e.repository, "commit": e.commit, "pull_requests": e.pull_requests,
                "service": e.service, "at": e.at, "account_id": e.account_id,
            });
            remote.send_json(Method::POST, &["api", "work", "evidence"], body).await
        }
    }
}

impl Call {
    /// The work tool doing the same, which names the scopes it needs.
    fn tool(&self) -> &'static str {
        match self {
            Call::List(_) => "work_list",
            Call::Ready { .. } => "work_ready",
            Call::Show { .. } => "work_get",
            Call::Create(_) => "work_create",
            Call::Claim { .. } => "work_claim",
            Call::Heartbeat { .. } => "work_heartbeat",
            Call::Next { .. } => "work_claim_next",
            Call::Update { .. } => "work_update",
            Call::Handoff { .. } => "work_handoff",
            Call::Evidence(_) => "work_record_evidence",
        }
    }

    fn writes(&self) -> bool {
        !matches!(self, Call::List(_) | Call::Ready { .. } | Call::Show { .. })
    }
}

fn value(answer: impl Serialize) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}
