//! YAML front matter of a markdown file: a first line `---`, YAML, then a `---` (or `...`) line.
//!
//! Shared by skill discovery (`name` / `description`) and the docs corpus (`title`, `description`, `order`). Only a
//! mapping counts as front matter; anything else is treated as plain markdown.

use serde_json::{Map, Value};

/// The front matter mapping and the markdown after it, or `None` when the text has no front matter mapping.
pub fn split(text: &str) -> Option<(Map<String, Value>, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text.split_inclusive('\n').next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut offset = first.len();
    for line in text[offset..].split_inclusive('\n') {
        if matches!(line.trim_end(), "---" | "...") {
            let yaml = &text[first.len()..offset];
            let body = &text[offset + line.len()..];
            return match cairn_yaml::parse(yaml).ok()?.value {
                Value::Object(map) => Some((map, body)),
                _ => None,
            };
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_body() {
        let (map, body) = split("---\ntitle: A\norder: 2\n---\nHello\n").unwrap();
        assert_eq!(map["title"], "A");
        assert_eq!(map["order"], 2);
        assert_eq!(body, "Hello\n");
        assert!(
            split("\u{feff}---\n---\nx").is_none(),
            "an empty front matter is not a mapping"
        );
        assert_eq!(split("\u{feff}---\nname: x\n---\n").unwrap().0["name"], "x");
        assert!(split("# no front matter\n").is_none());
        assert!(split("---\ntitle: unclosed\n").is_none());
        assert!(split("---\n- a list\n---\n").is_none());
        assert_eq!(split("---\na: 1\n...\nrest").unwrap().1, "rest");
    }
}
