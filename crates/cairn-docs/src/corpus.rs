//! Pages and sections: a markdown page with front matter, cut into heading sections.
//!
//! A section runs from a heading down to the next heading of the same or a higher level, so it includes its
//! subsections; the text before the first heading is the page's lede (no heading id). Headings inside code blocks
//! are not headings. Each heading's plain text (inline code and link text included, image alt text and raw HTML left
//! out, as a browser shows it) gives its id through the [`Slugger`].

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value};

use crate::front_matter;
use crate::slug::Slugger;

/// One documentation page.
#[derive(Clone, Debug)]
pub struct Page {
    /// The path below the docs folder without `.md`, e.g. `guides/testing-workflows`.
    pub slug: String,
    /// Front matter `title`.
    pub title: String,
    /// Front matter `description`.
    pub description: String,
    /// Front matter `order` (pages without one sort last).
    pub order: i64,
    /// The whole front matter.
    pub frontmatter: Map<String, Value>,
    /// The markdown after the front matter.
    pub markdown: String,
    /// The lede (when not blank) and every heading section, in page order.
    pub sections: Vec<Section>,
}

/// One heading section (or the lede) of a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The heading's id; `None` for the lede.
    pub heading_id: Option<String>,
    /// The heading's plain text; `None` for the lede.
    pub heading_text: Option<String>,
    /// Byte range in [`Page::markdown`], the heading line included.
    pub start: usize,
    /// End of the range (exclusive).
    pub end: usize,
    /// The section's plain text without its own heading (for search and snippets).
    pub plain: String,
}

impl Page {
    /// Reads a page; an error names what is missing.
    pub fn parse(slug: &str, text: &str) -> Result<Page, String> {
        let (frontmatter, body) = front_matter::split(text)
            .ok_or_else(|| format!("{slug}: no front matter with title and description"))?;
        let field = |key: &str| {
            frontmatter
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("{slug}: front matter has no `{key}`"))
        };
        let (title, description) = (field("title")?, field("description")?);
        let order = frontmatter
            .get("order")
            .and_then(Value::as_i64)
            .unwrap_or(i64::MAX);
        let markdown = without_comment_lines(body);
        let sections = sections(&markdown);
        Ok(Page {
            slug: slug.to_owned(),
            title,
            description,
            order,
            frontmatter,
            markdown,
            sections,
        })
    }

    /// A section's markdown.
    pub fn text(&self, section: &Section) -> &str {
        self.markdown[section.start..section.end].trim_end()
    }
}

/// `markdown` without the lines that are an HTML comment alone (`<!-- not run: … -->` and `<!-- file: … -->`, the
/// marks the docs' command walker reads): notes about the page, never shown to its readers.
fn without_comment_lines(markdown: &str) -> String {
    let kept = markdown.split_inclusive('\n').filter(|line| {
        let line = line.trim();
        let inner = line.strip_prefix("<!--").and_then(|rest| rest.strip_suffix("-->"));
        !inner.is_some_and(|inner| !inner.contains("-->"))
    });
    kept.collect()
}

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// A heading found in a page: level, byte offset, plain text.
struct Heading {
    level: u32,
    start: usize,
    text: String,
}

fn headings(markdown: &str) -> Vec<Heading> {
    let mut found = Vec::new();
    let mut current: Option<Heading> = None;
    let mut in_image = 0usize;
    for (event, range) in Parser::new_ext(markdown, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                current = Some(Heading {
                    level: level as u32,
                    start: range.start,
                    text: String::new(),
                });
            }
            Event::End(TagEnd::Heading(_)) => found.extend(current.take()),
            Event::Start(Tag::Image { .. }) => in_image += 1,
            Event::End(TagEnd::Image) => in_image = in_image.saturating_sub(1),
            Event::Text(text) | Event::Code(text) if in_image == 0 => {
                if let Some(h) = &mut current {
                    h.text.push_str(&text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(h) = &mut current {
                    h.text.push('\n');
                }
            }
            _ => {}
        }
    }
    found
}

/// The id of every heading of a page body, in document order, as its sections and search hits name them (so a page
/// rendered to HTML can carry the ids `/docs/<slug>#<id>` links point at).
pub fn heading_ids(markdown: &str) -> Vec<String> {
    let mut slugger = Slugger::default();
    headings(markdown).iter().map(|h| slugger.slug(&h.text)).collect()
}

