//! Formatting-preserving edits of one YAML scalar: replace the text of the string at a JSON pointer, keep every other
//! byte (comments, quoting style, indentation, key order) as it was.
//!
//! Used by rename (a referrer's `workflow:` and the renamed file's `name:`) and duplicate (`name:`). Only a scalar whose
//! source text is exactly the old value (plain, quoted, or a block scalar's body) is edited, and the result is re-read
//! to prove only that value changed; anything else (escapes, anchors) is `None`, so the caller can treat the file as
//! not rewritable. This module does not
//! re-serialise documents.

/// `text` with the scalar at `pointer` changed from `old` to `new`, or `None` when it is not a simple scalar equal
/// to `old` (or the text is not YAML). `new` must need no quoting (workflow ids never do).
pub(crate) fn replace_scalar(text: &str, pointer: &str, old: &str, new: &str) -> Option<String> {
    let doc = cairn_yaml::parse(text).ok()?;
    if doc.value.pointer(pointer)?.as_str()? != old {
        return None;
    }
    let (line, column) = doc.position(pointer)?;
    let start = offset(text, line, column)?;
    let rest = &text[start..];
    let value_start = match rest.chars().next()? {
        quote @ ('"' | '\'') => {
            let inner = rest.get(1..)?;
            let closing = inner.strip_prefix(old)?;
            if !closing.starts_with(quote) {
                return None;
            }
            start + 1
        }
        _ => {
            let after = rest.strip_prefix(old)?;
            // A plain scalar ends at a line end, a comment, or a flow indicator; the parsed value said it equals
            // `old`, so the next character must not continue it.
            if after
                .chars()
                .next()
                .is_some_and(|c| !matches!(c, '\n' | '\r' | ' ' | '\t' | ',' | '}' | ']' | '#'))
            {
                return None;
            }
            start
        }
    };
    let mut edited = String::with_capacity(text.len() + new.len());
    edited.push_str(&text[..value_start]);
    edited.push_str(new);
    edited.push_str(&text[value_start + old.len()..]);
    // Re-read to be sure the edit changed exactly that value.
    let check = cairn_yaml::parse(&edited).ok()?;
    (check.value.pointer(pointer)?.as_str()? == new).then_some(edited)
}

/// Byte offset of 1-based `line` and `column` (in characters).
fn offset(text: &str, line: u64, column: u64) -> Option<usize> {
    let line = usize::try_from(line).ok()?.checked_sub(1)?;
    let column = usize::try_from(column).ok()?.checked_sub(1)?;
    let mut start = 0;
    for _ in 0..line {
        start += text[start..].find('\n')? + 1;
    }
    let within = &text[start..];
    let bytes = within
        .char_indices()
        .nth(column)
        .map(|(i, _)| i)
        .or((within.chars().count() == column).then_some(within.len()))?;
    Some(start + bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, pointer: &str, expected: Option<&str>) {
        assert_eq!(
            replace_scalar(text, pointer, "old-id", "new-id").as_deref(),
            expected
        );
    }

    #[test]
    fn plain_scalar_keeps_comments_and_layout() {
        check(
            "name: p  # parent\nnodes:\n  call:\n    type: subworkflow\n    config:\n      workflow: old-id   # child\n",
            "/nodes/call/config/workflow",
            Some(
                "name: p  # parent\nnodes:\n  call:\n    type: subworkflow\n    config:\n      workflow: new-id   # child\n",
            ),
        );
    }

    #[test]
    fn quoted_and_flow_scalars() {
        check(
            "nodes:\n  c: { type: subworkflow, config: { workflow: \"old-id\", inputs: {} } }\n",
            "/nodes/c/config/workflow",
            Some(
                "nodes:\n  c: { type: subworkflow, config: { workflow: \"new-id\", inputs: {} } }\n",
            ),
        );
        check("name: 'old-id'\n", "/name", Some("name: 'new-id'\n"));
        check(
            "nodes: {c: {config: {workflow: old-id}}}",
            "/nodes/c/config/workflow",
            Some("nodes: {c: {config: {workflow: new-id}}}"),
        );
    }

    #[test]
    fn block_scalars_are_edited_in_place() {
        check(
            "name: >-\n  old-id\n",
            "/name",
            Some("name: >-\n  new-id\n"),
        );
    }

    #[test]
    fn non_ascii_before_the_scalar_is_counted_in_characters() {
        check(
            "description: \"héllo wörld\"\nname: old-id\n",
            "/name",
            Some("description: \"héllo wörld\"\nname: new-id\n"),
        );
        check(
            "x: { d: \"é\", name: old-id }\n",
            "/x/name",
            Some("x: { d: \"é\", name: new-id }\n"),
        );
    }

    #[test]
    fn other_values_and_escaped_scalars_are_refused() {
        check("name: other\n", "/name", None);
        check("name: \"old\\x2did\"\n", "/name", None);
        check("other: 1\n", "/name", None);
        check("name: [\n", "/name", None);
    }
}
