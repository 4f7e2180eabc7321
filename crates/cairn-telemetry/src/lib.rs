//! What cairn reports about itself, in one place every crate can call: the metrics (names, labels and the functions
//! that record them, [`metrics`]), the Prometheus text `GET /metrics` serves ([`Metrics`]), and model calls
//! ([`model_call`]: their counters and a span in the OpenTelemetry GenAI conventions), and the optional export of
//! spans over OTLP ([`otlp`]).
//!
//! Recording is cheap and always safe: until the binary installs the recorder ([`Metrics::install`]) the `metrics`
//! facade drops every value, so libraries and their tests record without setting anything up.
//!
//! This crate knows no other workspace crate; the surfaces, the web server and the binary call it.

pub mod metrics;
pub mod model_call;
pub mod otlp;

pub use metrics::Metrics;
pub use model_call::ModelCall;
