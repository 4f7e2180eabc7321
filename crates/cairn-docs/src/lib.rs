//! cairn's own documentation for the roscoe surface (§16): the markdown pages of `docs/roscoe/`, embedded in the
//! binary, and what the five project-agnostic docs tools do over them. It knows nothing of workflows or runs: roscoe's
//! facade serves these functions as its docs tools, and supplies the model that [`answer`] suggests.
//!
//! `corpus.rs` cuts each page into heading sections ([`Page`], [`Section`]) with GitHub-compatible heading ids
//! ([`slug`]), reading each page's front matter with [`front_matter`] (which roscoe's skill discovery uses too);
//! `search.rs` ranks sections with BM25. Here:
//! [`list`], [`get`], [`search()`] (ranked sections with a snippet around the first match), [`ask`] (whole sections
//! packed into a character budget) and [`answer`] (a citation-required prompt for the host to answer; no model is
//! called here), plus [`pages`] and [`page`] for checks over the whole corpus.

mod corpus;
pub mod front_matter;
mod search;
pub mod slug;

use std::sync::LazyLock;

use include_dir::{Dir, include_dir};
use serde::Serialize;
use serde_json::{Map, Value, json};

pub use corpus::{Page, Section, heading_ids};
use search::{Hit, Index, query_tokens, snippet};

/// The markdown sources, embedded at build time (build.rs rebuilds when they change).
static SOURCES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../docs/roscoe");

/// Characters of context either side of a search match.
const SNIPPET_RADIUS: usize = 80;

static CORPUS: LazyLock<Corpus> = LazyLock::new(|| {
    Corpus::load(&SOURCES).unwrap_or_else(|e| panic!("the embedded docs corpus is invalid: {e}"))
});

/// Every page and the search index over their sections.
struct Corpus {
    pages: Vec<Page>,
    index: Index,
}

impl Corpus {
    fn load(dir: &Dir<'_>) -> Result<Corpus, String> {
        let mut pages = Vec::new();
        collect(dir, &mut pages)?;
        pages.sort_by(|a, b| (a.order, &a.slug).cmp(&(b.order, &b.slug)));
        let index = Index::new(&pages);
        Ok(Corpus { pages, index })
    }

    fn page(&self, slug: &str) -> Option<&Page> {
        let slug = slug.trim().trim_matches('/');
        let slug = slug.strip_suffix(".md").unwrap_or(slug);
        self.pages.iter().find(|p| p.slug == slug)
    }

    fn section(&self, hit: &Hit) -> (&Page, &Section) {
        let page = &self.pages[hit.page];
        (page, &page.sections[hit.section])
    }
}

fn collect(dir: &Dir<'_>, pages: &mut Vec<Page>) -> Result<(), String> {
    for file in dir.files() {
        let path = file.path();
        if path.extension().is_some_and(|e| e == "md") {
            let slug = path.with_extension("").to_string_lossy().replace('\\', "/");
            let text = file
                .contents_utf8()
                .ok_or_else(|| format!("{slug}: not UTF-8"))?;
            pages.push(Page::parse(&slug, text)?);
        }
    }
    for sub in dir.dirs() {
        collect(sub, pages)?;
    }
    Ok(())
}

/// A docs tool's error: `{ error, code }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocsError {
    /// `not_found`, `invalid_input` or `no_sections`.
    pub code: &'static str,
    /// What went wrong and what to do.
    pub message: String,
}

impl DocsError {
    fn input(message: impl Into<String>) -> DocsError {
        DocsError {
            code: "invalid_input",
            message: message.into(),
        }
    }

    /// The error object.
    pub fn body(&self) -> Value {
        json!({ "error": self.message, "code": self.code })
    }
}

/// One `list_docs` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DocSummary {
    /// The page's slug (`/docs/<slug>`).
    pub slug: String,
    /// Its title.
    pub title: String,
    /// One sentence on what it covers.
    pub description: String,
}

/// `get_doc`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Doc {
    /// The page's front matter.
    pub frontmatter: Map<String, Value>,
    /// The markdown body.
    pub markdown: String,
}

