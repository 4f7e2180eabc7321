//! Budgets of server-executed runs: at most `usd` and `tokens` (input + output) over all the model calls of a run
//! tree, kept on its root. Before a step's calls, the worst case of each is reserved: its input at most the prompt's
//! length in bytes (no tokenizer makes more tokens than bytes) plus [`FRAMING_TOKENS`], its output at most the
//! provider's `maxTokens`, priced at the model's dearest input price (cache writes) and its output price; a `claude`
//! CLI call is bounded only by its provider's `maxBudgetUsd`. When spent plus the reservation could pass a limit, the
//! run pauses (`budget_exceeded`) before calling, and continues once the budget is raised ([`Runs::set_budget`]).
//! A cost that cannot be known — a model without a price, a CLI call without `maxBudgetUsd`, calls already made whose
//! price was unknown — never counts as zero: under a USD limit it pauses the run.

use cairn_store::runs::{self as rows, RunRow};
use serde_json::json;

use super::convert::run_cost;
use super::providers::Provider;
use super::{AdvanceResult, Runs, run_subject};
use crate::actor::Actor;
use crate::engine::{Budget, BudgetHold, Event, Run};
use crate::error::Error;
use crate::scope::Scope;

/// Tokens a request adds to its prompt (roles, message framing).
const FRAMING_TOKENS: i64 = 64;

/// The most one call may cost: `None` where it cannot be known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Reservation {
    /// USD.
    pub(super) usd: Option<f64>,
    /// Input plus output tokens.
    pub(super) tokens: Option<i64>,
}

/// The worst case of one call of `model` with `prompt` through `provider`, at `run`'s prices.
pub(super) fn worst_case(run: &Run, model: &str, prompt: &str, provider: &dyn Provider) -> Reservation {
    let input = prompt.len() as i64 + FRAMING_TOKENS;
    let output = provider.max_output_tokens().map(i64::from);
    let tokens = output.map(|output| input + output);
    let usd = match provider.max_call_usd() {
        Some(usd) => Some(usd),
        None => run.models.pricing.get(model).zip(output).map(|(price, output)| {
            let dearest = price.input.max(price.cache_write.unwrap_or(price.input * 1.25));
            (input as f64 * dearest + output as f64 * price.output) / 1e6
        }),
    };
    Reservation { usd, tokens }
}

/// Why `reserved` does not fit `limit` after `spent` (USD, unknown when a call's price was unknown; tokens), if it
/// does not.
fn refusal(limit: Budget, spent_usd: Option<f64>, spent_tokens: i64, reserved: &[Reservation]) -> Option<BudgetHold> {
    let next_usd = reserved.iter().map(|r| r.usd).sum::<Option<f64>>();
    let next_tokens = reserved.iter().map(|r| r.tokens).sum::<Option<i64>>();
    let usd_fits = limit.usd.is_none_or(|max| matches!((spent_usd, next_usd), (Some(s), Some(n)) if s + n <= max + 1e-12));
    let tokens_fit = limit.tokens.is_none_or(|max| next_tokens.is_some_and(|n| spent_tokens + n <= max));
    if usd_fits && tokens_fit {
        return None;
    }
    let mut why = Vec::new();
    if !usd_fits {
        why.push(match (spent_usd, next_usd) {
            (None, _) => "calls already made have no known price, so the USD spent is unknown".to_owned(),
            (_, None) => "the next calls' cost cannot be bounded (a model without a price, or a claude-cli provider \
                          without maxBudgetUsd)"
                .to_owned(),
            (Some(s), Some(n)) => format!("USD {s:.6} spent + up to {n:.6} next > limit {:.6}", limit.usd.unwrap_or(0.0)),
        });
    }
    if !tokens_fit {
        why.push(match next_tokens {
            None => "the next calls' tokens cannot be bounded (a claude-cli provider)".to_owned(),
            Some(n) => format!("{spent_tokens} tokens spent + up to {n} next > limit {}", limit.tokens.unwrap_or(0)),
        });
    }
    Some(BudgetHold {
        code: "budget_exceeded".into(),
        message: format!(
            "the run paused before its next model calls: {}; raise the budget (set_run_budget, POST \
             /api/runs/<id>/budget or the run page) to continue",
            why.join("; ")
        ),
        limit,
        spent_usd: spent_usd.unwrap_or(0.0),
        spent_tokens,
        next_usd,
        next_tokens,
    })
}

/// The budget kept on a root run's row.
pub(super) fn of_row(row: &RunRow) -> Option<Budget> {
    row.budget.as_deref().and_then(|b| serde_json::from_str(b).ok())
}

