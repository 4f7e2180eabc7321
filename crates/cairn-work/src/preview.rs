//! `work_list`'s items as previews, so that a page of items costs an agent little: notes cut to
//! [`NOTES_PREVIEW`] characters (at a word where one is near, with `…` and `notes_truncated: true`), and the fields
//! that hold nothing (`""`, `[]`, `null`) left out. `work_get` answers an item whole.

use serde_json::Value;

/// The most characters of an item's notes `work_list` shows.
pub(crate) const NOTES_PREVIEW: usize = 200;

/// `item` (a serialized [`WorkItem`](crate::item::WorkItem)) as `work_list` shows it.
pub(crate) fn item(item: &mut Value) {
    let Value::Object(fields) = item else { return };
    if let Some(Value::String(notes)) = fields.get_mut("notes")
        && let Some(cut) = cut(notes)
    {
        *notes = cut;
        fields.insert("notes_truncated".into(), Value::Bool(true));
    }
    fields.retain(|_, value| !value.is_null() && value != "" && value.as_array().is_none_or(|a| !a.is_empty()));
}

/// `notes` cut to at most [`NOTES_PREVIEW`] characters, ending in `…`, or `None` when they fit.
fn cut(notes: &str) -> Option<String> {
    if notes.chars().count() <= NOTES_PREVIEW {
        return None;
    }
    let end = notes.char_indices().nth(NOTES_PREVIEW - 1).map_or(notes.len(), |(at, _)| at);
    let head = &notes[..end];
    // Back to the last space when it is in the last quarter, so that a word is not cut in two.
    let head = match head.rfind(char::is_whitespace) {
        Some(space) if space >= end * 3 / 4 => &head[..space],
        _ => head,
    };
    Some(format!("{}…", head.trim_end()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn long_notes_are_cut_at_a_word_and_marked_and_empty_fields_go() {
        let mut long = json!({"id": "wi_1", "notes": "word ".repeat(120), "links": [], "claimant": "", "handoff": null,
            "state": "open"});
        item(&mut long);
        let notes = long["notes"].as_str().unwrap();
        assert!(notes.chars().count() <= NOTES_PREVIEW && notes.ends_with("word…"), "{notes}");
        assert_eq!(long["notes_truncated"], true);
        let mut kept: Vec<&String> = long.as_object().unwrap().keys().collect();
        kept.sort();
        assert_eq!(kept, ["id", "notes", "notes_truncated", "state"]);

        let mut short = json!({"id": "wi_2", "notes": "é".repeat(200)});
        item(&mut short);
        assert_eq!(short, json!({"id": "wi_2", "notes": "é".repeat(200)}), "200 characters fit, whatever their bytes");
        let mut unbroken = json!({"notes": "x".repeat(500)});
        item(&mut unbroken);
        assert_eq!(unbroken["notes"].as_str().unwrap().chars().count(), NOTES_PREVIEW);
    }
}
