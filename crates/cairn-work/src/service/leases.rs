//! Leases on claims: a claim made with `lease_seconds` (or under the server's default lease) ends by itself when its
//! holder stops renewing it (`work_heartbeat`, or any `work_update` by the holder). Every server sweeps once a second:
//! an item whose lease ran out goes back to open with nobody holding it, and its history says whose lease expired.
//! The sweep is the ordinary compare-and-swap, so of several servers sharing the database exactly one expires each
//! lease; the others find it already open.

use std::time::Duration;

use cairn_store::work::items;

use super::Service;
use crate::auth::{Caller, Kind};
use crate::error::Error;
use crate::item::{self, WorkItem};
use crate::text;
use crate::time::now_ms;

/// The longest lease a claim may ask for: a week.
const MAX_LEASE_SECONDS: i64 = 7 * 24 * 3600;
/// How often a server looks for leases that ran out.
const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// How many expired leases one sweep ends at most (the next sweep takes the rest).
const SWEEP_BATCH: i64 = 200;

impl Service {
    /// The same service, whose claims without `lease_seconds` get a lease of `lease` (`None`: no lease).
    pub fn with_default_lease(mut self, lease: Option<Duration>) -> Service {
        self.default_lease_ms = lease.map_or(0, |d| d.as_millis().min(i64::MAX as u128) as i64);
        self
    }

    /// A `lease_seconds` argument as milliseconds (0: no lease): 1 to a week, or the server's default when absent.
    pub(super) fn lease_ms(&self, lease_seconds: Option<i64>) -> Result<i64, Error> {
        match lease_seconds {
            None => Ok(self.default_lease_ms),
            Some(seconds @ 1..=MAX_LEASE_SECONDS) => Ok(seconds * 1000),
            Some(seconds) => Err(Error::InvalidArgument(format!(
                "lease_seconds must be 1 to {MAX_LEASE_SECONDS} (a week); it is {seconds}. Leave it out for no lease"
            ))),
        }
    }

    /// `work_heartbeat`: the holder `claimant` renews its lease on `item_id` for as long again as it was claimed for.
    pub async fn heartbeat(
        &self,
        caller: &Caller,
        account_id: &str,
        item_id: &str,
        claimant: &str,
    ) -> Result<WorkItem, Error> {
        let item_id = super::items::required_id(item_id)?;
        let claimant = text::single_line("claimant", claimant, 1, 100)?;
        let renew = |row: &_, now| item::heartbeat(row, caller, &claimant, now);
        let (row, _) = self.change_item(caller, account_id, &item_id, &claimant, renew).await?;
        Ok(WorkItem::from_row(&row))
    }

    /// Ends every lease that ran out: the items open again, each with a `lease_expired` event. Returns how many this
    /// call ended (another server may have ended some first).
    pub async fn expire_leases(&self) -> Result<usize, Error> {
        let mut ended = 0;
        for (id, account) in items::expired_leases(self.store.pool(), now_ms(), SWEEP_BATCH).await? {
            let sweeper = Caller {
                principal_id: "cairn".into(),
                display_name: "cairn".into(),
                kind: Kind::Service,
                home_account_id: account.clone(),
                scopes: Vec::new(),
            };
            let expire = |row: &_, now| Ok(item::expire(row, now));
            let (_, kinds) = self.change_item(&sweeper, &account, &id, "cairn", expire).await?;
            ended += usize::from(!kinds.is_empty());
        }
        Ok(ended)
    }

    /// Sweeps expired leases every second, for as long as the server runs.
    pub fn sweep_leases(&self) -> tokio::task::JoinHandle<()> {
        let service = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(SWEEP_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(error) = service.expire_leases().await {
                    tracing::warn!("could not end the work-item leases that ran out: {error}");
                }
            }
        })
    }
}
