//! The libp2p swarm and the one task that owns it (`docs/peering.md` §2): TCP + Noise +
//! yamux with identify, ping, connection limits and a block list; dialing known peers with
//! backoff; opening the gossip stream on connections we dialed; bans; and the commands of
//! the REST layer.

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use futures::StreamExt;
use libp2p::{
    allow_block_list, connection_limits, identify, noise, ping,
    swarm::{
        dial_opts::{DialOpts, PeerCondition},
        NetworkBehaviour, SwarmEvent,
    },
    tcp, yamux, Multiaddr, PeerId, StreamProtocol, Swarm,
};
use rand::Rng;
use tokio::sync::{mpsc, oneshot};

use crate::{
    gossip::{Gossip, PeerAction},
    peering_file::{self, PeeringEntry},
    registry::PeerRegistry,
    session::{self, SessionRules},
    BadPeer, P2pError, PeerInfo,
};

/// How long a peer that sent invalid data stays banned.
pub const BAN: Duration = Duration::from_secs(5 * 60);
/// How long binding the listeners may take.
const BIND_TIMEOUT: Duration = Duration::from_secs(10);
/// Dial timeout (Hornet's).
const DIAL_TIMEOUT: Duration = Duration::from_secs(5);
/// Opening the gossip stream may take this long.
const STREAM_OPEN_TIMEOUT: Duration = Duration::from_secs(4);
/// Connections per peer (two let a simultaneous dial converge).
const MAX_PER_PEER: u32 = 2;
/// Inbound connections still in their handshake.
const MAX_PENDING_INCOMING: u32 = 8;

pub use behaviour::{Behaviour, BehaviourEvent};

#[expect(
    missing_docs,
    reason = "the NetworkBehaviour derive generates an undocumented event enum"
)]
mod behaviour {
    use super::{allow_block_list, connection_limits, identify, ping, NetworkBehaviour};

    /// The node's libp2p behaviours.
    #[derive(NetworkBehaviour)]
    pub struct Behaviour {
        pub(super) limits: connection_limits::Behaviour,
        pub(super) blocked: allow_block_list::Behaviour<allow_block_list::BlockedPeers>,
        pub(super) identify: identify::Behaviour,
        pub(super) ping: ping::Behaviour,
        pub(super) stream: libp2p_stream::Behaviour,
    }
}

/// A command from the REST layer.
#[derive(Debug)]
pub enum Command {
    /// Add a known peer, persist it and dial it.
    Add {
        /// Full multiaddr with `/p2p/<id>`.
        addr: Multiaddr,
        /// Its id.
        id: PeerId,
        /// Alias.
        alias: Option<String>,
        /// The peer as now listed.
        reply: oneshot::Sender<Result<PeerInfo, BadPeer>>,
    },
    /// Remove a peer (known or not), persist and disconnect it.
    Remove {
        /// Its id.
        id: PeerId,
        /// False when the peer was not listed.
        reply: oneshot::Sender<Result<bool, BadPeer>>,
    },
}

/// Per known peer: when to dial next.
#[derive(Debug, Default)]
struct Redial {
    failures: u32,
    next: Option<Instant>,
}

/// What the swarm task needs.
pub struct SwarmTask {
    pub(super) swarm: Swarm<Behaviour>,
    pub(super) local: PeerId,
    pub(super) protocol: StreamProtocol,
    pub(super) gossip: Arc<Gossip>,
    pub(super) registry: Arc<PeerRegistry>,
    pub(super) rules: SessionRules,
    pub(super) store: PathBuf,
    pub(super) reconnect_cap: Duration,
    pub(super) commands: mpsc::Receiver<Command>,
    pub(super) actions: mpsc::Receiver<PeerAction>,
    pub(super) listen: Vec<Multiaddr>,
    redial: HashMap<PeerId, Redial>,
    banned: HashMap<PeerId, Instant>,
    // Known-peer addresses with names, resolved off the task and handed back to dial.
    resolved_tx: mpsc::Sender<(PeerId, Vec<Multiaddr>)>,
    resolved_rx: mpsc::Receiver<(PeerId, Vec<Multiaddr>)>,
}

