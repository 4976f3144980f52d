//! [`RawPeer`]: a minimal libp2p peer for tests, built from the same stack as the node (TCP +
//! Noise + yamux, identify, ping, libp2p-stream), that opens the gossip stream and lets the
//! test write any bytes, read the node's frames with `ledger_codec::gossip::FrameReader`, and
//! see when the node resets the stream or closes the connection.
//!
//! Each `RawPeer` owns a small tokio runtime driving its swarm; the test thread talks to it
//! with blocking calls, every one bounded by a timeout.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use futures::{AsyncReadExt, AsyncWriteExt, StreamExt};
use ledger_codec::gossip::{FrameReader, Heartbeat, Message};
use libp2p::{
    identify,
    identity::Keypair,
    noise, ping,
    swarm::{NetworkBehaviour, SwarmEvent},
    tcp, yamux, Multiaddr, PeerId, Stream, StreamProtocol, Swarm,
};
use tokio::sync::{mpsc, watch};

/// Our own connections stay up this long without streams, so a closed connection is the
/// node's doing, never our idle timeout.
const OUR_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(NetworkBehaviour)]
struct Behaviour {
    identify: identify::Behaviour,
    ping: ping::Behaviour,
    stream: libp2p_stream::Behaviour,
}

/// What the swarm task has seen.
#[derive(Debug, Default, Clone)]
struct ConnState {
    /// Established connections per peer.
    established: HashMap<PeerId, u32>,
    /// Connections closed so far, per peer.
    closed: HashMap<PeerId, u32>,
    /// The last outgoing connection error.
    dial_error: Option<String>,
}

enum Command {
    Disconnect(PeerId),
}

/// Why a read stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// EOF: the remote closed its side of the stream.
    Eof,
    /// An I/O error (a reset stream, a closed connection).
    Io(String),
    /// The remote sent bytes that are not a valid gossip frame.
    BadFrame(String),
}

/// When a drop was observed, measured from the start of [`RawPeer::wait_dropped`].
#[derive(Debug, Clone)]
pub struct Dropped {
    /// When our reads ended (EOF or error), and how.
    pub stream_ended: Option<(Duration, Ended)>,
    /// When our last connection to the node was gone.
    pub connection_closed: Option<Duration>,
    /// Frames received while waiting.
    pub frames: usize,
}

impl Dropped {
    /// Asserts that the stream ended and the connection closed within `bound`, the stream
    /// not by a malformed frame of the node.
    #[track_caller]
    pub fn assert_within(&self, bound: Duration, what: &str) {
        match &self.stream_ended {
            Some((at, how)) => {
                assert!(
                    !matches!(how, Ended::BadFrame(_)),
                    "{what}: the node sent a malformed frame: {self:?}"
                );
                assert!(*at <= bound, "{what}: stream ended late: {self:?}");
            }
            None => panic!("{what}: the node kept the gossip stream open for {bound:?}: {self:?}"),
        }
        match self.connection_closed {
            Some(at) => assert!(at <= bound, "{what}: connection closed late: {self:?}"),
            None => panic!("{what}: the node kept the connection open for {bound:?}: {self:?}"),
        }
    }

    /// The later of the two moments (stream ended, connection closed); `None` unless both.
    pub fn both_at(&self) -> Option<Duration> {
        let (s, _) = self.stream_ended.as_ref()?;
        Some((*s).max(self.connection_closed?))
    }
}

