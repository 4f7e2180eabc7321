//! What the store reports about itself for `/metrics`: the pool's connections and the runs by status.

use sqlx::Row;

use crate::{Error, Store};

impl Store {
    /// The pool's connections: `(idle, in_use)`; those waiting in the lane for the next read are idle too.
    pub fn pool_connections(&self) -> (usize, usize) {
        let idle = self.pool.num_idle() + self.lane.waiting();
        (idle, (self.pool.size() as usize).saturating_sub(idle))
    }

    /// How many runs have each status, by status.
    pub async fn runs_by_status(&self) -> Result<Vec<(String, i64)>, Error> {
        let rows = sqlx::query("SELECT status, COUNT(*) AS n FROM workflow_runs GROUP BY status ORDER BY status")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|row| Ok((row.try_get("status")?, row.try_get("n")?))).collect()
    }
}
