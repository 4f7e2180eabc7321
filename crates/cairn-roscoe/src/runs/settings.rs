//! What the runs layer reads from `roscoe.yaml` (§2.2): prices (`pricing`, over the built-in ones of `prices.rs`),
//! which provider serves which model (`models.providers`), the providers' own settings (`providers`), the limits of
//! model calls (`calls`), the project's default run budget (`budget`), how MCP clients are treated (`hosts`) and,
//! from the global file only, where run notifications go (`notify`, `notify/targets.rs`).
//!
//! The global file (`$CAIRN_HOME/roscoe.yaml`) and the project's are read as `get_workflow_schema` reads them: a
//! top-level section of the project's file replaces the global file's section as a whole (`providers` aside, see
//! below). A section of the wrong
//! shape is an error naming the file, the line and the key, so a call made with it fails with that message instead
//! of guessing. Nothing here is a secret: a provider's key is named (an environment variable, a key file), never
//! written in the file.
//!
//! Only the server's own configuration runs or reaches anything: the project's file is written by whoever may write
//! to the project, so its `providers` entries may only tune a provider the global file (or cairn) defines —
//! `maxTokens`, `stream`, `maxBudgetUsd`, laid over that provider's global settings — and a key that chooses what
//! runs or where calls go with which key ([`SERVER_ONLY_KEYS`]) is an error naming it and the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_yaml::Document;
use serde_json::{Map, Value};

use super::notify::targets::{NotifyTarget, read_targets};
use super::{Runs, prices};
use crate::engine::{Budget, Execution, Price};
use crate::scope::Scope;

/// The kinds of model provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The Anthropic Messages API.
    Anthropic,
    /// Any OpenAI-compatible Chat Completions server.
    OpenAi,
    /// Headless Claude Code (`claude -p`).
    ClaudeCli,
}

impl Kind {
    /// The kind named `name` (`anthropic`, `openai`, `claude-cli`).
    pub(crate) fn from_name(name: &str) -> Option<Kind> {
        match name {
            "anthropic" => Some(Kind::Anthropic),
            "openai" => Some(Kind::OpenAi),
            "claude-cli" => Some(Kind::ClaudeCli),
            _ => None,
        }
    }
}

/// One provider's settings (`providers.<name>`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ProviderSettings {
    /// What it is (`type`, by default its name).
    pub(crate) kind: Kind,
    /// The API's base URL (default: the kind's environment variable, else its public endpoint).
    pub(crate) base_url: Option<String>,
    /// The environment variable that holds the API key (default: `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`).
    pub(crate) api_key_env: Option<String>,
    /// A file whose text (trimmed) is the API key, read at each call.
    pub(crate) api_key_file: Option<PathBuf>,
    /// The largest answer asked for, in tokens (`max_tokens`).
    pub(crate) max_tokens: u32,
    /// Whether the Anthropic API answers as a stream of events.
    pub(crate) stream: bool,
    /// The `claude` command (default: `claude`, found on `PATH`).
    pub(crate) command: Option<String>,
    /// Extra arguments for `claude -p`.
    pub(crate) args: Vec<String>,
    /// `--max-budget-usd` of each `claude -p` call: the most one call may spend, and so its worst case.
    pub(crate) max_budget_usd: Option<f64>,
}

/// The provider keys read only from the global file: what runs (`command`, `args`), where calls go (`baseUrl`, and
/// `type`, which picks the endpoint and the key a provider is called with) and with which key (`apiKeyEnv`,
/// `apiKeyFile`).
const SERVER_ONLY_KEYS: [&str; 6] = ["type", "baseUrl", "apiKeyEnv", "apiKeyFile", "command", "args"];

/// The provider keys a project's file may set, over the provider's global settings.
const PROJECT_KEYS: [&str; 3] = ["maxTokens", "stream", "maxBudgetUsd"];

/// The default `max_tokens` of an API call.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8192;