/// A libp2p peer that speaks the gossip protocol by hand.
pub struct RawPeer {
    rt: tokio::runtime::Runtime,
    local_id: PeerId,
    remote: Option<PeerId>,
    protocol: StreamProtocol,
    control: libp2p_stream::Control,
    incoming: Option<libp2p_stream::IncomingStreams>,
    stream: Option<Stream>,
    reader: FrameReader,
    /// Messages read but not yet handed out.
    pending: std::collections::VecDeque<Message<'static>>,
    /// Every message handed out so far, in order.
    seen: Vec<Message<'static>>,
    /// Set once reads ended.
    ended: Option<Ended>,
    state: watch::Receiver<ConnState>,
    commands: mpsc::UnboundedSender<Command>,
    listen_addr: Option<Multiaddr>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for RawPeer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn build_swarm(key: Keypair) -> Swarm<Behaviour> {
    libp2p::SwarmBuilder::with_existing_identity(key)
        .with_tokio()
        .with_tcp(
            tcp::Config::default().nodelay(true),
            noise::Config::new,
            yamux::Config::default,
        )
        .expect("tcp transport")
        .with_behaviour(|key| Behaviour {
            identify: identify::Behaviour::new(
                identify::Config::new("iota/0.1.0".into(), key.public())
                    .with_agent_version("ledger-node-tests/raw-peer".into()),
            ),
            ping: ping::Behaviour::new(ping::Config::new()),
            stream: libp2p_stream::Behaviour::new(),
        })
        .expect("behaviour")
        .with_swarm_config(|c| c.with_idle_connection_timeout(OUR_IDLE_TIMEOUT))
        .build()
}

/// Drives the swarm, publishing connection counts, until aborted.
async fn drive(
    mut swarm: Swarm<Behaviour>,
    state: watch::Sender<ConnState>,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    loop {
        tokio::select! {
            event = swarm.select_next_some() => match event {
                SwarmEvent::ConnectionEstablished { peer_id, num_established, .. } => {
                    state.send_modify(|s| {
                        s.established.insert(peer_id, num_established.get());
                    });
                }
                SwarmEvent::ConnectionClosed { peer_id, num_established, .. } => {
                    state.send_modify(|s| {
                        s.established.insert(peer_id, num_established);
                        *s.closed.entry(peer_id).or_default() += 1;
                    });
                }
                SwarmEvent::OutgoingConnectionError { error, .. } => {
                    state.send_modify(|s| s.dial_error = Some(error.to_string()));
                }
                _ => {}
            },
            command = commands.recv() => match command {
                Some(Command::Disconnect(peer)) => {
                    let _ = swarm.disconnect_peer_id(peer);
                }
                None => return,
            },
        }
    }
}

/// The node's peer id at the end of a `/p2p/<id>` multiaddr.
pub fn peer_id_of(addr: &Multiaddr) -> Option<PeerId> {
    addr.iter().last().and_then(|p| match p {
        libp2p::multiaddr::Protocol::P2p(id) => Some(id),
        _ => None,
    })
}

impl RawPeer {
    /// A peer whose swarm is not yet driven: the caller dials or listens on the returned
    /// swarm, then hands it to [`RawPeer::spawn`].
    fn new(key: Keypair, protocol: &str) -> (Self, Swarm<Behaviour>) {
        let rt = runtime();
        let local_id = key.public().to_peer_id();
        let swarm = {
            let _guard = rt.enter();
            build_swarm(key)
        };
        let control = swarm.behaviour().stream.new_control();
        // Replaced by `spawn`; until then nothing is connected.
        let (_, state) = watch::channel(ConnState::default());
        let (commands, _) = mpsc::unbounded_channel();
        let peer = Self {
            rt,
            local_id,
            remote: None,
            protocol: StreamProtocol::try_from_owned(protocol.to_owned())
                .expect("protocol id starts with /"),
            control,
            incoming: None,
            stream: None,
            reader: FrameReader::new(),
            pending: Default::default(),
            seen: Vec::new(),
            ended: None,
            state,
            commands,
            listen_addr: None,
            task: None,
        };
        (peer, swarm)
    }

    fn spawn(&mut self, swarm: Swarm<Behaviour>) {
        let (state_tx, state) = watch::channel(ConnState::default());
        let (commands, command_rx) = mpsc::unbounded_channel();
        self.state = state;
        self.commands = commands;
        self.task = Some(self.rt.spawn(drive(swarm, state_tx, command_rx)));
    }

    /// A fresh random identity dials `addr` (a full multiaddr ending in `/p2p/<id>`) and
    /// opens the gossip stream `protocol`; panics if either fails within 10 s.
    pub fn connect(addr: &str, protocol: &str) -> Self {
        Self::connect_as(Keypair::generate_ed25519(), addr, protocol)
            .unwrap_or_else(|e| panic!("raw peer could not open {protocol} to {addr}: {e}"))
    }