impl Runs {
    /// The hold that pauses `run` before calls reserving `reserved`, if its tree's budget cannot cover them. A root
    /// run's row as the step asking for the calls just wrote it (`written`) holds the tree's budget as it is now:
    /// without one there is nothing to check, and nothing is read.
    pub(super) async fn over_budget(
        &self,
        run: &Run,
        written: Option<&RunRow>,
        reserved: &[Reservation],
    ) -> Result<Option<BudgetHold>, Error> {
        if written.is_some_and(|row| row.id == row.root_run_id && of_row(row).is_none()) {
            return Ok(None);
        }
        let mut conn = self.inner.store.read().await?;
        let tree = rows::runs_in_tree(&mut conn, &run.root_run_id).await?;
        let Some(limit) = tree.iter().find(|r| r.id == run.root_run_id).and_then(of_row) else { return Ok(None) };
        let costs: Vec<_> = tree.iter().map(run_cost).collect();
        let unpriced = costs.iter().any(|c| c.unpriced_calls > 0);
        let spent_usd = (!unpriced).then(|| costs.iter().map(|c| c.total_usd()).sum::<f64>());
        let spent_tokens = costs.iter().map(|c| c.total_tokens()).sum();
        Ok(refusal(limit, spent_usd, spent_tokens, reserved))
    }

    /// `set_run_budget`: sets the budget of the tree `run_id` belongs to (`usd` and `tokens`; a limit left out is
    /// removed) and, when the tree paused on its budget, lets it continue — checked against the new budget once more.
    /// Recorded in the tree's actions.
    pub async fn set_budget(&self, scope: &Scope, run_id: &str, budget: Budget, actor: &Actor) -> Result<AdvanceResult, Error> {
        if budget.usd.is_some_and(|u| !u.is_finite() || u < 0.0) || budget.tokens.is_some_and(|t| t < 0) {
            return Err(Error::InvalidInput("a budget's `usd` and `tokens` must be 0 or more".into()));
        }
        let mut tree = self.current_tree(scope, run_id).await?;
        let root_id = tree.root_id().to_owned();
        let mut tx = rows::begin(&self.inner.store).await?;
        let Some(mut root) = rows::lock_run(&mut tx, &root_id).await? else {
            rows::rollback(tx).await?;
            return Err(Error::run_not_found());
        };
        let base = root.version;
        root.budget = Some(serde_json::to_string(&budget).expect("a budget serializes"));
        root.version += 1;
        rows::update_run(&mut tx, &root, base).await?;
        rows::commit(tx).await?;
        tree.mark_stale();
        self.record(actor, "budget", &run_subject(&root_id), json!({ "budget": budget })).await?;
        let owner = tree.pending_owner();
        // Only a run paused on its budget takes the event; any other state stays as it is.
        let _ = self.drive(&owner, Event::BudgetRaised, &mut tree).await;
        self.result(&tree, scope).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(usd: Option<f64>, tokens: Option<i64>) -> Reservation {
        Reservation { usd, tokens }
    }

    #[test]
    fn a_reservation_fits_only_when_spent_plus_worst_case_stays_within_every_limit() {
        let limit = Budget { usd: Some(1.0), tokens: Some(1_000) };
        assert_eq!(refusal(limit, Some(0.5), 400, &[r(Some(0.25), Some(300)), r(Some(0.25), Some(300))]), None);
        let hold = refusal(limit, Some(0.5), 401, &[r(Some(0.25), Some(300)), r(Some(0.25), Some(300))]).unwrap();
        assert_eq!((hold.code.as_str(), hold.spent_tokens, hold.next_tokens), ("budget_exceeded", 401, Some(600)));
        assert!(hold.message.contains("401 tokens spent + up to 600 next > limit 1000"), "{}", hold.message);
        assert!(refusal(limit, Some(0.9), 0, &[r(Some(0.2), Some(1))]).is_some(), "USD over");
        assert_eq!(refusal(Budget::default(), None, 0, &[r(None, None)]), None, "no limit, nothing to check");
    }

    #[test]
    fn an_unknown_cost_never_counts_as_zero() {
        let usd = Budget { usd: Some(100.0), tokens: None };
        let hold = refusal(usd, Some(0.0), 0, &[r(None, Some(1))]).unwrap();
        assert!(hold.message.contains("cannot be bounded"), "{}", hold.message);
        let hold = refusal(usd, None, 0, &[r(Some(0.01), Some(1))]).unwrap();
        assert!(hold.message.contains("USD spent is unknown"), "{}", hold.message);
        let tokens = Budget { usd: None, tokens: Some(100) };
        assert!(refusal(tokens, Some(0.0), 0, &[r(Some(0.0), None)]).is_some());
        assert_eq!(refusal(tokens, None, 0, &[r(None, Some(100))]), None, "an unknown price does not matter to tokens");
    }
}
