//! A script node's log on the run page: what it printed, escape sequences removed (cairn-roscoe's `terminal_text`),
//! in monospace and always escaped — the stored output once the node run has ended, and while it runs what it has
//! printed so far (`Runs::live_script_output`: the last 64 KiB of each stream, from whichever process runs it). A
//! running log is its own fragment (`runs/_log.html`), which htmx fetches again every second from
//! `GET /runs/{id}/log/{node_run_id}` until the node run has ended, when the answer is the stored log (no more
//! polling). The run page includes the same fragment.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use cairn_roscoe::runs::{LiveLog, TAIL_BYTES};
use serde_json::Value;

use super::{PageError, ProjectParam, html};
use crate::error::ApiError;
use crate::state::Web;
use crate::workspace::Workspace;

/// What a script node run printed, escape sequences removed, and how it ended.
#[derive(Debug, Clone)]
pub(crate) struct ScriptLog {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// `exit 0`, `exit 2`, `timed out`, or "" while unknown.
    pub(crate) ended: String,
    /// While the node run runs: the fragment to fetch again (`/runs/{id}/log/{node_run_id}?project=…`); "" once it
    /// ended.
    pub(crate) poll: String,
    /// While it runs: whether a stream printed more than the part kept.
    pub(crate) cut: bool,
}

impl ScriptLog {
    /// The log in an ended script node's output (`{ stdout, stderr, exitCode, timedOut }`); `None` for other nodes.
    pub(crate) fn of(node_type: &str, output: &Value) -> Option<ScriptLog> {
        if node_type != "script" || !output.is_object() {
            return None;
        }
        let text = |key: &str| cairn_roscoe::terminal_text::strip(output[key].as_str().unwrap_or_default());
        let ended = match (output["timedOut"].as_bool(), output["exitCode"].as_i64()) {
            (Some(true), _) => "timed out".to_owned(),
            (_, Some(code)) => format!("exit {code}"),
            _ => String::new(),
        };
        Some(ScriptLog { stdout: text("stdout"), stderr: text("stderr"), ended, poll: String::new(), cut: false })
    }

    /// The log of a script node run that is still running, from what it printed so far (`None`: nothing yet).
    fn running(run_id: &str, node_run_id: &str, project: &str, live: Option<LiveLog>) -> ScriptLog {
        let live = live.unwrap_or_default();
        ScriptLog {
            stdout: cairn_roscoe::terminal_text::strip(&live.stdout.text),
            stderr: cairn_roscoe::terminal_text::strip(&live.stderr.text),
            ended: String::new(),
            poll: format!("/runs/{run_id}/log/{node_run_id}?project={project}"),
            cut: live.stdout.is_cut() || live.stderr.is_cut(),
        }
    }

    /// The part of each stream a running log shows, in words.
    pub(crate) fn kept(&self) -> String {
        format!("{} KiB", TAIL_BYTES / 1024)
    }
}

/// The log fragment.
#[derive(Template)]
#[template(path = "runs/_log.html")]
struct LogFragment {
    log: ScriptLog,
}

/// The log of node run `node` (as `get_run_history` gives it) of run `run_id` while it is a running script's; `None`
/// for every other node run.
pub(crate) async fn running(
    web: &Web,
    ws: &Workspace,
    run_id: &str,
    node: &Value,
) -> Result<Option<ScriptLog>, PageError> {
    if node["nodeType"] != "script" || node["status"] != "running" {
        return Ok(None);
    }
    let node_run_id = node["id"].as_str().unwrap_or_default();
    let live = web.runs.live_script_output(&ws.scope, run_id, node_run_id).await?;
    Ok(Some(ScriptLog::running(run_id, node_run_id, &ws.key, live)))
}

/// `GET /runs/{id}/log/{node_run_id}`: one script node run's log, live while it runs, stored once it ended.
pub(crate) async fn fragment(
    State(web): State<Web>,
    Path((id, node_run_id)): Path<(String, String)>,
    Query(q): Query<ProjectParam>,
) -> Result<Response, PageError> {
    let ws = Workspace::resolve(&web, q.project.as_deref()).await?;
    // While it prints, that is all a poll reads; the run's history only once it ended (or before it printed).
    if let Some(live) = web.runs.live_script_output(&ws.scope, &id, &node_run_id).await? {
        return Ok(html(&LogFragment { log: ScriptLog::running(&id, &node_run_id, &ws.key, Some(live)) }));
    }
    let history = web.runs.get_run_history(&ws.scope, &id).await?;
    let node = history.nodes.iter().find(|n| n["id"] == node_run_id.as_str()).ok_or_else(|| {
        PageError::from(ApiError::roscoe(
            axum::http::StatusCode::NOT_FOUND,
            "not_found",
            format!("run {id} has no node run {node_run_id}; open the run's page for its node runs"),
        ))
    })?;
    let log = match running(&web, &ws, &id, node).await? {
        Some(log) => log,
        None => ScriptLog::of(node["nodeType"].as_str().unwrap_or_default(), &node["output"]).ok_or_else(|| {
            PageError::from(ApiError::roscoe(
                axum::http::StatusCode::NOT_FOUND,
                "not_found",
                format!("node run {node_run_id} is not a script's, so it has no log"),
            ))
        })?,
    };
    Ok(html(&LogFragment { log }))
}
