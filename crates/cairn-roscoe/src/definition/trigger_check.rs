//! Reads a workflow's `triggers:` from a schema-valid document and checks each entry (the schema stage:
//! `invalid_config`).
//!
//! The schema gives the keys and their types; here each entry is checked for what the schema cannot say well: one
//! kind per entry, the cron text, a known IANA time zone, an interval of at least a second, an `input` the
//! workflow's `inputs` accept, and a webhook secret named `ROSCOE_HOOK_*` whose input templates parse and read only
//! `body`.

use jiff::tz::TimeZone;
use serde_json::{Map, Value};

use super::cron::Cron;
use super::diagnostic::{Code, Diagnostic};
use super::inputs::validate_inputs;
use super::model::Workflow;
use super::template::Template;
use super::trigger::{Trigger, WEBHOOK_SECRET_PREFIX, interval_ms, is_webhook_secret_name};

/// Reads `triggers:` of a schema-valid document for the workflow built from it: every trigger, or every problem.
pub(crate) fn read(value: &Value, workflow: &Workflow) -> Result<Vec<Trigger>, Vec<Diagnostic>> {
    let entries = value.get("triggers").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut triggers = Vec::new();
    let mut found = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("/triggers/{i}");
        let mut problem = |pointer: String, message: String| {
            found.push(Diagnostic::new(Code::InvalidConfig, None, pointer, format!("triggers[{i}]: {message}")));
        };
        match read_one(entry, workflow, &at, &mut problem) {
            Some(trigger) => triggers.push(trigger),
            None => continue,
        }
    }
    if found.is_empty() { Ok(triggers) } else { Err(found) }
}

type Problem<'a> = dyn FnMut(String, String) + 'a;

fn read_one(entry: &Value, workflow: &Workflow, at: &str, problem: &mut Problem<'_>) -> Option<Trigger> {
    let kinds: Vec<&str> = ["schedule", "every", "webhook"].into_iter().filter(|k| entry.get(k).is_some()).collect();
    if kinds.len() != 1 {
        let what = if kinds.is_empty() { "none".to_owned() } else { kinds.join(" and ") };
        problem(
            at.to_owned(),
            format!(
                "a trigger has exactly one of `schedule`, `every` or `webhook` (found {what}); write one entry per \
                 trigger"
            ),
        );
        return None;
    }
    let kind = kinds[0];
    if kind != "schedule" && entry.get("timezone").is_some() {
        problem(format!("{at}/timezone"), "`timezone` belongs to a `schedule`; remove it".to_owned());
    }
    if kind == "webhook" && entry.get("input").is_some() {
        let fix = "a webhook's input goes under `webhook:` (webhook: { secret_env, input })";
        problem(format!("{at}/input"), fix.into());
    }
    match kind {
        "schedule" => {
            let text = entry["schedule"].as_str().unwrap_or_default();
            let cron = Cron::parse(text).map_err(|e| problem(format!("{at}/schedule"), e)).ok();
            let timezone = entry.get("timezone").and_then(Value::as_str).map(str::to_owned);
            if let Some(name) = &timezone
                && TimeZone::get(name).is_err()
            {
                problem(
                    format!("{at}/timezone"),
                    format!(
                        "`{name}` is not a known IANA time zone; write a name such as Europe/Paris, \
                         America/New_York or UTC"
                    ),
                );
                return None;
            }
            let input = timed_input(entry, workflow, at, problem)?;
            Some(Trigger::Schedule { cron: cron?, timezone, input })
        }
        "every" => {
            let every = entry["every"].as_str().unwrap_or_default().to_owned();
            let every_ms = match interval_ms(&every) {
                Ok(ms) => Some(ms),
                Err(e) => {
                    problem(format!("{at}/every"), e);
                    None
                }
            };
            let input = timed_input(entry, workflow, at, problem)?;
            Some(Trigger::Every { every, every_ms: every_ms?, input })
        }
        _ => {
            let hook = &entry["webhook"];
            let secret_env = hook["secret_env"].as_str().unwrap_or_default().to_owned();
            let mut ok = true;
            if !is_webhook_secret_name(&secret_env) {
                problem(
                    format!("{at}/webhook/secret_env"),
                    format!(
                        "secret_env `{secret_env}` must be an environment variable named {WEBHOOK_SECRET_PREFIX}<NAME> \
                         (capitals, digits, _), e.g. {WEBHOOK_SECRET_PREFIX}RELEASE: a project file may only name \
                         variables set aside for webhook secrets, never another of the server's secrets"
                    ),
                );
                ok = false;
            }
            let input = hook.get("input").and_then(Value::as_object).cloned();
            for (name, template) in input.iter().flatten() {
                if let Some(declared) = &workflow.inputs
                    && !declared.iter().any(|d| &d.name == name)
                {
                    let names: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
                    problem(
                        format!("{at}/webhook/input/{name}"),
                        format!("input '{name}' is not declared; use one of: {}", names.join(", ")),
                    );
                    ok = false;
                }
                if let Err(e) = body_templates(template) {
                    problem(format!("{at}/webhook/input/{name}"), format!("input '{name}': {e}"));
                    ok = false;
                }
            }
            ok.then_some(Trigger::Webhook { secret_env, input })
        }
    }
}