impl ProviderSettings {
    /// A provider of `kind` with every default.
    pub(crate) fn of(kind: Kind) -> ProviderSettings {
        ProviderSettings {
            kind,
            base_url: None,
            api_key_env: None,
            api_key_file: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            stream: false,
            command: None,
            args: Vec::new(),
            max_budget_usd: None,
        }
    }
}

/// The limits of model calls (`calls`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CallLimits {
    /// At most this many calls of one run at once.
    pub(crate) per_run: usize,
    /// At most this many calls of the whole server at once (read from the global file when the server starts).
    pub(crate) per_server: usize,
    /// One request's time limit, in milliseconds.
    pub(crate) timeout_ms: u64,
    /// Retries of a request refused with 429, 529 or 5xx, or that could not connect.
    pub(crate) retries: u32,
    /// The first wait before a retry (doubled each time, with jitter), in milliseconds.
    pub(crate) backoff_ms: u64,
    /// The longest wait before a retry, `Retry-After` included, in milliseconds.
    pub(crate) max_backoff_ms: u64,
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits { per_run: 32, per_server: 64, timeout_ms: 600_000, retries: 4, backoff_ms: 1_000, max_backoff_ms: 60_000 }
    }
}

/// How runs started by one MCP client are treated (`hosts.<client name>`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct HostSettings {
    /// Whether it can run parallel subagents.
    pub(crate) subagents: Option<bool>,
    /// `subscription` or `metered`.
    pub(crate) billing: Option<String>,
    /// Who runs the AI steps of the runs it starts.
    pub(crate) execution: Option<Execution>,
}

/// Everything the runs layer reads from `roscoe.yaml`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settings {
    /// USD per million tokens, by model id: the built-in prices with the file's over them.
    pub(crate) pricing: BTreeMap<String, Price>,
    /// The file whose `pricing` section is over the built-in prices, if one has it.
    pub(crate) pricing_from: Option<String>,
    /// Model id (or prefix ending in `*`) → provider name, in file order.
    pub(crate) routes: Vec<(String, String)>,
    /// Providers by name: the three built-in ones (`anthropic`, `openai`, `claude-cli`) and the file's.
    pub(crate) providers: BTreeMap<String, ProviderSettings>,
    /// Call limits.
    pub(crate) calls: CallLimits,
    /// The default budget of runs started in this scope.
    pub(crate) budget: Option<Budget>,
    /// MCP clients by name (compared without regard to case).
    pub(crate) hosts: BTreeMap<String, HostSettings>,
    /// Where run notifications go (`notify`, the global file's only).
    pub(crate) notify: Vec<NotifyTarget>,
}

/// One `roscoe.yaml` as read: where it is, its document and whether it is a project's.
struct File {
    path: String,
    doc: Document,
    project: bool,
}

impl File {
    fn fail(&self, pointer: &str, message: String) -> String {
        match self.doc.position(pointer) {
            Some((line, column)) => format!("{}: line {line}, column {column}: {message}", self.path),
            None => format!("{}: {message}", self.path),
        }
    }
}

impl Settings {
    /// The settings of a scope whose project root is `project` (none in the global namespace), under `home`.
    pub(crate) fn read(home: &Path, project: Option<&Path>) -> Result<Settings, String> {
        let global = read_text(&home.join("roscoe.yaml"))?;
        let project = match project {
            Some(root) => read_text(&root.join("roscoe.yaml"))?,
            None => None,
        };
        Settings::from_texts(global.as_ref(), project.as_ref())
    }

