//! The docs pages: the roscoe docs corpus (list, search, one page rendered from its markdown). A page's slug may hold
//! `/` (`/docs/guides/human-in-the-loop`); its headings carry the ids search hits link to, and its relative `.md`
//! links are rewritten to the pages they name.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use cairn_roscoe::docs::DocSummary;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};
use serde::Deserialize;
use serde_json::Value;

use super::{Layout, PageError, html, Visit};
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
    Ok(html(&page))
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
    let page = DocPage { layout: layout.clone(), title, html: markdown(&slug, &doc.markdown) };
    Ok(html(&page))
}

/// Markdown → HTML for the page `slug`: headings get their section ids, relative `.md` links become page links, and
/// raw HTML in the source is shown as text, never passed through.
fn markdown(slug: &str, source: &str) -> String {
    let mut ids = cairn_roscoe::docs::heading_ids(source).into_iter();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let parser = Parser::new_ext(source, options).map(|event| match event {
        Event::Html(text) | Event::InlineHtml(text) => Event::Text(text),
        Event::Start(Tag::Heading { level, id: _, classes, attrs }) => {
            Event::Start(Tag::Heading { level, id: ids.next().map(CowStr::from), classes, attrs })
        }
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            let dest_url = page_link(slug, &dest_url).map_or(dest_url, CowStr::from);
            Event::Start(Tag::Link { link_type, dest_url, title, id })
        }
        other => other,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    // A code block wider than the page scrolls; the keyboard must be able to reach it to scroll it.
    out.replace("<pre>", "<pre tabindex=\"0\">")
}

/// Markdown someone wrote (a work document's body) → HTML: raw HTML in it is shown as text, never passed through,
/// and a link or image whose target has a scheme other than http, https or mailto leads nowhere (`#`).
pub(super) fn user_markdown(source: &str) -> String {
    let safe = |dest: &str| -> bool {
        let scheme = dest.split_once(':').map(|(scheme, _)| scheme.to_ascii_lowercase());
        // A relative target has no scheme before its first `/`, `?` or `#`.
        match scheme {
            Some(scheme) if !scheme.contains(['/', '?', '#']) => matches!(scheme.as_str(), "http" | "https" | "mailto"),
            _ => true,
        }
    };
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let parser = Parser::new_ext(source, options).map(|event| match event {
        Event::Html(text) | Event::InlineHtml(text) => Event::Text(text),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) if !safe(&dest_url) => {
            Event::Start(Tag::Link { link_type, dest_url: "#".into(), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) if !safe(&dest_url) => {
            Event::Start(Tag::Image { link_type, dest_url: "#".into(), title, id })
        }
        other => other,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    out.replace("<pre>", "<pre tabindex=\"0\">")
}

/// The `/docs/…` path of a relative link to a `.md` page (`../concepts/x.md#y` from `guides/z`), or `None` for
/// any other link (absolute, another site, an anchor of this page).
fn page_link(slug: &str, dest: &str) -> Option<String> {
    if dest.contains(':') || dest.starts_with('/') || dest.starts_with('#') {
        return None;
    }
    let (path, fragment) = dest.split_once('#').map_or((dest, None), |(p, f)| (p, Some(f)));
    let path = path.strip_suffix(".md")?;
    let mut parts: Vec<&str> = slug.split('/').collect();
    parts.pop();
    for part in path.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
    Some(format!("/docs/{}{fragment}", parts.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_markdown_renders_with_its_html_as_text_and_no_script_links() {
        let html = user_markdown("## Plan\n\n<img src=x onerror=alert(1)> **bold**\n\n[go](javascript:alert(1)) \
            [site](https://example.com) [page](notes/a.md) ![i](data:text/html,x)\n");
        assert!(html.contains("<h2>Plan</h2>") && html.contains("<strong>bold</strong>"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;") && !html.contains("<img src=x"), "{html}");
        assert!(html.contains(r##"<a href="#">go</a>"##) && !html.contains("javascript:"), "{html}");
        assert!(html.contains(r#"<a href="https://example.com">site</a>"#), "{html}");
        assert!(html.contains(r#"<a href="notes/a.md">page</a>"#), "a relative link stays: {html}");
        assert!(html.contains(r##"<img src="#" alt="i" />"##), "{html}");
    }

    #[test]
    fn markdown_renders_and_raw_html_stays_text() {
        let html = markdown("index", "# Title\n\n<script>alert(1)</script>\n\n| a |\n|---|\n| b |\n");
        assert!(html.contains("<h1 id=\"title\">Title</h1>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("<table>"), "{html}");
    }

    #[test]
    fn relative_md_links_lead_to_pages() {
        assert_eq!(page_link("guides/web-ui", "../concepts/x.md#y").as_deref(), Some("/docs/concepts/x#y"));
        assert_eq!(page_link("guides/web-ui", "human-in-the-loop.md").as_deref(), Some("/docs/guides/human-in-the-loop"));
        assert_eq!(page_link("index", "concepts/workflow-sources.md").as_deref(), Some("/docs/concepts/workflow-sources"));
        assert_eq!(page_link("reference/node-types/ai_agent", "../../guides/h.md").as_deref(), Some("/docs/guides/h"));
        for other in ["https://cel.dev", "#here", "/docs/x", "picture.png"] {
            assert_eq!(page_link("index", other), None, "{other}");
        }
        let html = markdown("guides/a", "See [b](b.md#c).\n\n## Two `words`\n");
        assert!(html.contains(r#"href="/docs/guides/b#c""#) && html.contains(r#"<h2 id="two-words">"#), "{html}");
    }
}
