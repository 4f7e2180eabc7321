//! `work_status`, "check what is really built" (§6): a document's pieces — the rows of its tables that have a State
//! (or Status) column — each with the state it claims, the state its evidence shows and a finding where they
//! disagree, in the spec's exact text (`claims implemented; not merged: #742`).
//!
//! Everything here is pure: [`pieces`] reads the Markdown into [`Piece`]s with their references, and [`assess`]
//! compares each with the evidence facts the service looked up.

mod claims;
pub(crate) mod refs;
mod tables;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::error::Error;
use claims::{Level, claimed, normalize};

/// The most pieces one answer lists.
const MAX_PIECES: usize = 1000;

/// Headers that name the pull-request column(s).
const PR_HEADERS: [&str; 7] = ["pr", "prs", "pull request", "pull requests", "pull_requests", "pull-requests", "evidence"];

/// A row of a pieces table, before evidence: where it is, what it says, which pull requests it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) table: usize,
    pub(crate) heading: String,
    pub(crate) row: usize,
    pub(crate) piece: String,
    pub(crate) claims_raw: String,
    /// `(repository lower-cased, repository as displayed, number)`, sorted and de-duplicated.
    pub(crate) references: Vec<(String, String, i64)>,
}

/// What the evidence says about one pull request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PullRequestState {
    /// `owner/name`.
    pub repository: String,
    /// The number.
    pub number: i64,
    /// Merged (recorded, or implied by a roll that contains it).
    pub merged: bool,
    /// The recorded merge commit; "" when only a roll implies the merge.
    pub merge_commit: String,
    /// Whether the merge is known only from a roll.
    pub merged_implied_by_roll: bool,
    /// Whether some service runs a commit that contains it.
    pub rolled: bool,
    /// Those services.
    pub services: Vec<String>,
}

/// One assessed piece.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssessedPiece {
    /// 1-based index among all tables of the document.
    pub table: usize,
    /// The heading path above the table.
    pub heading: String,
    /// 1-based body row.
    pub row: usize,
    /// The row's label.
    pub piece: String,
    /// implemented, merged, partial, planned or unknown.
    pub claims: String,
    /// The state cell as written.
    pub claims_raw: String,
    /// implemented, merged, partial, planned or unchecked.
    pub shows: String,
    /// The pull requests the row names.
    pub pull_requests: Vec<PullRequestState>,
    /// Where claim and evidence disagree; "" when they agree.
    pub finding: String,
}

/// The pieces of `markdown`, with bare `#N` references resolved to `default_repo`. Fails when a bare reference has
/// no repository to belong to. The flag says whether pieces beyond [`MAX_PIECES`] were left out.
pub(crate) fn pieces(markdown: &str, default_repo: Option<&str>) -> Result<(Vec<Piece>, bool), Error> {
    let mut out = Vec::new();
    let mut truncated = false;
    for (index, table) in tables::tables(markdown).iter().enumerate() {
        let headers: Vec<String> = table.header.iter().map(|c| normalize(&c.text)).collect();
        let state = headers.iter().position(|h| h == "state").or_else(|| headers.iter().position(|h| h == "status"));
        let Some(state) = state else { continue };
        let pr_columns: Vec<usize> =
            (0..headers.len()).filter(|i| PR_HEADERS.contains(&headers[*i].as_str())).collect();
        for (row_index, row) in table.rows.iter().enumerate() {
            let mut references = BTreeMap::new();
            for (i, cell) in row.iter().enumerate() {
                let from_here = if pr_columns.is_empty() { i != state } else { pr_columns.contains(&i) };
                if !from_here {
                    continue;
                }
                for reference in refs::references(&cell.text, &cell.urls) {
                    let display = match reference.repository {
                        Some(repository) => repository,
                        None => default_repo
                            .ok_or_else(|| {
                                Error::FailedPrecondition(
                                    "no repository: pass repository or set the account's default repository".into(),
                                )
                            })?
                            .to_owned(),
                    };
                    references.entry((display.to_lowercase(), reference.number)).or_insert(display);
                }
            }
            let claims_raw = row.get(state).map(|c| c.text.clone()).unwrap_or_default();
            if claims_raw.is_empty() && references.is_empty() {
                continue;
            }
            if out.len() == MAX_PIECES {
                truncated = true;
                break;
            }
            let piece = row
                .iter()
                .enumerate()
                .find(|(i, c)| *i != state && !pr_columns.contains(i) && !c.text.is_empty())
                .map(|(_, c)| c.text.chars().take(200).collect())
                .unwrap_or_default();
            out.push(Piece {
                table: index + 1,
                heading: table.heading.clone(),
                row: row_index + 1,
                piece,
                claims_raw,
                references: references.into_iter().map(|((key, n), display)| (key, display, n)).collect(),
            });
        }
    }
    Ok((out, truncated))
}

