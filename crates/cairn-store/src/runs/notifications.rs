//! `run_notifications` and `run_notification_attempts`: the outbox of outbound run notifications. A step that moves
//! a run into an event inserts its deliveries in its own transaction ([`insert_notification`]); every server reads
//! those due ([`due_notifications`]), claims an attempt with a compare-and-set on `attempts` ([`claim_notification`])
//! so no two servers send the same attempt, and records how it went ([`finish_attempt`]).

use sqlx::Row;
use sqlx::any::AnyRow;

use super::Connection;
use crate::Error;

/// A delivery as queued: what is sent where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNotification {
    /// The delivery's id, its idempotency key.
    pub id: String,
    /// The run the event is about.
    pub run_id: String,
    /// The top of its tree.
    pub root_run_id: String,
    /// `run.paused_for_human`, `run.completed`, `run.failed` or `run.budget_exceeded`.
    pub event: String,
    /// Where it is POSTed.
    pub url: String,
    /// The server's environment variable holding the signing secret, if it is signed.
    pub secret_env: Option<String>,
    /// The exact body POSTed.
    pub body: String,
    /// When the event happened (epoch ms): the first attempt is due then.
    pub created_at: i64,
}

/// A delivery with how it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotificationRow {
    /// What was queued.
    pub queued: NewNotification,
    /// `pending`, `delivered` or `given_up`.
    pub status: String,
    /// Attempts claimed so far.
    pub attempts: i64,
    /// When the next attempt is due (epoch ms), while pending.
    pub next_at: i64,
    /// When it was delivered or given up (epoch ms).
    pub ended_at: Option<i64>,
}

/// One attempt at a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRow {
    /// The delivery.
    pub notification_id: String,
    /// 1 for the first attempt.
    pub attempt: i64,
    /// When it ended (epoch ms).
    pub at: i64,
    /// The HTTP status answered, if an answer came.
    pub http_status: Option<i64>,
    /// Why it failed without an answer (or with a non-2xx one), if it failed.
    pub error: Option<String>,
}

/// How an attempt leaves its delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptEnd {
    /// Delivered: no more attempts.
    Delivered,
    /// Failed: the next attempt is due at this time (epoch ms).
    RetryAt(i64),
    /// Failed, and no attempt is left (a day has passed since the event).
    GivenUp,
}

const COLUMNS: &str =
    "id, run_id, root_run_id, event, url, secret_env, body, status, attempts, next_at, created_at, ended_at";

/// Queues `delivery`, its first attempt due at once.
pub async fn insert_notification(conn: &mut Connection, delivery: &NewNotification) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO run_notifications (id, run_id, root_run_id, event, url, secret_env, body, status, attempts, \
         next_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $8, $8)",
    )
    .bind(&delivery.id)
    .bind(&delivery.run_id)
    .bind(&delivery.root_run_id)
    .bind(&delivery.event)
    .bind(&delivery.url)
    .bind(delivery.secret_env.as_deref())
    .bind(&delivery.body)
    .bind(delivery.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// At most `limit` pending deliveries whose next attempt is due by `now` (epoch ms), the earliest first.
pub async fn due_notifications(conn: &mut Connection, now: i64, limit: i64) -> Result<Vec<NotificationRow>, Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM run_notifications WHERE status = 'pending' AND next_at <= $1 \
         ORDER BY next_at, id LIMIT $2"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(now).bind(limit).fetch_all(conn).await?;
    rows.iter().map(notification_from).collect::<Result<_, _>>().map_err(Error::from)
}

/// Claims attempt `attempts + 1` of delivery `id`, which this caller read with `attempts` claimed, at `now`: the
/// delivery's next attempt moves to `lease_until`, so no other server takes it while this one sends. `false` when
/// another server claimed it first (or it is no longer pending or due).
pub async fn claim_notification(
    conn: &mut Connection,
    id: &str,
    attempts: i64,
    now: i64,
    lease_until: i64,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE run_notifications SET attempts = attempts + 1, next_at = $4 \
         WHERE id = $1 AND attempts = $2 AND status = 'pending' AND next_at <= $3",
    )
    .bind(id)
    .bind(attempts)
    .bind(now)
    .bind(lease_until)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records `attempt` and, when it is still the delivery's latest claim, what it leaves the delivery as (`end`).
