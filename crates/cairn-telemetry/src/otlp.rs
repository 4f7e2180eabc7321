//! Optional trace export over OTLP/HTTP with JSON bodies (off unless an endpoint is configured): every span the
//! logging filter lets through — `http_request`, `tool_call`, `model_call` — is sent, with its parent, to
//! `{endpoint}/v1/traces` in batches (up to 256 spans, every quarter of a second). `otel.name` and `otel.kind` fields
//! name a span and set its kind, as the OpenTelemetry conventions for `tracing` have it.
//!
//! The client is a plain HTTP/1.1 POST on a tokio TCP stream: collectors listen on plain HTTP beside the service
//! (port 4318), and the official exporter crates would bring gRPC (tonic) or an HTTP client stack into the build
//! for this one request. An `https://` endpoint is refused at start with a message saying so. A collector that does
//! not answer costs a batch, never a request: spans wait in a bounded queue (the oldest are dropped past 4,096).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// Spans kept for export at most; past it the oldest are dropped.
const QUEUE_LIMIT: usize = 4096;
/// Spans sent in one request at most.
const BATCH: usize = 256;

/// Where traces go: `http://HOST:PORT[/PATH]`, as `OTEL_EXPORTER_OTLP_ENDPOINT` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    host_port: String,
    path: String,
}

impl Endpoint {
    /// Parses `url`; the error says what is accepted.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let Some(rest) = url.trim().strip_prefix("http://") else {
            return Err(format!(
                "OTLP endpoint '{url}': only http://HOST:PORT is supported (a collector beside cairn; put TLS in front of it)"
            ));
        };
        let (host_port, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
        if host_port.is_empty() {
            return Err(format!("OTLP endpoint '{url}' names no host"));
        }
        let host_port = if host_port.contains(':') { host_port.to_owned() } else { format!("{host_port}:80") };
        let path = format!("/{}/v1/traces", path.trim_end_matches('/')).replace("//", "/");
        Ok(Endpoint { host_port, path })
    }
}

/// A finished span.
#[derive(Debug, Clone)]
struct Finished {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    parent: Option<[u8; 8]>,
    name: String,
    kind: u8,
    start: u128,
    end: u128,
    attributes: Vec<(String, Attr)>,
}

/// A span being recorded (kept in the span's extensions).
struct Open(Finished);

#[derive(Debug, Clone)]
enum Attr {
    Text(String),
    Int(i64),
    Real(f64),
    Bool(bool),
}

/// The `tracing` layer that exports spans; [`OtlpLayer::start`] also starts the task that sends them.
#[derive(Clone)]
pub struct OtlpLayer {
    queue: Arc<Mutex<VecDeque<Finished>>>,
}

impl std::fmt::Debug for OtlpLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OtlpLayer")
    }
}

impl OtlpLayer {
    /// The layer, and the task sending its spans to `endpoint` as `service` (call inside a tokio runtime).
    pub fn start(endpoint: Endpoint, service: &str) -> OtlpLayer {
        let layer = OtlpLayer { queue: Arc::new(Mutex::new(VecDeque::new())) };
        let queue = layer.queue.clone();
        let service = service.to_owned();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                loop {
                    let batch: Vec<Finished> = {
                        let mut queue = queue.lock().unwrap_or_else(|p| p.into_inner());
                        let n = queue.len().min(BATCH);
                        queue.drain(..n).collect()
                    };
                    if batch.is_empty() {
                        break;
                    }
                    // A collector that is down or slow costs this batch only.
                    let _ = tokio::time::timeout(Duration::from_secs(5), post(&endpoint, &body(&service, &batch))).await;
                }
            }
        });
        layer
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for OtlpLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span.parent().and_then(|p| p.extensions().get::<Open>().map(|o| (o.0.trace_id, o.0.span_id)));
        let (trace_id, parent) = match parent {
            Some((trace, span)) => (trace, Some(span)),
            None => (random(), None),
        };
        let mut open = Open(Finished {
            trace_id,
            span_id: random(),
            parent,
            name: attrs.metadata().name().to_owned(),
            kind: 1,
            start: now(),
            end: 0,
            attributes: Vec::new(),
        });
        attrs.record(&mut open);
        span.extensions_mut().insert(open);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(open) = span.extensions_mut().get_mut::<Open>()
        {
            values.record(open);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(Open(mut finished)) = span.extensions_mut().remove::<Open>() else { return };
        finished.end = now();
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if queue.len() >= QUEUE_LIMIT {
            queue.pop_front();
        }
        queue.push_back(finished);
    }
}

impl Visit for Open {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field.name(), Attr::Text(format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field.name(), Attr::Text(value.to_owned()));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field.name(), Attr::Int(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field.name(), Attr::Int(i64::try_from(value).unwrap_or(i64::MAX)));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field.name(), Attr::Real(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field.name(), Attr::Bool(value));
    }
}

impl Open {
    fn set(&mut self, name: &str, value: Attr) {
        match (name, &value) {
            ("otel.name", Attr::Text(text)) => self.0.name = text.clone(),
            // SpanKind: 1 internal, 2 server, 3 client.
            ("otel.kind", Attr::Text(text)) => {
                self.0.kind = match text.as_str() {
                    "server" => 2,
                    "client" => 3,
                    _ => 1,
                }
            }
            _ => {
                let name = name.strip_prefix("r#").unwrap_or(name).to_owned();
                self.0.attributes.retain(|(k, _)| *k != name);
                self.0.attributes.push((name, value));
            }
        }
    }
}

fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes
}

fn now() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The OTLP/JSON `ExportTraceServiceRequest` of `spans`.
fn body(service: &str, spans: &[Finished]) -> String {
    let spans: Vec<Value> = spans
        .iter()
        .map(|span| {
            let attributes: Vec<Value> = span
                .attributes
                .iter()
                .map(|(key, value)| {
                    let value = match value {
                        Attr::Text(s) => json!({"stringValue": s}),
                        Attr::Int(n) => json!({"intValue": n.to_string()}),
                        Attr::Real(x) => json!({"doubleValue": x}),
                        Attr::Bool(b) => json!({"boolValue": b}),
                    };
                    json!({"key": key, "value": value})
                })
                .collect();
            let mut out = json!({
                "traceId": hex(&span.trace_id),
                "spanId": hex(&span.span_id),
                "name": span.name,
                "kind": span.kind,
                "startTimeUnixNano": span.start.to_string(),
                "endTimeUnixNano": span.end.to_string(),
                "attributes": attributes,
            });
            if let Some(parent) = span.parent {
                out["parentSpanId"] = json!(hex(&parent));
            }
            out
        })
        .collect();
    json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "cairn"}, "spans": spans}],
    }]})
    .to_string()
}

/// POSTs `body` to the endpoint; the answer's status line is read and dropped.
async fn post(endpoint: &Endpoint, body: &str) -> std::io::Result<()> {
    let mut stream = tokio::net::TcpStream::connect(&endpoint.host_port).await?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        endpoint.path,
        endpoint.host_port,
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_plain_http_with_the_traces_path() {
        let endpoint = Endpoint::parse("http://collector:4318").unwrap();
        assert_eq!(endpoint, Endpoint { host_port: "collector:4318".into(), path: "/v1/traces".into() });
        assert_eq!(Endpoint::parse("http://c:4318/otel/").unwrap().path, "/otel/v1/traces");
        assert!(Endpoint::parse("https://c:4318").unwrap_err().contains("only http://"));
    }
}