/// One `search_docs` hit.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The page.
    pub slug: String,
    /// The page's title.
    pub title: String,
    /// The section's heading id (`null`: the page's lede).
    pub heading_id: Option<String>,
    /// The section's heading text.
    pub heading_text: Option<String>,
    /// Up to about 80 characters either side of the first match.
    pub snippet: String,
    /// The BM25 score.
    pub score: f64,
}

/// `ask_docs`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Asked {
    /// The question as asked.
    pub question: String,
    /// The chosen sections, best first.
    pub sections: Vec<AskedSection>,
    /// Whether a matching section was left out to stay within the budget or the section count.
    pub truncated: bool,
    /// Characters of section text returned.
    pub total_chars: usize,
}

/// One section of an `ask_docs` answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskedSection {
    /// The page.
    pub slug: String,
    /// The page's title.
    pub title: String,
    /// The heading id (`null`: the page's lede); `/docs/<slug>#<headingId>` links to it.
    pub heading_id: Option<String>,
    /// The heading text.
    pub heading_text: Option<String>,
    /// The section's markdown, subsections, code and diagrams included.
    pub text: String,
    /// The BM25 score.
    pub score: f64,
}

/// `answer_docs`: a prompt for the host to answer, with its sources.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AnswerPrompt {
    /// Always `answer_prompt`.
    pub action: &'static str,
    /// What the host does with `prompt`.
    pub instructions: String,
    /// The citation-required prompt.
    pub prompt: String,
    /// The suggested model.
    pub model: String,
    /// Source `[n]` of the prompt is `citations[n-1]`.
    pub citations: Vec<Citation>,
}

/// Where a cited section lives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    /// The page.
    pub slug: String,
    /// The page's title.
    pub title: String,
    /// The heading id (`null`: the page's lede).
    pub heading_id: Option<String>,
    /// The heading text.
    pub heading_text: Option<String>,
}

fn rounded(score: f64) -> f64 {
    (score * 10_000.0).round() / 10_000.0
}

fn check_range(name: &str, value: usize, min: usize, max: usize) -> Result<usize, DocsError> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(DocsError::input(format!(
            "`{name}` must be between {min} and {max}"
        )))
    }
}

/// `list_docs`: every page, by `order` then slug.
pub fn list() -> Vec<DocSummary> {
    CORPUS
        .pages
        .iter()
        .map(|p| DocSummary {
            slug: p.slug.clone(),
            title: p.title.clone(),
            description: p.description.clone(),
        })
        .collect()
}

/// `get_doc`: one page's front matter and markdown.
pub fn get(slug: &str) -> Result<Doc, DocsError> {
    let page = CORPUS.page(slug).ok_or_else(|| DocsError {
        code: "not_found",
        message: format!("Doc not found: {slug}. Call list_docs for the slugs."),
    })?;
    Ok(Doc {
        frontmatter: page.frontmatter.clone(),
        markdown: page.markdown.clone(),
    })
}

/// `search_docs`: the best `limit` sections for `query`, each with a snippet.
pub fn search(
    query: &str,
    limit: Option<usize>,
) -> Result<Vec<SearchHit>, DocsError> {
    let limit = check_range("limit", limit.unwrap_or(10), 1, 50)?;
    let terms = query_tokens(query, false);
    if terms.is_empty() {
        return Err(DocsError::input(
            "`query` has no words to search for; pass a tool name, an error code or a few keywords",
        ));
    }
    Ok(CORPUS
        .index
        .rank(query, &terms)
        .iter()
        .take(limit)
        .map(|hit| {
            let (page, section) = CORPUS.section(hit);
            SearchHit {
                slug: page.slug.clone(),
                title: page.title.clone(),
                heading_id: section.heading_id.clone(),
                heading_text: section.heading_text.clone(),
                snippet: snippet(&section.plain, &terms, SNIPPET_RADIUS),
                score: rounded(hit.score),
            }
        })
        .collect())
}

