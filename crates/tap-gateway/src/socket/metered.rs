use super::slots::Ticket;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// An IO stream with an optional budget of bytes it may still read.
///
/// tokio-tungstenite cannot change its frame limit after the handshake, so the spec's
/// "frames before auth are capped at 64 KiB" is enforced one layer down: until the peer
/// authenticates, it may send at most the budget in total, and a read past it fails,
/// which closes the socket. After auth the budget is lifted and tungstenite's own frame
/// cap applies.
///
/// It also holds the connection's slot (`socket::slots`): until the peer authenticates,
/// the slot may go to a newcomer, and then reads fail, which closes the socket.
pub(crate) struct Metered<S> {
    inner: S,
    budget: Option<usize>,
    /// Called once when the budget is exceeded (the diagnostics count it).
    on_over: Option<Box<dyn FnOnce() + Send>>,
    slot: Option<Ticket>,
}

impl<S> Metered<S> {
    pub fn new(inner: S, budget: usize) -> Self {
        Self {
            inner,
            budget: Some(budget),
            on_over: None,
            slot: None,
        }
    }

    /// Holds `slot` for as long as this stream lives.
    pub fn with_slot(mut self, slot: Ticket) -> Self {
        self.slot = Some(slot);
        self
    }

    /// Calls `f` when the peer first reads past the budget.
    pub fn on_over_budget(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.on_over = Some(Box::new(f));
        self
    }

    /// The peer authenticated: no byte budget, and its slot is its own.
    pub fn lift_budget(&mut self) {
        self.budget = None;
        self.keep_slot();
    }

    /// The slot can no longer go to a newcomer (the peer authenticated, or waits for the
    /// user to approve its pairing code: a bounded number of those may wait).
    pub fn keep_slot(&mut self) {
        if let Some(slot) = self.slot.as_mut() {
            // `false`: the slot went to a newcomer first; the next read fails.
            let _ = slot.authenticated();
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.slot.as_mut().is_some_and(|s| s.poll_evicted(cx)) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room: the connection limit was reached before this peer authenticated",
            )));
        }
        let before = buf.filled().len();
        let res = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let (Poll::Ready(Ok(())), Some(left)) = (&res, this.budget.as_mut()) {
            let got = buf.filled().len() - before;
            if got > *left {
                if let Some(f) = this.on_over.take() {
                    f();
                }
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "peer sent more than the pre-authentication byte limit",
                )));
            }
            *left -= got;
        }
        res
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Metered<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
