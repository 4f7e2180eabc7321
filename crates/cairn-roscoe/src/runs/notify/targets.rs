//! The `notify:` section of the global `roscoe.yaml`: where run notifications go, for which events and workflows,
//! signed with which secret (named by an environment variable of the server, never written in the file) and in
//! which body format. Only the operator's file may say where the server connects: a project's `roscoe.yaml` with a
//! `notify:` section is an error ([`read_targets`]), so no project can make the server send anything anywhere.

use serde_json::Value;

/// What happened to a run that people may be told of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotifyEvent {
    /// A run (of any depth) waits for a person's decision.
    PausedForHuman,
    /// A top-level run completed.
    Completed,
    /// A top-level run failed.
    Failed,
    /// A server-executed run paused before model calls its budget cannot cover.
    BudgetExceeded,
}

impl NotifyEvent {
    /// Every event, in the order the docs list them.
    pub(crate) const ALL: [NotifyEvent; 4] =
        [NotifyEvent::PausedForHuman, NotifyEvent::Completed, NotifyEvent::Failed, NotifyEvent::BudgetExceeded];

    /// Its name on the wire (`X-Roscoe-Event`, `event`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            NotifyEvent::PausedForHuman => "run.paused_for_human",
            NotifyEvent::Completed => "run.completed",
            NotifyEvent::Failed => "run.failed",
            NotifyEvent::BudgetExceeded => "run.budget_exceeded",
        }
    }

    fn from_name(name: &str) -> Option<NotifyEvent> {
        NotifyEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// The body a target takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// cairn's JSON object.
    Json,
    /// `{"text": "..."}`, as Slack's (and Mattermost's, Discord's `/slack`) incoming webhooks take.
    Slack,
}

/// One `notify:` entry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NotifyTarget {
    /// Where deliveries are POSTed (`http://` or `https://`).
    pub(crate) url: String,
    /// The events it is sent.
    pub(crate) events: Vec<NotifyEvent>,
    /// The server's environment variable holding the HMAC secret deliveries are signed with.
    pub(crate) secret_env: Option<String>,
    /// Its body format.
    pub(crate) format: Format,
    /// Only runs of these workflows (by id), when given.
    pub(crate) workflows: Option<Vec<String>>,
}

impl NotifyTarget {
    /// Whether `event` of a run of workflow `workflow_id` goes to this target.
    pub(crate) fn wants(&self, event: NotifyEvent, workflow_id: &str) -> bool {
        self.events.contains(&event) && self.workflows.as_ref().is_none_or(|w| w.iter().any(|id| id == workflow_id))
    }
}

/// The keys of a `notify:` entry.
const KEYS: [&str; 5] = ["url", "events", "secret_env", "format", "workflows"];

/// The `notify` section `value` of a `roscoe.yaml` (`project`: whether it is a project's file): its targets, or the
/// JSON pointer and message of what is wrong.
pub(crate) fn read_targets(project: bool, value: &Value) -> Result<Vec<NotifyTarget>, (String, String)> {
    if project {
        return Err((
            "/notify".into(),
            "`notify` may be set only in the global roscoe.yaml ($CAIRN_HOME/roscoe.yaml), the server's own \
             configuration: a project's file never says where the server connects; move the section to the global \
             file or remove it"
                .into(),
        ));
    }
    let list = value.as_array().ok_or_else(|| {
        let message = "`notify` must be a list of targets: - { url, events?, secret_env?, format?, workflows? }";
        ("/notify".to_owned(), message.to_owned())
    })?;
    list.iter().enumerate().map(|(i, entry)| read_target(&format!("/notify/{i}"), entry)).collect()
}