/// The evidence the service looked up for a document's references.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// Lower-cased repositories that have any evidence at all.
    pub(crate) repositories: BTreeSet<String>,
    /// Per `(repository lower-cased, number)`.
    pub(crate) pull_requests: BTreeMap<(String, i64), PullRequestState>,
}

/// Compares each piece's claim with what `facts` show; `default_repo` decides which references print as `#N`.
pub(crate) fn assess(pieces: &[Piece], facts: &Facts, default_repo: Option<&str>) -> Vec<AssessedPiece> {
    let default_key = default_repo.map(str::to_lowercase);
    pieces
        .iter()
        .map(|piece| {
            let states: Vec<PullRequestState> = piece
                .references
                .iter()
                .map(|(key, display, n)| {
                    let known = facts.pull_requests.get(&(key.clone(), *n)).cloned().unwrap_or_default();
                    PullRequestState { repository: display.clone(), number: *n, ..known }
                })
                .collect();
            let format = |refs: &[&PullRequestState]| -> String {
                refs.iter()
                    .map(|pr| match &default_key {
                        Some(key) if pr.repository.to_lowercase() == *key => format!("#{}", pr.number),
                        _ => format!("{}#{}", pr.repository, pr.number),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let unseen = piece.references.iter().find(|(key, _, _)| !facts.repositories.contains(key));
            let shown: Result<Level, String> = if states.is_empty() {
                Err("names no pull request".into())
            } else if let Some((_, display, _)) = unseen {
                Err(format!("no evidence recorded for {display}"))
            } else {
                let merged = states.iter().filter(|s| s.merged).count();
                let rolled = states.iter().filter(|s| s.rolled).count();
                Ok(if merged == 0 {
                    Level::Planned
                } else if merged < states.len() {
                    Level::Partial
                } else if rolled < states.len() {
                    Level::Merged
                } else {
                    Level::Implemented
                })
            };
            let claim = claimed(&piece.claims_raw);
            let all: Vec<&PullRequestState> = states.iter().collect();
            let finding = match (claim, &shown) {
                (None, _) => format!(
                    "claims \"{}\"; not a state: use implemented, merged, partial or planned",
                    piece.claims_raw
                ),
                (Some(Level::Planned), Err(_)) => String::new(),
                (Some(claim), Err(reason)) => format!("claims {}; unchecked: {reason}", claim.as_str()),
                (Some(claim), Ok(shown)) if claim == *shown => String::new(),
                (Some(claim), Ok(shown)) if claim > *shown => {
                    let mut parts = Vec::new();
                    let not_merged: Vec<&PullRequestState> = states.iter().filter(|s| !s.merged).collect();
                    if claim == Level::Partial {
                        parts.push(format!("not merged: {}", format(&all)));
                    } else {
                        if !not_merged.is_empty() {
                            parts.push(format!("not merged: {}", format(&not_merged)));
                        }
                        let not_rolled: Vec<&PullRequestState> =
                            states.iter().filter(|s| s.merged && !s.rolled).collect();
                        if claim == Level::Implemented && !not_rolled.is_empty() {
                            parts.push(format!("not rolled: {}", format(&not_rolled)));
                        }
                    }
                    format!("claims {}; {}", claim.as_str(), parts.join("; "))
                }
                (Some(claim), Ok(shown)) => {
                    let merged: Vec<&PullRequestState> = states.iter().filter(|s| s.merged).collect();
                    let part = match (claim, shown) {
                        (Level::Planned, Level::Implemented) => format!("rolled: {}", format(&all)),
                        (Level::Planned, _) => format!("merged: {}", format(&merged)),
                        (_, Level::Implemented) => format!("rolled: {}", format(&all)),
                        _ => format!("merged: {}", format(&all)),
                    };
                    format!("claims {}; {part}", claim.as_str())
                }
            };
            AssessedPiece {
                table: piece.table,
                heading: piece.heading.clone(),
                row: piece.row,
                piece: piece.piece.clone(),
                claims: claim.map_or("unknown", Level::as_str).to_owned(),
                claims_raw: piece.claims_raw.clone(),
                shows: match shown {
                    Ok(level) => level.as_str().to_owned(),
                    Err(_) => "unchecked".to_owned(),
                },
                pull_requests: states,
                finding,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of spec §6.9.
    const ROADMAP: &str = "# Auth roadmap\n## Phase 1\n| Piece | State | PRs |\n|---|---|---|\n\
        | SSO login | ✅ Implemented | #742 |\n| Session refresh | Merged | #743, #744 |\n| Audit log | Planned | |\n\
        | Password reset | implemented | acme/api#12 |\n";

    fn merged(n: i64, commit: &str) -> PullRequestState {
        PullRequestState { repository: "acme/web".into(), number: n, merged: true, merge_commit: commit.into(), ..Default::default() }
    }

    fn check(markdown: &str, facts: &Facts) -> Vec<(String, String, String, String)> {
        let (pieces, _) = pieces(markdown, Some("acme/web")).unwrap();
        assess(&pieces, facts, Some("acme/web"))
            .into_iter()
            .map(|p| (p.piece, p.claims, p.shows, p.finding))
            .collect()
    }

    fn roadmap_facts() -> Facts {
        let mut facts = Facts::default();
        facts.repositories.insert("acme/web".into());
        facts.pull_requests.insert(("acme/web".into(), 742), merged(742, "abc"));
        let mut rolled = merged(743, "def");
        rolled.rolled = true;
        rolled.services = vec!["web".into()];
        facts.pull_requests.insert(("acme/web".into(), 743), rolled);
        facts
    }

    #[test]
    fn the_worked_example_of_section_6_9() {
        let rows = check(ROADMAP, &roadmap_facts());
        let expected = [
            ("SSO login", "implemented", "merged", "claims implemented; not rolled: #742"),
            ("Session refresh", "merged", "partial", "claims merged; not merged: #744"),
            ("Audit log", "planned", "unchecked", ""),
            ("Password reset", "implemented", "unchecked", "claims implemented; unchecked: no evidence recorded for acme/api"),
        ];
        let expected: Vec<_> =
            expected.iter().map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string())).collect();
        assert_eq!(rows, expected);
        let (pieces, _) = pieces(ROADMAP, Some("acme/web")).unwrap();
        assert_eq!((pieces[0].heading.as_str(), pieces[0].table, pieces[1].row), ("Auth roadmap > Phase 1", 1, 2));
    }

    #[test]
    fn under_claims_unknown_states_and_status_columns() {
        let doc = "| Thing | Status | Notes |\n|---|---|---|\n| A | planned | #743 |\n| B | partial | #742 |\n\
                   | C | someday | #742 |\n| D | merged | #743 |\n| E | implemented | #1 |\n";
        let rows = check(doc, &roadmap_facts());
        let findings: Vec<&str> = rows.iter().map(|r| r.3.as_str()).collect();
        assert_eq!(
            findings,
            [
                "claims planned; rolled: #743",
                "claims partial; merged: #742",
                "claims \"someday\"; not a state: use implemented, merged, partial or planned",
                "claims merged; rolled: #743",
                "claims implemented; not merged: #1",
            ]
        );
    }

    #[test]
    fn bare_references_need_a_repository_and_code_blocks_are_not_tables() {
        let err = pieces("| P | State | Notes |\n|---|---|---|\n| a | done | see #5 |\n", None).unwrap_err();
        assert_eq!(err.to_string(), "no repository: pass repository or set the account's default repository");
        assert_eq!(err.code(), "failed_precondition");
        let fenced = "```\n| P | State |\n|---|---|\n| a | done |\n```\n";
        assert!(pieces(fenced, None).unwrap().0.is_empty());
        let quoted = "| P | State |\n|---|---|\n| it&#39;s `&#39;` | #742a |\n";
        let (found, _) = pieces(quoted, None).unwrap();
        assert!(found[0].references.is_empty());
        let link = "| P | State |\n|---|---|\n| [fix](https://github.com/acme/web/pull/9) | merged |\n";
        let (found, _) = pieces(link, None).unwrap();
        assert_eq!(found[0].references, vec![("acme/web".into(), "acme/web".into(), 9)]);
    }
}