    /// The settings of the global file and the project's (path, text): a project's section replaces the global's,
    /// but its providers only tune the global ones.
    pub(crate) fn from_texts(global: Option<&(String, String)>, project: Option<&(String, String)>) -> Result<Settings, String> {
        let mut read = Vec::new();
        for (file, is_project) in [(global, false), (project, true)] {
            let Some((path, text)) = file else { continue };
            let doc = cairn_yaml::parse(text).map_err(|e| format!("{path}: not valid YAML: {e}"))?;
            match &doc.value {
                Value::Object(_) | Value::Null => read.push(File { path: path.clone(), doc, project: is_project }),
                _ => return Err(format!("{path}: the file must be a mapping of sections")),
            }
        }
        // The last file that has a section gives it.
        let section = |pointer: &str| {
            read.iter().rev().find_map(|f| f.doc.value.pointer(pointer).filter(|v| !v.is_null()).map(|v| (f, v)))
        };
        let mut settings = Settings {
            pricing: prices::builtin(),
            pricing_from: None,
            routes: Vec::new(),
            providers: ["anthropic", "openai", "claude-cli"]
                .into_iter()
                .map(|name| (name.to_owned(), ProviderSettings::of(Kind::from_name(name).expect("a built-in kind"))))
                .collect(),
            calls: CallLimits::default(),
            budget: None,
            hosts: BTreeMap::new(),
            notify: Vec::new(),
        };
        if let Some((file, value)) = section("/pricing") {
            settings.pricing_from = Some(file.path.clone());
            for (model, price) in object(file, "/pricing", value)? {
                settings.pricing.insert(model.clone(), read_price(file, &format!("/pricing/{}", escape(model)), price)?);
            }
        }
        let models = section("/models").and_then(|(file, models)| models.get("providers").map(|p| (file, p)));
        if let Some((file, value)) = models.filter(|(_, p)| !p.is_null()) {
            for (model, provider) in object(file, "/models/providers", value)? {
                let pointer = format!("/models/providers/{}", escape(model));
                let name = provider.as_str().ok_or_else(|| file.fail(&pointer, "must be a provider name".into()))?;
                settings.routes.push((model.clone(), name.to_owned()));
            }
        }
        for file in &read {
            let Some(value) = file.doc.value.pointer("/providers").filter(|v| !v.is_null()) else { continue };
            let entries = object(file, "/providers", value)?;
            if file.project {
                server_only(file, entries)?;
            }
            for (name, entry) in entries {
                let provider = match (file.project, settings.providers.get(name)) {
                    (false, _) => read_provider(file, name, entry)?,
                    (true, Some(configured)) => tune_provider(file, name, entry, configured.clone())?,
                    (true, None) => return Err(file.fail(
                        &format!("/providers/{}", escape(name)),
                        format!(
                            "provider '{name}' is neither built in (anthropic, openai, claude-cli) nor in the global \
                             roscoe.yaml ($CAIRN_HOME/roscoe.yaml); a project's roscoe.yaml may only tune a provider \
                             configured there ({})",
                            PROJECT_KEYS.join(", ")
                        ),
                    )),
                };
                settings.providers.insert(name.clone(), provider);
            }
        }
        for (model, name) in &settings.routes {
            if !settings.providers.contains_key(name) {
                let (file, _) = models.expect("routes come from a file");
                return Err(file.fail(
                    &format!("/models/providers/{}", escape(model)),
                    format!("provider '{name}' is neither built in (anthropic, openai, claude-cli) nor in `providers`"),
                ));
            }
        }
        if let Some((file, value)) = section("/calls") {
            settings.calls = read_calls(file, value)?;
        }
        if let Some((file, value)) = section("/budget") {
            settings.budget = Some(read_budget(value).map_err(|m| file.fail("/budget", m))?);
        }
        if let Some((file, value)) = section("/hosts") {
            for (client, entry) in object(file, "/hosts", value)? {
                let host = read_host(file, &format!("/hosts/{}", escape(client)), entry)?;
                settings.hosts.insert(client.to_lowercase(), host);
            }
        }
        if let Some((file, value)) = section("/notify") {
            settings.notify = read_targets(file.project, value).map_err(|(at, message)| file.fail(&at, message))?;
        }
        Ok(settings)
    }

