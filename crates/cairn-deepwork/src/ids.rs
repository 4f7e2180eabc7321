//! Identifiers that become parts of file paths (session ids, agent ids, job names) and their validation.
//!
//! A session id or agent id is used as a directory or file name under `.deepwork/tmp/sessions/`, so anything that could
//! climb out of it or confuse a file system is refused: empty values, `/`, `\`, `..`, NUL and other control characters,
//! and values longer than 200 characters.

use regex::Regex;
use std::sync::LazyLock;

static JOB_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new("^[a-z][a-z0-9_]*$").expect("valid regex"));

/// Checks an id that will be used in a path; the error says which argument and what is allowed.
pub fn check_path_id(argument: &str, value: &str) -> Result<(), String> {
    let bad = value.is_empty()
        || value.len() > 200
        || value.contains(['/', '\\'])
        || value.contains("..")
        || value.chars().any(char::is_control);
    if bad {
        return Err(format!(
            "Invalid {argument} '{}': it must be 1-200 characters without '/', '\\', '..' or control characters.",
            value.escape_debug()
        ));
    }
    Ok(())
}

/// Whether `name` is a valid job name (`^[a-z][a-z0-9_]*$`).
pub fn is_job_name(name: &str) -> bool {
    JOB_NAME.is_match(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_traversal_and_separators() {
        for bad in ["", "..", "a/b", "../x", "a\\b", "a\0b", "x..y", "a\nb"] {
            assert!(check_path_id("session_id", bad).is_err(), "{bad:?}");
        }
        for ok in ["s1", "8f0e-uuid", "CLAUDE.session_01"] {
            assert!(check_path_id("session_id", ok).is_ok(), "{ok}");
        }
        assert!(check_path_id("session_id", &"x".repeat(201)).is_err());
    }

    #[test]
    fn job_names() {
        assert!(is_job_name("deep_plan2"));
        assert!(!is_job_name("Deep") && !is_job_name("1a") && !is_job_name("a-b") && !is_job_name(""));
    }
}
