//! A stdio server's stdout, read with a bound on each line (one MCP message,
//! [`MCP_SERVER_MESSAGE_BYTES`]). rmcp's own reader drops a longer line and keeps the
//! connection, so the call that line answered waited for its timeout. Here the stream ends
//! instead, as soon as the line passes the bound (nothing more of it is read or held), with
//! a reason that names the limit: the run gives it to the calls in flight and ends, and the
//! supervisor starts the server again.
//!
//! [`MCP_SERVER_MESSAGE_BYTES`]: crate::limits::MCP_SERVER_MESSAGE_BYTES

use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// Whether, and why, a connection's input was cut. Shared by its reader and its run.
pub(crate) struct Cut {
    /// The server's name, for the errors its calls get.
    pub server: String,
    reason: OnceLock<String>,
    done: CancellationToken,
}

impl Cut {
    pub fn new(server: &str) -> Arc<Self> {
        Arc::new(Self {
            server: server.to_string(),
            reason: OnceLock::new(),
            done: CancellationToken::new(),
        })
    }

    /// Why the input was cut, once it was.
    pub fn reason(&self) -> Option<String> {
        self.reason.get().cloned()
    }

    /// Waits until the input is cut; why.
    pub async fn wait(&self) -> String {
        self.done.cancelled().await;
        self.reason().unwrap_or_default()
    }

    /// Records why, and ends the wait: a reader found a message over the limit (a stdio
    /// line here, a legacy SSE event in `legacy_sse.rs`).
    pub fn cut(&self, why: String) {
        // The reason is set before anyone can see the end of input (or be woken), so every
        // failure the closed connection causes finds it.
        let _ = self.reason.set(why);
        self.done.cancel();
    }
}

/// The reason a message over `limit` bytes gives.
pub(crate) fn over_limit(limit: usize) -> String {
    format!(
        "it sent a message over {} MiB ({limit} bytes), the limit of one message from an MCP server",
        limit / (1024 * 1024)
    )
}

/// `inner`, ending at the first line longer than `limit` bytes (its newline counted, as
/// rmcp counts it, so rmcp's own bound is never reached first).
pub(crate) struct LineLimit<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line read so far.
    line: usize,
    cut: Arc<Cut>,
}

impl<R> LineLimit<R> {
    pub fn new(inner: R, limit: usize, cut: Arc<Cut>) -> Self {
        Self {
            inner,
            limit,
            line: 0,
            cut,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineLimit<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.cut.reason.get().is_some() {
            return Poll::Ready(Ok(())); // end of input
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let mut line = self.line;
        // Where the last whole line of this read ends: what is handed on when cutting.
        let mut whole = before;
        for (i, b) in buf.filled()[before..].iter().enumerate() {
            line += 1;
            if *b == b'\n' {
                line = 0;
                whole = before + i + 1;
            } else if line >= self.limit {
                // Even a newline next would make the line longer than the limit.
                buf.set_filled(whole);
                self.cut.cut(over_limit(self.limit));
                return Poll::Ready(Ok(()));
            }
        }
        self.line = line;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn read_all(input: &[u8], limit: usize) -> (Vec<u8>, Option<String>) {
        let cut = Cut::new("t");
        let mut r = LineLimit::new(input, limit, cut.clone());
        let mut out = Vec::new();
        r.read_to_end(&mut out).await.unwrap();
        (out, cut.reason())
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_unchanged() {
        let (out, cut) = read_all(b"abc\nabcd\n\nab", 5).await;
        assert_eq!(out, b"abc\nabcd\n\nab");
        assert_eq!(cut, None);
    }

    #[tokio::test]
    async fn a_longer_line_ends_the_input_after_the_whole_lines_before_it() {
        let (out, cut) = read_all(b"ok\nabcdefgh\nmore\n", 5).await;
        assert_eq!(out, b"ok\n");
        assert_eq!(cut.as_deref(), Some(over_limit(5).as_str()));
        // Exactly the limit with its newline is still a message; one byte more is not.
        assert_eq!(read_all(b"abcd\n", 5).await.1, None);
        assert!(read_all(b"abcde\n", 5).await.1.is_some());
    }

    #[tokio::test]
    async fn waiters_learn_the_reason() {
        let cut = Cut::new("t");
        let waiter = tokio::spawn({
            let cut = cut.clone();
            async move { cut.wait().await }
        });
        let mut r = LineLimit::new(&b"xxxxxxxx"[..], 4, cut.clone());
        let mut out = Vec::new();
        r.read_to_end(&mut out).await.unwrap();
        assert_eq!(waiter.await.unwrap(), over_limit(4));
    }
}
