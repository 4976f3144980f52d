//! Per-connection timing for the accept loop: a request header must arrive within the header
//! timeout of its first byte (or of the accept, for a connection's first request), and a
//! keep-alive connection may sit idle between requests for the idle timeout, as Go's
//! `ReadHeaderTimeout` and `IdleTimeout` (which Hornet's operators know) do.
//!
//! hyper's own header timer also runs while a connection is idle, so it cannot give the two
//! different limits; here the socket wrapper ([`crate::conn_stream::ConnStream`]) notes when
//! bytes arrive, the
//! service wrapper ([`TimedService`]) notes when a request starts and when its response is
//! ready, and the connection's task closes it at [`ConnClock::deadline`].

use std::{
    future::Future,
    pin::Pin,
    sync::{
        atomic::{AtomicU64, AtomicU8, Ordering},
        Arc,
    },
    task::{ready, Context, Poll},
    time::{Duration, Instant},
};

/// Waiting for (the rest of) a request header.
const HEAD: u8 = 0;
/// A request is being served (its body has its own timeout, see `media.rs`).
const REQUEST: u8 = 1;
/// Between requests.
const IDLE: u8 = 2;

/// Where one connection is in its life, and since when.
#[derive(Debug)]
pub(crate) struct ConnClock {
    base: Instant,
    phase: AtomicU8,
    since_ms: AtomicU64,
}

impl ConnClock {
    /// A clock for a connection accepted now: waiting for its first header.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            base: Instant::now(),
            phase: AtomicU8::new(HEAD),
            since_ms: AtomicU64::new(0),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Bytes arrived: an idle connection starts a header.
    pub(crate) fn bytes_arrived(&self) {
        if self.phase.load(Ordering::Acquire) == IDLE {
            self.since_ms.store(self.now_ms(), Ordering::Release);
            self.phase.store(HEAD, Ordering::Release);
        }
    }

    /// A whole header arrived.
    fn request_started(&self) {
        self.phase.store(REQUEST, Ordering::Release);
    }

    /// The response is on its way: the connection is idle from now on.
    fn response_ready(&self) {
        self.since_ms.store(self.now_ms(), Ordering::Release);
        self.phase.store(IDLE, Ordering::Release);
    }

    /// When the connection is to be closed if nothing happens before; `None` while a request
    /// is being served.
    pub(crate) fn deadline(
        &self,
        header_timeout: Duration,
        idle_timeout: Duration,
    ) -> Option<Instant> {
        let limit = match self.phase.load(Ordering::Acquire) {
            HEAD => header_timeout,
            IDLE => idle_timeout,
            _ => return None,
        };
        let since = Duration::from_millis(self.since_ms.load(Ordering::Acquire));
        Some(self.base + since + limit)
    }
}

/// A hyper service that tells its [`ConnClock`] when each request starts and its response is
/// ready.
#[derive(Debug, Clone)]
pub(crate) struct TimedService<S> {
    inner: S,
    clock: Arc<ConnClock>,
}

impl<S> TimedService<S> {
    /// Wraps `inner`.
    pub(crate) fn new(inner: S, clock: Arc<ConnClock>) -> Self {
        Self { inner, clock }
    }
}

impl<S, R> hyper::service::Service<R> for TimedService<S>
where
    S: hyper::service::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = TimedFuture<S::Future>;

    fn call(&self, request: R) -> Self::Future {
        self.clock.request_started();
        TimedFuture {
            inner: self.inner.call(request),
            clock: Arc::clone(&self.clock),
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of a [`TimedService`]: tells the clock when it is ready. (Not boxed: this
    /// runs for every request.)
    pub struct TimedFuture<F> {
        #[pin]
        inner: F,
        clock: Arc<ConnClock>,
    }
}

impl<F: Future> Future for TimedFuture<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let response = ready!(this.inner.poll(cx));
        this.clock.response_ready();
        Poll::Ready(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Duration = Duration::from_secs(10);
    const IDLE_LIMIT: Duration = Duration::from_secs(60);

    #[test]
    fn phases_choose_the_limit() {
        let c = ConnClock::new();
        let first = c.deadline(HEADER, IDLE_LIMIT).unwrap();
        assert_eq!(
            first,
            c.base + HEADER,
            "a new connection waits for its header"
        );
        c.request_started();
        assert_eq!(
            c.deadline(HEADER, IDLE_LIMIT),
            None,
            "no limit while serving"
        );
        c.bytes_arrived();
        assert_eq!(
            c.deadline(HEADER, IDLE_LIMIT),
            None,
            "body bytes do not start a header"
        );
        c.response_ready();
        let idle = c.deadline(HEADER, IDLE_LIMIT).unwrap();
        assert!(
            idle >= c.base + IDLE_LIMIT,
            "idle between requests: the idle limit"
        );
        c.bytes_arrived();
        let head = c.deadline(HEADER, IDLE_LIMIT).unwrap();
        assert!(
            head < idle,
            "the next header has the header limit from its first byte"
        );
    }
}
