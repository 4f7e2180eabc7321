//! Inbound webhooks that start runs (`POST /hooks/roscoe/<project>/<workflow>` on `cairn serve`): a workflow whose
//! `triggers:` has a `webhook` entry starts a run for each signed request, as the webhook's own actor.
//!
//! [`Runs::webhook`] takes one request through, in this order, answering with the first refusal:
//! 1. the hook: `<project>` is `global` (a global workflow) or the projectId of a project the server serves (its
//!    repo workflows), and the workflow must have a webhook trigger — otherwise `not_found`, worded the same
//!    whatever was missing, so an unsigned caller learns nothing about which workflows exist;
//! 2. the signature, with the secret the trigger's `secret_env` names ([`secret`], [`signed`]) — `bad_signature`;
//! 3. the body: JSON, made into the run's input ([`input`]) and checked against the workflow's `inputs` —
//!    `invalid_input`;
//! 4. the delivery: claimed in the database under its id (`webhook_deliveries`), so a repeated delivery, on any
//!    server of the database, starts nothing and answers the first run ([`WebhookStarted::repeated`]). The claim is
//!    made before the run is created and given back if the creation fails, so a delivery starts at most one run;
//!    a request that finds the first still being created waits for it (a few seconds, then
//!    `delivery_in_progress`), and a claim whose run never came (its server died in between) is taken over after a
//!    minute;
//! 5. the run: created as principal `webhook:<workflow id>`, with its AI steps run by the server, and driven in the
//!    background, so the request is answered at once. It may run a global workflow's scripts (the home is the
//!    operator's), and a repo workflow's only while its file is the text someone holding `roscoe:exec` approved
//!    (`trigger_exec.rs`); otherwise the start of a workflow with scripts is refused (`insufficient_scope`, saying how
//!    to approve it) and gives its delivery back.

mod input;
mod secret;
mod signed;

use std::time::{Duration, Instant};

use cairn_store::webhooks::{self as deliveries, Claim};
use serde_json::Value;

use super::{Runs, StartOptions, StartRequest};
use crate::actor::Actor;
use crate::clock::now_ms;
use crate::definition::{Trigger, validate_inputs};
use crate::engine::Execution;
use crate::error::Error;
use crate::reach::Reach;
use crate::scope::{Scope, project_id};
use crate::source::Source;

pub use signed::WebhookHeaders;

/// One request to a webhook.
#[derive(Clone, Copy, Debug)]
pub struct WebhookDelivery<'a> {
    /// `global`, or a served project's projectId.
    pub project: &'a str,
    /// The workflow id.
    pub workflow: &'a str,
    /// Its signature and delivery headers.
    pub headers: &'a WebhookHeaders,
    /// Its body, as received.
    pub body: &'a [u8],
}

/// The run a webhook request started, or the one its delivery started before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookStarted {
    /// The run.
    pub run_id: String,
    /// Its page.
    pub url: String,
    /// Whether the delivery had already started it (nothing new was started).
    pub repeated: bool,
}

/// How long a request waits for the run of a delivery another request is creating.
const WAIT_FOR_FIRST: Duration = Duration::from_secs(5);

/// How old a claim without a run must be before it is taken over.
const STALE_CLAIM_MS: i64 = 60_000;

