//! The server's model calls for one step ([`Effect::CallModels`](crate::engine::Effect)): the step a host would have
//! been handed becomes requests — one for `ai_agent` / `ai_judge`, one per agent for consensus and map phases and the
//! round-robin resolve, one per outstanding matchup for round-robin waves —, each served by the provider
//! `roscoe.yaml` routes its model to ([`providers::resolve`]). Before calling, the worst case of every request is
//! reserved against the tree's budget ([`budget`]); then the requests run at once, at most `calls.concurrencyPerRun`
//! of the run and `calls.concurrencyPerServer` of the whole process at a time, each with its time limit and retries
//! ([`providers::retry`]). The answers become the [`Answer`] the step's tool would carry, and each call a
//! [`ModelCall`] with its usage, its USD (usage × the run's prices, or what the `claude` CLI reported) and latency.
//!
//! While the calls are in flight this process holds the run's lease, and the calls are dropped — HTTP requests
//! abandoned, `claude` process groups killed — as soon as the run is no longer running: at once when it is cancelled
//! in this process, within half a second when another process cancelled it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cairn_store::runs::{self as rows, RunRow};
use serde_json::{Map, Value};
use tokio::sync::{Semaphore, watch};
use tracing::Instrument;

use super::budget::{self, Reservation};
use super::providers::{self, Request, retry};
use super::settings::Settings;
use super::{Runs, lease};
use crate::engine::{Answer, Billing, Event, ModelCall, ModelJob, PendingStep, Run};

/// How often a process making calls looks whether another process ended the run.
const CANCEL_POLL: Duration = Duration::from_millis(500);

/// A step's calls, ready to be made: the settings they are made under, each request with its provider, and what
/// their answers become.
pub(super) struct Ready {
    settings: Settings,
    resolved: Vec<(String, String, providers::Resolved)>,
    shape: Shape,
}

/// What the answers of a step's requests become.
enum Shape {
    /// `advance_run`'s response.
    Response,
    /// `advance_consensus`'s responses.
    Consensus,
    /// `advance_map`'s responses.
    Map,
    /// The round-robin resolve phase's text.
    Resolve,
    /// Round-robin verdicts, by matchup id in request order.
    Verdicts(Vec<String>),
}

/// The requests of a step: (model, prompt) each, and what their answers become.
fn plan(step: &PendingStep, default_model: &str) -> (Vec<(String, String)>, Shape) {
    let agents = || -> Vec<(String, String)> {
        step.agents.iter().flatten().map(|a| (a.model.clone(), a.prompt.clone())).collect()
    };
    let model = step.model.clone().unwrap_or_else(|| default_model.to_owned());
    match step.node_type.as_str() {
        "consensus" => (agents(), Shape::Consensus),
        "map" => (agents(), Shape::Map),
        "round_robin" if step.round_robin_phase.as_deref() == Some("resolve") => (agents(), Shape::Resolve),
        "round_robin" => {
            let matchups = step.matchups.clone().unwrap_or_default();
            let requests = matchups.iter().map(|m| (model.clone(), m.prompt.clone())).collect();
            (requests, Shape::Verdicts(matchups.into_iter().map(|m| m.id).collect()))
        }
        _ => (vec![(model, step.prompt.clone())], Shape::Response),
    }
}

fn answer(shape: Shape, mut texts: Vec<String>) -> Answer {
    match shape {
        Shape::Response => Answer::Response { response: texts.pop().unwrap_or_default(), failed: false },
        Shape::Consensus => Answer::Consensus { responses: texts },
        Shape::Map => Answer::Map { responses: texts },
        Shape::Resolve => Answer::RoundRobin { verdicts: None, result: texts.pop() },
        Shape::Verdicts(ids) => {
            let verdicts: Map<String, Value> = ids.into_iter().zip(texts.into_iter().map(Value::String)).collect();
            Answer::RoundRobin { verdicts: Some(verdicts), result: None }
        }
    }
}

