//! A reader that says when its input has ended, so the server can refuse what it was waiting on
//! instead of waiting for answers that can no longer come.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::Notify;

pub struct NotifyOnEof<R> {
    inner: R,
    eof: Arc<Notify>,
}

impl<R> NotifyOnEof<R> {
    pub fn new(inner: R, eof: Arc<Notify>) -> NotifyOnEof<R> {
        NotifyOnEof { inner, eof }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for NotifyOnEof<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &poll {
            Poll::Ready(Ok(())) if buf.filled().len() == before => self.eof.notify_one(),
            Poll::Ready(Err(_)) => self.eof.notify_one(),
            _ => {}
        }
        poll
    }
}
