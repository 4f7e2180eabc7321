//! Evidence and status: `work_record_evidence` stores merged / rolled records idempotently (a pull request merges
//! once; a repeated roll adds pull requests to the same record), `work_status` checks a document's pieces
//! against them with the pure algorithm of [`crate::status`], and [`Service::items_evidence`] finds the records about
//! the pull requests items link to (for the web board, all its items at once).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use cairn_store::work::evidence::{self, EvidenceRow};
use cairn_store::work::items;
use serde::Serialize;
use serde_json::{Value, json};

use super::{ATTEMPTS, Service};
use crate::auth::Caller;
use crate::error::Error;
use crate::ids::new_id;
use crate::item::WorkItem;
use crate::status::{self, Facts, PullRequestState};
use crate::text;
use crate::time::{format_ms, now_ms, parse_rfc3339};

/// How far in the future an evidence time may be (clock skew), in ms.
const FUTURE_SLACK: i64 = 5 * 60 * 1000;

/// `work_record_evidence` arguments, unchecked.
#[derive(Debug, Clone, Default)]
pub struct EvidenceInput {
    /// "" = the caller's own account.
    pub account_id: String,
    /// `merged` or `rolled`.
    pub kind: String,
    /// `owner/name`; "" = the account's default repository.
    pub repository: String,
    /// 7 to 64 hex digits.
    pub commit: String,
    /// Pull request numbers.
    pub pull_requests: Vec<i64>,
    /// The service of a roll.
    pub service: String,
    /// RFC 3339, "" = now.
    pub at: String,
}

/// A stored evidence record.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    /// `ev_…`.
    pub id: String,
    /// `merged` or `rolled`.
    pub kind: String,
    /// `owner/name`.
    pub repository: String,
    /// The commit.
    pub commit: String,
    /// Ascending.
    pub pull_requests: Vec<i64>,
    /// The service of a roll; "".
    pub service: String,
    /// RFC 3339.
    pub at: String,
    /// RFC 3339.
    pub recorded_at: String,
}

/// What is recorded about one pull request a work item links to.
#[derive(Debug, Clone, Serialize)]
pub struct LinkedPullRequest {
    /// `owner/name` as the link writes it.
    pub repository: String,
    /// The pull request number.
    pub number: i64,
    /// The merged and rolled records naming it, oldest first; empty when nothing is recorded yet.
    pub records: Vec<RecordedEvidence>,
}

/// A stored evidence record and who recorded it.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedEvidence {
    /// The record as `work_record_evidence` returns it.
    #[serde(flatten)]
    pub evidence: Evidence,
    /// Who recorded it, e.g. `ci (service)`.
    pub recorded_by: String,
}

/// The pull requests `links` point at (`https://github.com/owner/name/pull/N`), in link order, each once, without
/// records yet.
fn linked_pull_requests(links: &[String]) -> Vec<LinkedPullRequest> {
    let mut linked: Vec<LinkedPullRequest> = Vec::new();
    for reference in status::refs::references("", links) {
        let Some(repository) = reference.repository else { continue };
        let known = |l: &LinkedPullRequest| l.number == reference.number && l.repository.eq_ignore_ascii_case(&repository);
        if !linked.iter().any(known) {
            linked.push(LinkedPullRequest { repository, number: reference.number, records: Vec::new() });
        }
    }
    linked
}

fn view(row: &EvidenceRow) -> Evidence {
    Evidence {
        id: row.id.clone(),
        kind: row.kind.clone(),
        repository: row.repository.clone(),
        commit: row.commit_sha.clone(),
        pull_requests: row.pull_requests.clone(),
        service: row.service.clone(),
        at: format_ms(row.at),
        recorded_at: format_ms(row.recorded_at),
    }
}

/// The checked form of [`EvidenceInput`].
struct Checked {
    kind: String,
    repository: (String, String),
    commit: String,
    pull_requests: Vec<i64>,
    service: String,
    at: i64,
}

