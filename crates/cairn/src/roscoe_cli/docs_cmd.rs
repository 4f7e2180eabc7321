//! `roscoe docs list | search | show`: the docs tools (`list_docs`, `search_docs`, `get_doc`) over cairn's own
//! Roscoe documentation, from a terminal. No database and no scope: the pages are built into the program.

use cairn_roscoe::Service;
use clap::Subcommand;

use super::exit::Exit;
use super::output::{Output, Paint};
use crate::home::cairn_home;

/// `roscoe docs` commands.
#[derive(Debug, Subcommand)]
pub enum DocsCommand {
    /// Every page: its slug, title and what it covers (`-q`: the slugs).
    List,
    /// The sections that best match a query, with snippets.
    Search {
        /// What to look for.
        query: String,
        /// At most this many sections.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// One page's markdown (`--json`: with its front matter).
    Show {
        /// The page's slug (from `docs search`), e.g. `reference/cli`.
        slug: String,
    },
}

/// Runs a `roscoe docs` command.
pub(super) fn run(out: &Output, command: DocsCommand) -> anyhow::Result<()> {
    let service = Service::new(cairn_home());
    let facade = |e: cairn_roscoe::Error| Exit::from_facade(&e);
    match command {
        DocsCommand::List => {
            let pages = service.list_docs();
            if out.json {
                return out.print_json(&pages);
            }
            for page in &pages {
                if out.quiet {
                    println!("{}", page.slug);
                } else {
                    println!("{}  {} — {}", out.paint_out(Paint::Bold, &page.slug), page.title, page.description);
                }
            }
            Ok(())
        }
        DocsCommand::Search { query, limit } => {
            let hits = service.search_docs(&query, limit).map_err(facade)?;
            if out.json {
                return out.print_json(&hits);
            }
            for hit in &hits {
                let anchor = hit.heading_id.as_deref().map(|h| format!("#{h}")).unwrap_or_default();
                let heading = hit.heading_text.as_deref().map(|h| format!(" › {h}")).unwrap_or_default();
                println!("{}{anchor}  {}{heading}", out.paint_out(Paint::Bold, &hit.slug), hit.title);
                if !out.quiet {
                    println!("    {}", hit.snippet.replace('\n', " "));
                }
            }
            if hits.is_empty() {
                out.note(&format!("No section matches '{query}'."));
            }
            Ok(())
        }
        DocsCommand::Show { slug } => {
            let doc = service.get_doc(&slug).map_err(facade)?;
            if out.json {
                return out.print_json(&doc);
            }
            println!("{}", doc.markdown.trim_end());
            Ok(())
        }
    }
}
