//! What items wait for and belong to: changing an item's blockers or parent, checked against its space's graph (the
//! items exist there, no cycle forms) under a lock on the space so two such changes cannot each close half of a
//! cycle; and, when an item becomes done, the "unblocked" event on each item that waited for it last.

use std::collections::{BTreeMap, BTreeSet};

use cairn_store::changes::Change;
use cairn_store::work::items::{self, EventRow, ItemRow};

use super::items::{event, not_in_space};
use super::{ATTEMPTS, Service};
use crate::auth::Caller;
use crate::error::Error;
use crate::item::{self, Changes};
use crate::time::now_ms;

impl Service {
    /// `work_update` with a change of blockers or parent: like [`Service::change_item`], but always in a write
    /// transaction holding the space's lock, where the new edges are checked against the space's graph.
    pub(super) async fn change_graph(
        &self,
        caller: &Caller,
        account_id: &str,
        item_id: &str,
        changes: &Changes,
    ) -> Result<(ItemRow, Vec<&'static str>), Error> {
        let account = self.account_id(caller, account_id, true).await?;
        for _ in 0..ATTEMPTS {
            let mut tx = self.store.begin_write().await?;
            let row = items::get_item(&mut *tx, &account, item_id)
                .await?
                .ok_or_else(|| Error::not_found("work item", item_id))?;
            items::lock_space(&mut tx, &row.space_id).await?;
            let Some((new, events)) = item::update(&row, caller, changes, now_ms())? else {
                tx.rollback().await?;
                return Ok((row, Vec::new()));
            };
            let old_blockers = item::list(&row.blocked_by);
            let new_blockers = item::list(&new.blocked_by);
            let added: Vec<String> = new_blockers.iter().filter(|b| !old_blockers.contains(b)).cloned().collect();
            let removed: Vec<String> = old_blockers.iter().filter(|b| !new_blockers.contains(b)).cloned().collect();
            let new_parent = (new.parent_id != row.parent_id && !new.parent_id.is_empty()).then_some(&new.parent_id);
            for id in added.iter().chain(new_parent) {
                if *id == row.id {
                    return Err(Error::InvalidArgument(format!("an item cannot wait for or belong to itself ('{id}')")));
                }
                let other = items::get_item(&mut *tx, &account, id).await?;
                other.filter(|other| other.space_id == row.space_id).ok_or_else(|| not_in_space(id, &row.space_id))?;
            }
            let (edges, parents) = items::space_graph(&mut tx, &row.space_id).await?;
            if !added.is_empty() {
                let mut waits: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
                for (from, to) in edges.into_iter().filter(|(from, to)| *from != row.id || !removed.contains(to)) {
                    waits.entry(from).or_default().insert(to);
                }
                waits.entry(row.id.clone()).or_default().extend(added.iter().cloned());
                if let Some(cycle) = cycle_through(&waits, &row.id) {
                    return Err(Error::InvalidArgument(format!(
                        "that makes a cycle of blockers: {}; an item cannot (indirectly) wait for itself",
                        cycle.join(" waits for ")
                    )));
                }
            }
            if let Some(parent) = new_parent {
                let up: BTreeMap<String, String> = parents.into_iter().collect();
                let mut chain = vec![row.id.clone(), parent.clone()];
                let mut at = parent.clone();
                while let Some(next) = up.get(&at) {
                    chain.push(next.clone());
                    if *next == row.id {
                        return Err(Error::InvalidArgument(format!(
                            "that makes a cycle of parents: {}; an item cannot be its own ancestor",
                            chain.join(" is a child of ")
                        )));
                    }
                    if chain.len() > 1000 {
                        break;
                    }
                    at = next.clone();
                }
            }
            let kinds: Vec<&'static str> = events.iter().map(|(kind, _)| *kind).collect();
            let by = &caller.display_name;
            let events: Vec<EventRow> =
                events.into_iter().map(|entry| event(&new, caller, by, entry, new.updated_at)).collect();
            let changed = items::replace_item(&new, row.version, &events).run(&mut tx).await?;
            if changed.first() != Some(&1) {
                tx.rollback().await?;
                continue;
            }
            items::change_blockers(&new.id, &added, &removed).run(&mut tx).await?;
            tx.commit().await?;
            self.store.changes().committed(Change::Item(new.id.clone()));
            return Ok((new, kinds));
        }
        Err(Error::Internal("the item kept changing while this change was made".into()))
    }

    /// Writes "unblocked" on every item not done that waited for `done` and now waits for nothing unfinished. Runs
    /// after the change that made `done` done (an error here is logged, not returned: the change stands).
    pub(super) async fn announce_unblocked(&self, caller: &Caller, done: &ItemRow) {
        let announce = async {
            let (blocks, _) = items::dependents(self.store.pool(), &done.id).await?;
            for id in blocks {
                if items::unfinished_blockers(self.store.pool(), &id).await? > 0 {
                    continue;
                }
                self.change_item(caller, &done.account_id, &id, &caller.display_name, |row, now| {
                    Ok((row.state != "done").then(|| {
                        let (new, event) = item::unblocked(row, &done.id, now);
                        (new, vec![event])
                    }))
                })
                .await?;
            }
            Ok::<_, Error>(())
        };
        if let Err(error) = announce.await {
            tracing::warn!("could not tell the items waiting for {} that it is done: {error}", done.id);
        }
    }
}

/// A cycle of `waits` (item → the items it waits for) through `start`, as the ids along it from `start` back to
/// `start`; `None` when there is none.
fn cycle_through(waits: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut path = vec![start.to_owned()];
    let mut seen = BTreeSet::new();
    fn walk(
        waits: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let at = path.last().expect("the path starts at start").clone();
        for next in waits.get(&at).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(waits, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(waits, start, &mut path, &mut seen).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_named_from_the_changed_item_back_to_it() {
        let mut waits: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in [("a", "b"), ("b", "c"), ("c", "d"), ("x", "a")] {
            waits.entry(from.into()).or_default().insert(to.into());
        }
        assert_eq!(cycle_through(&waits, "a"), None);
        waits.entry("c".into()).or_default().insert("a".into());
        assert_eq!(cycle_through(&waits, "a").unwrap(), ["a", "b", "c", "a"]);
    }
}
