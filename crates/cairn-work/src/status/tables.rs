//! The GFM pipe tables of a Markdown document (§6.2): each cell as plain text plus the URLs of its links, each table
//! with the heading path above it. Tables inside code blocks are not tables, and HTML is ignored.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// One cell: its plain text (emphasis markers gone, link text and inline code kept) and its link URLs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cell {
    pub(crate) text: String,
    pub(crate) urls: Vec<String>,
}

/// One table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Table {
    /// `Auth roadmap > Phase 1`.
    pub(crate) heading: String,
    pub(crate) header: Vec<Cell>,
    pub(crate) rows: Vec<Vec<Cell>>,
}

/// Every table of `markdown`, in document order.
pub(crate) fn tables(markdown: &str) -> Vec<Table> {
    let mut tables = Vec::new();
    let mut headings: Vec<(HeadingLevel, String)> = Vec::new();
    let mut heading: Option<(HeadingLevel, String)> = None;
    let mut table: Option<Table> = None;
    let mut row: Vec<Cell> = Vec::new();
    let mut cell: Option<Cell> = None;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level, String::new())),
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, text)) = heading.take() {
                    headings.retain(|(l, _)| *l < level);
                    headings.push((level, text.trim().to_owned()));
                }
            }
            Event::Start(Tag::Table(_)) => {
                let path: Vec<&str> = headings.iter().map(|(_, t)| t.as_str()).collect();
                table = Some(Table { heading: path.join(" > "), ..Table::default() });
            }
            Event::End(TagEnd::Table) => tables.extend(table.take()),
            Event::Start(Tag::TableCell) => cell = Some(Cell::default()),
            Event::End(TagEnd::TableCell) => row.extend(cell.take()),
            Event::End(TagEnd::TableHead) => {
                if let Some(table) = table.as_mut() {
                    table.header = std::mem::take(&mut row);
                }
            }
            Event::End(TagEnd::TableRow) => {
                if let Some(table) = table.as_mut() {
                    table.rows.push(std::mem::take(&mut row));
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                if let Some(cell) = cell.as_mut() {
                    cell.urls.push(dest_url.to_string());
                }
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some(cell) = cell.as_mut() {
                    cell.text.push_str(&text);
                } else if let Some((_, heading)) = heading.as_mut() {
                    heading.push_str(&text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, heading)) = heading.as_mut() {
                    heading.push(' ');
                }
            }
            _ => {}
        }
    }
    for table in &mut tables {
        for cell in table.header.iter_mut().chain(table.rows.iter_mut().flatten()) {
            cell.text = cell.text.trim().to_owned();
        }
    }
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cells_links_and_headings_but_not_code_blocks() {
        let doc = "# A\n## B *x*\n| Piece | State |\n|---|---|\n| **SSO** [fix](https://e/pull/9) | `done` |\n\n\
                   ```\n| a | b |\n|---|---|\n| c | d |\n```\n# C\n| x |\n|---|\n| a \\| b |\n";
        let tables = tables(doc);
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[0].heading, "A > B x");
        assert_eq!(tables[0].header[1].text, "State");
        assert_eq!(tables[0].rows[0][0], Cell { text: "SSO fix".into(), urls: vec!["https://e/pull/9".into()] });
        assert_eq!(tables[0].rows[0][1].text, "done");
        assert_eq!(tables[1].heading, "C");
        assert_eq!(tables[1].rows[0][0].text, "a | b");
    }
}