impl Runs {
    /// Starts the run a webhook request asks for (see the module doc), on a server whose callers may name `reach`.
    pub async fn webhook(&self, reach: &Reach, delivery: WebhookDelivery<'_>) -> Result<WebhookStarted, Error> {
        let WebhookDelivery { project, workflow: id, headers, body } = delivery;
        let not_found = || {
            Error::refused(
                "not_found",
                format!(
                    "no webhook at /hooks/roscoe/{project}/{id}: <project> must be `global` or the projectId of a \
                     project this server serves, and the workflow must declare a `webhook` trigger"
                ),
            )
        };
        let (scope, source) = hook_scope(reach, project).ok_or_else(not_found)?;
        let prepared = match self.prepare(&scope, id, Some(source)) {
            Ok(prepared) => prepared,
            Err(error) if error.is_internal() => return Err(error),
            Err(error) => {
                tracing::warn!("webhook {project}/{id}: the workflow cannot be read: {error}");
                return Err(not_found());
            }
        };
        let Some((secret_env, mapping)) = prepared.workflow.triggers.iter().find_map(|t| match t {
            Trigger::Webhook { secret_env, input } => Some((secret_env, input)),
            _ => None,
        }) else {
            return Err(not_found());
        };
        let refused = |message: String| Error::refused("bad_signature", message);
        headers.require_signature().map_err(refused)?;
        let secret = secret::find(self.home(), secret_env).map_err(|reason| {
            tracing::warn!("webhook {project}/{id}: {reason}");
            refused("the server holds no secret for this webhook yet; its operator must configure the one the \
                     trigger's secret_env names (the server's log says how)"
                .into())
        })?;
        let verified = signed::verify(headers, &secret, body, now_ms() / 1000).map_err(refused)?;
        let body: Value = serde_json::from_slice(body).map_err(|e| {
            Error::InvalidInput(format!("the body is not JSON ({e}); send the JSON object the run starts with"))
        })?;
        let input = input::map(mapping.as_ref(), &body).map_err(Error::InvalidInput)?;
        validate_inputs(&prepared.workflow, Some(&input))
            .map_err(|m| Error::InvalidInput(format!("{m}; see the workflow's `inputs` (and its webhook `input:`)")))?;

        let approved_text = match source {
            Source::Repo => self.approved_text(&scope, id).await?,
            Source::Global => None,
        };
        let hook = format!("{project}/{id}");
        let link = |run_id: String, repeated: bool| {
            let url = self.link(&run_id, &scope).0;
            WebhookStarted { run_id, url, repeated }
        };
        if let Some(run_id) = self.claim(&hook, &verified).await? {
            return Ok(link(run_id, true));
        }
        let actor = Actor {
            via: "webhook",
            principal_id: format!("webhook:{id}"),
            name: format!("webhook:{id}"),
            may_exec: source == Source::Global,
        };
        let start = StartRequest { scope: &scope, id, source: Some(source), input: Some(&input), actor: &actor };
        let options = StartOptions { execution: Some(Execution::Server), approved_text, ..StartOptions::default() };
        let run_id = match self.create_run(start, &options).await {
            Ok(run_id) => run_id,
            Err(error) => {
                let mut tx = self.inner.store.begin_write().await?;
                deliveries::release_delivery(&mut tx, &hook, &verified.delivery_id).await?;
                tx.commit().await?;
                return Err(error);
            }
        };
        // Driven whatever happens next, so the run is never left waiting on a request that failed.
        let follow = (self.clone(), scope.clone(), run_id.clone());
        tokio::spawn(async move {
            let (runs, scope, run) = follow;
            if let Err(error) = runs.drive_created(&scope, &run).await {
                tracing::warn!("run {run} (started by a webhook): {error}");
            }
        });
        let mut tx = self.inner.store.begin_write().await?;
        deliveries::set_delivery_run(&mut tx, &hook, &verified.delivery_id, &run_id).await?;
        tx.commit().await?;
        Ok(link(run_id, false))
    }

    /// Claims `verified`'s delivery of `hook`: `None` when this request now holds it, the run it started when an
    /// earlier request did.
    async fn claim(&self, hook: &str, verified: &signed::Verified) -> Result<Option<String>, Error> {
        let waited = Instant::now();
        loop {
            let now = now_ms();
            let mut tx = self.inner.store.begin_write().await?;
            let claim = deliveries::claim_delivery(&mut tx, hook, &verified.delivery_id, now, verified.expires_at);
            let claim = claim.await?;
            let taken_over = match claim {
                Claim::Taken { run_id: None, claimed_at } if now - claimed_at > STALE_CLAIM_MS => {
                    deliveries::take_over_delivery(&mut tx, hook, &verified.delivery_id, claimed_at, now).await?
                }
                _ => false,
            };
            tx.commit().await?;
            match claim {
                Claim::Claimed => return Ok(None),
                _ if taken_over => return Ok(None),
                Claim::Taken { run_id: Some(run_id), .. } => return Ok(Some(run_id)),
                Claim::Taken { run_id: None, .. } if waited.elapsed() >= WAIT_FOR_FIRST => {
                    return Err(Error::refused(
                        "delivery_in_progress",
                        format!(
                            "delivery {} is still starting its run in another request; send it again in a minute",
                            verified.delivery_id
                        ),
                    ));
                }
                Claim::Taken { run_id: None, .. } => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }
}

/// The scope and source a hook's `<project>` names: `global`, or a project `reach` serves.
fn hook_scope(reach: &Reach, project: &str) -> Option<(Scope, Source)> {
    if project == "global" {
        return Some((Scope::Global, Source::Global));
    }
    let root = reach.roots().iter().find(|root| project_id(root) == project)?;
    let scope = Scope::Project { cwd: root.clone(), root: root.clone(), project_id: project.to_owned() };
    Some((scope, Source::Repo))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn a_hook_names_global_or_a_served_project_by_its_id() {
        let root = PathBuf::from("/srv/app");
        let served = Reach::Projects(vec![root.clone()].into());
        let id = project_id(&root);
        let (scope, source) = hook_scope(&served, &id).unwrap();
        assert_eq!((scope.root(), scope.project_id(), source), (Some(root.as_path()), id.as_str(), Source::Repo));
        assert_eq!(hook_scope(&served, "global"), Some((Scope::Global, Source::Global)));
        assert_eq!(hook_scope(&served, "0123456789abcdef"), None);
        assert_eq!(hook_scope(&Reach::Anywhere, &id), None);
    }
}