    /// Dials `addr` as `key` and opens the gossip stream; `Err` names what failed (the dial,
    /// the connection, the stream).
    pub fn connect_as(key: Keypair, addr: &str, protocol: &str) -> Result<Self, String> {
        let mut peer = Self::dial_as(key, addr, protocol)?;
        peer.open_stream()?;
        Ok(peer)
    }

    /// Dials `addr` as `key` and waits for the connection (no stream yet).
    pub fn dial_as(key: Keypair, addr: &str, protocol: &str) -> Result<Self, String> {
        let addr: Multiaddr = addr.parse().map_err(|e| format!("bad multiaddr: {e}"))?;
        let remote = peer_id_of(&addr).ok_or("multiaddr without /p2p/<id>")?;
        let (mut peer, mut swarm) = Self::new(key, protocol);
        {
            let _guard = peer.rt.enter();
            swarm.dial(addr).map_err(|e| format!("dial: {e}"))?;
        }
        peer.remote = Some(remote);
        peer.spawn(swarm);
        peer.wait_connected(Duration::from_secs(10))?;
        Ok(peer)
    }

    /// A listener on `127.0.0.1` accepting gossip streams on `protocol` (to test this
    /// harness without a node); its address is [`RawPeer::listen_addr`].
    pub fn listen(protocol: &str) -> Self {
        let (mut peer, mut swarm) = Self::new(Keypair::generate_ed25519(), protocol);
        peer.incoming = Some(
            peer.control
                .accept(peer.protocol.clone())
                .expect("protocol not yet accepted"),
        );
        {
            let _guard = peer.rt.enter();
            swarm
                .listen_on("/ip4/127.0.0.1/tcp/0".parse().expect("multiaddr"))
                .expect("listen");
        }
        let addr = peer.rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), async {
                loop {
                    if let SwarmEvent::NewListenAddr { address, .. } =
                        swarm.select_next_some().await
                    {
                        return address;
                    }
                }
            })
            .await
            .expect("listen address within 10 s")
        });
        let full = addr.with(libp2p::multiaddr::Protocol::P2p(peer.local_id));
        peer.listen_addr = Some(full);
        peer.spawn(swarm);
        peer
    }

    /// Our full listen multiaddr (listeners only).
    pub fn listen_addr(&self) -> String {
        self.listen_addr.as_ref().expect("a listener").to_string()
    }

    /// Waits up to `timeout` for an inbound gossip stream (listeners only).
    pub fn accept(&mut self, timeout: Duration) -> Result<(), String> {
        let incoming = self.incoming.as_mut().expect("a listener");
        let next = self
            .rt
            .block_on(async { tokio::time::timeout(timeout, incoming.next()).await });
        match next {
            Ok(Some((peer, stream))) => {
                self.remote = Some(peer);
                self.stream = Some(stream);
                self.reset_reader();
                Ok(())
            }
            Ok(None) => Err("incoming streams ended".into()),
            Err(_) => Err(format!("no inbound stream within {timeout:?}")),
        }
    }

    fn reset_reader(&mut self) {
        self.reader = FrameReader::new();
        self.pending.clear();
        self.seen.clear();
        self.ended = None;
    }

    fn wait_connected(&mut self, timeout: Duration) -> Result<(), String> {
        let remote = self.remote.expect("remote");
        let mut state = self.state.clone();
        self.rt.block_on(async {
            tokio::time::timeout(timeout, async {
                loop {
                    {
                        let s = state.borrow_and_update();
                        if s.established.get(&remote).copied().unwrap_or(0) > 0 {
                            return Ok(());
                        }
                        if let Some(e) = &s.dial_error {
                            return Err(format!("dial failed: {e}"));
                        }
                        if s.closed.get(&remote).copied().unwrap_or(0) > 0 {
                            return Err("the remote closed the connection at once".to_owned());
                        }
                    }
                    if state.changed().await.is_err() {
                        return Err("swarm task ended".to_owned());
                    }
                }
            })
            .await
            .unwrap_or_else(|_| Err(format!("no connection within {timeout:?}")))
        })
    }

    /// Opens the gossip stream to the remote (5 s bound).
    pub fn open_stream(&mut self) -> Result<(), String> {
        let remote = self.remote.expect("remote");
        let protocol = self.protocol.clone();
        let control = &mut self.control;
        let stream = self.rt.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(5),
                control.open_stream(remote, protocol),
            )
            .await
        });
        match stream {
            Ok(Ok(stream)) => {
                self.stream = Some(stream);
                self.reset_reader();
                Ok(())
            }
            Ok(Err(e)) => Err(format!("open stream: {e}")),
            Err(_) => Err("open stream: no answer within 5 s".into()),
        }
    }

    /// Our peer id as text.
    pub fn id(&self) -> String {
        self.local_id.to_string()
    }

    /// Established connections to the remote right now.
    pub fn connections(&self) -> u32 {
        let remote = self.remote.expect("remote");
        self.state
            .borrow()
            .established
            .get(&remote)
            .copied()
            .unwrap_or(0)
    }

    /// Closes our connections to the remote (listeners: drops the peer that dialed in).
    pub fn disconnect(&mut self) {
        let remote = self.remote.expect("remote");
        let _ = self.commands.send(Command::Disconnect(remote));
    }

    /// Drops our end of the gossip stream (the connection stays).
    pub fn drop_stream(&mut self) {
        self.stream = None;
    }

    /// Writes `bytes` to the gossip stream and flushes (10 s bound).
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        let stream = self.stream.as_mut().ok_or("no stream")?;
        self.rt.block_on(async {
            match tokio::time::timeout(Duration::from_secs(10), async {
                stream.write_all(bytes).await?;
                stream.flush().await
            })
            .await
            {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(format!("write: {e}")),
                Err(_) => Err("write: blocked for 10 s".into()),
            }
        })
    }

    /// Encodes and sends one message; panics if the write fails.
    #[track_caller]
    pub fn send_message(&mut self, message: &Message<'_>) {
        let bytes = message.to_bytes().expect("encodable message");
        if let Err(e) = self.send(&bytes) {
            panic!("sending {:?}: {e}", message.message_type());
        }
    }

    /// Sends a heartbeat with these indexes (1 connected, 1 synced peer).
    #[track_caller]
    pub fn send_heartbeat(&mut self, solid: u32, latest: u32) {
        self.send_message(&Message::Heartbeat(Heartbeat {
            solid_milestone_index: solid,
            pruned_milestone_index: 0,
            latest_milestone_index: latest,
            connected_peers: 1,
            synced_peers: 1,
        }));
    }

    /// Every message read from the current stream so far, in order (also those that
    /// [`RawPeer::stay`] and the waits discarded).
    pub fn seen(&self) -> &[Message<'static>] {
        &self.seen
    }

    /// Waits until a message matching `want` has been read from the current stream, counting
    /// those read before; returns its position in [`RawPeer::seen`].
    pub fn wait_seen(
        &mut self,
        timeout: Duration,
        mut want: impl FnMut(&Message<'static>) -> bool,
    ) -> Result<usize, String> {
        if let Some(i) = self.seen.iter().position(&mut want) {
            return Ok(i);
        }
        self.wait_for(timeout, want)?;
        Ok(self.seen.len() - 1)
    }

    /// The next message within `timeout`: `Ok(None)` on timeout, `Err` once the stream ended.
    pub fn next_message(&mut self, timeout: Duration) -> Result<Option<Message<'static>>, Ended> {
        let next = self.read_message(timeout);
        if let Ok(Some(m)) = &next {
            self.seen.push(m.clone());
        }
        next
    }

    fn read_message(&mut self, timeout: Duration) -> Result<Option<Message<'static>>, Ended> {
        if let Some(m) = self.pending.pop_front() {
            return Ok(Some(m));
        }
        if let Some(e) = &self.ended {
            return Err(e.clone());
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(stream) = self.stream.as_mut() else {
                return Err(Ended::Io("no stream".into()));
            };
            let mut buf = vec![0u8; 64 * 1024];
            let read = self
                .rt
                .block_on(async { tokio::time::timeout(left, stream.read(&mut buf)).await });
            let n = match read {
                Err(_) => return Ok(None),
                Ok(Ok(0)) => {
                    self.ended = Some(Ended::Eof);
                    return Err(Ended::Eof);
                }
                Ok(Ok(n)) => n,
                Ok(Err(e)) => {
                    let ended = Ended::Io(e.to_string());
                    self.ended = Some(ended.clone());
                    return Err(ended);
                }
            };
            for frame in self.reader.push(buf.get(..n).unwrap_or_default()) {
                match frame {
                    Ok(m) => self.pending.push_back(m),
                    Err(e) => {
                        let ended = Ended::BadFrame(e.to_string());
                        self.ended = Some(ended.clone());
                        return Err(ended);
                    }
                }
            }
            if let Some(m) = self.pending.pop_front() {
                return Ok(Some(m));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    /// Reads until a message matching `want` arrives (others are discarded) within
    /// `timeout`.
    pub fn wait_for(
        &mut self,
        timeout: Duration,
        mut want: impl FnMut(&Message<'static>) -> bool,
    ) -> Result<Message<'static>, String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no such message within {timeout:?}; saw {seen:?}"));
            }
            match self.next_message(left) {
                Ok(Some(m)) if want(&m) => return Ok(m),
                Ok(Some(m)) => seen.push(m.message_type()),
                Ok(None) => {}
                Err(e) => return Err(format!("stream ended ({e:?}); saw {seen:?}")),
            }
        }
    }

    /// Reads (discarding frames) for `duration`; `Err` if the stream ends meanwhile. With
    /// `heartbeat_every`, sends a heartbeat at that period so liveness rules keep us.
    pub fn stay(
        &mut self,
        duration: Duration,
        heartbeat_every: Option<Duration>,
    ) -> Result<usize, Ended> {
        let start = Instant::now();
        let mut last_heartbeat = Instant::now();
        let mut frames = 0;
        while start.elapsed() < duration {
            if let Some(every) = heartbeat_every {
                if last_heartbeat.elapsed() >= every {
                    if let Err(e) = self.send(
                        &Message::Heartbeat(Heartbeat::default())
                            .to_bytes()
                            .expect("heartbeat"),
                    ) {
                        return Err(Ended::Io(e));
                    }
                    last_heartbeat = Instant::now();
                }
            }
            let left = duration.saturating_sub(start.elapsed());
            match self.next_message(left.min(Duration::from_millis(100))) {
                Ok(Some(_)) => frames += 1,
                Ok(None) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(frames)
    }

    /// Waits up to `timeout` for the node to end the gossip stream and close the connection,
    /// reading (and discarding) its frames meanwhile. `tick` is called every ~100 ms while
    /// the stream is open (to keep sending something, say).
    pub fn wait_dropped_with(
        &mut self,
        timeout: Duration,
        mut tick: impl FnMut(&mut Self),
    ) -> Dropped {
        let start = Instant::now();
        let mut out = Dropped {
            stream_ended: None,
            connection_closed: None,
            frames: 0,
        };
        while start.elapsed() < timeout {
            if out.stream_ended.is_none() {
                tick(self);
                let left = timeout.saturating_sub(start.elapsed());
                match self.next_message(left.min(Duration::from_millis(100))) {
                    Ok(Some(_)) => out.frames += 1,
                    Ok(None) => {}
                    Err(e) => out.stream_ended = Some((start.elapsed(), e)),
                }
            } else {
                std::thread::sleep(Duration::from_millis(20));
            }
            if out.connection_closed.is_none() && self.connections() == 0 {
                out.connection_closed = Some(start.elapsed());
            }
            if out.stream_ended.is_some() && out.connection_closed.is_some() {
                break;
            }
        }
        out
    }

    /// [`RawPeer::wait_dropped_with`] sending nothing.
    pub fn wait_dropped(&mut self, timeout: Duration) -> Dropped {
        self.wait_dropped_with(timeout, |_| {})
    }
}
