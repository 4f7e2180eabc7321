//! Pull-request references in a table cell (§6.4): `owner/name#N`, a bare `#N` (the default repository's), and links
//! to `https://github.com/owner/name/pull/N`. Not references: `&#39;`, URL fragments, `##`, `#742a`, `PR 742`.

use std::sync::LazyLock;

use regex::Regex;

/// A reference: the repository as written (`None` for a bare `#N`) and the number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Reference {
    pub(crate) repository: Option<String>,
    pub(crate) number: i64,
}

static QUALIFIED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})#([0-9]{1,7})").expect("pattern compiles")
});
static BARE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"#([0-9]{1,7})").expect("pattern compiles"));
static PULL_URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^https?://github\.com/([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})/pull/([0-9]{1,7})(?:[/?#].*)?$")
        .expect("pattern compiles")
});

/// Whether the text goes on with a letter, digit or `_` at byte `end` (so the number is part of a word).
fn continues(text: &str, end: usize) -> bool {
    text[end..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// The references in one cell's text and link URLs, in the order found.
pub(crate) fn references(text: &str, urls: &[String]) -> Vec<Reference> {
    let mut found = Vec::new();
    let mut taken: Vec<(usize, usize)> = Vec::new();
    for m in QUALIFIED.captures_iter(text) {
        let whole = m.get(0).expect("group 0 exists");
        let before = text[..whole.start()].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '/' || c == '.' || c == '-' || c == '_') {
            continue;
        }
        if continues(text, whole.end()) {
            continue;
        }
        taken.push((whole.start(), whole.end()));
        found.push(Reference {
            repository: Some(format!("{}/{}", &m[1], &m[2])),
            number: m[3].parse().expect("up to seven digits"),
        });
    }
    for m in BARE.captures_iter(text) {
        let whole = m.get(0).expect("group 0 exists");
        if taken.iter().any(|(s, e)| whole.start() >= *s && whole.start() < *e) || continues(text, whole.end()) {
            continue;
        }
        let before = &text[..whole.start()];
        let ok = match before.chars().next_back() {
            None => true,
            Some(_) if before.ends_with("PR") || before.ends_with("pr") => {
                // `PR#742`, but not `xpr#742`.
                !before[..before.len() - 2].chars().next_back().is_some_and(char::is_alphanumeric)
            }
            Some(c) => !(c.is_alphanumeric() || matches!(c, '&' | '/' | '#')),
        };
        if ok {
            found.push(Reference { repository: None, number: m[1].parse().expect("up to seven digits") });
        }
    }
    for url in urls {
        if let Some(m) = PULL_URL.captures(url) {
            found.push(Reference {
                repository: Some(format!("{}/{}", &m[1], &m[2])),
                number: m[3].parse().expect("up to seven digits"),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Vec<String> {
        references(text, &[])
            .into_iter()
            .map(|r| format!("{}#{}", r.repository.unwrap_or_default(), r.number))
            .collect()
    }

    #[test]
    fn every_form_of_reference() {
        assert_eq!(check("#742"), vec!["#742"]);
        assert_eq!(check("#743, #744"), vec!["#743", "#744"]);
        assert_eq!(check("acme/api#12"), vec!["acme/api#12"]);
        assert_eq!(check("PR#742 and pr#5"), vec!["#742", "#5"]);
        assert_eq!(check("(#7)"), vec!["#7"]);
        assert_eq!(check("#740–#742"), vec!["#740", "#742"]);
        let link = references("fix", &["https://github.com/acme/web/pull/9".into()]);
        assert_eq!(link, vec![Reference { repository: Some("acme/web".into()), number: 9 }]);
    }

    #[test]
    fn things_that_are_not_references() {
        assert!(check("it&#39;s").is_empty());
        assert!(check("#742a").is_empty());
        assert!(check("x.html#12").is_empty() && check("see/#12").is_empty());
        assert!(check("##12").is_empty());
        assert!(check("PR 742").is_empty());
        assert!(check("issue#5").is_empty());
        assert!(references("", &["https://github.com/acme/web/issues/9".into()]).is_empty());
    }
}
