//! `webhook_deliveries`: the deliveries each inbound webhook accepted, so a repeated delivery starts no second run.
//!
//! [`claim_delivery`] inserts the delivery's row under its primary key (hook, delivery id): of any number of requests
//! or servers with one delivery, exactly one inserts it ([`Claim::Claimed`]) and goes on to start the run, then
//! records its id ([`set_delivery_run`]), or gives the claim back when the start failed ([`release_delivery`]). The
//! others read what the row holds ([`Claim::Taken`]). A claim whose run never came (its server died between the two
//! steps) can be taken over once it is old ([`take_over_delivery`], a compare-and-set on the claim's time). Each
//! claim first removes the rows past their `expires_at`.

use sqlx::Row;

use crate::Error;
use crate::runs::Connection;

/// What a claim of a delivery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The row is this claim's: start the run.
    Claimed,
    /// Another claim has the row: its run (`None` while it is being started) and when it was claimed (epoch ms).
    Taken {
        /// The run the delivery started, once started.
        run_id: Option<String>,
        /// When the delivery was claimed.
        claimed_at: i64,
    },
}

/// Claims delivery `delivery_id` of `hook` at `now` (epoch ms), to be kept until `expires_at` (`None`: for good).
/// Run it in a write transaction.
pub async fn claim_delivery(
    conn: &mut Connection,
    hook: &str,
    delivery_id: &str,
    now: i64,
    expires_at: Option<i64>,
) -> Result<Claim, Error> {
    sqlx::query("DELETE FROM webhook_deliveries WHERE expires_at < $1").bind(now).execute(&mut *conn).await?;
    let done = sqlx::query(
        "INSERT INTO webhook_deliveries (hook, delivery_id, run_id, claimed_at, expires_at) \
         VALUES ($1, $2, NULL, $3, $4) ON CONFLICT (hook, delivery_id) DO NOTHING",
    )
    .bind(hook)
    .bind(delivery_id)
    .bind(now)
    .bind(expires_at)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 1 {
        return Ok(Claim::Claimed);
    }
    let row = sqlx::query("SELECT run_id, claimed_at FROM webhook_deliveries WHERE hook = $1 AND delivery_id = $2")
        .bind(hook)
        .bind(delivery_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok(Claim::Taken { run_id: row.try_get("run_id")?, claimed_at: row.try_get("claimed_at")? })
}

/// The run delivery `delivery_id` of `hook` started, if its claim has one yet.
pub async fn delivery_run(conn: &mut Connection, hook: &str, delivery_id: &str) -> Result<Option<String>, Error> {
    let row = sqlx::query("SELECT run_id FROM webhook_deliveries WHERE hook = $1 AND delivery_id = $2")
        .bind(hook)
        .bind(delivery_id)
        .fetch_optional(conn)
        .await?;
    Ok(row.map(|r| r.try_get::<Option<String>, _>("run_id")).transpose()?.flatten())
}

/// Records that the claim of delivery `delivery_id` of `hook` started run `run_id`.
pub async fn set_delivery_run(conn: &mut Connection, hook: &str, delivery_id: &str, run_id: &str) -> Result<(), Error> {
    sqlx::query("UPDATE webhook_deliveries SET run_id = $3 WHERE hook = $1 AND delivery_id = $2")
        .bind(hook)
        .bind(delivery_id)
        .bind(run_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Gives back the claim of delivery `delivery_id` of `hook` (its run could not start), so a later delivery may try.
pub async fn release_delivery(conn: &mut Connection, hook: &str, delivery_id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM webhook_deliveries WHERE hook = $1 AND delivery_id = $2 AND run_id IS NULL")
        .bind(hook)
        .bind(delivery_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Takes over the claim of delivery `delivery_id` of `hook` made at `claimed_at` that never got its run: true when
/// this call now holds it (claimed again at `now`), false when another took it or its run came meanwhile.
pub async fn take_over_delivery(
    conn: &mut Connection,
    hook: &str,
    delivery_id: &str,
    claimed_at: i64,
    now: i64,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE webhook_deliveries SET claimed_at = $4 \
         WHERE hook = $1 AND delivery_id = $2 AND run_id IS NULL AND claimed_at = $3",
    )
    .bind(hook)
    .bind(delivery_id)
    .bind(claimed_at)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestStore;

    async fn claim(test: &TestStore, delivery: &str, now: i64, expires_at: Option<i64>) -> Claim {
        let mut tx = test.store.begin_write().await.unwrap();
        let claim = claim_delivery(&mut tx, "global/release", delivery, now, expires_at).await.unwrap();
        tx.commit().await.unwrap();
        claim
    }

    #[tokio::test]
    async fn one_claim_per_delivery_until_it_expires() {
        let test = TestStore::new().await;
        assert_eq!(claim(&test, "d1", 1_000, None).await, Claim::Claimed);
        assert_eq!(claim(&test, "d1", 2_000, None).await, Claim::Taken { run_id: None, claimed_at: 1_000 });
        let mut tx = test.store.begin_write().await.unwrap();
        set_delivery_run(&mut tx, "global/release", "d1", "run1").await.unwrap();
        tx.commit().await.unwrap();
        let taken = Claim::Taken { run_id: Some("run1".into()), claimed_at: 1_000 };
        assert_eq!(claim(&test, "d1", 3_000, None).await, taken);
        let mut conn = test.store.read().await.unwrap();
        assert_eq!(delivery_run(&mut conn, "global/release", "d1").await.unwrap().as_deref(), Some("run1"));
        assert_eq!(delivery_run(&mut conn, "global/release", "d2").await.unwrap(), None);
        drop(conn);
        // A row that expires goes at the next claim; one kept for good stays.
        assert_eq!(claim(&test, "d2", 1_000, Some(5_000)).await, Claim::Claimed);
        assert!(matches!(claim(&test, "d2", 5_000, Some(9_000)).await, Claim::Taken { .. }));
        assert_eq!(claim(&test, "d2", 5_001, Some(9_000)).await, Claim::Claimed);
        assert_eq!(claim(&test, "d1", 10_000, None).await, taken);
    }

    #[tokio::test]
    async fn a_released_claim_is_free_and_a_stale_one_is_taken_over_once() {
        let test = TestStore::new().await;
        assert_eq!(claim(&test, "d1", 1_000, None).await, Claim::Claimed);
        let mut tx = test.store.begin_write().await.unwrap();
        release_delivery(&mut tx, "global/release", "d1").await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(claim(&test, "d1", 2_000, None).await, Claim::Claimed);
        let mut tx = test.store.begin_write().await.unwrap();
        assert!(take_over_delivery(&mut tx, "global/release", "d1", 2_000, 9_000).await.unwrap());
        assert!(!take_over_delivery(&mut tx, "global/release", "d1", 2_000, 9_500).await.unwrap());
        set_delivery_run(&mut tx, "global/release", "d1", "run1").await.unwrap();
        assert!(!take_over_delivery(&mut tx, "global/release", "d1", 9_000, 9_900).await.unwrap());
        // A claim with its run is never given back.
        release_delivery(&mut tx, "global/release", "d1").await.unwrap();
        tx.commit().await.unwrap();
        let taken = Claim::Taken { run_id: Some("run1".into()), claimed_at: 9_000 };
        assert_eq!(claim(&test, "d1", 10_000, None).await, taken);
    }
}