fn read_target(pointer: &str, value: &Value) -> Result<NotifyTarget, (String, String)> {
    let at = |key: &str| format!("{pointer}/{key}");
    let map =
        value.as_object().ok_or_else(|| (pointer.to_owned(), "a notify target must be a mapping with `url`".into()))?;
    if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err((at(key), format!("unknown key `{key}`; a notify target accepts {}", KEYS.join(", "))));
    }
    let url = map.get("url").and_then(Value::as_str).map(str::trim).unwrap_or_default();
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok || reqwest::Url::parse(url).map_or(true, |u| u.host_str().is_none()) {
        let message = format!("a notify target needs `url`, an http:// or https:// address with a host (got '{url}')");
        return Err((at("url"), message));
    }
    let events = match map.get("events") {
        None | Some(Value::Null) => NotifyEvent::ALL.to_vec(),
        Some(Value::Array(names)) if !names.is_empty() => names
            .iter()
            .map(|name| name.as_str().and_then(NotifyEvent::from_name))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| (at("events"), events_message()))?,
        Some(_) => return Err((at("events"), events_message())),
    };
    let secret_env = match map.get("secret_env") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_str()
                .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .ok_or_else(|| {
                    (at("secret_env"), "`secret_env` must name an environment variable (letters, digits, _)".into())
                })?
                .to_owned(),
        ),
    };
    let format = match map.get("format").map(|v| v.as_str()) {
        None | Some(Some("json")) => Format::Json,
        Some(Some("slack")) => Format::Slack,
        Some(_) => return Err((at("format"), "`format` must be json or slack".into())),
    };
    let workflows = match map.get("workflows") {
        None | Some(Value::Null) => None,
        Some(Value::Array(ids)) if ids.iter().all(|id| id.as_str().is_some_and(|s| !s.is_empty())) => {
            Some(ids.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        }
        Some(_) => return Err((at("workflows"), "`workflows` must be a list of workflow ids".into())),
    };
    Ok(NotifyTarget { url: url.to_owned(), events, secret_env, format, workflows })
}

fn events_message() -> String {
    let names: Vec<&str> = NotifyEvent::ALL.iter().map(|e| e.as_str()).collect();
    format!("`events` must be a non-empty list of {}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(value: Value) -> Result<Vec<NotifyTarget>, (String, String)> {
        read_targets(false, &value)
    }

    #[test]
    fn a_target_takes_defaults_and_filters_by_event_and_workflow() {
        let targets = check(json!([
            { "url": "https://hooks.example.com/roscoe" },
            { "url": "http://127.0.0.1:9/x", "events": ["run.failed"], "secret_env": "HOOK_SECRET", "format": "slack",
              "workflows": ["release"] },
        ]))
        .unwrap();
        assert_eq!(targets[0].events, NotifyEvent::ALL, "every event by default");
        assert_eq!((targets[0].format, targets[0].secret_env.as_deref()), (Format::Json, None));
        assert!(targets[0].wants(NotifyEvent::Completed, "anything"));
        assert_eq!((targets[1].format, targets[1].secret_env.as_deref()), (Format::Slack, Some("HOOK_SECRET")));
        assert!(targets[1].wants(NotifyEvent::Failed, "release"));
        assert!(!targets[1].wants(NotifyEvent::Failed, "other"));
        assert!(!targets[1].wants(NotifyEvent::Completed, "release"));
    }

    #[test]
    fn wrong_entries_name_the_key_and_a_projects_section_is_refused() {
        let error = |value: Value| check(value).unwrap_err();
        assert_eq!(error(json!({ "url": "x" })).0, "/notify");
        assert_eq!(error(json!([{ "url": "ftp://h/x" }])).0, "/notify/0/url");
        assert_eq!(error(json!([{ "url": "https://" }])).0, "/notify/0/url");
        assert!(error(json!([{}])).1.contains("needs `url`"));
        let (at, message) = error(json!([{ "url": "https://h", "events": ["run.started"] }]));
        assert!(at == "/notify/0/events" && message.contains("run.paused_for_human"), "{message}");
        assert_eq!(error(json!([{ "url": "https://h", "events": [] }])).0, "/notify/0/events");
        assert_eq!(error(json!([{ "url": "https://h", "secret_env": "A B" }])).0, "/notify/0/secret_env");
        assert_eq!(error(json!([{ "url": "https://h", "format": "xml" }])).0, "/notify/0/format");
        assert_eq!(error(json!([{ "url": "https://h", "workflows": "release" }])).0, "/notify/0/workflows");
        let (at, message) = error(json!([{ "url": "https://h", "secret": "x" }]));
        assert!(at == "/notify/0/secret" && message.contains("unknown key `secret`"), "{message}");
        let (at, message) = read_targets(true, &json!([{ "url": "https://h" }])).unwrap_err();
        assert!(at == "/notify" && message.contains("only in the global roscoe.yaml"), "{message}");
    }
}
