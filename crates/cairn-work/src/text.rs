//! Checking text arguments (§2.1): values are trimmed, lengths count Unicode scalar values after trimming, single-line
//! fields refuse every control character, multi-line fields allow only newline, carriage return and tab. Claimant
//! names compare case-insensitively with inner whitespace collapsed.

use std::sync::LazyLock;

use regex::Regex;

use crate::error::Error;

static REPOSITORY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$").expect("the repository pattern compiles")
});

/// A trimmed one-line value of `min..=max` characters (`field` names it in errors).
pub(crate) fn single_line(field: &str, value: &str, min: usize, max: usize) -> Result<String, Error> {
    let value = value.trim();
    if value.chars().any(char::is_control) {
        return Err(Error::InvalidArgument(format!("{field} must be one line without control characters")));
    }
    length(field, value, min, max)?;
    Ok(value.to_owned())
}

/// A trimmed multi-line value of `min..=max` characters.
pub(crate) fn multi_line(field: &str, value: &str, min: usize, max: usize) -> Result<String, Error> {
    let value = value.trim();
    if value.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
        return Err(Error::InvalidArgument(format!(
            "{field} may not contain control characters other than newline, carriage return and tab"
        )));
    }
    length(field, value, min, max)?;
    Ok(value.to_owned())
}

fn length(field: &str, value: &str, min: usize, max: usize) -> Result<(), Error> {
    let n = value.chars().count();
    if n < min || n > max {
        let range = if min == 0 { format!("at most {max}") } else { format!("{min} to {max}") };
        return Err(Error::InvalidArgument(format!("{field} must be {range} characters; it has {n}")));
    }
    Ok(())
}

/// The comparison key of a claimant name: lower-case, inner whitespace collapsed to one space.
pub(crate) fn name_key(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The most labels an item carries.
pub(crate) const MAX_LABELS: usize = 20;

/// Labels: each trimmed and lower-cased, 1 to 50 of `a-z 0-9 - _ . : /`, duplicates dropped, at most twenty.
pub(crate) fn labels(field: &str, values: &[String]) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = Vec::new();
    for value in values {
        let label = value.trim().to_lowercase();
        let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.' | ':' | '/');
        if label.is_empty() || label.chars().count() > 50 || !label.chars().all(allowed) {
            return Err(Error::InvalidArgument(format!(
                "{field}: '{value}' is not a label (1 to 50 of a-z, 0-9, - _ . : /, e.g. \"backend\" or \"area:auth\")"
            )));
        }
        if !out.contains(&label) {
            out.push(label);
        }
    }
    if out.len() > MAX_LABELS {
        return Err(Error::InvalidArgument(format!("{field}: at most {MAX_LABELS} labels; {} were given", out.len())));
    }
    Ok(out)
}

/// A priority: 0 (most urgent) to 4.
pub(crate) fn priority(value: i64) -> Result<i64, Error> {
    match value {
        0..=4 => Ok(value),
        _ => Err(Error::InvalidArgument(format!("priority must be 0 (most urgent) to 4; it is {value}"))),
    }
}

/// Item ids (`blocked_by`, `parent_id`, …): trimmed, non-empty, duplicates dropped, at most 50.
pub(crate) fn item_ids(field: &str, values: &[String]) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = Vec::new();
    for value in values {
        let id = single_line(field, value, 1, 100)?;
        if !out.contains(&id) {
            out.push(id);
        }
    }
    if out.len() > 50 {
        return Err(Error::InvalidArgument(format!("{field}: at most 50 items; {} were given", out.len())));
    }
    Ok(out)
}

/// Search words: the query split at whitespace, lower-cased; at most ten of at most 50 characters each.
pub(crate) fn words(field: &str, query: &str) -> Result<Vec<String>, Error> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if words.len() > 10 || words.iter().any(|w| w.chars().count() > 50 || w.chars().any(char::is_control)) {
        return Err(Error::InvalidArgument(format!("{field}: at most ten words of at most 50 characters each")));
    }
    Ok(words)
}

/// An absolute `http`/`https` URL of 1 to 2000 characters.
pub(crate) fn url(field: &str, value: &str) -> Result<String, Error> {
    let value = single_line(field, value, 1, 2000)?;
    let rest = value.strip_prefix("https://").or_else(|| value.strip_prefix("http://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') && !value.contains(char::is_whitespace) => Ok(value),
        _ => Err(Error::InvalidArgument(format!("{field} '{value}' is not an absolute http or https URL"))),
    }
}

/// A list of URLs, checked, with duplicates removed (first occurrence kept).
pub(crate) fn urls(field: &str, values: &[String]) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = Vec::new();
    for value in values {
        let value = url(field, value)?;
        if !out.contains(&value) {
            out.push(value);
        }
    }
    Ok(out)
}

/// A repository `owner/name`: the value as given and its lower-cased key.
pub(crate) fn repository(field: &str, value: &str) -> Result<(String, String), Error> {
    let value = value.trim();
    if !REPOSITORY.is_match(value) {
        return Err(Error::InvalidArgument(format!("{field} '{value}' is not a repository \"owner/name\"")));
    }
    Ok((value.to_owned(), value.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_count_characters_after_trimming() {
        assert_eq!(multi_line("note", "  é\n ", 1, 1).unwrap(), "é");
        assert!(multi_line("note", "   ", 1, 4000).unwrap_err().to_string().contains("1 to 4000 characters; it has 0"));
        assert!(single_line("title", "a\tb", 1, 10).is_err());
        assert!(multi_line("notes", "a\u{7}b", 0, 10).is_err());
    }

    #[test]
    fn urls_and_repositories() {
        assert!(url("links", "https://github.com/acme/web/pull/1").is_ok());
        assert!(url("links", "ftp://x").is_err() && url("links", "https://").is_err());
        assert_eq!(urls("links", &["http://a".into(), "http://a".into()]).unwrap().len(), 1);
        assert_eq!(repository("repository", "Acme/Web").unwrap().1, "acme/web");
        assert!(repository("repository", "acme").is_err());
        assert_eq!(name_key("  Claude   Code\tX "), "claude code x");
    }
}
