//! The HTTP/1.1 accept loop with the limits a public node needs: a header read timeout, an
//! idle timeout between keep-alive requests (both kept by [`crate::conn_clock`]), a cap on
//! open connections below the open-file limit, a lingering close (so a client still sending
//! reads its answer, [`crate::conn_stream`]) and graceful shutdown.

use std::{
    cell::RefCell,
    convert::Infallible,
    future::Future,
    io,
    sync::Arc,
    task::{Context, Poll, Waker},
    time::{Duration, Instant},
};

use axum::{extract::Request, response::Response};
use futures::future::Either;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{net::TcpListener, sync::Semaphore};
use tower::{
    util::{BoxCloneSyncService, Oneshot},
    Service, ServiceExt,
};

use crate::{
    conn_clock::{ConnClock, TimedService},
    conn_stream::ConnStream,
    unread_body::{note_body, CloseIfUnread},
};

/// A service the accept loop serves: the API inside its layers (`router::app`), or the
/// metrics listener's router.
pub type ApiService = BoxCloneSyncService<Request, Response, Infallible>;

/// Share of the open-file limit that connections may use by default; the rest stays for the
/// log segments, the store and the process itself.
pub const DEFAULT_CONNECTION_SHARE: f64 = 0.8;
/// Pause after a failed accept (e.g. no file descriptor left), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// While a request is served, how often its connection's task looks at the clock again.
const RECHECK: Duration = Duration::from_secs(1);

/// Connection limits of the API listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Time a client has to send a request's header, from the accept (first request) or
    /// from the header's first byte (later requests).
    pub header_timeout: Duration,
    /// Longest time a keep-alive connection may sit between two requests.
    pub idle_timeout: Duration,
    /// Most connections open at once; further clients wait in the kernel's backlog.
    pub max_connections: usize,
}

/// The default connection cap: [`DEFAULT_CONNECTION_SHARE`] of the soft open-file limit.
pub fn default_max_connections() -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(1 << 20);
    let share = (soft as f64 * DEFAULT_CONNECTION_SHARE) as usize;
    share.clamp(16, 1 << 20)
}

/// The API as one connection's hyper service. hyper-util's `TowerToHyperService` clones the
/// service for every request (here: a box and the whole layer stack, then their drop); a
/// connection's requests come one at a time, so this calls its own copy in place, and clones
/// only if the stack were ever not ready (none of its layers waits).
struct ConnService(RefCell<ApiService>);

/// What [`ConnService`] answers with: the stack's answer, or a clone's if it was not ready,
/// marked `Connection: close` if the request's body was left unread.
type ConnFuture =
    CloseIfUnread<Either<<ApiService as Service<Request>>::Future, Oneshot<ApiService, Request>>>;

impl hyper::service::Service<hyper::Request<Incoming>> for ConnService {
    type Response = Response;
    type Error = Infallible;
    type Future = ConnFuture;

