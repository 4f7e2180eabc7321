//! `work_record_evidence`: record that a pull request merged at a commit, or that a service runs a commit containing
//! pull requests; repeats are safe, contradictions are conflicts.

use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::{WorkServer, parse, reply, write_tool};
use crate::auth::Caller;
use crate::service::EvidenceInput;

super::account_params! {
    /// `work_record_evidence` arguments.
    struct Params {
        /// RFC 3339 (default now).
        #[serde(default)]
        at: String,
        commit: String,
        kind: String,
        /// By number; exactly one for merged.
        pull_requests: Vec<i64>,
        /// "owner/name".
        repository: String,
        /// For rolled.
        #[serde(default)]
        service: String,
    }
}

pub(crate) fn tool() -> Tool {
    write_tool::<Params>(
        "work_record_evidence",
        "Records evidence for work_status: `merged` (a pull request merged at a commit) or `rolled` (a service runs \
         a commit with these pull requests).",
        true,
    )
}

pub(crate) async fn call(server: &WorkServer, caller: &Caller, args: Option<JsonObject>) -> CallToolResult {
    let p = match parse::<Params>("work_record_evidence", args) {
        Ok(p) => p,
        Err(error) => return error,
    };
    let input = EvidenceInput {
        account_id: p.account_id,
        kind: p.kind,
        repository: p.repository,
        commit: p.commit,
        pull_requests: p.pull_requests,
        service: p.service,
        at: p.at,
    };
    reply(server.service.record_evidence(caller, &input).await)
}