impl Runs {
    /// Makes the calls of `job` for `run` and returns the event that applies their outcome, or `None` when the run
    /// stopped running meanwhile (the calls were abandoned). `written` is the run's row as the step that asked for
    /// the calls wrote it, when at hand (see [`Runs::over_budget`]).
    pub(super) async fn call_models(&self, run: &Run, written: Option<&RunRow>, job: &ModelJob) -> Option<Event> {
        match self.ready_calls(run, written, job).await {
            Ok(ready) => self.make_calls(run, job, ready).await,
            Err(event) => Some(event),
        }
    }

    /// What must hold before `job`'s calls are made: readable settings, a provider for every model, a budget that
    /// covers their worst case. The calls, ready; or the event that applies instead (the step handed back, the run
    /// paused on its budget, the node failed).
    pub(super) async fn ready_calls(&self, run: &Run, written: Option<&RunRow>, job: &ModelJob) -> Result<Ready, Event> {
        let node_run_id = job.node_run_id.clone();
        let settings = Settings::read(self.home(), run.project_root.as_deref().map(std::path::Path::new)).map_err(|error| {
            let error = format!("roscoe.yaml cannot be used: {error}");
            Event::ModelsFailed { node_run_id: node_run_id.clone(), error, calls: Vec::new() }
        })?;
        let (requests, shape) = plan(&job.step, &run.models.default);
        let mut resolved = Vec::new();
        for (model, prompt) in requests {
            match providers::resolve(&settings, &model) {
                Ok(found) => resolved.push((model, prompt, found)),
                // No provider here: the step waits for a host instead, as a host-run step does.
                Err(reason) => return Err(Event::HandedBack { node_run_id, reason }),
            }
        }
        let worst: Vec<Reservation> =
            resolved.iter().map(|(model, prompt, found)| budget::worst_case(run, model, prompt, &*found.provider)).collect();
        match self.over_budget(run, written, &worst).await {
            Ok(Some(hold)) => Err(Event::BudgetExceeded { node_run_id, hold }),
            Ok(None) => Ok(Ready { settings, resolved, shape }),
            Err(error) => {
                let error = format!("the run's budget could not be checked: {error}");
                Err(Event::ModelsFailed { node_run_id, error, calls: Vec::new() })
            }
        }
    }

    /// Makes the `ready` calls of `job` for `run`: the event that applies their outcome, or `None` when the run
    /// stopped running meanwhile.
    pub(super) async fn make_calls(&self, run: &Run, job: &ModelJob, ready: Ready) -> Option<Event> {
        let Ready { settings, resolved, shape } = ready;
        let node_run_id = job.node_run_id.clone();
        let cwd = run.project_root.as_deref().map_or_else(|| self.home().to_owned(), PathBuf::from);
        let per_run = Arc::new(Semaphore::new(settings.calls.per_run));
        let calls = resolved.iter().map(|(model, prompt, found)| {
            let request = Request { model: model.clone(), prompt: prompt.clone(), cwd: cwd.clone() };
            let (per_run, limits) = (per_run.clone(), settings.calls);
            async move {
                let _run_slot = per_run.acquire_owned().await.expect("the semaphore is never closed");
                let _server_slot = self.inner.server_slots.clone().acquire_owned().await.expect("never closed");
                let span = cairn_telemetry::ModelCall::span(&found.name, &request.model);
                let outcome = retry::call(&*found.provider, &request, &limits).instrument(span.clone()).await;
                let billing = found.provider.billing();
                (outcome, request.model, found.name.clone(), billing, span)
            }
        });
        let all = futures::future::join_all(calls);
        let pid = i64::from(self.inner.pid);
        let renewal = lease::renew(self.inner.store.clone(), run.id.clone(), pid, || {});
        let outcomes = tokio::select! {
            outcomes = all => Some(outcomes),
            () = self.stopped(run) => None,
        };
        renewal.abort();
        let outcomes = outcomes?;
        let mut texts = Vec::new();
        let mut calls = Vec::new();
        let mut failures = Vec::new();
        for (outcome, model, provider, billing, span) in outcomes {
            let retry::Outcome { reply, attempts, latency } = outcome;
            let measured = |input_tokens, output_tokens, cost_usd, outcome| cairn_telemetry::ModelCall {
                provider: &provider,
                model: &model,
                input_tokens,
                output_tokens,
                cost_usd,
                elapsed: latency,
                outcome,
            };
            match reply {
                Ok(reply) => {
                    let latency_ms = latency.as_millis() as i64;
                    let call = model_call(run, &model, provider.clone(), billing, &reply, attempts, latency_ms);
                    let tokens = |n: i64| u64::try_from(n).unwrap_or(0);
                    measured(tokens(call.input_tokens), tokens(call.output_tokens), call.cost_usd.unwrap_or(0.0), "ok").record(&span);
                    calls.push(call);
                    texts.push(reply.text);
                }
                Err(error) => {
                    measured(0, 0, 0.0, "error").record(&span);
                    failures.push(format!("{model} ({provider}): {error}"));
                }
            }
        }
        Some(if failures.is_empty() {
            Event::ModelsAnswered { node_run_id, answer: answer(shape, texts), calls }
        } else {
            let error = format!("model call failed: {}", failures.join("; "));
            Event::ModelsFailed { node_run_id, error, calls }
        })
    }

