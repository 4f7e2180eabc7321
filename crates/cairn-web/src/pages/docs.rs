//! The docs pages: the roscoe docs corpus (list, search, one page rendered from its markdown).

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use cairn_roscoe::docs::DocSummary;
use pulldown_cmark::{Event, Options, Parser};
use serde::Deserialize;
use serde_json::Value;

use super::{Layout, PageError, render, Visit};
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

/// `?q=`.
#[derive(Debug, Deserialize)]
pub(crate) struct SearchParam {
    #[serde(default)]
    q: String,
}

/// `GET /docs?q=`.
pub(crate) async fn list(
    State(web): State<Web>,
    visit: Visit,
    Query(q): Query<SearchParam>,
) -> Result<Response, PageError> {
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
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
            Err(error) => (Vec::new(), Some(error.to_string())),
        },
    };
    let page = ListPage { layout: layout.clone(), query: q.q, error, hits, pages: web.roscoe.list_docs() };
    Ok(render(&layout, &page))
}

/// `GET /docs/{slug}`.
pub(crate) async fn page(
    State(web): State<Web>,
    visit: Visit,
    Path(slug): Path<String>,
) -> Result<Response, PageError> {
    let doc = web.roscoe.get_doc(&slug)?;
    let layout = Layout::new(&web, &visit, &Workspace::global()).await?;
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
