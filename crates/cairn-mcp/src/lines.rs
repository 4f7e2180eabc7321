//! Reading newline-delimited messages with a bound on a line's length.
//!
//! A line longer than the bound is reported as soon as it passes the bound, with its first `limit` bytes (where a
//! request's id may be read), and the rest of it, up to its newline, is read and dropped: it is never held in memory
//! whole. A last line without a newline still counts as a line.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// What [`Lines::next`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// A whole line, now in [`Lines::line`].
    Line,
    /// A line longer than the bound, its first `limit` bytes now in [`Lines::line`]. What follows of it, up to its
    /// newline, is skipped.
    TooLong,
    /// The end of the input.
    End,
}

/// The lines of `R`, each at most `limit` bytes long (not counting its line ending).
#[derive(Debug)]
pub(crate) struct Lines<R> {
    input: BufReader<R>,
    /// The line being read, or the one [`Read::Line`] reported.
    line: Vec<u8>,
    limit: usize,
    /// The last read reported the whole of `line`, so the next read starts a new one.
    reported: bool,
    /// Dropping the rest of a line that was too long.
    skipping: bool,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// The lines of `input`, each at most `limit` bytes long.
    pub(crate) fn new(input: R, limit: usize) -> Lines<R> {
        Lines {
            input: BufReader::with_capacity(64 * 1024, input),
            line: Vec::new(),
            limit,
            reported: false,
            skipping: false,
        }
    }

    /// The line the last [`Read::Line`] found, without its line ending (`\n` or `\r\n`), or the start of the line
    /// the last [`Read::TooLong`] found.
    pub(crate) fn line(&self) -> &[u8] {
        self.line.strip_suffix(b"\r").unwrap_or(&self.line)
    }

    /// Reads the next line. Cancel-safe: a read dropped midway keeps what it read, and the next one goes on from there.
    pub(crate) async fn next(&mut self) -> std::io::Result<Read> {
        if self.reported {
            self.line.clear();
            self.reported = false;
        }
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                self.skipping = false;
                if self.line.is_empty() {
                    return Ok(Read::End);
                }
                self.reported = true;
                return Ok(Read::Line);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let (content, used) = match newline {
                Some(at) => (&available[..at], at + 1),
                None => (available, available.len()),
            };
            let found = if self.skipping {
                self.skipping = newline.is_none();
                None
            } else if self.line.len() + content.len() > self.limit {
                self.line.extend_from_slice(&content[..self.limit - self.line.len()]);
                self.reported = true;
                self.skipping = newline.is_none();
                Some(Read::TooLong)
            } else {
                self.line.extend_from_slice(content);
                self.reported = newline.is_some();
                newline.map(|_| Read::Line)
            };
            self.input.consume(used);
            if let Some(found) = found {
                return Ok(found);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    async fn all(input: &[u8], limit: usize) -> Vec<Result<String, Read>> {
        let mut lines = Lines::new(input, limit);
        let mut found = Vec::new();
        loop {
            match lines.next().await.unwrap() {
                Read::Line => found.push(Ok(String::from_utf8(lines.line().to_vec()).unwrap())),
                Read::End => return found,
                other => found.push(Err(other)),
            }
        }
    }

    #[tokio::test]
    async fn lines_end_at_newlines_and_the_last_needs_none() {
        assert_eq!(all(b"a\r\nbc\n\nd", 10).await, [Ok("a".into()), Ok("bc".into()), Ok("".into()), Ok("d".into())]);
        assert_eq!(all(b"", 10).await, []);
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_reported_once_and_skipped_to_its_newline() {
        let input = [b"12345\n".as_slice(), &[b'x'; 100], b"\nok\n", &[b'y'; 7]].concat();
        assert_eq!(all(&input, 5).await, [Ok("12345".into()), Err(Read::TooLong), Ok("ok".into()), Err(Read::TooLong)]);
        let mut lines = Lines::new(b"abcdefgh\nok\n".as_slice(), 5);
        assert_eq!(lines.next().await.unwrap(), Read::TooLong);
        assert_eq!(lines.line(), b"abcde", "the start of the long line");
        assert_eq!(lines.next().await.unwrap(), Read::Line);
        assert_eq!(lines.line(), b"ok");
    }

    #[tokio::test]
    async fn a_long_line_is_never_held_whole() {
        let (mut client, server) = tokio::io::duplex(1024);
        let writer = tokio::spawn(async move {
            for _ in 0..1000 {
                client.write_all(&[b'z'; 1000]).await.unwrap();
            }
            client.write_all(b"\nnext\n").await.unwrap();
        });
        let mut lines = Lines::new(server, 10_000);
        assert_eq!(lines.next().await.unwrap(), Read::TooLong);
        assert!(lines.line.capacity() <= 10_000 + 64 * 1024, "held {} bytes", lines.line.capacity());
        assert_eq!(lines.next().await.unwrap(), Read::Line);
        assert_eq!(lines.line(), b"next");
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn a_read_dropped_midway_loses_nothing() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut lines = Lines::new(server, 100);
        client.write_all(b"hal").await.unwrap();
        let pending = tokio::time::timeout(std::time::Duration::from_millis(50), lines.next()).await;
        assert!(pending.is_err(), "no line yet");
        client.write_all(b"f\n").await.unwrap();
        assert_eq!(lines.next().await.unwrap(), Read::Line);
        assert_eq!(lines.line(), b"half");
    }
}
