//! Calling the REST API as the e2e tests do: a JSON body posted with a bearer token, and its JSON answer, whatever
//! the status (a test that cares about the status reads the response itself).

use serde_json::Value;

/// POSTs `body` as JSON to `url` with bearer `token`; the answer's JSON (a transport error or an answer that is not
/// JSON fails the test).
pub async fn post_json(client: &reqwest::Client, url: impl reqwest::IntoUrl, token: &str, body: &Value) -> Value {
    client.post(url).bearer_auth(token).json(body).send().await.unwrap().json().await.unwrap()
}
