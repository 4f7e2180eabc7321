//! Reading Rust source as the tidy checks need it: the code without comments and with string and character literals
//! blanked (so a path in a comment or a string is no import), and where a file's test module starts.

/// `text` with every comment removed and the contents of string and character literals blanked; line breaks are
/// kept, so line numbers stay.
pub(crate) fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if (c == 'r' || c == 'b') && !out.ends_with(is_ident) && raw_string_start(&chars, i).is_some() {
            let (hashes, open) = raw_string_start(&chars, i).expect("checked");
            out.push_str("\"\"");
            i = open + 1;
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            while i < chars.len() && !chars[i..].starts_with(&close.chars().collect::<Vec<_>>()) {
                if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += close.chars().count();
        } else if c == '"' {
            out.push_str("\"\"");
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{..}'.
            out.push_str("' '");
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where a raw string starting at `i` (`r"`, `r#"`, `br#"` …) opens: its number of `#` and the index of its `"`.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if chars[j] == 'b' {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (chars.get(j) == Some(&'"')).then_some((hashes, j))
}

/// The number of the line where `text`'s test module starts (`#[cfg(test)]` followed, after any other attributes, by
/// `mod <name> {`), or its number of lines plus one when it has none: every line before it is the file's code.
pub(crate) fn test_module_line(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        if line.trim() != "#[cfg(test)]" {
            continue;
        }
        let item = lines[n + 1..].iter().map(|l| l.trim()).find(|l| !l.starts_with("#[") && !l.is_empty());
        if item.is_some_and(|l| {
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.starts_with("mod ") && l.ends_with('{')
        }) {
            return n + 1;
        }
    }
    lines.len() + 1
}

/// `text` up to its test module.
pub(crate) fn before_tests(text: &str) -> String {
    let end = test_module_line(text) - 1;
    text.lines().take(end).collect::<Vec<_>>().join("\n")
}

#[test]
fn comments_and_literals_are_not_code() {
    let text = "use crate::a; // use crate::b;\n/* crate::c\n */ let s = \"crate::d\"; let r = r#\"crate::e\"#;\n\
                let q = '\"'; let l: &'static str = \"\"; crate::f();";
    let code = strip(text);
    assert!(code.contains("crate::a") && code.contains("crate::f"), "{code}");
    for hidden in ["crate::b", "crate::c", "crate::d", "crate::e"] {
        assert!(!code.contains(hidden), "{hidden} in {code}");
    }
    assert_eq!(code.lines().count(), text.lines().count(), "line breaks are kept");
}

#[test]
fn the_test_module_starts_at_its_cfg_test() {
    let text = "//! doc\n#[cfg(test)]\nmod testing;\nfn a() {}\n\n#[cfg(test)]\n#[allow(unused)]\nmod tests {\n}\n";
    assert_eq!(test_module_line(text), 6, "a declared test-only module is not the file's test module");
    assert!(before_tests(text).ends_with("fn a() {}\n") && !before_tests(text).contains("mod tests"));
    assert_eq!(test_module_line("fn a() {}\n"), 2);
}