fn check(input: &EvidenceInput, now: i64) -> Result<Checked, Error> {
    let kind = input.kind.trim();
    if kind != "merged" && kind != "rolled" {
        return Err(Error::InvalidArgument(format!("kind '{kind}' is not \"merged\" or \"rolled\"")));
    }
    if input.repository.trim().is_empty() {
        return Err(Error::InvalidArgument(
            "repository is required (\"owner/name\"), or give the account a default repository (cairn work account \
             update --default-repository)"
                .into(),
        ));
    }
    let repository = text::repository("repository", &input.repository)?;
    let commit = input.commit.trim().to_lowercase();
    if !(7..=64).contains(&commit.len()) || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::InvalidArgument(format!("commit '{commit}' must be 7 to 64 hex digits")));
    }
    let mut pull_requests = input.pull_requests.clone();
    if let Some(bad) = pull_requests.iter().find(|n| !(1..=i64::from(i32::MAX)).contains(*n)) {
        return Err(Error::InvalidArgument(format!("pull request number {bad} is out of range (1 to 2147483647)")));
    }
    pull_requests.sort_unstable();
    pull_requests.dedup();
    let service = input.service.trim().to_owned();
    if kind == "merged" {
        if pull_requests.len() != 1 {
            return Err(Error::InvalidArgument(format!(
                "\"merged\" evidence is about exactly one pull request; {} were given",
                pull_requests.len()
            )));
        }
        if !service.is_empty() {
            return Err(Error::InvalidArgument("service is for \"rolled\" evidence; leave it empty for \"merged\"".into()));
        }
    } else {
        if pull_requests.is_empty() || pull_requests.len() > 1000 {
            return Err(Error::InvalidArgument(format!(
                "\"rolled\" evidence names 1 to 1000 pull requests; {} were given",
                pull_requests.len()
            )));
        }
        let valid = |c: char| c.is_ascii_alphanumeric() || "._:/-".contains(c);
        if service.is_empty() || service.chars().count() > 100 || !service.chars().all(valid) {
            return Err(Error::InvalidArgument(
                "\"rolled\" evidence needs service: 1 to 100 of letters, digits and . _ : / -".into(),
            ));
        }
    }
    let at = match input.at.trim() {
        "" => now,
        text => parse_rfc3339(text)
            .ok_or_else(|| Error::InvalidArgument(format!("at '{text}' is not an RFC 3339 time (or empty for now)")))?,
    };
    if at > now + FUTURE_SLACK {
        return Err(Error::InvalidArgument("at is more than five minutes in the future".into()));
    }
    Ok(Checked { kind: kind.to_owned(), repository, commit, pull_requests, service, at })
}

impl Service {
    /// `work_record_evidence`: `{evidence, created, added}`. Repeats are no-ops (or add pull requests to a roll); a
    /// merge recorded at another commit is a `conflict`. An empty repository is the account's default one.
    pub async fn record_evidence(&self, caller: &Caller, input: &EvidenceInput) -> Result<Value, Error> {
        let now = now_ms();
        let account = self.account(caller, &input.account_id, true).await?;
        let defaulted;
        let input = if input.repository.trim().is_empty() && !account.default_repository.is_empty() {
            defaulted = EvidenceInput { repository: account.default_repository.clone(), ..input.clone() };
            &defaulted
        } else {
            input
        };
        let checked = check(input, now)?;
        let (display, key) = &checked.repository;
        for _ in 0..ATTEMPTS {
            let mut tx = self.store.begin_write().await?;
            let existing = if checked.kind == "merged" {
                evidence::find_merge(&mut tx, &account.id, key, checked.pull_requests[0]).await?
            } else {
                evidence::find_roll(&mut tx, &account.id, key, &checked.service, &checked.commit).await?
            };
            let outcome = match existing {
                Some(stored) if checked.kind == "merged" => {
                    tx.rollback().await?;
                    if stored.commit_sha != checked.commit {
                        return Err(Error::Conflict {
                            message: format!(
                                "#{} in {} is already recorded merged at {}",
                                checked.pull_requests[0], stored.repository, stored.commit_sha
                            ),
                            details: json!({"evidence": view(&stored)}),
                        });
                    }
                    return Ok(json!({"evidence": view(&stored), "created": false, "added": []}));
                }
                Some(mut stored) => {
                    let added: Vec<i64> =
                        checked.pull_requests.iter().copied().filter(|n| !stored.pull_requests.contains(n)).collect();
                    evidence::add_pull_requests(&mut tx, &stored, &added).await.map(|()| {
                        stored.pull_requests.extend(&added);
                        stored.pull_requests.sort_unstable();
                        (stored, false, added)
                    })
                }
                None => {
                    let row = EvidenceRow {
                        id: new_id("ev_", now),
                        account_id: account.id.clone(),
                        kind: checked.kind.clone(),
                        repository: display.clone(),
                        repository_key: key.clone(),
                        commit_sha: checked.commit.clone(),
                        service: checked.service.clone(),
                        at: checked.at,
                        recorded_by: caller.label(),
                        recorded_at: now,
                        pull_requests: checked.pull_requests.clone(),
                    };
                    let added = row.pull_requests.clone();
                    evidence::insert_evidence(&mut tx, &row).await.map(|()| (row, true, added))
                }
            };
            let (mut row, created, added) = match outcome {
                Ok(done) => done,
                Err(error) if error.is_unique_violation() => {
                    tx.rollback().await?;
                    continue;
                }
                Err(error) => return Err(error.into()),
            };
            if !created && checked.at < row.at {
                evidence::set_evidence_at(&mut *tx, &row.id, checked.at).await?;
                row.at = checked.at;
            }
            tx.commit().await?;
            return Ok(json!({"evidence": view(&row), "created": created, "added": added}));
        }
        Err(Error::Internal("the evidence kept changing while it was recorded".into()))
    }

