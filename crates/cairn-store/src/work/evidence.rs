//! Merged and rolled evidence: one row per record, one row per pull request it names. A pull request merges once per
//! account and repository; a roll is keyed by repository, service and commit (repeats add pull requests to it).

use std::collections::{HashMap, HashSet};

use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Executor, Row};
use crate::Error;

/// A row of `work_evidence` with the pull requests it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceRow {
    /// `ev_…`.
    pub id: String,
    /// The account.
    pub account_id: String,
    /// `merged` or `rolled`.
    pub kind: String,
    /// `owner/name` as first given.
    pub repository: String,
    /// `owner/name` lower-cased.
    pub repository_key: String,
    /// Lower-case hex.
    pub commit_sha: String,
    /// The service of a roll; "" for a merge.
    pub service: String,
    /// Epoch ms of the merge or roll.
    pub at: i64,
    /// Who recorded it.
    pub recorded_by: String,
    /// Epoch ms.
    pub recorded_at: i64,
    /// Pull request numbers, ascending.
    pub pull_requests: Vec<i64>,
}

/// One pull request as evidence knows it: `(kind, repository_key, number, commit_sha, service)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestFact {
    /// `merged` or `rolled`.
    pub kind: String,
    /// `owner/name` lower-cased.
    pub repository_key: String,
    /// The number.
    pub number: i64,
    /// The merge commit, or the commit a service runs.
    pub commit_sha: String,
    /// The service of a roll; "" for a merge.
    pub service: String,
}

const COLUMNS: &str = "id, account_id, kind, repository, repository_key, commit_sha, service, at, recorded_by, recorded_at";

async fn with_prs<'e, E: Executor<'e, Database = Any>>(db: E, row: AnyRow) -> Result<EvidenceRow, Error> {
    let id: String = row.try_get("id")?;
    let numbers = sqlx::query("SELECT number FROM work_evidence_prs WHERE evidence_id = $1 ORDER BY number")
        .bind(&id)
        .fetch_all(db)
        .await?;
    let pull_requests = numbers.into_iter().map(|n| n.try_get("number")).collect::<Result<_, _>>()?;
    evidence_row(id, &row, pull_requests)
}

/// A `work_evidence` row `id` and the pull requests it names.
fn evidence_row(id: String, row: &AnyRow, pull_requests: Vec<i64>) -> Result<EvidenceRow, Error> {
    Ok(EvidenceRow {
        id,
        account_id: row.try_get("account_id")?,
        kind: row.try_get("kind")?,
        repository: row.try_get("repository")?,
        repository_key: row.try_get("repository_key")?,
        commit_sha: row.try_get("commit_sha")?,
        service: row.try_get("service")?,
        at: row.try_get("at")?,
        recorded_by: row.try_get("recorded_by")?,
        recorded_at: row.try_get("recorded_at")?,
        pull_requests,
    })
}

/// The merge record of pull request `number` in `repository_key`, if any.
pub async fn find_merge(
    db: &mut sqlx::AnyConnection,
    account: &str,
    repository_key: &str,
    number: i64,
) -> Result<Option<EvidenceRow>, Error> {
    let row = sqlx::query(AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM work_evidence WHERE id = (SELECT evidence_id FROM work_evidence_prs \
         WHERE account_id = $1 AND repository_key = $2 AND number = $3 AND kind = 'merged')"
    )))
    .bind(account)
    .bind(repository_key)
    .bind(number)
    .fetch_optional(&mut *db)
    .await?;
    match row {
        Some(row) => Ok(Some(with_prs(db, row).await?)),
        None => Ok(None),
    }
}

/// The roll of `commit_sha` on `service` in `repository_key`, if any.
pub async fn find_roll(
    db: &mut sqlx::AnyConnection,
    account: &str,
    repository_key: &str,
    service: &str,
    commit_sha: &str,
) -> Result<Option<EvidenceRow>, Error> {
    let row = sqlx::query(AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM work_evidence WHERE account_id = $1 AND repository_key = $2 AND service = $3 \
         AND commit_sha = $4 AND kind = 'rolled'"
    )))
    .bind(account)
    .bind(repository_key)
    .bind(service)
    .bind(commit_sha)
    .fetch_optional(&mut *db)
    .await?;
    match row {
        Some(row) => Ok(Some(with_prs(db, row).await?)),
        None => Ok(None),
    }
}