/// Builds the swarm for `keypair`.
///
/// # Errors
/// The transport or a behaviour could not be built.
pub fn build(
    keypair: libp2p::identity::Keypair,
    known_peers: usize,
    unknown_limit: usize,
) -> Result<Swarm<Behaviour>, P2pError> {
    let limits = connection_limits::ConnectionLimits::default()
        .with_max_established_per_peer(Some(MAX_PER_PEER))
        .with_max_pending_incoming(Some(MAX_PENDING_INCOMING))
        .with_max_established_incoming(Some(
            u32::try_from(known_peers + unknown_limit + 4).unwrap_or(u32::MAX),
        ));
    let swarm = libp2p::SwarmBuilder::with_existing_identity(keypair)
        .with_tokio()
        .with_tcp(
            tcp::Config::default().nodelay(true),
            noise::Config::new,
            yamux::Config::default,
        )
        .map_err(|e| P2pError::Transport(e.into()))?
        .with_behaviour(|key| Behaviour {
            limits: connection_limits::Behaviour::new(limits),
            blocked: allow_block_list::Behaviour::default(),
            identify: identify::Behaviour::new(
                identify::Config::new("iota/0.1.0".into(), key.public())
                    .with_agent_version(format!("ledger-node/{}", env!("CARGO_PKG_VERSION"))),
            ),
            ping: ping::Behaviour::new(
                ping::Config::new()
                    .with_interval(Duration::from_secs(15))
                    .with_timeout(Duration::from_secs(20)),
            ),
            stream: libp2p_stream::Behaviour::new(),
        })
        .map_err(|e| P2pError::Transport(e.into()))?
        .with_swarm_config(|c| {
            c.with_idle_connection_timeout(Duration::from_secs(10))
                .with_max_negotiating_inbound_streams(32)
                .with_dial_concurrency_factor(std::num::NonZeroU8::MIN)
        })
        .build();
    Ok(swarm)
}

/// Fails when another process listens on `addr`'s TCP port. libp2p's TCP transport sets
/// SO_REUSEPORT on its listeners, so a second node on a taken port would bind too and the
/// kernel would split the inbound connections between the two; a plain bind (without
/// SO_REUSEPORT) tells a taken port apart first.
pub fn port_is_free(addr: &Multiaddr) -> std::io::Result<()> {
    use libp2p::multiaddr::Protocol;
    let mut parts = addr.iter();
    let ip: std::net::IpAddr = match parts.next() {
        Some(Protocol::Ip4(ip)) => ip.into(),
        Some(Protocol::Ip6(ip)) => ip.into(),
        _ => return Ok(()),
    };
    match parts.next() {
        Some(Protocol::Tcp(port)) if port != 0 => std::net::TcpListener::bind((ip, port)).map(drop),
        _ => Ok(()),
    }
}

