//! The bytes of a text outside its JSON-style string literals (`"…"` with backslash escapes): where a template hole
//! closes, where the JSON object a host returned ends — a `}` inside a string counts for neither.

/// Each byte of `text` outside string literals, with its offset; the quotes themselves and everything between them
/// are left out.
pub(crate) fn unquoted(text: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let (mut in_string, mut escaped) = (false, false);
    text.bytes().enumerate().filter(move |&(_, b)| {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            false
        } else if b == b'"' {
            in_string = true;
            false
        } else {
            true
        }
    })
}

#[cfg(test)]
mod tests {
    use super::unquoted;

    #[test]
    fn string_literals_and_their_escaped_quotes_are_skipped() {
        let text = r#"a"b\"}"c"#;
        let kept: Vec<(usize, u8)> = unquoted(text).collect();
        assert_eq!(kept, [(0, b'a'), (7, b'c')]);
    }
}