pub async fn finish_attempt(conn: &mut Connection, attempt: &AttemptRow, end: AttemptEnd) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO run_notification_attempts (notification_id, attempt, at, http_status, error) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&attempt.notification_id)
    .bind(attempt.attempt)
    .bind(attempt.at)
    .bind(attempt.http_status)
    .bind(attempt.error.as_deref())
    .execute(&mut *conn)
    .await?;
    let (status, next_at, ended_at) = match end {
        AttemptEnd::Delivered => ("delivered", attempt.at, Some(attempt.at)),
        AttemptEnd::RetryAt(at) => ("pending", at, None),
        AttemptEnd::GivenUp => ("given_up", attempt.at, Some(attempt.at)),
    };
    sqlx::query(
        "UPDATE run_notifications SET status = $3, next_at = $4, ended_at = $5 \
         WHERE id = $1 AND attempts = $2 AND status = 'pending'",
    )
    .bind(&attempt.notification_id)
    .bind(attempt.attempt)
    .bind(status)
    .bind(next_at)
    .bind(ended_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// The deliveries about run `run_id` or, for a top-level run, any run of its tree, oldest first, each with its
/// attempts in order.
pub async fn notifications_of_run(
    conn: &mut Connection,
    run_id: &str,
) -> Result<Vec<(NotificationRow, Vec<AttemptRow>)>, Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM run_notifications WHERE run_id = $1 OR root_run_id = $1 ORDER BY created_at, id"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(run_id).fetch_all(&mut *conn).await?;
    let deliveries: Vec<NotificationRow> = rows.iter().map(notification_from).collect::<Result<_, _>>()?;
    if deliveries.is_empty() {
        return Ok(Vec::new());
    }
    let attempts = sqlx::query(
        "SELECT a.notification_id, a.attempt, a.at, a.http_status, a.error FROM run_notification_attempts a \
         JOIN run_notifications n ON n.id = a.notification_id WHERE n.run_id = $1 OR n.root_run_id = $1 \
         ORDER BY a.notification_id, a.attempt",
    )
    .bind(run_id)
    .fetch_all(conn)
    .await?;
    let mut attempts: Vec<AttemptRow> = attempts
        .iter()
        .map(|r| {
            Ok(AttemptRow {
                notification_id: r.try_get("notification_id")?,
                attempt: r.try_get("attempt")?,
                at: r.try_get("at")?,
                http_status: r.try_get("http_status")?,
                error: r.try_get("error")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?;
    Ok(deliveries
        .into_iter()
        .map(|delivery| {
            let (own, rest) = attempts.drain(..).partition(|a| a.notification_id == delivery.queued.id);
            attempts = rest;
            (delivery, own)
        })
        .collect())
}

fn notification_from(r: &AnyRow) -> Result<NotificationRow, sqlx::Error> {
    Ok(NotificationRow {
        queued: NewNotification {
            id: r.try_get("id")?,
            run_id: r.try_get("run_id")?,
            root_run_id: r.try_get("root_run_id")?,
            event: r.try_get("event")?,
            url: r.try_get("url")?,
            secret_env: r.try_get("secret_env")?,
            body: r.try_get("body")?,
            created_at: r.try_get("created_at")?,
        },
        status: r.try_get("status")?,
        attempts: r.try_get("attempts")?,
        next_at: r.try_get("next_at")?,
        ended_at: r.try_get("ended_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestStore;

    fn delivery(id: &str, run_id: &str, at: i64) -> NewNotification {
        NewNotification {
            id: id.into(),
            run_id: run_id.into(),
            root_run_id: "root".into(),
            event: "run.completed".into(),
            url: "http://127.0.0.1:9/hook".into(),
            secret_env: Some("SECRET".into()),
            body: "{}".into(),
            created_at: at,
        }
    }

    #[tokio::test]
    async fn an_attempt_is_claimed_once_and_its_end_recorded() {
        let test = TestStore::new().await;
        let store = &test.store;
        let mut tx = store.begin_write().await.unwrap();
        insert_notification(&mut tx, &delivery("d1", "root", 100)).await.unwrap();
        insert_notification(&mut tx, &delivery("d2", "child", 200)).await.unwrap();
        tx.commit().await.unwrap();

        let mut conn = store.read().await.unwrap();
        let due = due_notifications(&mut conn, 150, 10).await.unwrap();
        assert_eq!(due.iter().map(|d| d.queued.id.as_str()).collect::<Vec<_>>(), ["d1"], "only what is due");
        drop(conn);
        let mut tx = store.begin_write().await.unwrap();
        assert!(claim_notification(&mut tx, "d1", 0, 150, 30_150).await.unwrap());
        assert!(!claim_notification(&mut tx, "d1", 0, 150, 30_150).await.unwrap(), "a second claim of one attempt");
        let attempt = |attempt, at, status| AttemptRow {
            notification_id: "d1".into(),
            attempt,
            at,
            http_status: Some(status),
            error: None,
        };
        let failed = attempt(1, 160, 500);
        finish_attempt(&mut tx, &failed, AttemptEnd::RetryAt(1_160)).await.unwrap();
        assert!(claim_notification(&mut tx, "d1", 1, 1_200, 31_200).await.unwrap());
        let ok = attempt(2, 1_210, 200);
        finish_attempt(&mut tx, &ok, AttemptEnd::Delivered).await.unwrap();
        tx.commit().await.unwrap();

        let mut conn = store.read().await.unwrap();
        assert!(due_notifications(&mut conn, 100_000, 10).await.unwrap().iter().all(|d| d.queued.id != "d1"));
        let listed = notifications_of_run(&mut conn, "root").await.unwrap();
        assert_eq!(listed.len(), 2, "a top-level run lists its tree's deliveries");
        let (d1, attempts) = &listed[0];
        assert_eq!((d1.status.as_str(), d1.attempts, d1.ended_at), ("delivered", 2, Some(1_210)));
        assert_eq!(attempts.iter().map(|a| a.http_status).collect::<Vec<_>>(), [Some(500), Some(200)]);
        assert!(listed[1].1.is_empty());
        assert_eq!(notifications_of_run(&mut conn, "child").await.unwrap().len(), 1, "a child lists its own");
    }
}
