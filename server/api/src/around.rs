//! One tower layer for the API's own middleware: a [`Hook`] looks at a request before the
//! service inside (and may answer it at once), then at the final answer (and may rewrite
//! it). The request counters, the JSON error envelope and access control are hooks.
//!
//! Hand-written rather than `axum::middleware::from_fn`: for each request, `from_fn` clones
//! the whole service stack inside it and boxes two futures; this clones the hook (an `Arc`
//! or nothing) and boxes only a rewrite that needs to read a body.

use std::{
    future::Future,
    ops::ControlFlow,
    pin::Pin,
    task::{ready, Context, Poll},
};

use axum::{
    http::Request,
    response::{IntoResponse, Response},
};

/// A rewrite of an answer that has to wait (for its body).
pub type Rewrite = Pin<Box<dyn Future<Output = Response> + Send>>;

/// What a layer does around the service inside it.
pub trait Hook: Clone {
    /// What the hook carries from a request to its answer.
    type Note;

    /// Before the inner service: `Continue(note)` lets the request through, `Break(answer)`
    /// answers it at once.
    fn before<B>(&self, request: &Request<B>) -> ControlFlow<Response, Self::Note>;

    /// The final answer, or a rewrite of it that has to wait.
    ///
    /// # Errors
    /// The rewrite to wait for instead of the answer.
    fn after(note: Self::Note, answer: Response) -> Result<Response, Rewrite>;
}

/// The layer of a [`Hook`].
#[derive(Debug, Clone)]
pub struct Around<H>(pub H);

impl<S, H: Hook> tower::Layer<S> for Around<H> {
    type Service = AroundService<S, H>;

    fn layer(&self, inner: S) -> Self::Service {
        AroundService {
            inner,
            hook: self.0.clone(),
        }
    }
}

/// The service of [`Around`].
#[derive(Debug, Clone)]
pub struct AroundService<S, H> {
    inner: S,
    hook: H,
}

impl<S, H, B> tower::Service<Request<B>> for AroundService<S, H>
where
    S: tower::Service<Request<B>>,
    S::Response: IntoResponse,
    H: Hook,
{
    type Response = Response;
    type Error = S::Error;
    type Future = AroundFuture<S::Future, H::Note>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (inner, note, answer) = match self.hook.before(&request) {
            ControlFlow::Continue(note) => (Some(self.inner.call(request)), Some(note), None),
            ControlFlow::Break(answer) => (None, None, Some(answer)),
        };
        AroundFuture {
            inner,
            note,
            after: H::after,
            rewrite: None,
            answer,
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of [`AroundService`]: the inner service's answer as the hook sees it, a
    /// rewrite of it, or the hook's own answer.
    pub struct AroundFuture<F, N> {
        // The inner service's answer, when the hook let the request through.
        #[pin]
        inner: Option<F>,
        // What the hook noted (taken when the inner answer is ready).
        note: Option<N>,
        // The hook's look at the answer.
        after: fn(N, Response) -> Result<Response, Rewrite>,
        // The rewrite being waited for.
        rewrite: Option<Rewrite>,
        // The hook's own answer (taken when polled).
        answer: Option<Response>,
    }
}

impl<F, N, R, E> Future for AroundFuture<F, N>
where
    F: Future<Output = Result<R, E>>,
    R: IntoResponse,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Some(rewrite) = this.rewrite {
            return rewrite.as_mut().poll(cx).map(Ok);
        }
        let Some(inner) = this.inner.as_pin_mut() else {
            return Poll::Ready(Ok(this.answer.take().unwrap_or_default()));
        };
        let answer = ready!(inner.poll(cx))?.into_response();
        let Some(note) = this.note.take() else {
            return Poll::Ready(Ok(answer));
        };
        match (this.after)(note, answer) {
            Ok(answer) => Poll::Ready(Ok(answer)),
            Err(mut rewrite) => {
                let polled = rewrite.as_mut().poll(cx);
                *this.rewrite = Some(rewrite);
                polled.map(Ok)
            }
        }
    }
}
