//! A run's input from the command line: `--input JSON` (an object) and `-i key=value` pairs, which add to it or
//! override its keys. A value is read as JSON when it is JSON (`-i count=3`, `-i draft=true`, `-i 'tags=["a"]'`)
//! and as text otherwise (`-i topic=cats`); `-i 'name="42"'` makes text of what would be a number.

use serde_json::{Map, Value};

use super::exit::Exit;

/// The input `json` and `pairs` give, `None` when they give nothing; a usage error saying what is malformed.
pub(super) fn run_input(json: Option<&str>, pairs: &[String]) -> Result<Option<Value>, Exit> {
    let mut input = match json {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(Exit::usage("--input must be a JSON object, e.g. --input '{\"topic\": \"cats\"}'")),
            Err(error) => {
                return Err(Exit::usage(format!(
                    "--input is not valid JSON ({error}); pass an object, e.g. --input '{{\"topic\": \"cats\"}}'"
                )));
            }
        },
    };
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=').filter(|(key, _)| !key.is_empty()) else {
            return Err(Exit::usage(format!("-i {pair}: write -i key=value, e.g. -i topic=cats")));
        };
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
        input.insert(key.to_owned(), value);
    }
    Ok((json.is_some() || !pairs.is_empty()).then_some(Value::Object(input)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn pairs_add_to_the_json_input_and_read_their_values_as_json_when_they_are() {
        let pairs = ["count=3".to_owned(), "topic=cats".to_owned(), "name=\"42\"".to_owned(), "on=true".to_owned()];
        let input = run_input(Some(r#"{"topic": "dogs", "keep": 1}"#), &pairs).unwrap();
        assert_eq!(input, Some(json!({ "topic": "cats", "keep": 1, "count": 3, "name": "42", "on": true })));
        assert_eq!(run_input(None, &[]).unwrap(), None);
        assert_eq!(run_input(None, &["a=".to_owned()]).unwrap(), Some(json!({ "a": "" })));
    }

    #[test]
    fn malformed_input_is_a_usage_error_that_shows_the_right_form() {
        for (json, pairs, says) in [
            (Some("[1]"), vec![], "must be a JSON object"),
            (Some("{"), vec![], "is not valid JSON"),
            (None, vec!["novalue".to_owned()], "write -i key=value"),
            (None, vec!["=x".to_owned()], "write -i key=value"),
        ] {
            let error = run_input(json, &pairs).unwrap_err();
            assert_eq!(error.code, 2);
            assert!(error.to_string().contains(says), "{error}");
        }
    }
}
