//! A page's fenced blocks with the marks before them, and the comparison of what a command printed with the
//! ```text block the page shows after it.

use regex::Regex;

/// What the line just before a block's opening fence says about it.
#[derive(Debug, PartialEq)]
pub(crate) enum Mark {
    /// `<!-- not run: REASON -->`: a ```sh block the test does not run.
    NotRun(String),
    /// `<!-- file: PATH -->`: the block is written to PATH (relative to the page's folder) before later blocks run.
    File(String),
}

/// One fenced block of a page.
#[derive(Debug, PartialEq)]
pub(crate) struct Block {
    /// The 1-based line of its opening fence.
    pub(crate) line: usize,
    /// The first word of its info string (`sh`, `text`, `yaml`, or empty).
    pub(crate) lang: String,
    /// Its lines, without the fence's indentation.
    pub(crate) body: String,
    pub(crate) mark: Option<Mark>,
    /// Only blank lines stand between the previous block's closing fence and this block's opening one.
    pub(crate) follows_previous: bool,
}

/// The fenced blocks of `markdown`, in order. A fence is a line of three backticks (indented as in a list item)
/// whose info string holds no backtick; the block ends at the next line of three backticks alone.
pub(crate) fn blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(Block, usize)> = None;
    let (mut previous_line, mut blank_since_block) = ("", false);
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim();
        match &mut open {
            Some(_) if trimmed == "```" => {
                blocks.extend(open.take().map(|(block, _)| block));
                blank_since_block = true;
            }
            Some((block, indent)) => {
                let strip = line.len() - line.trim_start_matches(' ').len();
                block.body.push_str(&line[strip.min(*indent)..]);
                block.body.push('\n');
            }
            None => {
                if let Some(info) = trimmed.strip_prefix("```").filter(|info| !info.contains('`')) {
                    let block = Block {
                        line: index + 1,
                        lang: info.split_whitespace().next().unwrap_or("").to_owned(),
                        body: String::new(),
                        mark: mark(previous_line),
                        follows_previous: blank_since_block,
                    };
                    open = Some((block, line.len() - line.trim_start_matches(' ').len()));
                } else if !trimmed.is_empty() {
                    blank_since_block = false;
                }
            }
        }
        previous_line = trimmed;
    }
    blocks
}

/// The mark a line holds, if it is one.
fn mark(line: &str) -> Option<Mark> {
    let comment = line.strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    if let Some(reason) = comment.strip_prefix("not run:") {
        Some(Mark::NotRun(reason.trim().to_owned()))
    } else {
        comment.strip_prefix("file:").map(|path| Mark::File(path.trim().to_owned()))
    }
}

/// Checks that every line `shown` holds appears in `printed`, in order (other lines may come between). Both sides
/// are compared trimmed; blank lines and lines of `…` alone are skipped; a `<placeholder>` (lower-case letters, digits,
/// `-` and `_` in angle brackets) or a `…` within a line stands for any text. Errs with the first line not found.
pub(crate) fn shows(shown: &str, printed: &str) -> Result<(), String> {
    let wildcard = Regex::new(r"<[a-z][a-z0-9_-]*>|…").unwrap();
    let mut printed = printed.lines().map(str::trim);
    for expected in shown.lines().map(str::trim).filter(|line| !line.is_empty() && *line != "…") {
        let mut pattern = String::from("^");
        let mut last = 0;
        for found in wildcard.find_iter(expected) {
            pattern.push_str(&regex::escape(&expected[last..found.start()]));
            pattern.push_str(".*?");
            last = found.end();
        }
        pattern.push_str(&regex::escape(&expected[last..]));
        pattern.push('$');
        let pattern = Regex::new(&pattern).unwrap();
        if !printed.any(|line| pattern.is_match(line)) {
            return Err(expected.to_owned());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_carry_their_line_mark_and_whether_they_follow_the_previous_one() {
        let page = "Intro\n<!-- not run: needs a server -->\n```sh\ncairn serve\n```\n\n```text\nlistening\n```\n\
            ```json is inline `code` here.\n\n1. Step:\n   <!-- file: a.yaml -->\n   ```yaml\n   name: a\n     x: 1\n\
            ```\n";
        let blocks = blocks(page);
        assert_eq!(blocks.len(), 3, "{blocks:#?}");
        assert_eq!((blocks[0].line, blocks[0].lang.as_str()), (3, "sh"));
        assert_eq!(blocks[0].mark, Some(Mark::NotRun("needs a server".to_owned())));
        assert_eq!((blocks[1].lang.as_str(), blocks[1].follows_previous), ("text", true));
        assert_eq!(blocks[2].mark, Some(Mark::File("a.yaml".to_owned())));
        assert_eq!((blocks[2].body.as_str(), blocks[2].follows_previous), ("name: a\n  x: 1\n", false));
    }

    #[test]
    fn shown_lines_match_in_order_with_placeholders_and_ellipses() {
        let printed = "▶ run 01abc · http://x/runs/01abc\n  Choices: approve, reject\nnoise\n3\n";
        assert_eq!(shows("…\n▶ run <id> · http://x/runs/<id>\n\nChoices: approve, …\n3\n", printed), Ok(()));
        assert_eq!(shows("3\nChoices: approve, reject\n", printed), Err("Choices: approve, reject".to_owned()));
        assert_eq!(shows("run <id>\n", printed), Err("run <id>".to_owned()), "a shown line matches a whole line");
    }
}
