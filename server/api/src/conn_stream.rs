//! A connection's socket as the accept loop hands it to hyper ([`ConnStream`]): it tells the
//! connection's [`ConnClock`] when bytes arrive, and it closes lingering.
//!
//! Lingering close: when a connection ends, the socket's write side is shut first (the client
//! reads the answer, then end of stream) and what the client goes on sending is read and thrown
//! away, for a bounded time and size, before the socket is closed.
//!
//! Without it, a connection that ends while the client is still sending (a 413 answered from the
//! declared `Content-Length` before the body is read, or a request cut off by an error) is closed
//! with unread bytes in the socket's receive buffer, and the kernel answers them with a reset:
//! the client then reads "connection reset" instead of the answer it was sent. nginx calls this
//! `lingering_close`; hyper has no such option, but it shuts the socket down through the stream
//! it is given when a connection ends, which is where [`ConnStream`] drains. A client that
//! closed first ends the drain at once; an idle keep-alive connection that the node closes at a
//! stop waits at most [`LINGER_QUIET`] for its client to close. (A connection past its header or
//! idle timeout is dropped without a shutdown: no linger.)

use std::{
    future::Future,
    io,
    pin::Pin,
    sync::Arc,
    task::{ready, Context, Poll},
    time::{Duration, Instant},
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    time::Sleep,
};

use crate::conn_clock::ConnClock;

/// Longest time a closing connection keeps reading what its client still sends.
pub(crate) const LINGER_TIME: Duration = Duration::from_secs(2);
/// A closing connection whose client has sent nothing for this long is closed.
pub(crate) const LINGER_QUIET: Duration = Duration::from_millis(250);
/// Most bytes a closing connection reads and throws away.
pub(crate) const LINGER_BYTES: usize = 8 << 20;
/// Bytes read per read call while draining (on the stack).
const DRAIN_CHUNK: usize = 8 << 10;

/// Where a stream's close is.
#[derive(Debug)]
enum Closing {
    /// Not closing (or the write side's shutdown has not completed yet).
    Open,
    /// Write side shut: reading until end of stream, a quiet spell, the time bound or the byte
    /// bound.
    Draining {
        /// The time bound.
        end: Instant,
        /// Fires a quiet spell after the last bytes read (or at `end`).
        quiet: Pin<Box<Sleep>>,
        /// Bytes that may still be read.
        left: usize,
    },
    /// Drained (or given up): the shutdown is complete.
    Done,
}

/// A connection's socket: notes arrivals on its clock, lingers at its shutdown (see the module
/// documentation).
#[derive(Debug)]
pub(crate) struct ConnStream<S> {
    inner: S,
    /// Told when bytes arrive (not those thrown away while closing); `None` in tests of the
    /// close alone.
    clock: Option<Arc<ConnClock>>,
    closing: Closing,
    time: Duration,
    quiet: Duration,
    bytes: usize,
}

impl<S> ConnStream<S> {
    /// Wraps `inner` with the node's bounds ([`LINGER_TIME`], [`LINGER_QUIET`],
    /// [`LINGER_BYTES`]), telling `clock` when bytes arrive.
    pub(crate) fn new(inner: S, clock: Arc<ConnClock>) -> Self {
        let mut stream = Self::with_bounds(inner, LINGER_TIME, LINGER_QUIET, LINGER_BYTES);
        stream.clock = Some(clock);
        stream
    }

