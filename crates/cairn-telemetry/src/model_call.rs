//! Model calls made by the server (roscoe's runs call providers): [`ModelCall::record`] counts the call, its tokens
//! and its cost (in millionths of a US dollar) under [`crate::metrics`]'s `cairn_model_*` names, and [`ModelCall::span`] opens the span the call
//! runs in, named and described as the OpenTelemetry semantic conventions for generative AI ask (`chat {model}`,
//! `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, then `gen_ai.response.model`,
//! `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` and `error.type` recorded when it ends).
//!
//! A caller wraps each provider request:
//! ```text
//! let span = ModelCall::span("anthropic", "claude-sonnet-4");
//! let answer = provider.chat(request).instrument(span.clone()).await;
//! ModelCall { provider: "anthropic", model, input_tokens, output_tokens, cost_usd, elapsed, outcome: "ok" }
//!     .record(&span);
//! ```

use std::time::Duration;

use metrics::{counter, histogram};

use crate::metrics::{MODEL_CALLS, MODEL_CALL_DURATION, MODEL_COST, MODEL_TOKENS};

/// What one model call used.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall<'a> {
    /// `anthropic`, `openai`, … (`gen_ai.provider.name`).
    pub provider: &'a str,
    /// The model that answered (`gen_ai.response.model`).
    pub model: &'a str,
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
    /// What the call cost, in US dollars (0 when unknown).
    pub cost_usd: f64,
    /// How long it took.
    pub elapsed: Duration,
    /// `ok`, or what went wrong (`timeout`, `rate_limited`, `error`); anything but `ok` is the span's `error.type`.
    pub outcome: &'a str,
}

impl ModelCall<'_> {
    /// The span a call of `model` at `provider` runs in (a chat completion), its usage still to be recorded.
    pub fn span(provider: &str, model: &str) -> tracing::Span {
        tracing::info_span!(
            "model_call",
            otel.name = %format!("chat {model}"),
            otel.kind = "client",
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = %provider,
            gen_ai.request.model = %model,
            gen_ai.response.model = tracing::field::Empty,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            error.r#type = tracing::field::Empty,
        )
    }

    /// Counts the call (calls, tokens, cost, duration) and records its usage on `span`.
    pub fn record(&self, span: &tracing::Span) {
        let (provider, model) = (self.provider.to_owned(), self.model.to_owned());
        let outcome = self.outcome.to_owned();
        counter!(MODEL_CALLS, "provider" => provider.clone(), "model" => model.clone(), "outcome" => outcome).increment(1);
        let tokens = |kind: &'static str, n: u64| {
            counter!(MODEL_TOKENS, "provider" => provider.clone(), "model" => model.clone(), "kind" => kind).increment(n);
        };
        tokens("input", self.input_tokens);
        tokens("output", self.output_tokens);
        let micros = (self.cost_usd.max(0.0) * 1_000_000.0).round() as u64;
        counter!(MODEL_COST, "provider" => provider.clone(), "model" => model.clone()).increment(micros);
        histogram!(MODEL_CALL_DURATION, "provider" => provider, "model" => model).record(self.elapsed.as_secs_f64());
        span.record("gen_ai.response.model", self.model);
        span.record("gen_ai.usage.input_tokens", self.input_tokens);
        span.record("gen_ai.usage.output_tokens", self.output_tokens);
        if self.outcome != "ok" {
            span.record("error.type", self.outcome);
        }
    }
}