/// The lede and the heading sections of a page body.
pub(crate) fn sections(markdown: &str) -> Vec<Section> {
    let headings = headings(markdown);
    let mut slugger = Slugger::default();
    let mut out = Vec::new();
    let lede_end = headings.first().map_or(markdown.len(), |h| h.start);
    if !markdown[..lede_end].trim().is_empty() {
        out.push(Section {
            heading_id: None,
            heading_text: None,
            start: 0,
            end: lede_end,
            plain: plain_text(&markdown[..lede_end], false),
        });
    }
    for (i, heading) in headings.iter().enumerate() {
        let end = headings[i + 1..]
            .iter()
            .find(|h| h.level <= heading.level)
            .map_or(markdown.len(), |h| h.start);
        out.push(Section {
            heading_id: Some(slugger.slug(&heading.text)),
            heading_text: Some(heading.text.trim().to_owned()),
            start: heading.start,
            end,
            plain: plain_text(&markdown[heading.start..end], true),
        });
    }
    out
}

/// The text a reader sees (code included), blocks separated by newlines; without the first heading when asked.
pub(crate) fn plain_text(markdown: &str, skip_first_heading: bool) -> String {
    let mut out = String::new();
    let mut skipping = false;
    let mut skipped = !skip_first_heading;
    for event in Parser::new_ext(markdown, options()) {
        match event {
            Event::Start(Tag::Heading { .. }) if !skipped => skipping = true,
            Event::End(TagEnd::Heading(_)) if skipping => {
                skipping = false;
                skipped = true;
            }
            _ if skipping => {}
            Event::Text(text) | Event::Code(text) => out.push_str(&text),
            Event::SoftBreak => out.push(' '),
            Event::HardBreak
            | Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableCell
                | TagEnd::TableRow
                | TagEnd::TableHead,
            ) => out.push('\n'),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "---\ntitle: Sample\ndescription: A page\norder: 3\n---\nThe lede.\n\n## `start_workflow`\n\n\
Starts a run.\n\n### Example\n\n```yaml\n# Not a heading\n```\n\n## Example\n\nAgain.\n\n### Example\n\n\
## ![logo](x.png) Links [and *more*](https://example.com) <span>html</span> &amp; C++\n\nEnd.\n\n\
Setext heading\nover two lines\n--------------\n";

    fn ids(page: &Page) -> Vec<Option<&str>> {
        page.sections
            .iter()
            .map(|s| s.heading_id.as_deref())
            .collect()
    }

    #[test]
    fn headings_get_github_ids_and_sections_nest() {
        let page = Page::parse("sample", PAGE).unwrap();
        assert_eq!((page.title.as_str(), page.order), ("Sample", 3));
        assert_eq!(
            ids(&page),
            [
                None,
                Some("start_workflow"),
                Some("example"),
                Some("example-1"),
                Some("example-2"),
                Some("-links-and-more-html--c"),
                Some("setext-headingover-two-lines"),
            ]
        );
        assert_eq!(page.text(&page.sections[0]), "The lede.");
        let start = &page.sections[1];
        assert_eq!(start.heading_text.as_deref(), Some("start_workflow"));
        assert!(page.text(start).starts_with("## `start_workflow`"));
        assert!(
            page.text(start).ends_with("```yaml\n# Not a heading\n```"),
            "subsections are included"
        );
        assert!(start.plain.contains("Starts a run.") && start.plain.contains("# Not a heading"));
        assert!(
            !start.plain.contains("start_workflow"),
            "the own heading is not in the plain text"
        );
        let second = &page.sections[3];
        assert!(page.text(second).contains("### Example"));
        assert!(!page.text(second).contains("Links"));
    }

    #[test]
    fn comment_lines_are_not_part_of_a_page() {
        let text = "---\ntitle: T\ndescription: D\n---\nRun:\n\n<!-- not run: a server -->\n```sh\ncairn serve\n```\nSee <!-- x --> here.\n";
        let page = Page::parse("p", text).unwrap();
        assert_eq!(page.markdown, "Run:\n\n```sh\ncairn serve\n```\nSee <!-- x --> here.\n");
    }

    #[test]
    fn pages_need_title_and_description() {
        assert!(
            Page::parse("x", "# no front matter")
                .unwrap_err()
                .contains("front matter")
        );
        assert!(
            Page::parse("x", "---\ntitle: T\n---\n")
                .unwrap_err()
                .contains("description")
        );
        let page = Page::parse("x", "---\ntitle: T\ndescription: D\n---\n## Only\n").unwrap();
        assert_eq!(ids(&page), [Some("only")], "a blank lede is left out");
        assert_eq!(page.order, i64::MAX);
    }
}