    /// Resolves once `run` is no longer running: cancelled in this process (at once), or changed by another
    /// (noticed within [`CANCEL_POLL`]).
    async fn stopped(&self, run: &Run) {
        let mut local = self.cancellations(&run.root_run_id);
        loop {
            tokio::select! {
                changed = local.changed() => {
                    if changed.is_err() {
                        // No sender any more: only the poll below can tell.
                        local = watch::channel(false).1;
                    } else if *local.borrow() {
                        return;
                    }
                }
                () = tokio::time::sleep(CANCEL_POLL) => {
                    let Ok(mut conn) = self.inner.store.read().await else { continue };
                    if let Ok(Some(row)) = rows::get_run(&mut conn, &run.id).await
                        && row.status != "running"
                    {
                        return;
                    }
                }
            }
        }
    }

    /// A receiver that turns `true` when the tree rooted at `root_id` is cancelled in this process.
    fn cancellations(&self, root_id: &str) -> watch::Receiver<bool> {
        let mut inflight = self.inner.inflight.lock().expect("the in-flight map is never poisoned");
        inflight.retain(|_, sender| sender.receiver_count() > 0);
        inflight.entry(root_id.to_owned()).or_insert_with(|| watch::channel(false).0).subscribe()
    }

    /// Abandons the calls in flight in this process for the tree rooted at `root_id`.
    pub(super) fn abandon_calls(&self, root_id: &str) {
        let inflight = self.inner.inflight.lock().expect("the in-flight map is never poisoned");
        if let Some(sender) = inflight.get(root_id) {
            sender.send_replace(true);
        }
    }
}

/// The record of one answered call: its usage, and its USD — the `claude` CLI's own figure when it gave one, else
/// usage × the run's price of the model (`None` when the model has no price).
fn model_call(
    run: &Run,
    model: &str,
    provider: String,
    billing: Billing,
    reply: &providers::Reply,
    attempts: u32,
    latency_ms: i64,
) -> ModelCall {
    let usage = reply.usage;
    let priced = run.models.pricing.get(model).map(|p| p.usd(usage.input, usage.output, usage.cache_read, usage.cache_creation));
    ModelCall {
        model: model.to_owned(),
        provider,
        billing,
        input_tokens: usage.input,
        output_tokens: usage.output,
        cache_read_tokens: usage.cache_read,
        cache_creation_tokens: usage.cache_creation,
        cost_usd: reply.cost_usd.or(priced),
        latency_ms,
        attempts,
    }
}