    /// Wraps `inner` without a clock, draining at most `time` in all, `quiet` after the last
    /// bytes and `bytes` in all when it is shut down.
    fn with_bounds(inner: S, time: Duration, quiet: Duration, bytes: usize) -> Self {
        Self {
            inner,
            clock: None,
            closing: Closing::Open,
            time,
            quiet,
            bytes,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for ConnStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            if let Some(clock) = &self.clock {
                clock.bytes_arrived();
            }
        }
        polled
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for ConnStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            match &mut this.closing {
                Closing::Open => {
                    ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
                    this.closing = Closing::Draining {
                        end: Instant::now() + this.time,
                        quiet: Box::pin(tokio::time::sleep(this.quiet.min(this.time))),
                        left: this.bytes,
                    };
                }
                Closing::Draining { end, quiet, left } => {
                    if quiet.as_mut().poll(cx).is_ready() {
                        this.closing = Closing::Done;
                        continue;
                    }
                    match ready!(drain_once(&mut this.inner, cx)) {
                        Some(n) if n < *left => {
                            *left -= n;
                            let next = (Instant::now() + this.quiet).min(*end);
                            quiet.as_mut().reset(next.into());
                        }
                        _ => this.closing = Closing::Done,
                    }
                }
                Closing::Done => return Poll::Ready(Ok(())),
            }
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Reads one chunk and throws it away: `Some(bytes read)`, or `None` at end of stream or on an
/// error (a reset: nothing more will come either way).
fn drain_once<S: AsyncRead + Unpin>(inner: &mut S, cx: &mut Context<'_>) -> Poll<Option<usize>> {
    let mut chunk = [0u8; DRAIN_CHUNK];
    let mut buf = ReadBuf::new(&mut chunk);
    let read = ready!(Pin::new(inner).poll_read(cx, &mut buf));
    let n = buf.filled().len();
    Poll::Ready((read.is_ok() && n > 0).then_some(n))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use tokio::{
        io::{AsyncReadExt, AsyncWriteExt},
        net::{TcpListener, TcpStream},
    };

    use super::*;

    /// A server that answers as soon as it has read `read_first` bytes and then shuts its
    /// socket down (lingering or not), against a client that sends `sent` bytes before it
    /// reads: what the client reads back.
    async fn answer_while_client_sends(
        linger: bool,
        read_first: usize,
        sent: usize,
    ) -> io::Result<Vec<u8>> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = tokio::spawn(async move {
            let (socket, _) = listener.accept().await?;
            let mut stream = if linger {
                ConnStream::with_bounds(socket, LINGER_TIME, LINGER_QUIET, LINGER_BYTES)
            } else {
                ConnStream::with_bounds(socket, Duration::ZERO, Duration::ZERO, 0)
            };
            let mut head = vec![0u8; read_first];
            stream.read_exact(&mut head).await?;
            stream
                .write_all(b"HTTP/1.1 413 Payload Too Large\r\n\r\n")
                .await?;
            stream.shutdown().await?;
            drop(stream);
            io::Result::Ok(())
        });
        let mut client = TcpStream::connect(addr).await?;
        client.write_all(&vec![b'x'; sent]).await?;
        let mut answer = Vec::new();
        client.read_to_end(&mut answer).await?;
        // The client's close ends the drain at once (not the time bound).
        drop(client);
        server.await.map_err(io::Error::other)??;
        Ok(answer)
    }

    #[tokio::test]
    async fn a_client_still_sending_reads_the_answer() {
        // 4 MiB is more than the loopback socket buffers hold: the client is still writing
        // when the server answers and closes.
        let answer = answer_while_client_sends(true, 100, 4 << 20).await;
        assert_eq!(
            answer.expect("the client's write and read succeed"),
            b"HTTP/1.1 413 Payload Too Large\r\n\r\n"
        );
    }

    #[tokio::test]
    async fn without_lingering_the_client_gets_a_reset() {
        // The case the module exists for: closing with unread bytes resets the connection.
        let answer = answer_while_client_sends(false, 100, 4 << 20).await;
        assert!(
            answer.is_err(),
            "expected a reset, the client read {:?}",
            answer.map(|a| String::from_utf8_lossy(&a).into_owned())
        );
    }

    /// A client that keeps sending and never closes: ends with the error of its first write
    /// after the server's close.
    async fn flood(addr: std::net::SocketAddr) -> io::Result<()> {
        let mut client = TcpStream::connect(addr).await?;
        let chunk = vec![b'x'; 64 << 10];
        loop {
            client.write_all(&chunk).await?;
        }
    }

    #[tokio::test]
    async fn draining_stops_at_its_bounds() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let client = tokio::spawn(flood(addr));
        let (socket, _) = listener.accept().await.expect("accept");
        // Bounded by time: a slow trickle or a flood, the shutdown completes.
        let mut by_time = ConnStream::with_bounds(
            socket,
            Duration::from_millis(200),
            Duration::from_secs(3600),
            usize::MAX,
        );
        let started = Instant::now();
        by_time.shutdown().await.expect("shutdown");
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(200), "{took:?}");
        drop(by_time);
        assert!(client.await.expect("client task").is_err());

        // Bounded by bytes.
        let client = tokio::spawn(flood(addr));
        let (socket, _) = listener.accept().await.expect("accept");
        let hour = Duration::from_secs(3600);
        let mut by_bytes = ConnStream::with_bounds(socket, hour, hour, 1 << 20);
        tokio::time::timeout(Duration::from_secs(60), by_bytes.shutdown())
            .await
            .expect("the byte bound ends the drain")
            .expect("shutdown");
        drop(by_bytes);
        assert!(client.await.expect("client task").is_err());
    }

    #[tokio::test]
    async fn an_idle_client_is_waited_for_the_quiet_spell_only() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        // Connected, sends nothing, never closes (a keep-alive pool's idle connection).
        let idle = TcpStream::connect(addr).await.expect("connect");
        let (socket, _) = listener.accept().await.expect("accept");
        let mut stream = ConnStream::with_bounds(socket, LINGER_TIME, LINGER_QUIET, LINGER_BYTES);
        let started = Instant::now();
        tokio::time::timeout(Duration::from_secs(60), stream.shutdown())
            .await
            .expect("the quiet spell ends the drain")
            .expect("shutdown");
        let took = started.elapsed();
        assert!(
            took >= LINGER_QUIET && took < LINGER_TIME,
            "an idle client held the close for {took:?}"
        );
        drop(idle);
    }
}