/// `ask_docs`: the best sections for `question`, whole, packed greedily within `budget_chars` and
/// `max_sections`; a section inside (or around) one already chosen is skipped.
pub fn ask(
    question: &str,
    budget_chars: Option<usize>,
    max_sections: Option<usize>,
) -> Result<Asked, DocsError> {
    let budget = check_range("budget_chars", budget_chars.unwrap_or(12_000), 1, 200_000)?;
    let max_sections = check_range("max_sections", max_sections.unwrap_or(8), 1, 50)?;
    if question.trim().is_empty() {
        return Err(DocsError::input(
            "`question` is empty; ask a question in words",
        ));
    }
    let terms = query_tokens(question, true);
    let mut chosen: Vec<(&Page, &Section, f64)> = Vec::new();
    let mut total = 0;
    let mut truncated = false;
    for hit in CORPUS.index.rank(question, &terms) {
        let (page, section) = CORPUS.section(&hit);
        let overlaps = chosen.iter().any(|(p, s, _)| {
            p.slug == page.slug && s.start < section.end && section.start < s.end
        });
        if overlaps {
            continue;
        }
        let size = page.text(section).chars().count();
        if chosen.len() == max_sections || total + size > budget {
            truncated = true;
            continue;
        }
        total += size;
        chosen.push((page, section, hit.score));
    }
    Ok(Asked {
        question: question.to_owned(),
        sections: chosen
            .into_iter()
            .map(|(page, section, score)| AskedSection {
                slug: page.slug.clone(),
                title: page.title.clone(),
                heading_id: section.heading_id.clone(),
                heading_text: section.heading_text.clone(),
                text: page.text(section).to_owned(),
                score: rounded(score),
            })
            .collect(),
        truncated,
        total_chars: total,
    })
}

/// `answer_docs`: `ask_docs`, then a prompt that makes the host answer from those sections only, citing them.
/// `model` names the model to suggest; it is asked only when there are sections to answer from.
pub fn answer(
    question: &str,
    budget_chars: Option<usize>,
    model: impl FnOnce() -> String,
) -> Result<AnswerPrompt, DocsError> {
    let asked = ask(question, budget_chars, None)?;
    if asked.sections.is_empty() {
        return Err(DocsError {
            code: "no_sections",
            message: "no documentation section matches the question, so there is nothing to answer from; \
                      rephrase it with the words the docs would use, or call ask_docs to inspect the retrieval"
                .into(),
        });
    }
    let mut prompt = format!(
        "Answer the question below using only the numbered sources from cairn's documentation.\n\n\
         Question: {}\n\nSources:\n",
        question.trim()
    );
    for (n, section) in asked.sections.iter().enumerate() {
        let heading = section.heading_text.as_deref().unwrap_or("(introduction)");
        let anchor = section
            .heading_id
            .as_deref()
            .map(|id| format!("#{id}"))
            .unwrap_or_default();
        prompt.push_str(&format!(
            "\n[{}] {} — {} (/docs/{}{})\n{}\n",
            n + 1,
            section.title,
            heading,
            section.slug,
            anchor,
            section.text
        ));
    }
    prompt.push_str(
        "\nRules:\n\
         - Use only what the sources say; do not add facts from elsewhere.\n\
         - Put the source number in brackets, like [2], after every claim that comes from it.\n\
         - If the sources do not answer the question, or only in part, say so plainly and say what is missing.\n\
         - Keep the answer short; quote exact names (tools, fields, codes) as the sources write them.\n",
    );
    Ok(AnswerPrompt {
        action: "answer_prompt",
        instructions: "Run `prompt` yourself as one completion (cairn calls no model) and present the answer \
                       with its [n] citations; source [n] is citations[n-1], linked as /docs/<slug>#<headingId>."
            .into(),
        prompt,
        model: model(),
        citations: asked
            .sections
            .into_iter()
            .map(|s| Citation {
                slug: s.slug,
                title: s.title,
                heading_id: s.heading_id,
                heading_text: s.heading_text,
            })
            .collect(),
    })
}

