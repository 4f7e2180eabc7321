//! The docs pages (the roscoe docs corpus: list, search, one page rendered from its markdown) and the DeepWork
//! sessions page of the `--project` given to `cairn serve` (each active workflow: job, goal, current step, steps
//! done).

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use cairn_roscoe::docs::DocSummary;
use pulldown_cmark::{Event, Options, Parser};
use serde::Deserialize;
use serde_json::Value;

use super::{Layout, PageError, render};
use crate::error::ApiError;
use crate::state::Web;
use crate::workspace::Workspace;

#[derive(Template)]
#[template(path = "docs/list.html")]
struct ListPage {
    layout: Layout,
    query: String,
    error: Option<String>,
    /// `(slug, #heading or "", title, snippet)`.
    hits: Vec<(String, String, String, String)>,
    pages: Vec<DocSummary>,
}

#[derive(Template)]
#[template(path = "docs/page.html")]
struct DocPage {
    layout: Layout,
    title: String,
    html: String,
}

struct Session {
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
struct SessionsPage {
    layout: Layout,
    root: String,
    sessions: Vec<Session>,
}

/// `?q=`.
#[derive(Debug, Deserialize)]
pub(crate) struct SearchParam {
    #[serde(default)]
    q: String,
}

/// `GET /docs?q=`.
pub(crate) async fn list(
    State(web): State<Web>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<SearchParam>,
) -> Result<Response, PageError> {
    let layout = Layout::new(&web, &headers, &uri, &Workspace::global()).await?;
    let (hits, error) = match q.q.trim() {
        "" => (Vec::new(), None),
        query => match web.roscoe.search_docs(query, Some(20)) {
            Ok(hits) => {
                let hits = hits
                    .into_iter()
                    .map(|h| {
                        let anchor = h.heading_id.map(|id| format!("#{id}")).unwrap_or_default();
                        let title = match h.heading_text {
                            Some(heading) => format!("{} — {heading}", h.title),
                            None => h.title,
                        };
                        (h.slug, anchor, title, h.snippet)
                    })
                    .collect();
                (hits, None)
            }
            Err(error) => (Vec::new(), Some(error.message)),
        },
    };
    let page = ListPage { layout: layout.clone(), query: q.q, error, hits, pages: web.roscoe.list_docs() };
    Ok(render(&layout, &page))
}

/// `GET /docs/{slug}`.
pub(crate) async fn page(
    State(web): State<Web>,
    headers: HeaderMap,
    uri: Uri,
    Path(slug): Path<String>,
) -> Result<Response, PageError> {
    let doc = web.roscoe.get_doc(&slug)?;
    let layout = Layout::new(&web, &headers, &uri, &Workspace::global()).await?;
    let title = doc.frontmatter.get("title").and_then(Value::as_str).unwrap_or(&slug).to_owned();
    let page = DocPage { layout: layout.clone(), title, html: markdown(&doc.markdown) };
    Ok(render(&layout, &page))
}

/// Markdown → HTML; raw HTML in the source is shown as text, never passed through.
fn markdown(source: &str) -> String {
    let parser = Parser::new_ext(source, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|event| match event {
        Event::Html(text) | Event::InlineHtml(text) => Event::Text(text),
        other => other,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

/// `GET /sessions`: the DeepWork project's active workflows.
pub(crate) async fn sessions(State(web): State<Web>, headers: HeaderMap, uri: Uri) -> Result<Response, PageError> {
    let Some(project) = web.deepwork.clone() else {
        return Err(ApiError::roscoe(
            StatusCode::NOT_FOUND,
            "not_found",
            "no DeepWork project: start cairn serve with --project DIR to see its sessions",
        )
        .into());
    };
    let layout = Layout::new(&web, &headers, &uri, &Workspace::global()).await?;
    let root = project.root.clone();
    let found = crate::state::blocking(move || Ok(project.service.active_sessions(&root))).await?;
    let sessions = found
        .iter()
        .map(|s| {
            let text = |key: &str| s[key].as_str().unwrap_or_default().to_owned();
            let progress = match (s["step_number"].as_u64(), s["total_steps"].as_u64()) {
                (Some(n), Some(total)) => format!("{n} of {total}"),
                _ => String::new(),
            };
            let completed: Vec<&str> =
                s["completed_steps"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            Session {
                session: text("session_id"),
                job: text("job_name"),
                workflow: text("workflow_name"),
                goal: text("goal"),
                step: text("current_step_id"),
                progress,
                completed: if completed.is_empty() { "none".into() } else { completed.join(", ") },
            }
        })
        .collect();
    let page = SessionsPage { layout: layout.clone(), root: web.deepwork.map(|d| d.root.display().to_string()).unwrap_or_default(), sessions };
    Ok(render(&layout, &page))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_and_raw_html_stays_text() {
        let html = markdown("# Title\n\n<script>alert(1)</script>\n\n| a |\n|---|\n| b |\n");
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("<table>"), "{html}");
    }
}
