//! Where a `script` command's template holes sit in shell terms. cairn pastes each hole's value as one single-quoted
//! word, which is safe only where the shell reads that word as quoting: outside every quote. Inside double quotes the
//! single quotes are literal and `$(…)` in the value runs; inside single quotes, after a `$` or in a here-document,
//! the value's own characters decide too. Such a hole is refused, when the workflow is validated and again before
//! the command runs, with the fix in the message.

use super::template::{Part, Template};

/// Where the shell would read a hole's value unquoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    DoubleQuotes,
    SingleQuotes,
    AfterDollar,
    HereDocument,
}

impl Context {
    fn says(self) -> &'static str {
        match self {
            Context::DoubleQuotes => "inside double quotes",
            Context::SingleQuotes => "inside single quotes",
            Context::AfterDollar => "right after a `$`",
            Context::HereDocument => "in a here-document",
        }
    }
}

/// What is wrong with the first hole of `command` that the shell would expand, with the fix; `None` when every
/// hole is outside quotes (and the template parses: its errors are reported elsewhere).
pub fn unsafe_hole(command: &str) -> Option<String> {
    let template = Template::parse(command).ok()?;
    let (mut single, mut double, mut escaped, mut here, mut dollar) = (false, false, false, false, false);
    let mut previous = ' ';
    for part in &template.parts {
        match part {
            Part::Text(text) => {
                for c in text.chars() {
                    dollar = false;
                    if escaped {
                        escaped = false;
                    } else if single {
                        single = c != '\'';
                    } else if c == '\\' {
                        escaped = true;
                    } else if double {
                        double = c != '"';
                        dollar = c == '$';
                    } else {
                        match c {
                            '\'' => single = true,
                            '"' => double = true,
                            '$' => dollar = true,
                            '<' if previous == '<' => here = true,
                            _ => {}
                        }
                    }
                    previous = c;
                }
            }
            Part::Hole(expr) => {
                let context = if single {
                    Some(Context::SingleQuotes)
                } else if double {
                    Some(Context::DoubleQuotes)
                } else if dollar {
                    Some(Context::AfterDollar)
                } else if here {
                    Some(Context::HereDocument)
                } else {
                    None
                };
                if let Some(context) = context {
                    return Some(format!(
                        "the template value `{{{{ {expr} }}}}` is {} in `command`, where the shell would expand what \
                         it holds ($(…), backticks, $VARS); cairn quotes each value as one word itself, so write it \
                         outside quotes (`echo note: {{{{ {expr} }}}}`), or pass it in `env` (`env: {{ NOTE: \
                         \"{{{{ {expr} }}}}\" }}`) and use \"$NOTE\" in the command",
                        context.says()
                    ));
                }
                previous = 'x';
                dollar = false;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::unsafe_hole;

    #[test]
    fn holes_outside_quotes_are_safe() {
        for command in [
            "echo {{ draft.text }}",
            "echo note: {{ draft.text }} done",
            "git commit -m {{ a.msg }} --author=\"x\"",
            "grep --regexp={{ a.q }} 'file name'",
            "echo \"quoted\" {{ a.b }} 'single' {{ a.c }}",
            "echo \\\"{{ a.b }}",
            "echo $HOME {{ a.b }}",
        ] {
            assert_eq!(unsafe_hole(command), None, "{command}");
        }
    }

    #[test]
    fn holes_the_shell_would_expand_are_refused_with_the_fix() {
        for (command, says) in [
            ("echo \"note {{ draft.text }}\"", "inside double quotes"),
            ("echo 'note {{ draft.text }}'", "inside single quotes"),
            ("echo ${{ a.b }}", "right after a `$`"),
            ("cat <<EOF\n{{ a.b }}\nEOF", "in a here-document"),
            ("echo \"a\" \"b {{ a.b }}\"", "inside double quotes"),
        ] {
            let message = unsafe_hole(command).unwrap_or_else(|| panic!("{command} is refused"));
            assert!(message.contains(says), "{command}: {message}");
            assert!(message.contains("env"), "the fix: {message}");
        }
    }
}