    fn call(&self, request: hyper::Request<Incoming>) -> ConnFuture {
        let (request, body_read) = note_body(request);
        // Borrowed only within this call, which hyper does not re-enter.
        let mut app = self.0.borrow_mut();
        let answer = match app.poll_ready(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(())) => Either::Left(app.call(request)),
            Poll::Ready(Err(never)) => match never {},
            Poll::Pending => Either::Right(app.clone().oneshot(request)),
        };
        CloseIfUnread::new(answer, body_read)
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then gives open connections at most
/// `grace` to finish.
///
/// # Errors
/// Only a fault of the listener's own address lookup; accept errors are logged and retried.
pub async fn serve(
    listener: TcpListener,
    app: ApiService,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
) -> io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).keep_alive(true);
    // Graceful shutdown: each connection holds a receiver; on shutdown every connection is
    // told to finish its request, and the loop waits until all receivers are gone. (hyper-util's
    // `GracefulShutdown` does not take a connection that may upgrade, as `/api/mqtt/v1` does.)
    let (stopping, stop_rx) = tokio::sync::watch::channel(false);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut at_cap = false;
    let mut accept_failing = false;
    tokio::pin!(shutdown);
    loop {
        let permit = match Arc::clone(&slots).try_acquire_owned() {
            Ok(permit) => {
                at_cap = false;
                permit
            }
            Err(_) => {
                if !at_cap {
                    tracing::warn!(
                        max = limits.max_connections,
                        "connection limit reached: new clients wait until one closes"
                    );
                    at_cap = true;
                }
                tokio::select! {
                    permit = Arc::clone(&slots).acquire_owned() => {
                        permit.map_err(|e| io::Error::other(e.to_string()))?
                    }
                    () = &mut shutdown => break,
                }
            }
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if accept_failing {
                        tracing::info!("accepting connections again");
                        accept_failing = false;
                    }
                    stream
                }
                Err(e) => {
                    if !accept_failing {
                        tracing::warn!(error = %e, "accept failed; retrying");
                        accept_failing = true;
                    }
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let clock = ConnClock::new();
        let io = TokioIo::new(ConnStream::new(stream, Arc::clone(&clock)));
        let service = TimedService::new(ConnService(RefCell::new(app.clone())), Arc::clone(&clock));
        let connection = http.serve_connection(io, service).with_upgrades();
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            tokio::pin!(connection);
            let mut stopping = false;
            loop {
                let due =
                    |clock: &ConnClock| clock.deadline(limits.header_timeout, limits.idle_timeout);
                let wake = due(&clock).unwrap_or_else(|| Instant::now() + RECHECK);
                tokio::select! {
                    // A connection ends with an error for resets: nothing to report.
                    _ = &mut connection => break,
                    () = tokio::time::sleep_until(wake.into()) => {
                        // Past its deadline: dropping the connection closes the socket.
                        if due(&clock).is_some_and(|d| d <= Instant::now()) {
                            break;
                        }
                    }
                    changed = stop.changed(), if !stopping => {
                        stopping = true;
                        if changed.is_ok() {
                            connection.as_mut().graceful_shutdown();
                        }
                    }
                }
            }
            drop(permit);
        });
    }
    tracing::info!("shutting down: no new connections");
    tokio::select! {
        () = async {
            let _ = stopping.send(true);
            drop(stop_rx);
            stopping.closed().await;
        } => {}
        () = tokio::time::sleep(grace) => {
            tracing::warn!("connections still open after the grace period; closing");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::{routing::post, Router};
    use tokio::{
        io::{AsyncReadExt, AsyncWriteExt},
        net::TcpStream,
    };

    use super::*;

    /// Serves a router whose `/read` reads its body and `/ignore` does not; returns its address
    /// and the sender that stops it.
    async fn start() -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
        let router = Router::new()
            .route(
                "/read",
                post(|body: String| async move { body.len().to_string() }),
            )
            .route(
                "/ignore",
                post(|| async { "ignored" }).get(|| async { "got" }),
            );
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let limits = ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(10),
            max_connections: 16,
        };
        let app = ApiService::new(router);
        tokio::spawn(serve(
            listener,
            app,
            limits,
            async {
                let _ = stopped.await;
            },
            Duration::from_secs(1),
        ));
        (addr, stop)
    }

    /// Sends `request` on a new connection; returns the answer's header block, lower-cased.
    async fn answer_head(addr: std::net::SocketAddr, request: &[u8]) -> String {
        let mut client = TcpStream::connect(addr).await.expect("connect");
        client.write_all(request).await.expect("write");
        let mut answer = Vec::new();
        let mut chunk = [0u8; 1024];
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tokio::time::timeout(Duration::from_secs(10), client.read(&mut chunk))
                .await
                .expect("an answer in time")
                .expect("read");
            assert!(n > 0, "closed before an answer: {answer:?}");
            answer.extend_from_slice(&chunk[..n]);
        }
        String::from_utf8_lossy(&answer).to_lowercase()
    }

    #[tokio::test]
    async fn an_answer_before_the_body_was_read_says_connection_close() {
        let (addr, _stop) = start().await;
        // Declared 100 000 bytes, 10 sent: the handler answers without reading them.
        let unread = answer_head(
            addr,
            b"POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n0123456789",
        )
        .await;
        assert!(unread.starts_with("http/1.1 200"), "{unread}");
        assert!(unread.contains("connection: close"), "{unread}");
        // A body read to its end, and a request without one: the connection stays.
        let read = answer_head(
            addr,
            b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789",
        )
        .await;
        assert!(read.starts_with("http/1.1 200"), "{read}");
        assert!(!read.contains("connection: close"), "{read}");
        let get = answer_head(addr, b"GET /ignore HTTP/1.1\r\nHost: x\r\n\r\n").await;
        assert!(get.starts_with("http/1.1 200"), "{get}");
        assert!(!get.contains("connection: close"), "{get}");
    }
}