    /// The `hosts` entry of MCP client `client`, if any.
    pub(crate) fn host(&self, client: &str) -> Option<&HostSettings> {
        self.hosts.get(&client.to_lowercase())
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn object<'v>(file: &File, pointer: &str, value: &'v Value) -> Result<&'v Map<String, Value>, String> {
    value.as_object().ok_or_else(|| file.fail(pointer, format!("`{}` must be a mapping", &pointer[1..].replace('/', "."))))
}

/// Checks that `map` (at `pointer`) has only `allowed` keys.
fn only(file: &File, pointer: &str, map: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(file.fail(
            &format!("{pointer}/{}", escape(key)),
            format!("unknown key `{key}`; this section accepts {}", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

fn number(file: &File, pointer: &str, value: &Value) -> Result<f64, String> {
    value.as_f64().filter(|n| *n >= 0.0).ok_or_else(|| file.fail(pointer, "must be a number, 0 or more".into()))
}

fn whole(file: &File, pointer: &str, value: &Value, least: u64) -> Result<u64, String> {
    value.as_u64().filter(|n| *n >= least).ok_or_else(|| file.fail(pointer, format!("must be a whole number, {least} or more")))
}

fn text(file: &File, pointer: &str, value: &Value) -> Result<String, String> {
    value.as_str().filter(|s| !s.trim().is_empty()).map(str::to_owned).ok_or_else(|| file.fail(pointer, "must be a non-empty string".into()))
}

fn read_price(file: &File, pointer: &str, value: &Value) -> Result<Price, String> {
    let map = object(file, pointer, value)?;
    only(file, pointer, map, &["input", "output", "cacheRead", "cacheWrite"])?;
    let get = |key: &str| map.get(key).map(|v| number(file, &format!("{pointer}/{key}"), v)).transpose();
    let input = get("input")?.ok_or_else(|| file.fail(pointer, "a price needs `input` and `output` (USD per million tokens)".into()))?;
    let output = get("output")?.ok_or_else(|| file.fail(pointer, "a price needs `input` and `output` (USD per million tokens)".into()))?;
    Ok(Price { input, output, cache_read: get("cacheRead")?, cache_write: get("cacheWrite")? })
}

fn read_provider(file: &File, name: &str, value: &Value) -> Result<ProviderSettings, String> {
    let pointer = format!("/providers/{}", escape(name));
    let map = object(file, &pointer, value)?;
    let keys = ["type", "baseUrl", "apiKeyEnv", "apiKeyFile", "maxTokens", "stream", "command", "args", "maxBudgetUsd"];
    only(file, &pointer, map, &keys)?;
    let at = |key: &str| format!("{pointer}/{key}");
    let kind = match map.get("type") {
        Some(kind) => kind.as_str().and_then(Kind::from_name),
        None => Kind::from_name(name),
    }
    .ok_or_else(|| file.fail(&at("type"), format!("provider '{name}' needs `type`: anthropic, openai or claude-cli")))?;
    let mut provider = ProviderSettings::of(kind);
    if let Some(v) = map.get("baseUrl") {
        let url = text(file, &at("baseUrl"), v)?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(file.fail(&at("baseUrl"), format!("'{url}' must start with http:// or https://")));
        }
        provider.base_url = Some(url.trim_end_matches('/').to_owned());
    }
    if let Some(v) = map.get("apiKeyEnv") {
        provider.api_key_env = Some(text(file, &at("apiKeyEnv"), v)?);
    }
    if let Some(v) = map.get("apiKeyFile") {
        provider.api_key_file = Some(PathBuf::from(text(file, &at("apiKeyFile"), v)?));
    }
    if let Some(v) = map.get("maxTokens") {
        provider.max_tokens = u32::try_from(whole(file, &at("maxTokens"), v, 1)?).unwrap_or(u32::MAX);
    }
    if let Some(v) = map.get("stream") {
        provider.stream = v.as_bool().ok_or_else(|| file.fail(&at("stream"), "must be true or false".into()))?;
    }
    if let Some(v) = map.get("command") {
        provider.command = Some(text(file, &at("command"), v)?);
    }
    if let Some(v) = map.get("args") {
        let list = v.as_array().filter(|l| l.iter().all(Value::is_string));
        let list = list.ok_or_else(|| file.fail(&at("args"), "must be a list of strings".into()))?;
        provider.args = list.iter().filter_map(Value::as_str).map(str::to_owned).collect();
    }
    if let Some(v) = map.get("maxBudgetUsd") {
        provider.max_budget_usd = Some(number(file, &at("maxBudgetUsd"), v)?);
    }
    Ok(provider)
}

/// Refuses the [`SERVER_ONLY_KEYS`] in a project's `providers` section, naming every one found.
fn server_only(file: &File, entries: &Map<String, Value>) -> Result<(), String> {
    let mut found = Vec::new();
    for (name, entry) in entries {
        let Some(keys) = entry.as_object() else { continue };
        for key in keys.keys().filter(|k| SERVER_ONLY_KEYS.contains(&k.as_str())) {
            found.push((format!("/providers/{}/{key}", escape(name)), format!("`providers.{name}.{key}`")));
        }
    }
    let Some((first, _)) = found.first() else { return Ok(()) };
    let named: Vec<&str> = found.iter().map(|(_, key)| key.as_str()).collect();
    Err(file.fail(
        first,
        format!(
            "{} may be set only in the global roscoe.yaml ($CAIRN_HOME/roscoe.yaml), the server's own configuration: \
             a project's roscoe.yaml chooses among the providers configured there (models.providers) and sets \
             prices, budgets and limits ({}), never what runs or where calls go with which key ({}); move it to the \
             global file or remove it",
            named.join(", "),
            PROJECT_KEYS.join(", "),
            SERVER_ONLY_KEYS.join(", ")
        ),
    ))
}

/// A project's entry for provider `name`: its [`PROJECT_KEYS`] over `configured`, the provider's global settings.
fn tune_provider(file: &File, name: &str, value: &Value, mut provider: ProviderSettings) -> Result<ProviderSettings, String> {
    let pointer = format!("/providers/{}", escape(name));
    let map = object(file, &pointer, value)?;
    only(file, &pointer, map, &PROJECT_KEYS)?;
    let at = |key: &str| format!("{pointer}/{key}");
    if let Some(v) = map.get("maxTokens") {
        provider.max_tokens = u32::try_from(whole(file, &at("maxTokens"), v, 1)?).unwrap_or(u32::MAX);
    }
    if let Some(v) = map.get("stream") {
        provider.stream = v.as_bool().ok_or_else(|| file.fail(&at("stream"), "must be true or false".into()))?;
    }
    if let Some(v) = map.get("maxBudgetUsd") {
        provider.max_budget_usd = Some(number(file, &at("maxBudgetUsd"), v)?);
    }
    Ok(provider)
}

/// The path (as shown) and text of the `roscoe.yaml` at `path`, `None` when there is none.
fn read_text(path: &Path) -> Result<Option<(String, String)>, String> {
    let shown = path.display().to_string();
    match crate::files::read_regular(path, crate::sources::MAX_FILE_BYTES as u64) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| format!("{shown}: is not UTF-8 text"))?;
            Ok(Some((shown, text)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{shown}: cannot be read ({e})")),
    }
}

fn read_calls(file: &File, value: &Value) -> Result<CallLimits, String> {
    let map = object(file, "/calls", value)?;
    let keys = ["concurrencyPerRun", "concurrencyPerServer", "timeoutMs", "retries", "backoffMs", "maxBackoffMs"];
    only(file, "/calls", map, &keys)?;
    let mut calls = CallLimits::default();
    let get = |key: &str, least: u64| map.get(key).map(|v| whole(file, &format!("/calls/{key}"), v, least)).transpose();
    if let Some(n) = get("concurrencyPerRun", 1)? {
        calls.per_run = n as usize;
    }
    if let Some(n) = get("concurrencyPerServer", 1)? {
        calls.per_server = n as usize;
    }
    if let Some(n) = get("timeoutMs", 1)? {
        calls.timeout_ms = n;
    }
    if let Some(n) = get("retries", 0)? {
        calls.retries = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(n) = get("backoffMs", 0)? {
        calls.backoff_ms = n;
    }
    if let Some(n) = get("maxBackoffMs", 0)? {
        calls.max_backoff_ms = n;
    }
    Ok(calls)
}

/// A budget `{ usd?, tokens? }` (from `roscoe.yaml`, a workflow or a start's arguments); the message says what is
/// wrong with it.
pub(crate) fn read_budget(value: &Value) -> Result<Budget, String> {
    let map = value.as_object().ok_or("`budget` must be a mapping: { usd?, tokens? }")?;
    if let Some(key) = map.keys().find(|k| !["usd", "tokens"].contains(&k.as_str())) {
        return Err(format!("unknown key `budget.{key}`; a budget has usd and tokens"));
    }
    let usd = match map.get("usd") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_f64().filter(|n| *n >= 0.0).ok_or("`budget.usd` must be a number of USD, 0 or more")?),
    };
    let tokens = match map.get("tokens") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().filter(|n| *n >= 0).ok_or("`budget.tokens` must be a whole number, 0 or more")?),
    };
    Ok(Budget { usd, tokens })
}

