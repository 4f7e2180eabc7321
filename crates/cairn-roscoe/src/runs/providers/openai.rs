//! An OpenAI-compatible Chat Completions server — OpenAI itself, or a local one (Ollama, vLLM, LM Studio):
//! `POST {base}/chat/completions` with the prompt as one user message and `max_tokens`, `Authorization: Bearer`
//! when there is a key. The base (which ends in `/v1`, as OpenAI's SDKs read it) is the provider's `baseUrl`, else
//! `OPENAI_BASE_URL`, else the public endpoint; the key its `apiKeyFile`, else its `apiKeyEnv`, else
//! `OPENAI_API_KEY` — optional, since local servers need none. The answer is `choices[0].message.content`; usage
//! `prompt_tokens` (with `prompt_tokens_details.cached_tokens` as cache reads) and `completion_tokens`.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Failure, Provider, Reply, Request, Usage, api_key, base_url, http, status_failure, transport_failure};
use crate::engine::Billing;
use crate::runs::settings::ProviderSettings;

const PUBLIC_BASE: &str = "https://api.openai.com/v1";

/// A configured OpenAI-compatible provider.
pub(crate) struct OpenAi {
    name: String,
    url: String,
    key: Option<String>,
    max_tokens: u32,
}

impl OpenAi {
    /// The provider `name` of `settings`; the public endpoint needs a key.
    pub(crate) fn new(name: &str, settings: &ProviderSettings) -> Result<OpenAi, String> {
        let key = api_key(settings, "OPENAI_API_KEY");
        let base = base_url(settings, "OPENAI_BASE_URL", PUBLIC_BASE);
        if key.is_none() && base == PUBLIC_BASE {
            let env = settings.api_key_env.as_deref().unwrap_or("OPENAI_API_KEY");
            return Err(format!("provider '{name}' has no API key for {PUBLIC_BASE}: set {env}, or a baseUrl of a local server"));
        }
        Ok(OpenAi {
            name: name.to_owned(),
            url: format!("{}/chat/completions", base.trim_end_matches('/')),
            key,
            max_tokens: settings.max_tokens,
        })
    }
}

#[async_trait]
impl Provider for OpenAi {
    fn billing(&self) -> Billing {
        Billing::Metered
    }

    fn max_output_tokens(&self) -> Option<u32> {
        Some(self.max_tokens)
    }

    async fn call(&self, request: &Request) -> Result<Reply, Failure> {
        let body = json!({
            "model": request.model,
            "max_tokens": self.max_tokens,
            "messages": [{ "role": "user", "content": request.prompt }],
        });
        let mut post = http().post(&self.url).json(&body);
        if let Some(key) = &self.key {
            post = post.bearer_auth(key);
        }
        let response = post.send().await.map_err(|e| transport_failure(&self.name, &e))?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = response.text().await.unwrap_or_default();
            return Err(status_failure(&self.name, status, &headers, &text));
        }
        let answer: Value = response.json().await.map_err(|e| transport_failure(&self.name, &e))?;
        let Some(text) = answer["choices"][0]["message"]["content"].as_str() else {
            return Err(Failure::Permanent(format!("{}: the answer has no choices[0].message.content", self.name)));
        };
        let usage = &answer["usage"];
        Ok(Reply {
            text: text.to_owned(),
            usage: Usage {
                input: usage["prompt_tokens"].as_i64().unwrap_or(0),
                output: usage["completion_tokens"].as_i64().unwrap_or(0),
                cache_read: usage["prompt_tokens_details"]["cached_tokens"].as_i64().unwrap_or(0),
                cache_creation: 0,
            },
            ..Reply::default()
        })
    }
}
