//! A script's terminal output as text: ANSI escape sequences (colours, cursor moves, window titles) removed, for the
//! run page's log (`<pre>`) and the command line off a terminal.

/// `text` without its escape sequences: CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC ] … ESC \`), the
/// character-set ones (`ESC ( B`) and the two-character `ESC x` ones; the C1 control `CSI` (U+009B) is read as
/// `ESC [`.
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let csi = match c {
            '\u{1b}' => match chars.next() {
                Some('[') => true,
                Some(']') => {
                    skip_osc(&mut chars);
                    continue;
                }
                Some(' '..='/') => {
                    // `ESC ( B` and its kind: intermediates, then one final character.
                    while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
                    chars.next();
                    continue;
                }
                _ => continue,
            },
            '\u{9b}' => true,
            _ => false,
        };
        if csi {
            // Parameters and intermediates run up to the final byte, @ through ~.
            for next in chars.by_ref() {
                if ('@'..='~').contains(&next) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Skips an operating-system command up to its terminator (BEL or `ESC \`).
fn skip_osc(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' => return,
            '\u{1b}' if chars.peek() == Some(&'\\') => {
                chars.next();
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn colours_titles_and_cursor_moves_go_and_the_text_stays() {
        assert_eq!(strip("\u{1b}[1;32mok\u{1b}[0m done"), "ok done");
        assert_eq!(strip("\u{1b}]0;title\u{7}line\n\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\"), "line\nlink");
        assert_eq!(strip("50%\u{1b}[2K\u{1b}[1G100%\u{1b}(B"), "50%100%");
        assert_eq!(strip("plain <b>text</b>\ttab"), "plain <b>text</b>\ttab");
        assert_eq!(strip("cut \u{1b}[3"), "cut ");
    }
}
