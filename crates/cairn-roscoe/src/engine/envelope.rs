//! Reading the JSON envelopes hosts return (§7.4): Markdown code fences stripped, the first balanced `{…}` taken,
//! parsed as a JSON object. Judge verdicts (`verdict`, aliases `decision` and `choice`) are matched trimmed and
//! case-insensitively against the allowed choices.

use serde_json::{Map, Value};

use crate::unquoted::unquoted;

/// The instruction appended to a judge prompt.
pub(super) fn judge_instruction(choices: &[String]) -> String {
    format!(
        "Respond with ONLY a JSON object: {{\"reasoning\": \"<short reasoning>\", \"verdict\": \"<one of: {}>\"}}",
        choices.join(" | ")
    )
}

/// The first JSON object in `raw`, ignoring code fences and surrounding prose.
pub(super) fn object(raw: &str) -> Result<Map<String, Value>, String> {
    let start = raw.find('{').ok_or("the response contains no JSON object")?;
    let mut depth = 0usize;
    for (i, b) in unquoted(&raw[start..]) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return match serde_json::from_str::<Value>(&raw[start..=start + i]) {
                        Ok(Value::Object(map)) => Ok(map),
                        Ok(_) => Err("the response is not a JSON object".into()),
                        Err(e) => Err(format!("the JSON object does not parse: {e}")),
                    };
                }
            }
            _ => {}
        }
    }
    Err("the JSON object is never closed".into())
}

/// A judge verdict: the canonical choice and the reasoning, or why the response is invalid.
pub(super) fn verdict(raw: &str, choices: &[String]) -> Result<(String, Option<String>), String> {
    let map = object(raw)?;
    let given = ["verdict", "decision", "choice"]
        .iter()
        .find_map(|k| map.get(*k))
        .ok_or("the JSON object has no \"verdict\"")?;
    let given = given.as_str().ok_or("\"verdict\" must be a string")?.trim();
    let choice = choices
        .iter()
        .find(|c| c.eq_ignore_ascii_case(given))
        .ok_or_else(|| format!("verdict '{given}' is not one of: {}", choices.join(", ")))?;
    let reasoning = map.get("reasoning").and_then(Value::as_str).map(str::to_owned);
    Ok((choice.clone(), reasoning))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choices() -> Vec<String> {
        vec!["approve".into(), "reject".into()]
    }

    #[test]
    fn fenced_and_wrapped_envelopes_are_read() {
        let raw = "Sure.\n```json\n{\"reasoning\": \"a } in text\", \"verdict\": \" Approve \"}\n```";
        assert_eq!(verdict(raw, &choices()), Ok(("approve".into(), Some("a } in text".into()))));
        assert_eq!(verdict("{\"decision\":\"reject\"}", &choices()).unwrap().0, "reject");
    }

    #[test]
    fn invalid_envelopes_say_why() {
        assert!(verdict("no json", &choices()).unwrap_err().contains("no JSON object"));
        assert!(verdict("{\"verdict\": \"maybe\"}", &choices()).unwrap_err().contains("not one of"));
        assert!(verdict("{\"reasoning\": \"x\"}", &choices()).unwrap_err().contains("no \"verdict\""));
        assert!(verdict("{\"verdict\": ", &choices()).unwrap_err().contains("never closed"));
    }
}
