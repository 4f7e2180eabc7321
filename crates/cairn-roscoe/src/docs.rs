//! The five docs tools' facade methods on [`Service`]: `list_docs`, `get_doc`, `search_docs`, `ask_docs` and
//! `answer_docs` over cairn's own documentation, which the `cairn-docs` crate embeds, cuts into sections and searches.
//! This module adds only what needs roscoe: the model `answer_docs` suggests (the default of the global
//! `roscoe.yaml`), and the check that every workflow sample of the docs is valid.

pub use cairn_docs::{AnswerPrompt, Asked, AskedSection, Citation, Doc, DocSummary, SearchHit, heading_ids};

use crate::authoring_guide::BUILTIN_DEFAULT_MODEL;
use crate::error::Error;
use crate::scope::Scope;
use crate::service::Service;

impl Service {
    /// `list_docs`: every page, by `order` then slug.
    pub fn list_docs(&self) -> Vec<DocSummary> {
        cairn_docs::list()
    }

    /// `get_doc`: one page's front matter and markdown.
    pub fn get_doc(&self, slug: &str) -> Result<Doc, Error> {
        cairn_docs::get(slug).map_err(Error::from)
    }

    /// `search_docs`: the best `limit` sections for `query`, each with a snippet.
    pub fn search_docs(&self, query: &str, limit: Option<usize>) -> Result<Vec<SearchHit>, Error> {
        cairn_docs::search(query, limit).map_err(Error::from)
    }

    /// `ask_docs`: the best sections for `question`, whole, packed within `budget_chars` and `max_sections`.
    pub fn ask_docs(
        &self,
        question: &str,
        budget_chars: Option<usize>,
        max_sections: Option<usize>,
    ) -> Result<Asked, Error> {
        cairn_docs::ask(question, budget_chars, max_sections).map_err(Error::from)
    }

    /// `answer_docs`: `ask_docs`, then a citation-required prompt for the host, suggesting the default model of the
    /// global `roscoe.yaml` (the built-in default when it has none or cannot be read).
    pub fn answer_docs(&self, question: &str, budget_chars: Option<usize>) -> Result<AnswerPrompt, Error> {
        cairn_docs::answer(question, budget_chars, || {
            self.models(&Scope::Global)
                .map(|m| m.default)
                .unwrap_or_else(|_| BUILTIN_DEFAULT_MODEL.to_owned())
        })
        .map_err(Error::from)
    }
}

impl From<cairn_docs::DocsError> for Error {
    fn from(error: cairn_docs::DocsError) -> Error {
        Error::refused(error.code, error.message)
    }
}

#[cfg(test)]
mod tests {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    use serde_json::Value;

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
        for page in cairn_docs::pages() {
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
                        let file = ("roscoe.yaml".to_owned(), body.clone());
                        crate::runs::settings::Settings::from_texts(Some(&file), None)
                            .unwrap_or_else(|e| panic!("{at}: {e}"));
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

    #[test]
    fn the_pages_the_spec_lists_exist_and_every_node_type_has_one() {
        for slug in REQUIRED_PAGES {
            assert!(cairn_docs::page(slug).is_some(), "missing page {slug}");
        }
        for kind in definition::NodeType::ALL {
            let slug = format!("reference/node-types/{}", kind.as_str());
            assert!(cairn_docs::page(&slug).is_some(), "missing page {slug}");
        }
    }

    #[test]
    fn each_tool_name_finds_its_reference_entry_first() {
        let service = Service::new("/nonexistent");
        for entry in crate::tools::entries() {
            let tool = &*entry.tool.name;
            let hits = service.search_docs(tool, None).unwrap();
            let first = &hits[0];
            assert_eq!(
                (first.slug.as_str(), first.heading_id.as_deref()),
                ("reference/mcp-tools", Some(tool)),
                "search_docs({tool})"
            );
        }
    }
}
