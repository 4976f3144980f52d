//! An answer given before its request's body was read says `Connection: close`.
//!
//! hyper cannot keep such a connection (the rest of the body is still on its way) and closes it
//! after the answer, but it does not say so in the answer's header: a keep-alive client then
//! pools the connection and sends its next request into a closing socket, which fails as
//! "connection reset" or "peer disconnected". The accept loop hands each request's body to the
//! API as a [`NotedBody`], which notes when it has been read to its end, and wraps the answer
//! in a [`CloseIfUnread`] future, which adds `Connection: close` when a body was left unread
//! (a 413 from the declared length, a 415, an access refusal before the body, a timeout).
//! Requests without a body (every GET) pay nothing.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    task::{ready, Context, Poll},
};

use axum::{
    body::Body,
    http::{header, HeaderValue, Request},
    response::Response,
};
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};

/// A request body that notes when it has been read to its end.
#[derive(Debug)]
pub(crate) struct NotedBody {
    inner: Incoming,
    ended: Arc<AtomicBool>,
}

impl hyper::body::Body for NotedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if frame.is_none() || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Release);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Hands `request` to the API with its body noted (when it has one); returns the note that
/// [`CloseIfUnread`] reads.
pub(crate) fn note_body(request: Request<Incoming>) -> (Request<Body>, Option<Arc<AtomicBool>>) {
    use hyper::body::Body as _;
    if request.body().is_end_stream() {
        return (request.map(Body::new), None);
    }
    let ended = Arc::new(AtomicBool::new(false));
    let noted = Arc::clone(&ended);
    let request = request.map(|inner| {
        Body::new(NotedBody {
            inner,
            ended: noted,
        })
    });
    (request, Some(ended))
}

pin_project_lite::pin_project! {
    /// An answer future that adds `Connection: close` to its answer when the request's body
    /// was not read to its end.
    pub struct CloseIfUnread<F> {
        #[pin]
        inner: F,
        ended: Option<Arc<AtomicBool>>,
    }
}

impl<F> CloseIfUnread<F> {
    /// Wraps the answer `inner` to a request whose body note is `ended` (see [`note_body`]).
    pub(crate) fn new(inner: F, ended: Option<Arc<AtomicBool>>) -> Self {
        Self { inner, ended }
    }
}

impl<F, E> Future for CloseIfUnread<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut answer = ready!(this.inner.poll(cx))?;
        if this
            .ended
            .as_ref()
            .is_some_and(|ended| !ended.load(Ordering::Acquire))
        {
            answer
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        Poll::Ready(Ok(answer))
    }
}