/// Inserts a record and its pull requests.
pub async fn insert_evidence(tx: &mut sqlx::AnyConnection, row: &EvidenceRow) -> Result<(), Error> {
    sqlx::query(AssertSqlSafe(format!("INSERT INTO work_evidence ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")))
        .bind(&row.id)
        .bind(&row.account_id)
        .bind(&row.kind)
        .bind(&row.repository)
        .bind(&row.repository_key)
        .bind(&row.commit_sha)
        .bind(&row.service)
        .bind(row.at)
        .bind(&row.recorded_by)
        .bind(row.recorded_at)
        .execute(&mut *tx)
        .await?;
    add_pull_requests(tx, row, &row.pull_requests).await
}

/// Adds pull requests to a stored record (a repeated roll naming more of them).
pub async fn add_pull_requests(
    tx: &mut sqlx::AnyConnection,
    row: &EvidenceRow,
    numbers: &[i64],
) -> Result<(), Error> {
    for number in numbers {
        sqlx::query(
            "INSERT INTO work_evidence_prs (evidence_id, account_id, repository_key, kind, number) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&row.id)
        .bind(&row.account_id)
        .bind(&row.repository_key)
        .bind(&row.kind)
        .bind(number)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// Moves a record's time earlier (a repeated roll keeps the earliest time).
pub async fn set_evidence_at<'e, E: Executor<'e, Database = Any>>(db: E, id: &str, at: i64) -> Result<(), Error> {
    sqlx::query("UPDATE work_evidence SET at = $1 WHERE id = $2 AND at > $1")
        .bind(at)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// How many pull requests one query of [`naming_pull_requests`] asks about (two placeholders each).
const PULLS_PER_QUERY: usize = 200;

/// Every record of `account` that names one of `pull_requests` (`(repository_key, number)`), merged and rolled,
/// oldest first, each once and with every pull request it names: two queries per 200 pull requests, however many
/// records there are.
pub async fn naming_pull_requests(
    pool: &sqlx::AnyPool,
    account: &str,
    pull_requests: &[(String, i64)],
) -> Result<Vec<EvidenceRow>, Error> {
    let mut records: Vec<EvidenceRow> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for chunk in pull_requests.chunks(PULLS_PER_QUERY) {
        let named = (0..chunk.len())
            .map(|i| format!("(repository_key = ${} AND number = ${})", 2 * i + 2, 2 * i + 3))
            .collect::<Vec<_>>()
            .join(" OR ");
        let mut query = sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM work_evidence WHERE id IN (SELECT evidence_id FROM work_evidence_prs \
             WHERE account_id = $1 AND ({named}))"
        )))
        .bind(account);
        for (key, number) in chunk {
            query = query.bind(key).bind(*number);
        }
        let rows = query.fetch_all(pool).await?;
        let fresh: Vec<AnyRow> =
            rows.into_iter().filter(|row| row.try_get::<String, _>("id").is_ok_and(|id| !seen.contains(&id))).collect();
        let fresh = with_all_prs(pool, fresh).await?;
        seen.extend(fresh.iter().map(|record| record.id.clone()));
        records.extend(fresh);
    }
    records.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
    Ok(records)
}

/// `rows` of `work_evidence` with the pull requests each names, read in one query.
async fn with_all_prs(pool: &sqlx::AnyPool, rows: Vec<AnyRow>) -> Result<Vec<EvidenceRow>, Error> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = rows.iter().map(|row| row.try_get("id")).collect::<Result<_, _>>()?;
    let placeholders = (1..=ids.len()).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
    let mut query = sqlx::query(AssertSqlSafe(format!(
        "SELECT evidence_id, number FROM work_evidence_prs WHERE evidence_id IN ({placeholders}) ORDER BY number"
    )));
    for id in &ids {
        query = query.bind(id);
    }
    let mut named: HashMap<String, Vec<i64>> = HashMap::new();
    for row in query.fetch_all(pool).await? {
        named.entry(row.try_get("evidence_id")?).or_default().push(row.try_get("number")?);
    }
    rows.into_iter()
        .zip(ids)
        .map(|(row, id)| {
            let pull_requests = named.remove(&id).unwrap_or_default();
            evidence_row(id, &row, pull_requests)
        })
        .collect()
}

