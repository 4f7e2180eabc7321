//! The DeepWork sessions of the `--project` given to `cairn serve`: the list (each active workflow: job, goal,
//! current step, steps done) and one session's page, which adds the reviews its current step would still need
//! (`Deepwork::session_reviews`: the step's own reviews and the project's rules over the changed files, without a
//! `.passed` marker). Those ask git, so only the session page computes them, never the list.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use cairn_deepwork::reviews::{OpenReview, SessionReviews};
use serde_json::Value;

use super::{Layout, PageError, html, Visit};
use crate::error::ApiError;
use crate::state::{DeepworkProject, Web, blocking};
use crate::workspace::Workspace;

/// One active workflow of a session.
struct Workflow {
    session: String,
    job: String,
    workflow: String,
    goal: String,
    step: String,
    progress: String,
    completed: String,
}

#[derive(Template)]
#[template(path = "sessions/list.html")]
struct ListPage {
    layout: Layout,
    root: String,
    sessions: Vec<Workflow>,
}

#[derive(Template)]
#[template(path = "sessions/page.html")]
struct SessionPage {
    layout: Layout,
    session: String,
    /// The session's active workflows, innermost first.
    stack: Vec<Workflow>,
    /// The current step of the innermost one.
    step: String,
    reviews: Vec<OpenReview>,
    problems: Vec<String>,
}

/// The `--project`, or 404 with how to get one.
fn project(web: &Web) -> Result<DeepworkProject, PageError> {
    web.deepwork.clone().ok_or_else(|| {
        PageError(ApiError::roscoe(
            StatusCode::NOT_FOUND,
            "not_found",
            "no DeepWork project: start cairn serve with --project DIR to see its sessions",
        ))
    })
}

/// An entry of `Deepwork::active_sessions` as the pages show it.
fn workflow(s: &Value) -> Workflow {
    let text = |key: &str| s[key].as_str().unwrap_or_default().to_owned();
    let progress = match (s["step_number"].as_u64(), s["total_steps"].as_u64()) {
        (Some(n), Some(total)) => format!("{n} of {total}"),
        _ => String::new(),
    };
    let completed: Vec<&str> = s["completed_steps"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    Workflow {
        session: text("session_id"),
        job: text("job_name"),
        workflow: text("workflow_name"),
        goal: text("goal"),
        step: text("current_step_id"),
        progress,
        completed: if completed.is_empty() { "none".into() } else { completed.join(", ") },
    }
}

/// `GET /sessions`: the project's active workflows.
pub(crate) async fn list(State(web): State<Web>, visit: Visit) -> Result<Response, PageError> {
    let project = project(&web)?;
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    let root = project.root.display().to_string();
    let found = blocking(move || Ok(project.service.active_sessions(&project.root))).await?;
    let page = ListPage { layout: layout.clone(), root, sessions: found.iter().map(workflow).collect() };
    Ok(html(&page))
}

/// `GET /sessions/{id}`: one session's active workflows and the reviews its current step still needs.
pub(crate) async fn page(
    State(web): State<Web>,
    visit: Visit,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    let project = project(&web)?;
    let session = id.clone();
    let (stack, reviews) = blocking(move || {
        let stack: Vec<Value> = project
            .service
            .active_sessions(&project.root)
            .into_iter()
            .filter(|s| s["session_id"].as_str() == Some(session.as_str()))
            .collect();
        if stack.is_empty() {
            return Ok((stack, SessionReviews::default()));
        }
        let reviews = project.service.session_reviews(&project.root, &session).map_err(|error| {
            ApiError::roscoe(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("the session cannot be read: {error}"))
        })?;
        Ok((stack, reviews))
    })
    .await?;
    if stack.is_empty() {
        return Err(PageError(ApiError::roscoe(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no active DeepWork workflow in session '{id}'; /sessions lists the active ones"),
        )));
    }
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
    let page = SessionPage {
        layout: layout.clone(),
        session: id,
        stack: stack.iter().map(workflow).collect(),
        step: reviews.step,
        reviews: reviews.reviews,
        problems: reviews.problems,
    };
    Ok(html(&page))
}