/// Every page, by `order` then slug.
pub fn pages() -> &'static [Page] {
    &CORPUS.pages
}

/// The page at `slug` (a leading `/` and a trailing `.md` are ignored).
pub fn page(slug: &str) -> Option<&'static Page> {
    CORPUS.page(slug)
}

#[cfg(test)]
mod tests {
    use pulldown_cmark::{Event, Parser, Tag};

    use super::*;

    #[test]
    fn heading_ids_are_unique_per_page_and_links_resolve() {
        for page in &CORPUS.pages {
            let mut ids = std::collections::HashSet::new();
            for section in &page.sections {
                if let Some(id) = &section.heading_id {
                    assert!(ids.insert(id.clone()), "{}: duplicate id {id}", page.slug);
                }
            }
            for event in Parser::new(&page.markdown) {
                if let Event::Start(Tag::Link { dest_url, .. }) = event {
                    if dest_url.starts_with("http") || dest_url.starts_with('#') {
                        continue;
                    }
                    let target = dest_url.split('#').next().unwrap_or("");
                    let base = std::path::Path::new(&page.slug)
                        .parent()
                        .unwrap_or(std::path::Path::new(""));
                    let mut parts: Vec<String> = Vec::new();
                    for part in base.join(target.trim_end_matches(".md")).components() {
                        match part {
                            std::path::Component::ParentDir => {
                                parts.pop();
                            }
                            other => parts.push(other.as_os_str().to_string_lossy().into_owned()),
                        }
                    }
                    let slug = parts.join("/");
                    assert!(
                        CORPUS.page(&slug).is_some(),
                        "{}: broken link {dest_url}",
                        page.slug
                    );
                }
            }
        }
    }

    #[test]
    fn ask_packs_whole_sections_within_the_budget() {
        let asked = ask("How do I cap a loop with maxIterations?", None, None).unwrap();
        assert!(!asked.sections.is_empty());
        assert!(asked.total_chars <= 12_000);
        assert!(
            asked
                .sections
                .iter()
                .any(|s| s.slug == "concepts/loops-and-max-iterations"),
            "{asked:#?}"
        );
        let small = ask("How do I cap a loop with maxIterations?", Some(400), Some(2)).unwrap();
        assert!(small.truncated && small.total_chars <= 400 && small.sections.len() <= 2);
        for (i, a) in small.sections.iter().enumerate() {
            for b in &small.sections[i + 1..] {
                assert!(
                    a.slug != b.slug || !(a.text.contains(&b.text) || b.text.contains(&a.text)),
                    "nested sections"
                );
            }
        }
        let model = || "a-model".to_owned();
        assert_eq!(ask(" ", None, None).unwrap_err().code, "invalid_input");
        assert_eq!(answer("", None, model).unwrap_err().code, "invalid_input");
        assert_eq!(answer("qwertyuiop zxcvbnm", None, model).unwrap_err().code, "no_sections");
        let answer = answer("What does CWD_GLOBAL_CONFLICT mean?", None, model).unwrap();
        assert_eq!((answer.action, answer.model.as_str()), ("answer_prompt", "a-model"));
        assert!(answer.prompt.contains("[1]") && answer.prompt.contains("CWD_GLOBAL_CONFLICT"));
        assert!(!answer.citations.is_empty());
    }

    #[test]
    fn lists_gets_and_searches() {
        let list = list();
        assert_eq!(list[0].slug, "index");
        let doc = get("/index.md").unwrap();
        assert_eq!(doc.frontmatter["title"], "cairn roscoe");
        assert!(!doc.markdown.starts_with("---"));
        assert_eq!(get("nope").unwrap_err().code, "not_found");
        assert_eq!(search("  ", None).unwrap_err().code, "invalid_input");
        assert_eq!(search("x", Some(0)).unwrap_err().code, "invalid_input");
        let hits = search("quick start", Some(3)).unwrap();
        assert_eq!(hits[0].heading_id.as_deref(), Some("quick-start"));
        assert!(hits.len() <= 3);
    }
}
