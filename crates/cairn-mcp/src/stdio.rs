//! Serving a surface over stdio: JSON-RPC on stdin/stdout, nothing else ever written to stdout.
//!
//! The transport reads stdin itself, a line at a time, at most [`MAX_LINE_BYTES`] a line, and judges each line before
//! rmcp sees it ([`crate::verdict`]): a malformed line is answered with a JSON-RPC error, logged on stderr as a
//! one-line warning, and the server goes on with the next line (before the first request, notifications and responses
//! are only logged: rmcp would stop on them). Everything written to stdout (rmcp's messages and those answers) goes
//! through one queue to one writer, so lines never interleave.

use rmcp::model::{ClientJsonRpcMessage, ErrorData, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::lines::{Lines, Read};
use crate::server::Server;
use crate::shallow;
use crate::verdict::{Fault, Verdict, judge};

/// The longest line (one message) a client may send: 16 MiB. A longer one is refused with an error (with the
/// request's id when its first 16 MiB hold it) and skipped up to its newline without being held in memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How many lines may wait for stdout before their senders wait too.
const QUEUE: usize = 64;

/// Serves `handler` on this process's stdin/stdout until the client closes the stream.
pub async fn serve_stdio(handler: Server) -> std::io::Result<()> {
    serve_lines(handler, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves `handler` on newline-delimited JSON-RPC read from `input` and written to `output`, until `input` ends.
async fn serve_lines<R, W>(handler: Server, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (queue, queued) = mpsc::channel(QUEUE);
    let writer = tokio::spawn(write_lines(queued, output));
    let transport =
        LineTransport { lines: Lines::new(input, MAX_LINE_BYTES), queue, unsent: None, read: 0, requested: false };
    let served = async {
        let running = handler.serve(transport).await.map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }
    .await;
    // The transport is gone with the service, so the writer ends once it has written what is queued.
    let written = writer.await.map_err(std::io::Error::other)?;
    served.and(written)
}

/// Writes each queued line and flushes, until every sender is gone.
async fn write_lines<W: AsyncWrite + Unpin>(mut queued: mpsc::Receiver<Vec<u8>>, mut output: W) -> std::io::Result<()> {
    while let Some(line) = queued.recv().await {
        output.write_all(&line).await?;
        while let Ok(line) = queued.try_recv() {
            output.write_all(&line).await?;
        }
        output.flush().await?;
    }
    Ok(())
}

/// rmcp's view of the stream: the messages worth serving in, its messages out.
struct LineTransport<R> {
    lines: Lines<R>,
    queue: mpsc::Sender<Vec<u8>>,
    /// The answer to a malformed line, not queued yet.
    unsent: Option<Vec<u8>>,
    /// Lines read so far (for the log).
    read: u64,
    /// A request has gone to rmcp. Before that, rmcp stops serving on a notification or a response (it waits for
    /// `initialize`), so those are only logged.
    requested: bool,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    /// Logs `fault` (of line `self.read`) and holds its answer for the queue.
    fn refuse(&mut self, fault: &Fault) {
        tracing::warn!(
            "stdin line {}: answered {} ({}): {}",
            self.read,
            fault.error.code.0,
            fault.id.as_ref().map_or_else(|| "id null".to_owned(), |id| format!("id {id}")),
            fault.error.message
        );
        self.unsent = Some(fault.answer());
    }
}

impl<R: AsyncRead + Unpin + Send> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), std::io::Error>> + Send + 'static {
        let queue = self.queue.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            queue.send(line).await.map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed"))
        }
    }

    /// The next message to serve. Cancel-safe (rmcp polls it against other work): a line is read whole before it is
    /// judged, and an answer waits in `unsent` until the queue has room for it.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.unsent.is_some() {
                let permit = self.queue.reserve().await.ok()?;
                permit.send(self.unsent.take().expect("checked above"));
            }
            let read = match self.lines.next().await {
                Ok(read) => read,
                Err(err) => {
                    tracing::error!("cannot read stdin: {err}");
                    return None;
                }
            };
            match read {
                Read::End => return None,
                Read::TooLong => {
                    self.read += 1;
                    let message = format!(
                        "Invalid Request: the line is longer than {} MiB, the most one message may take; it was \
                         skipped.",
                        MAX_LINE_BYTES >> 20
                    );
                    let id = shallow::request_id_of_start(self.lines.line());
                    self.refuse(&Fault::new(id, ErrorData::invalid_request(message, None)));
                }
                Read::Line => {
                    self.read += 1;
                    if self.lines.line().trim_ascii().is_empty() {
                        continue;
                    }
                    match judge(self.lines.line()) {
                        Verdict::Serve(message) if self.requested || matches!(*message, JsonRpcMessage::Request(_)) => {
                            self.requested = true;
                            return Some(*message);
                        }
                        Verdict::Serve(_) => {
                            tracing::warn!(
                                "stdin line {}: ignored a notification or response before initialize",
                                self.read
                            )
                        }
                        Verdict::Answer(fault) => self.refuse(&fault),
                        Verdict::Ignore(reason) => tracing::warn!("stdin line {}: ignored {reason}", self.read),
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), std::io::Error> {
        Ok(())
    }
}