    /// For each of `items`, in order, the evidence about each pull request it links to
    /// (`https://github.com/owner/name/pull/N`), in link order, each pull request once; the caller must be able to
    /// read the items' accounts. A couple of queries per account serve them all (a board of hundreds of items asks
    /// once, not once per pull request).
    pub async fn items_evidence(
        &self,
        caller: &Caller,
        items: &[WorkItem],
    ) -> Result<Vec<Vec<LinkedPullRequest>>, Error> {
        let mut linked: Vec<Vec<LinkedPullRequest>> =
            items.iter().map(|item| linked_pull_requests(&item.links)).collect();
        let mut accounts: Vec<&str> = Vec::new();
        for (item, pulls) in items.iter().zip(&linked) {
            if !pulls.is_empty() && !accounts.contains(&item.account_id.as_str()) {
                accounts.push(&item.account_id);
            }
        }
        for account in accounts {
            self.check_access(caller, account, false).await?;
            let asked: BTreeSet<(String, i64)> = items
                .iter()
                .zip(&linked)
                .filter(|(item, _)| item.account_id == account)
                .flat_map(|(_, pulls)| pulls.iter().map(|pull| (pull.repository.to_lowercase(), pull.number)))
                .collect();
            let asked: Vec<(String, i64)> = asked.into_iter().collect();
            let rows = evidence::naming_pull_requests(self.store.pool(), account, &asked).await?;
            // Each pull request's records, oldest first as the rows come.
            let mut naming: HashMap<(&str, i64), Vec<RecordedEvidence>> = HashMap::new();
            for row in &rows {
                for number in &row.pull_requests {
                    let record = RecordedEvidence { evidence: view(row), recorded_by: row.recorded_by.clone() };
                    naming.entry((row.repository_key.as_str(), *number)).or_default().push(record);
                }
            }
            for (item, pulls) in items.iter().zip(&mut linked) {
                for pull in pulls.iter_mut().filter(|_| item.account_id == account) {
                    let key = pull.repository.to_lowercase();
                    pull.records = naming.get(&(key.as_str(), pull.number)).cloned().unwrap_or_default();
                }
            }
        }
        Ok(linked)
    }

    /// `work_status`: the document's pieces, what each claims and shows, and the findings.
    pub async fn status(&self, caller: &Caller, space_id: &str, document_id: &str, repository: &str) -> Result<Value, Error> {
        let repository = match repository.trim() {
            "" => None,
            repo => Some(text::repository("repository", repo)?.0),
        };
        let (space, document) = self.document_in(caller, space_id, document_id, false).await?;
        let pool = self.store.pool();
        let account = cairn_store::work::accounts::get_account(pool, &space.account_id)
            .await?
            .ok_or_else(|| Error::not_found("account", &space.account_id))?;
        let default_repo = repository.or_else(|| (!account.default_repository.is_empty()).then(|| account.default_repository.clone()));
        let (pieces, truncated) = status::pieces(&document.body, default_repo.as_deref())?;
        let mut facts = Facts { repositories: evidence::repositories(pool, &account.id).await?.into_iter().collect(), ..Facts::default() };
        for piece in &pieces {
            for (key, _, number) in &piece.references {
                if facts.pull_requests.contains_key(&(key.clone(), *number)) || !facts.repositories.contains(key) {
                    continue;
                }
                let mut state = PullRequestState::default();
                for fact in evidence::pull_request_facts(pool, &account.id, key, *number).await? {
                    if fact.kind == "merged" {
                        state.merged = true;
                        state.merge_commit = fact.commit_sha;
                    } else {
                        state.rolled = true;
                        if !state.services.contains(&fact.service) {
                            state.services.push(fact.service);
                        }
                    }
                }
                if state.rolled && !state.merged {
                    state.merged = true;
                    state.merged_implied_by_roll = true;
                }
                facts.pull_requests.insert((key.clone(), *number), state);
            }
        }
        let assessed = status::assess(&pieces, &facts, default_repo.as_deref());
        let mut shows: BTreeMap<&str, usize> =
            ["implemented", "merged", "partial", "planned", "unchecked"].into_iter().map(|s| (s, 0)).collect();
        for piece in &assessed {
            *shows.entry(piece.shows.as_str()).or_default() += 1;
        }
        let agree = assessed.iter().filter(|p| p.finding.is_empty()).count();
        let mut open_items: BTreeMap<String, i64> =
            ["open", "claimed", "in_progress", "blocked"].into_iter().map(|s| (s.to_owned(), 0)).collect();
        for (state, n) in items::count_open_by_state(pool, &document.id).await? {
            open_items.insert(state, n);
        }
        Ok(json!({
            "document": {"id": document.id, "space_id": document.space_id, "title": document.title, "version": document.version},
            "repository": default_repo.unwrap_or_default(),
            "checked_at": format_ms(now_ms()),
            "summary": {
                "pieces": assessed.len(), "agree": agree, "disagree": assessed.len() - agree,
                "shows": {
                    "implemented": shows["implemented"], "merged": shows["merged"], "partial": shows["partial"],
                    "planned": shows["planned"], "unchecked": shows["unchecked"],
                },
            },
            "pieces": assessed,
            "work_items": open_items,
            "truncated": truncated,
        }))
    }
}