/// Checks every text inside a webhook input value: each must parse as a template and read only `body`, the
/// request's JSON (a run's start has nothing else to give it).
fn body_templates(value: &Value) -> Result<(), String> {
    match value {
        Value::String(text) => {
            let template = Template::parse(text)
                .map_err(|e| format!("the template does not parse: {e}; write {{{{ body.field }}}}"))?;
            match template.uses().into_iter().find(|u| u.reference.root != "body") {
                Some(used) => Err(format!(
                    "'{}' is not known here: a webhook's input templates read only `body`, the request's JSON; \
                     write {{{{ body.field }}}}",
                    used.reference.root
                )),
                None => Ok(()),
            }
        }
        Value::Array(items) => items.iter().try_for_each(body_templates),
        Value::Object(map) => map.values().try_for_each(body_templates),
        _ => Ok(()),
    }
}

/// A schedule's or interval's `input`, checked against the workflow's `inputs` as a run's start would check it.
fn timed_input(
    entry: &Value,
    workflow: &Workflow,
    at: &str,
    problem: &mut Problem<'_>,
) -> Option<Option<Map<String, Value>>> {
    let input = entry.get("input").and_then(Value::as_object).cloned();
    let given = input.clone().map(Value::Object);
    match validate_inputs(workflow, given.as_ref()) {
        Ok(_) => Some(input),
        Err(e) => {
            problem(format!("{at}/input"), format!("the input does not fit the workflow's `inputs`: {e}"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::validate::{Options, validate};
    use super::*;

    const BASE: &str = "name: t\ninitial: a\ninputs: { target: { type: string, required: true } }\n\
                        nodes:\n  a: { type: ai_agent, config: { prompt: '{{ input.target }}' } }\n";

    /// The triggers of `BASE` with `triggers` appended, or the messages of every error.
    fn check(triggers: &str) -> Result<Vec<Trigger>, Vec<String>> {
        let v = validate(&format!("{BASE}triggers:\n{triggers}"), &Options::default());
        match v.workflow {
            Some(w) if v.is_valid() => Ok(w.triggers),
            _ => Err(v.diagnostics.into_iter().map(|d| format!("{} {}", d.pointer, d.message)).collect()),
        }
    }

    #[test]
    fn all_three_forms_read() {
        let found = check(
            "  - { schedule: '0 9 * * 1-5', timezone: Europe/Paris, input: { target: main } }\n\
             \x20 - { every: 2s, input: { target: dev } }\n\
             \x20 - webhook: { secret_env: ROSCOE_HOOK_RELEASE, input: { target: '{{ body.ref }}' } }\n",
        )
        .unwrap();
        assert_eq!(found.iter().map(Trigger::kind).collect::<Vec<_>>(), ["schedule", "every", "webhook"]);
        assert_eq!(found[0].expression(), "0 9 * * 1-5");
        assert_eq!(found[1], Trigger::Every {
            every: "2s".into(),
            every_ms: 2000,
            input: Some(serde_json::from_str(r#"{"target":"dev"}"#).unwrap())
        });
        assert_eq!(found[2], Trigger::Webhook {
            secret_env: "ROSCOE_HOOK_RELEASE".into(),
            input: Some(serde_json::from_str(r#"{"target":"{{ body.ref }}"}"#).unwrap())
        });
    }

    #[test]
    fn each_problem_says_how_to_fix_it() {
        let err = |t: &str| check(t).unwrap_err().join("\n");
        assert!(err("  - { schedule: '0 9 * *', input: { target: m } }\n").contains("/triggers/0/schedule"));
        assert!(err("  - { schedule: '0 9 * * *', timezone: Mars/Olympus, input: { target: m } }\n")
            .contains("not a known IANA time zone"));
        assert!(err("  - { every: 500ms, input: { target: m } }\n").contains("shorter than a second"));
        assert!(err("  - { every: 2 weeks, input: { target: m } }\n").contains("not a duration"));
        assert!(err("  - { every: 2s }\n").contains("'target' is required"));
        assert!(err("  - { every: 2s, input: { target: 3 } }\n").contains("must be of type string"));
        assert!(err("  - webhook: { secret_env: ANTHROPIC_API_KEY }\n").contains("ROSCOE_HOOK_<NAME>"));
        assert!(err("  - webhook: { secret_env: ROSCOE_HOOK_X, input: { nope: x } }\n").contains("not declared"));
        assert!(err("  - webhook: { secret_env: ROSCOE_HOOK_X, input: { target: '{{ env.HOME }}' } }\n")
            .contains("'env' is not known here"));
        assert!(err("  - webhook: { secret_env: ROSCOE_HOOK_X, input: { target: ['{{ input.x }}'] } }\n")
            .contains("'input' is not known here"));
        assert!(err("  - webhook: { secret_env: ROSCOE_HOOK_X, input: { target: { a: '{{ body' } } }\n")
            .contains("does not parse"));
        assert!(err("  - { every: 2s, schedule: '* * * * *' }\n").contains("exactly one of"));
        assert!(err("  - { every: 2s, timezone: UTC, input: { target: m } }\n").contains("belongs to a `schedule`"));
        // Unknown keys are the schema's.
        assert!(err("  - { every: 2s, input: { target: m }, jitter: 1s }\n").contains("jitter"));
        assert!(err("  - webhook: { secret_env: ROSCOE_HOOK_X, secret: s }\n").contains("secret"));
    }
}