/// The lower-cased repositories `account` has any evidence for.
pub async fn repositories<'e, E: Executor<'e, Database = Any>>(db: E, account: &str) -> Result<Vec<String>, Error> {
    let rows = sqlx::query("SELECT DISTINCT repository_key FROM work_evidence WHERE account_id = $1")
        .bind(account)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|row| row.try_get("repository_key")).collect::<Result<_, sqlx::Error>>()?)
}

/// Every fact `account` has about pull request `number` of `repository_key`.
pub async fn pull_request_facts<'e, E: Executor<'e, Database = Any>>(
    db: E,
    account: &str,
    repository_key: &str,
    number: i64,
) -> Result<Vec<PullRequestFact>, Error> {
    let rows = sqlx::query(
        "SELECT p.kind, p.repository_key, p.number, e.commit_sha, e.service FROM work_evidence_prs p \
         JOIN work_evidence e ON e.id = p.evidence_id \
         WHERE p.account_id = $1 AND p.repository_key = $2 AND p.number = $3 ORDER BY e.service, e.at",
    )
    .bind(account)
    .bind(repository_key)
    .bind(number)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|row| {
            Ok(PullRequestFact {
                kind: row.try_get("kind")?,
                repository_key: row.try_get("repository_key")?,
                number: row.try_get("number")?,
                commit_sha: row.try_get("commit_sha")?,
                service: row.try_get("service")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestStore;
    use crate::work::accounts::{AccountRow, insert_account};

    fn record(id: &str, account: &str, kind: &str, at: i64, pull_requests: Vec<i64>) -> EvidenceRow {
        EvidenceRow {
            id: id.into(),
            account_id: account.into(),
            kind: kind.into(),
            repository: "Acme/Web".into(),
            repository_key: "acme/web".into(),
            commit_sha: format!("{at:040x}"),
            service: if kind == "rolled" { "prod".into() } else { String::new() },
            at,
            recorded_by: "ci (service)".into(),
            recorded_at: at,
            pull_requests,
        }
    }

    #[tokio::test]
    async fn records_naming_any_of_many_pull_requests_come_once_each_oldest_first_in_their_account() {
        let test = TestStore::new().await;
        let mut tx = test.store.begin_write().await.unwrap();
        for account in ["acc_a", "acc_b"] {
            let row = AccountRow { id: account.into(), name: account.into(), default_repository: String::new(), created_at: 0 };
            insert_account(&mut *tx, &row).await.unwrap();
        }
        // A roll naming pull requests on both sides of the 200-per-query split, a merge, and another account's merge.
        insert_evidence(&mut tx, &record("ev_roll", "acc_a", "rolled", 20, vec![5, 450])).await.unwrap();
        insert_evidence(&mut tx, &record("ev_merge", "acc_a", "merged", 10, vec![450])).await.unwrap();
        insert_evidence(&mut tx, &record("ev_other", "acc_b", "merged", 5, vec![5])).await.unwrap();
        tx.commit().await.unwrap();

        let asked: Vec<(String, i64)> = (1..=500).map(|n| ("acme/web".to_owned(), n)).collect();
        let found = naming_pull_requests(test.store.pool(), "acc_a", &asked).await.unwrap();
        let found: Vec<(&str, Vec<i64>)> = found.iter().map(|r| (r.id.as_str(), r.pull_requests.clone())).collect();
        assert_eq!(found, vec![("ev_merge", vec![450]), ("ev_roll", vec![5, 450])]);
        let none = naming_pull_requests(test.store.pool(), "acc_a", &[("acme/api".to_owned(), 5)]).await.unwrap();
        assert!(none.is_empty(), "another repository's pull request 5");
    }
}
