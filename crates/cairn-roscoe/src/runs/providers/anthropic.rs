//! The Anthropic Messages API: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version: 2023-06-01`,
//! the prompt as one user message, `max_tokens` from the provider's settings. The base is the provider's `baseUrl`,
//! else `ANTHROPIC_BASE_URL` (as Anthropic's SDKs read it), else the public endpoint; the key its `apiKeyFile`, else
//! its `apiKeyEnv`, else `ANTHROPIC_API_KEY`. The answer is one JSON message, or with `stream: true` the API's
//! Server-Sent Events (`message_start` carries the input usage, `content_block_delta` the text, `message_delta` the
//! output usage, an `error` event a failure). Usage: `input_tokens` plus the cache reads and writes, reported apart.

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};

use super::{Failure, Provider, Reply, Request, Usage, api_key, base_url, http, status_failure, transport_failure};
use crate::engine::Billing;
use crate::runs::settings::ProviderSettings;

const PUBLIC_BASE: &str = "https://api.anthropic.com";

/// A configured Anthropic provider.
pub(crate) struct Anthropic {
    name: String,
    url: String,
    key: String,
    max_tokens: u32,
    stream: bool,
}

impl Anthropic {
    /// The provider `name` of `settings`; an error when it has no key.
    pub(crate) fn new(name: &str, settings: &ProviderSettings) -> Result<Anthropic, String> {
        let key = api_key(settings, "ANTHROPIC_API_KEY").ok_or_else(|| {
            let env = settings.api_key_env.as_deref().unwrap_or("ANTHROPIC_API_KEY");
            match &settings.api_key_file {
                Some(file) => format!("provider '{name}' has no API key: its key file {} is missing or empty", file.display()),
                None => format!("provider '{name}' has no API key: set {env} (or providers.{name}.apiKeyFile)"),
            }
        })?;
        let base = base_url(settings, "ANTHROPIC_BASE_URL", PUBLIC_BASE);
        Ok(Anthropic {
            name: name.to_owned(),
            url: format!("{}/v1/messages", base.trim_end_matches('/')),
            key,
            max_tokens: settings.max_tokens,
            stream: settings.stream,
        })
    }
}

#[async_trait]
impl Provider for Anthropic {
    fn billing(&self) -> Billing {
        Billing::Metered
    }

    fn max_output_tokens(&self) -> Option<u32> {
        Some(self.max_tokens)
    }

    async fn call(&self, request: &Request) -> Result<Reply, Failure> {
        let mut body = json!({
            "model": request.model,
            "max_tokens": self.max_tokens,
            "messages": [{ "role": "user", "content": request.prompt }],
        });
        if self.stream {
            body["stream"] = json!(true);
        }
        let response = http()
            .post(&self.url)
            .header("x-api-key", &self.key)
            .header("anthropic-version", "2023-06-01")
            .json(&body)
            .send()
            .await
            .map_err(|e| transport_failure(&self.name, &e))?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = response.text().await.unwrap_or_default();
            return Err(status_failure(&self.name, status, &headers, &text));
        }
        if self.stream {
            return read_stream(&self.name, response).await;
        }
        let message: Value = response.json().await.map_err(|e| transport_failure(&self.name, &e))?;
        let text = message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .collect::<String>();
        Ok(Reply { text, usage: usage(&message["usage"], None), ..Reply::default() })
    }
}

/// The usage object of a message (`output` from a later `message_delta` when given).
fn usage(value: &Value, output: Option<i64>) -> Usage {
    let count = |key: &str| value[key].as_i64().unwrap_or(0);
    let (read, written) = (count("cache_read_input_tokens"), count("cache_creation_input_tokens"));
    Usage {
        input: count("input_tokens") + read + written,
        output: output.unwrap_or_else(|| count("output_tokens")),
        cache_read: read,
        cache_creation: written,
    }
}

/// Reads the API's event stream to the message it spells.
async fn read_stream(name: &str, response: reqwest::Response) -> Result<Reply, Failure> {
    let mut reply = Reply::default();
    let mut start = Value::Null;
    let mut output = None;
    // Bytes, not text: a chunk may end inside a character.
    let mut pending: Vec<u8> = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| transport_failure(name, &e))?;
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
            let event: Vec<u8> = pending.drain(..end + 2).collect();
            let event = String::from_utf8_lossy(&event);
            let data: String =
                event.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim_start).collect();
            let Ok(data) = serde_json::from_str::<Value>(&data) else { continue };
            match data["type"].as_str() {
                Some("message_start") => start = data["message"]["usage"].clone(),
                Some("content_block_delta") if data["delta"]["type"] == "text_delta" => {
                    reply.text.push_str(data["delta"]["text"].as_str().unwrap_or_default());
                }
                Some("message_delta") => output = data["usage"]["output_tokens"].as_i64().or(output),
                Some("message_stop") => {
                    reply.usage = usage(&start, output);
                    return Ok(reply);
                }
                Some("error") => {
                    let message = format!("{name}: the stream failed: {}", data["error"]["message"].as_str().unwrap_or("error"));
                    return Err(if data["error"]["type"] == "overloaded_error" || data["error"]["type"] == "api_error" {
                        Failure::Transient { message, retry_after: None }
                    } else {
                        Failure::Permanent(message)
                    });
                }
                _ => {}
            }
        }
    }
    Err(Failure::Transient { message: format!("{name}: the stream ended before message_stop"), retry_after: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_counts_cache_reads_and_writes_as_input() {
        let reported = json!({ "input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 20 });
        assert_eq!(usage(&reported, None), Usage { input: 130, output: 5, cache_read: 100, cache_creation: 20 });
        assert_eq!(usage(&reported, Some(9)).output, 9, "a stream's message_delta gives the output count");
    }
}
