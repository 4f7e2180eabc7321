//! The ready queue: the open items of a space nobody holds whose blockers are all done, most urgent first, then
//! oldest; and `work_claim_next`, which claims the first of them for the caller. Each claim is the ordinary
//! compare-and-swap of [`Service::claim_item`], so two agents asking at once get two different items: the one that
//! loses an item moves on. It moves on from a place of its own in the candidates ([`try_order`]), so that agents
//! racing for the head of the queue spread over it instead of all losing the second item, then the third.

use cairn_store::work::items::{self, ReadyFilter};
use serde::Serialize;

use super::items::ListQuery;
use super::{ItemList, Service};
use crate::auth::Caller;
use crate::error::Error;
use crate::item::{self, WorkItem};
use crate::page::page_size;
use crate::text::{self, name_key};

/// How many ready items `work_claim_next` tries per read of the queue, and how many reads it makes.
const CANDIDATES: i64 = 20;
const READS: usize = 5;

/// What `work_claim_next` did.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimedNext {
    /// The item now held by the claimant; `None` when nothing was ready.
    pub item: Option<WorkItem>,
    /// Why there is no item; "" when there is one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

impl Service {
    /// `work_ready`: up to `page_size` ready items of `space_id` carrying every one of `labels`.
    pub async fn ready_items(
        &self,
        caller: &Caller,
        space_id: &str,
        labels: &[String],
        page_size_arg: i64,
    ) -> Result<Vec<WorkItem>, Error> {
        let limit = page_size(page_size_arg)?;
        let labels = text::labels("labels", labels)?;
        let space = self.space(caller, space_id, false).await?;
        let (account_id, space_id) = (space.account_id, space.id);
        let filter = ReadyFilter { account_id, space_id, labels, limit, ..ReadyFilter::default() };
        let rows = items::ready_items(self.store.pool(), &filter).await?;
        Ok(rows.iter().map(WorkItem::from_row).collect())
    }

    /// `work_list` with `state: "ready"`: [`Service::ready_items`] of its space, in one page.
    pub(super) async fn ready_list(&self, caller: &Caller, query: &ListQuery) -> Result<ItemList, Error> {
        if query.space_id.trim().is_empty() {
            return Err(Error::InvalidArgument("state \"ready\" needs space_id: the ready queue is a space's".into()));
        }
        if !query.page_token.trim().is_empty() {
            return Err(Error::InvalidArgument(
                "the ready queue has one page; raise page_size (at most 200) instead of a page_token".into(),
            ));
        }
        let items = self.ready_items(caller, &query.space_id, &query.labels, query.page_size).await?;
        Ok(ItemList { items, next_page_token: String::new() })
    }

    /// `work_claim_next`: claims for `claimant` the first ready item of `space_id` carrying `labels` that they may
    /// claim (items handed off to someone else are left to them, except for a person), with a lease as
    /// [`Service::claim_item`] takes it.
    pub async fn claim_next(
        &self,
        caller: &Caller,
        space_id: &str,
        claimant: &str,
        labels: &[String],
        lease_seconds: Option<i64>,
    ) -> Result<ClaimedNext, Error> {
        let claimant = text::single_line("claimant", claimant, 1, 100)?;
        let labels = text::labels("labels", labels)?;
        let lease_ms = self.lease_ms(lease_seconds)?;
        let space = self.space(caller, space_id, true).await?;
        let mut filter = ReadyFilter {
            account_id: space.account_id.clone(),
            space_id: space.id.clone(),
            labels,
            for_claimant_key: (!caller.is_person()).then(|| name_key(&claimant)),
            after: None,
            limit: CANDIDATES,
        };
        for _ in 0..READS {
            let candidates = items::ready_items(self.store.pool(), &filter).await?;
            for candidate in try_order(candidates.len(), random()).map(|at| &candidates[at]) {
                let claimed = self
                    .change_item(caller, &space.account_id, &candidate.id, &claimant, |row, now| {
                        // Still ready? Its blockers were all done when listed, and done is for good: it is unless
                        // someone claimed it or gave it new blockers since.
                        if row.state != "open" || !row.claimant.is_empty() || row.blocked_by != candidate.blocked_by {
                            return Ok(None);
                        }
                        item::claim(row, caller, &claimant, lease_ms, now)
                    })
                    .await;
                match claimed {
                    Ok((row, kinds)) if !kinds.is_empty() => {
                        cairn_telemetry::metrics::work_claim("claimed");
                        return Ok(ClaimedNext { item: Some(WorkItem::from_row(&row)), reason: String::new() });
                    }
                    Ok(_) | Err(Error::Conflict { .. }) => {}
                    Err(error) => return Err(error),
                }
            }
            match candidates.last() {
                Some(last) if candidates.len() as i64 == CANDIDATES => {
                    filter.after = Some((last.priority, last.created_at, last.id.clone()));
                }
                _ => break,
            }
        }
        let with = match filter.labels.as_slice() {
            [] => String::new(),
            labels => format!(" with the labels {}", labels.join(", ")),
        };
        let reason = format!(
            "nothing is ready in space '{}'{with}: every item not done is held, waits for an unfinished blocker, or is \
             handed off to someone else (work_list shows them)",
            space.id
        );
        Ok(ClaimedNext { item: None, reason })
    }
}

/// The order in which `work_claim_next` tries `n` candidates: the first (the queue's head, so that a caller alone
/// gets exactly what `work_ready` lists first), then the others from `start` on, wrapping around: every candidate
/// once.
fn try_order(n: usize, start: usize) -> impl Iterator<Item = usize> {
    let rest = n.saturating_sub(1).max(1);
    (0..n).map(move |i| if i == 0 { 0 } else { 1 + (start + i - 1) % rest })
}

/// A random number, for [`try_order`].
fn random() -> usize {
    let mut bytes = [0u8; 8];
    crate::ids::fill_random(&mut bytes);
    u64::from_le_bytes(bytes) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_first_then_every_other_candidate_once_from_anywhere() {
        for n in 0..6 {
            for start in 0..10 {
                let order: Vec<usize> = try_order(n, start).collect();
                let mut sorted = order.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n {n}, start {start}: {order:?}");
                assert!(order.first().is_none_or(|first| *first == 0));
            }
        }
        assert_eq!(try_order(5, 2).collect::<Vec<_>>(), [0, 3, 4, 1, 2]);
    }
}