fn read_host(file: &File, pointer: &str, value: &Value) -> Result<HostSettings, String> {
    let map = object(file, pointer, value)?;
    only(file, pointer, map, &["subagents", "billing", "execution"])?;
    let at = |key: &str| format!("{pointer}/{key}");
    let mut host = HostSettings::default();
    if let Some(v) = map.get("subagents") {
        host.subagents = Some(v.as_bool().ok_or_else(|| file.fail(&at("subagents"), "must be true or false".into()))?);
    }
    if let Some(v) = map.get("billing") {
        let billing = v.as_str().filter(|b| ["subscription", "metered"].contains(b));
        let billing = billing.ok_or_else(|| file.fail(&at("billing"), "must be subscription or metered".into()))?;
        host.billing = Some(billing.to_owned());
    }
    if let Some(v) = map.get("execution") {
        let execution = v.as_str().and_then(Execution::from_name);
        host.execution = Some(execution.ok_or_else(|| file.fail(&at("execution"), "must be host or server".into()))?);
    }
    Ok(host)
}

/// The prices runs of a scope rooted at `project` are charged by, under `home`, and where they come from, for people.
/// A `roscoe.yaml` that cannot be used starts no run, so it leaves no prices, and says why.
fn prices_in_force(home: &Path, project: Option<&Path>) -> (BTreeMap<String, Price>, String) {
    match Settings::read(home, project) {
        Ok(read) => {
            let from = match read.pricing_from {
                Some(file) => format!("the built-in prices, then {file}"),
                None => "the built-in prices".to_owned(),
            };
            (read.pricing, from)
        }
        Err(error) => (BTreeMap::new(), format!("nowhere: roscoe.yaml cannot be used ({error})")),
    }
}