impl SwarmTask {
    /// A task for `swarm` (listening already started by the caller).
    #[expect(
        clippy::too_many_arguments,
        reason = "the task owns each of these; a struct of them would only be unpacked again"
    )]
    pub fn new(
        swarm: Swarm<Behaviour>,
        protocol: StreamProtocol,
        gossip: Arc<Gossip>,
        registry: Arc<PeerRegistry>,
        rules: SessionRules,
        store: PathBuf,
        reconnect_cap: Duration,
        commands: mpsc::Receiver<Command>,
        actions: mpsc::Receiver<PeerAction>,
    ) -> Self {
        let local = *swarm.local_peer_id();
        let (resolved_tx, resolved_rx) = mpsc::channel(64);
        Self {
            resolved_tx,
            resolved_rx,
            swarm,
            local,
            protocol,
            gossip,
            registry,
            rules,
            store,
            reconnect_cap,
            commands,
            actions,
            listen: Vec::new(),
            redial: HashMap::new(),
            banned: HashMap::new(),
        }
    }

    /// Starts a listener on each of `binds` and waits until each has an address.
    ///
    /// # Errors
    /// [`P2pError::Bind`] naming the first address that cannot be bound.
    pub async fn bind(&mut self, binds: &[Multiaddr]) -> Result<(), P2pError> {
        let mut waiting = HashMap::new();
        for addr in binds {
            port_is_free(addr).map_err(|e| P2pError::Bind {
                addr: addr.clone(),
                why: e.into(),
            })?;
            let id = self
                .swarm
                .listen_on(addr.clone())
                .map_err(|e| P2pError::Bind {
                    addr: addr.clone(),
                    why: e.into(),
                })?;
            waiting.insert(id, addr.clone());
        }
        let deadline = tokio::time::sleep(BIND_TIMEOUT);
        tokio::pin!(deadline);
        while !waiting.is_empty() {
            let event = tokio::select! {
                event = self.swarm.select_next_some() => event,
                () = &mut deadline => {
                    let addr = waiting.into_values().next().unwrap_or_else(Multiaddr::empty);
                    return Err(P2pError::Bind { addr, why: "no address within 10 s".into() });
                }
            };
            match &event {
                SwarmEvent::NewListenAddr { listener_id, .. } => {
                    waiting.remove(listener_id);
                }
                SwarmEvent::ListenerClosed {
                    listener_id,
                    reason: Err(e),
                    ..
                }
                | SwarmEvent::ListenerError {
                    listener_id,
                    error: e,
                } => {
                    if let Some(addr) = waiting.remove(listener_id) {
                        return Err(P2pError::Bind {
                            addr,
                            why: std::io::Error::new(e.kind(), e.to_string()).into(),
                        });
                    }
                }
                _ => {}
            }
            self.on_event(event);
        }
        Ok(())
    }

    /// Accepts inbound gossip streams, then runs the swarm until the process ends.
    pub async fn run(mut self) {
        self.accept_streams();
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                event = self.swarm.select_next_some() => self.on_event(event),
                Some(cmd) = self.commands.recv() => self.on_command(cmd),
                Some(action) = self.actions.recv() => self.on_action(action),
                Some((peer, addrs)) = self.resolved_rx.recv() => self.dial(peer, addrs),
                _ = tick.tick() => self.on_tick(),
            }
        }
    }

    fn accept_streams(&mut self) {
        let mut control = self.swarm.behaviour().stream.new_control();
        let mut incoming = match control.accept(self.protocol.clone()) {
            Ok(incoming) => incoming,
            Err(e) => {
                tracing::error!(error = %e, "cannot accept gossip streams");
                return;
            }
        };
        let gossip = Arc::clone(&self.gossip);
        let rules = self.rules;
        tokio::spawn(async move {
            while let Some((peer, stream)) = incoming.next().await {
                let gossip = Arc::clone(&gossip);
                tokio::spawn(async move {
                    session::run(gossip, rules, peer, peer, stream).await;
                });
            }
        });
    }

    fn open_stream(&mut self, peer: PeerId) {
        let mut control = self.swarm.behaviour().stream.new_control();
        let protocol = self.protocol.clone();
        let gossip = Arc::clone(&self.gossip);
        let rules = self.rules;
        let local = self.local;
        tokio::spawn(async move {
            match tokio::time::timeout(STREAM_OPEN_TIMEOUT, control.open_stream(peer, protocol))
                .await
            {
                Ok(Ok(stream)) => {
                    let outcome =
                        session::run(Arc::clone(&gossip), rules, peer, local, stream).await;
                    if outcome == session::Outcome::EndedUnread {
                        // Reconnect (a known peer is redialed after a second) instead of
                        // keeping a connection without a stream until it idles out.
                        let _ = gossip.actions.try_send(PeerAction::Drop {
                            peer,
                            ban: false,
                            reason: "gossip stream ended unread".into(),
                        });
                    }
                }
                Ok(Err(libp2p_stream::OpenStreamError::UnsupportedProtocol(p))) => {
                    tracing::warn!(%peer, protocol = %p, "peer does not speak our gossip protocol (another network?)");
                    let _ = gossip.actions.try_send(PeerAction::Drop {
                        peer,
                        ban: false,
                        reason: "no common gossip protocol".into(),
                    });
                }
                Ok(Err(e)) => tracing::info!(%peer, error = %e, "cannot open the gossip stream"),
                Err(_) => tracing::info!(%peer, "opening the gossip stream timed out"),
            }
        });
    }

    fn on_event(&mut self, event: SwarmEvent<BehaviourEvent>) {
        match event {
            SwarmEvent::NewListenAddr { address, .. } => {
                let full = address
                    .clone()
                    .with(libp2p::multiaddr::Protocol::P2p(self.local));
                tracing::info!("p2p listening on {full}");
                self.listen.push(full);
                self.write_listen_addrs();
            }
            SwarmEvent::ExpiredListenAddr { address, .. } => {
                self.listen
                    .retain(|a| crate::registry::without_p2p(a) != address);
                self.write_listen_addrs();
            }
            SwarmEvent::ConnectionEstablished {
                peer_id, endpoint, ..
            } => {
                let addr = endpoint.get_remote_address().clone();
                self.registry.connected(peer_id, &addr);
                if let Some(r) = self.redial.get_mut(&peer_id) {
                    r.failures = 0;
                    r.next = None;
                }
                tracing::debug!(peer = %peer_id, %addr, dialer = endpoint.is_dialer(), "connected");
                if endpoint.is_dialer() && self.registry.session(&peer_id).is_none() {
                    self.open_stream(peer_id);
                }
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                num_established,
                ..
            } => {
                self.registry.disconnected(&peer_id, num_established);
                if num_established == 0 {
                    tracing::info!(peer = %peer_id, "disconnected");
                    self.schedule_redial(peer_id, false);
                }
            }
            SwarmEvent::OutgoingConnectionError {
                peer_id: Some(peer),
                error,
                ..
            } => {
                tracing::debug!(%peer, error = %error, "dial failed");
                self.schedule_redial(peer, true);
            }
            _ => {}
        }
    }

    /// Schedules the next dial of a known peer: min(cap, 1 s · 2^failures) + U[0, 1 s).
    fn schedule_redial(&mut self, peer: PeerId, failed: bool) {
        if !self.registry.is_known(&peer) {
            return;
        }
        let cap = self.reconnect_cap;
        let r = self.redial.entry(peer).or_default();
        if failed {
            r.failures = r.failures.saturating_add(1);
        }
        let backoff = Duration::from_secs(1)
            .saturating_mul(1 << r.failures.min(16))
            .min(cap);
        let jitter = Duration::from_millis(rand::thread_rng().gen_range(0..1_000));
        r.next = Some(Instant::now() + backoff + jitter);
    }

    fn on_tick(&mut self) {
        let now = Instant::now();
        let expired: Vec<PeerId> = self
            .banned
            .iter()
            .filter(|(_, until)| **until <= now)
            .map(|(p, _)| *p)
            .collect();
        for peer in expired {
            self.banned.remove(&peer);
            self.swarm.behaviour_mut().blocked.unblock_peer(peer);
            tracing::info!(%peer, "ban lifted");
        }
        for (peer, addrs) in self.registry.known() {
            if self.banned.contains_key(&peer)
                || self.registry.is_connected(&peer)
                || self.swarm.is_connected(&peer)
            {
                continue;
            }
            let r = self.redial.entry(peer).or_default();
            if r.next.is_some_and(|t| t > now) {
                continue;
            }
            // Until the dial's outcome reschedules it.
            r.next = Some(now + DIAL_TIMEOUT + Duration::from_secs(1));
            if addrs.iter().any(|a| crate::dns::name_of(a).is_some()) {
                // Names are resolved at each dial (no resolver in the transport).
                let resolved = self.resolved_tx.clone();
                tokio::spawn(async move {
                    let addrs = crate::dns::resolve_all(&addrs).await;
                    let _ = resolved.send((peer, addrs)).await;
                });
            } else {
                self.dial(peer, addrs);
            }
        }
    }

    fn dial(&mut self, peer: PeerId, addrs: Vec<Multiaddr>) {
        if addrs.is_empty() {
            tracing::info!(%peer, "no address of the peer resolves");
            self.schedule_redial(peer, true);
            return;
        }
        let opts = DialOpts::peer_id(peer)
            .addresses(addrs)
            .condition(PeerCondition::DisconnectedAndNotDialing)
            .build();
        if let Err(e) = self.swarm.dial(opts) {
            tracing::debug!(%peer, error = %e, "dial not started");
        }
    }

    fn on_action(&mut self, action: PeerAction) {
        let PeerAction::Drop { peer, ban, reason } = action;
        if let Some(session) = self.registry.session(&peer) {
            session.close.notify_one();
        }
        if ban {
            tracing::warn!(%peer, %reason, "peer banned for {} s", BAN.as_secs());
            self.banned.insert(peer, Instant::now() + BAN);
            self.swarm.behaviour_mut().blocked.block_peer(peer);
        } else {
            tracing::debug!(%peer, %reason, "disconnecting peer");
        }
        let _ = self.swarm.disconnect_peer_id(peer);
        self.schedule_redial(peer, false);
    }

    fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Add {
                addr,
                id,
                alias,
                reply,
            } => {
                let result = if id == self.local {
                    Err(BadPeer::Ourselves)
                } else {
                    self.registry
                        .add_known(id, crate::registry::without_p2p(&addr), alias);
                    self.redial.remove(&id);
                    self.banned.remove(&id);
                    self.swarm.behaviour_mut().blocked.unblock_peer(id);
                    self.persist();
                    self.on_tick();
                    self.registry.peer(&id).ok_or(BadPeer::Vanished)
                };
                let _ = reply.send(result);
            }
            Command::Remove { id, reply } => {
                let removed = self.registry.remove(&id);
                let found = removed.is_some();
                if let Some(Some(session)) = removed {
                    session.close.notify_one();
                }
                self.redial.remove(&id);
                if found {
                    let _ = self.swarm.disconnect_peer_id(id);
                    self.persist();
                }
                let _ = reply.send(Ok(found));
            }
        }
    }

    fn persist(&self) {
        let entries = self
            .registry
            .known_with_alias()
            .into_iter()
            .map(|(id, addr, alias)| PeeringEntry {
                multi_address: addr.with(libp2p::multiaddr::Protocol::P2p(id)).to_string(),
                alias: alias.unwrap_or_default(),
            })
            .collect();
        if let Err(e) = peering_file::save(&self.store, entries) {
            tracing::error!(error = %e, "cannot save the known peers");
        }
    }

    fn write_listen_addrs(&self) {
        let text: String = self.listen.iter().map(|a| format!("{a}\n")).collect();
        let path = self.store.join(crate::LISTEN_ADDRS_FILE);
        let tmp = self.store.join(format!("{}.tmp", crate::LISTEN_ADDRS_FILE));
        if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path)) {
            tracing::error!(error = %e, path = %path.display(), "cannot write the listen addresses");
        }
    }
}
