//! cairn's own documentation for the roscoe surface (§16): the markdown pages of `docs/roscoe/`, embedded in the
//! binary, and the five project-agnostic docs tools over them.
//!
//! [`corpus`] cuts each page into heading sections with GitHub-compatible heading ids ([`slug`]); [`search`] ranks
//! sections with BM25. The facade methods live here, on [`Service`]: `list_docs`, `get_doc`, `search_docs` (ranked
//! sections with a snippet around the first match), `ask_docs` (whole sections packed into a character budget) and
//! `answer_docs` (a citation-required prompt for the host to answer; no model is called here).

mod corpus;
mod search;
pub mod slug;

use std::sync::LazyLock;

use include_dir::{Dir, include_dir};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::authoring_guide::BUILTIN_DEFAULT_MODEL;
use crate::error::Error;
use crate::scope::Scope;
use crate::service::Service;
use corpus::{Page, Section};
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

/// A docs tool's error (`not_found`, `invalid_input` or `no_sections`); the facade methods return it as an [`Error`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DocsError {
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
}

impl From<DocsError> for Error {
    fn from(error: DocsError) -> Self {
        Error::refused(error.code, error.message)
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

impl Service {
    /// `list_docs`: every page, by `order` then slug.
    pub fn list_docs(&self) -> Vec<DocSummary> {
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
    pub fn get_doc(&self, slug: &str) -> Result<Doc, Error> {
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
    pub fn search_docs(
        &self,
        query: &str,
        limit: Option<usize>,
    ) -> Result<Vec<SearchHit>, Error> {
        let limit = check_range("limit", limit.unwrap_or(10), 1, 50)?;
        let terms = query_tokens(query, false);
        if terms.is_empty() {
            return Err(DocsError::input(
                "`query` has no words to search for; pass a tool name, an error code or a few keywords",
            )
            .into());
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
    pub fn ask_docs(
        &self,
        question: &str,
        budget_chars: Option<usize>,
        max_sections: Option<usize>,
    ) -> Result<Asked, Error> {
        let budget = check_range("budget_chars", budget_chars.unwrap_or(12_000), 1, 200_000)?;
        let max_sections = check_range("max_sections", max_sections.unwrap_or(8), 1, 50)?;
        if question.trim().is_empty() {
            return Err(DocsError::input(
                "`question` is empty; ask a question in words",
            )
            .into());
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
    pub fn answer_docs(
        &self,
        question: &str,
        budget_chars: Option<usize>,
    ) -> Result<AnswerPrompt, Error> {
        let asked = self.ask_docs(question, budget_chars, None)?;
        if asked.sections.is_empty() {
            return Err(DocsError {
                code: "no_sections",
                message: "no documentation section matches the question, so there is nothing to answer from; \
                          rephrase it with the words the docs would use, or call ask_docs to inspect the retrieval"
                    .into(),
            }
            .into());
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
        let model = self
            .models(&Scope::Global)
            .map(|m| m.default)
            .unwrap_or_else(|_| BUILTIN_DEFAULT_MODEL.to_owned());
        Ok(AnswerPrompt {
            action: "answer_prompt",
            instructions: "Run `prompt` yourself as one completion (cairn calls no model) and present the answer \
                           with its [n] citations; source [n] is citations[n-1], linked as /docs/<slug>#<headingId>."
                .into(),
            prompt,
            model,
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
}

#[cfg(test)]
mod tests {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

    use super::*;
    use crate::authoring_guide::{ConfigFile, load_models};
    use crate::definition::{self, Options, Severity};

    /// The fenced code blocks of a page: (language, body).
    fn code_blocks(markdown: &str) -> Vec<(String, String)> {
        let mut blocks = Vec::new();
        let mut current: Option<(String, String)> = None;
        for event in Parser::new(markdown) {
            match event {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                    current = Some((
                        info.split_whitespace().next().unwrap_or("").to_owned(),
                        String::new(),
                    ));
                }
                Event::Text(text) => {
                    if let Some((_, body)) = &mut current {
                        body.push_str(&text);
                    }
                }
                Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
                _ => {}
            }
        }
        blocks
    }

    #[test]
    fn every_yaml_and_json_sample_is_valid() {
        let mut workflows = 0;
        for page in &CORPUS.pages {
            for (lang, body) in code_blocks(&page.markdown) {
                let at = format!(
                    "{}: ```{lang} block starting {:?}",
                    page.slug,
                    body.lines().next()
                );
                match lang.as_str() {
                    "yaml" if body.starts_with("# roscoe.yaml") => {
                        let file = ConfigFile {
                            path: "roscoe.yaml",
                            text: &body,
                        };
                        load_models(Some(file), None).unwrap_or_else(|e| panic!("{at}: {e}"));
                    }
                    "yaml" => {
                        workflows += 1;
                        let validation = definition::validate(
                            &body,
                            &Options {
                                lint: true,
                                ..Options::default()
                            },
                        );
                        let errors: Vec<String> = validation
                            .diagnostics
                            .iter()
                            .filter(|d| d.severity == Severity::Error)
                            .map(ToString::to_string)
                            .collect();
                        assert!(errors.is_empty(), "{at}: {errors:#?}");
                    }
                    "json" => {
                        serde_json::from_str::<Value>(&body)
                            .unwrap_or_else(|e| panic!("{at}: {e}"));
                    }
                    _ => {}
                }
            }
        }
        assert!(workflows > 0, "the corpus has workflow samples");
    }

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

    /// The pages §16.1 of the spec asks for.
    const REQUIRED_PAGES: &[&str] = &[
        "index",
        "guides/using-roscoe-over-mcp",
        "reference/mcp-tools",
        "reference/cli",
        "reference/rest-api",
        "concepts/workflow-sources",
        "concepts/subscription-vs-metered",
        "concepts/projects-and-scope",
        "reference/workflow-yaml",
        "reference/node-types/script",
        "reference/node-types/condition",
        "reference/node-types/ai_agent",
        "reference/node-types/ai_judge",
        "reference/node-types/consensus",
        "reference/node-types/round_robin",
        "reference/node-types/map",
        "reference/node-types/human",
        "reference/node-types/subworkflow",
        "concepts/templates-and-dominance",
        "concepts/loops-and-max-iterations",
        "reference/validation-and-lint",
        "concepts/runs-and-statuses",
        "guides/human-in-the-loop",
        "guides/testing-workflows",
        "guides/import-a-workflow-from-a-skill",
        "reference/roscoe-yaml",
        "guides/web-ui",
        "troubleshooting",
    ];

    /// Every roscoe tool of the spec (31 of the seed, `retry_run`, `get_workflow_diagram`).
    const TOOLS: &[&str] = &[
        "list_workflows",
        "get_workflow",
        "create_workflow",
        "update_workflow",
        "delete_workflow",
        "list_workflow_references",
        "move_workflow",
        "duplicate_workflow",
        "rename_workflow",
        "get_workflow_schema",
        "validate_workflow",
        "lint_workflow",
        "get_workflow_diagram",
        "start_workflow",
        "get_run_status",
        "advance_run",
        "advance_consensus",
        "advance_round_robin",
        "advance_map",
        "resume_run",
        "cancel_run",
        "retry_run",
        "list_runs",
        "get_run_history",
        "test_workflow",
        "list_skills",
        "convert_skill",
        "finalize_skill_conversion",
        "list_docs",
        "get_doc",
        "search_docs",
        "ask_docs",
        "answer_docs",
    ];

    #[test]
    fn the_pages_the_spec_lists_exist_and_every_node_type_has_one() {
        for slug in REQUIRED_PAGES {
            assert!(CORPUS.page(slug).is_some(), "missing page {slug}");
        }
        for kind in definition::NodeType::ALL {
            let slug = format!("reference/node-types/{}", kind.as_str());
            assert!(CORPUS.page(&slug).is_some(), "missing page {slug}");
        }
    }

    #[test]
    fn each_tool_name_finds_its_reference_entry_first() {
        let service = Service::new("/nonexistent");
        for tool in TOOLS {
            let hits = service.search_docs(tool, None).unwrap();
            let first = &hits[0];
            assert_eq!(
                (first.slug.as_str(), first.heading_id.as_deref()),
                ("reference/mcp-tools", Some(*tool)),
                "search_docs({tool})"
            );
        }
    }

    #[test]
    fn ask_packs_whole_sections_within_the_budget() {
        let service = Service::new("/nonexistent");
        let asked = service
            .ask_docs("How do I cap a loop with maxIterations?", None, None)
            .unwrap();
        assert!(!asked.sections.is_empty());
        assert!(asked.total_chars <= 12_000);
        assert!(
            asked
                .sections
                .iter()
                .any(|s| s.slug == "concepts/loops-and-max-iterations"),
            "{asked:#?}"
        );
        let small = service
            .ask_docs(
                "How do I cap a loop with maxIterations?",
                Some(400),
                Some(2),
            )
            .unwrap();
        assert!(small.truncated && small.total_chars <= 400 && small.sections.len() <= 2);
        for (i, a) in small.sections.iter().enumerate() {
            for b in &small.sections[i + 1..] {
                assert!(
                    a.slug != b.slug || !(a.text.contains(&b.text) || b.text.contains(&a.text)),
                    "nested sections"
                );
            }
        }
        assert_eq!(
            service.ask_docs(" ", None, None).unwrap_err().as_code(),
            "invalid_input"
        );
        assert_eq!(
            service.answer_docs("", None).unwrap_err().as_code(),
            "invalid_input"
        );
        assert_eq!(
            service
                .answer_docs("qwertyuiop zxcvbnm", None)
                .unwrap_err()
                .as_code(),
            "no_sections"
        );
        let answer = service
            .answer_docs("What does CWD_GLOBAL_CONFLICT mean?", None)
            .unwrap();
        assert_eq!(answer.action, "answer_prompt");
        assert!(answer.prompt.contains("[1]") && answer.prompt.contains("CWD_GLOBAL_CONFLICT"));
        assert!(!answer.citations.is_empty());
    }

    #[test]
    fn lists_gets_and_searches() {
        let service = Service::new("/nonexistent");
        let list = service.list_docs();
        assert_eq!(list[0].slug, "index");
        let doc = service.get_doc("/index.md").unwrap();
        assert_eq!(doc.frontmatter["title"], "cairn roscoe");
        assert!(!doc.markdown.starts_with("---"));
        assert_eq!(service.get_doc("nope").unwrap_err().as_code(), "not_found");
        assert_eq!(
            service.search_docs("  ", None).unwrap_err().as_code(),
            "invalid_input"
        );
        assert_eq!(
            service.search_docs("x", Some(0)).unwrap_err().as_code(),
            "invalid_input"
        );
        let hits = service.search_docs("quick start", Some(3)).unwrap();
        assert_eq!(hits[0].heading_id.as_deref(), Some("quick-start"));
        assert!(hits.len() <= 3);
    }
}