impl Runs {
    /// The prices runs in `scope` are charged by — the built-in Claude prices with `roscoe.yaml`'s over them, the
    /// project's `pricing` section replacing the global one's — and where they come from (the settings page).
    pub fn prices(&self, scope: &Scope) -> (BTreeMap<String, Price>, String) {
        prices_in_force(self.home(), scope.root())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of `files` (path, text): the global file, then the project's.
    fn settings(files: &[(&str, &str)]) -> Result<Settings, String> {
        let files: Vec<(String, String)> = files.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect();
        Settings::from_texts(files.first(), files.get(1))
    }

    #[test]
    fn without_a_file_the_built_in_providers_limits_and_prices_apply() {
        let s = settings(&[]).unwrap();
        assert_eq!(s.providers.keys().collect::<Vec<_>>(), ["anthropic", "claude-cli", "openai"]);
        assert_eq!(s.calls, CallLimits::default());
        assert!(s.pricing.contains_key("claude-sonnet-4-5"), "built-in prices");
        assert!(s.routes.is_empty() && s.budget.is_none());
    }

    #[test]
    fn every_section_is_read_and_the_projects_section_replaces_the_globals() {
        let global = "pricing:\n  local-model: { input: 1, output: 2 }\ncalls: { retries: 1, concurrencyPerRun: 2 }\n\
                      budget: { usd: 9 }\nproviders:\n  cli: { type: claude-cli, maxBudgetUsd: 0.5, args: [--verbose] }\n  \
                      local: { type: openai, baseUrl: \"http://127.0.0.1:1/v1/\" }\n";
        let project = "models:\n  providers: { \"claude-*\": cli, llama3: local }\nproviders:\n  cli: { maxBudgetUsd: 0.25 }\n  \
                       anthropic: { maxTokens: 100, stream: true }\ncalls: { timeoutMs: 5 }\nhosts:\n  My-Client: { execution: server, \
                       subagents: false }\n";
        let s = settings(&[("g/roscoe.yaml", global), ("p/roscoe.yaml", project)]).unwrap();
        assert_eq!(s.routes, [("claude-*".to_owned(), "cli".to_owned()), ("llama3".to_owned(), "local".to_owned())]);
        assert_eq!(s.providers["cli"].kind, Kind::ClaudeCli);
        assert_eq!(s.providers["cli"].max_budget_usd, Some(0.25), "the project tunes the global provider");
        assert_eq!(s.providers["cli"].args, ["--verbose"], "and keeps what the global file says");
        assert_eq!(s.providers["local"].base_url.as_deref(), Some("http://127.0.0.1:1/v1"), "untouched global provider");
        assert_eq!((s.providers["anthropic"].max_tokens, s.providers["anthropic"].stream), (100, true));
        assert_eq!(s.calls, CallLimits { timeout_ms: 5, ..CallLimits::default() }, "the project's calls replace the global's");
        assert_eq!(s.budget, Some(Budget { usd: Some(9.0), tokens: None }), "the global budget stays");
        assert_eq!(s.pricing["local-model"], Price { input: 1.0, output: 2.0, cache_read: None, cache_write: None });
        assert_eq!(s.host("my-client").and_then(|h| h.execution), Some(Execution::Server));
    }

    #[test]
    fn a_projects_file_may_not_say_what_runs_or_where_calls_go() {
        for key in SERVER_ONLY_KEYS {
            let project = format!("providers:\n  anthropic:\n    maxTokens: 10\n    {key}: x\n");
            let error = settings(&[("g.yaml", ""), ("p/roscoe.yaml", &project)]).unwrap_err();
            assert!(error.starts_with("p/roscoe.yaml: line 4"), "{error}");
            assert!(error.contains(&format!("`providers.anthropic.{key}` may be set only in the global roscoe.yaml")), "{error}");
            // The same key in the global file is read (or refused for its value, never for where it is).
            let global = settings(&[("g.yaml", &project)]);
            assert!(global.as_ref().is_ok() || !global.as_ref().unwrap_err().contains("only in the global"), "{global:?}");
        }
        let both = "providers:\n  a: { type: openai, baseUrl: \"http://x\", apiKeyFile: /k }\n";
        let error = settings(&[("g.yaml", ""), ("p.yaml", both)]).unwrap_err();
        assert!(error.contains("`providers.a.type`, `providers.a.baseUrl`, `providers.a.apiKeyFile` may"), "{error}");
        let error = settings(&[("g.yaml", ""), ("p.yaml", "providers:\n  mine: { maxTokens: 5 }\n")]).unwrap_err();
        assert!(error.contains("provider 'mine' is neither built in") && error.contains("only tune"), "{error}");
        let global = "providers:\n  mine: { type: openai, baseUrl: \"http://h/v1\" }\n";
        let s = settings(&[("g.yaml", global), ("p.yaml", "providers:\n  mine: { maxTokens: 5 }\n")]).unwrap();
        assert_eq!((s.providers["mine"].max_tokens, s.providers["mine"].base_url.as_deref()), (5, Some("http://h/v1")));
    }

    #[test]
    fn notify_targets_come_from_the_global_file_only() {
        let targets = "notify:\n  - url: https://hooks.example.com/roscoe\n";
        assert_eq!(settings(&[("g.yaml", targets)]).unwrap().notify[0].url, "https://hooks.example.com/roscoe");
        let error = settings(&[("g.yaml", targets), ("p/roscoe.yaml", targets)]).unwrap_err();
        assert!(error.starts_with("p/roscoe.yaml: line 2") && error.contains("`notify` may be set only in the global"), "{error}");
    }

    #[test]
    fn wrong_shapes_are_errors_naming_file_line_and_key() {
        let error = settings(&[("r.yaml", "providers:\n  x: { baseUrl: \"http://h\" }\n")]).unwrap_err();
        assert!(error.starts_with("r.yaml: line 2") && error.contains("needs `type`"), "{error}");
        let error = settings(&[("r.yaml", "calls:\n  retires: 3\n")]).unwrap_err();
        assert!(error.contains("unknown key `retires`"), "{error}");
        let error = settings(&[("r.yaml", "models:\n  providers: { m: nowhere }\n")]).unwrap_err();
        assert!(error.contains("provider 'nowhere'"), "{error}");
        let error = settings(&[("r.yaml", "pricing:\n  m: { input: -1, output: 1 }\n")]).unwrap_err();
        assert!(error.contains("line 2") && error.contains("0 or more"), "{error}");
        assert!(read_budget(&serde_json::json!({ "usd": "lots" })).unwrap_err().contains("budget.usd"));
    }

    #[test]
    fn the_prices_in_force_are_the_built_in_ones_with_the_files_over_them() {
        let home = tempfile::tempdir().unwrap();
        let (prices, from) = prices_in_force(home.path(), None);
        assert_eq!(from, "the built-in prices");
        assert_eq!(prices["claude-haiku-4-5"].input, 1.0, "a built-in price with no roscoe.yaml");
        let file = home.path().join("roscoe.yaml");
        std::fs::write(&file, "pricing:\n  claude-haiku-4-5: { input: 3, output: 15 }\n").unwrap();
        let (prices, from) = prices_in_force(home.path(), None);
        assert_eq!(from, format!("the built-in prices, then {}", file.display()));
        assert_eq!(prices["claude-haiku-4-5"].input, 3.0, "the file's entry over the built-in one");
        assert_eq!(prices["claude-sonnet-4-5"].input, 3.0, "the other built-in prices stay");
        std::fs::write(&file, "pricing:\n  m: { input: -1, output: 1 }\n").unwrap();
        let (prices, from) = prices_in_force(home.path(), None);
        assert!(prices.is_empty() && from.starts_with("nowhere"), "{from}");
        // A project's file naming what only the global one may: the settings page says so where prices come from.
        std::fs::write(&file, "").unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("roscoe.yaml"), "providers:\n  claude-cli: { command: ./tool.sh }\n").unwrap();
        let (prices, from) = prices_in_force(home.path(), Some(project.path()));
        assert!(prices.is_empty(), "{from}");
        assert!(from.contains("`providers.claude-cli.command` may be set only in the global roscoe.yaml"), "{from}");
    }
}
