//! Peering: libp2p gossip speaking Hornet's protocol (`docs/peering.md`).
//!
//! - [`identity`]: the node's peer identity in Hornet's key-file format;
//! - [`swarm`]: the libp2p swarm and the task that owns it (dialing, bans, REST commands);
//! - [`session`]: one gossip stream with one peer (frames, heartbeats, liveness);
//! - [`gossip`]: the protocol logic every session shares (intake, responder, broadcast,
//!   sync loop), on the engine's single submit pipeline;
//! - [`requester`]: the queue of missing blocks and milestones;
//! - [`registry`]: peers and their statistics, read by `GET /api/core/v2/peers`;
//! - [`peering_file`]: the known peers in `peering.json`;
//! - [`dns`]: `/dns*` peer addresses resolved at each dial.
//!
//! The gossip frames themselves are a pure module of the codec (`ledger_codec::gossip`).

#![deny(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod dns;
pub mod fifo;
pub mod gossip;
pub mod identity;
pub mod metrics;
mod peer_info;
pub mod peering_file;
pub mod registry;
pub mod requester;
pub mod session;
pub mod swarm;

use std::{path::PathBuf, sync::Arc, time::Duration};

use ledger_engine::Engine;
use libp2p::{multiaddr::Protocol, Multiaddr, PeerId, StreamProtocol};
use tokio::sync::{mpsc, oneshot};

pub use identity::{Identity, IdentityError, IDENTITY_FILE};

pub use peer_info::{GossipInfo, PeerInfo, PeerStats, Relation};
use registry::PeerRegistry;
use session::SessionRules;
use swarm::Command;

/// The p2p store's directory name inside the data dir.
pub const STORE_DIR: &str = "p2pstore";
/// File listing the bound addresses, one full multiaddr per line.
pub const LISTEN_ADDRS_FILE: &str = "listen.addrs";

/// How the node peers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct P2pConfig {
    /// `<data-dir>/p2pstore`.
    pub store: PathBuf,
    /// Addresses to listen on.
    pub binds: Vec<Multiaddr>,
    /// Configured peers (full multiaddrs) with optional aliases.
    pub peers: Vec<(Multiaddr, Option<String>)>,
    /// Unknown peers that may hold a gossip stream.
    pub unknown_peers_limit: usize,
    /// Longest wait between dials of a known peer.
    pub reconnect_interval: Duration,
    /// Silence that ends a gossip stream.
    pub read_timeout: Duration,
    /// Age of a peer's last heartbeat that ends its stream.
    pub heartbeat_max_age: Duration,
    /// Blocks no milestone references yet that the tangle may hold before warp sync starts no
    /// further milestone's cone (see `requester::WarpSpan`): a milestone's cone stays in
    /// memory (about 1 KB a block) until it is confirmed, so this bounds a catch-up's memory.
    pub warp_block_budget: usize,
}

/// Default peer listen address (Hornet's port).
pub const DEFAULT_BIND: &str = "/ip4/0.0.0.0/tcp/15600";
/// Default number of unknown peers that may hold a gossip stream at once.
pub const DEFAULT_UNKNOWN_PEERS_LIMIT: usize = 4;
/// Default longest wait between dials of a known peer, in seconds.
pub const DEFAULT_RECONNECT_INTERVAL: f64 = 30.0;
/// Default silence on a gossip stream that ends it, in seconds.
pub const DEFAULT_READ_TIMEOUT: f64 = 60.0;
/// Default age of a peer's last heartbeat that ends its stream, in seconds.
pub const DEFAULT_HEARTBEAT_MAX_AGE: f64 = 100.0;
/// Default unreferenced blocks at which warp sync narrows (about 50 MB of tangle rows).
pub const DEFAULT_WARP_BLOCK_BUDGET: usize = 50_000;

impl Default for P2pConfig {
    /// Peering as `ledger-node` runs it without flags: the store under `./data`, listening
    /// on [`DEFAULT_BIND`], no configured peers.
    fn default() -> Self {
        Self {
            store: PathBuf::from("./data").join(STORE_DIR),
            binds: DEFAULT_BIND.parse().into_iter().collect(),
            peers: Vec::new(),
            unknown_peers_limit: DEFAULT_UNKNOWN_PEERS_LIMIT,
            reconnect_interval: Duration::from_secs_f64(DEFAULT_RECONNECT_INTERVAL),
            read_timeout: Duration::from_secs_f64(DEFAULT_READ_TIMEOUT),
            heartbeat_max_age: Duration::from_secs_f64(DEFAULT_HEARTBEAT_MAX_AGE),
            warp_block_budget: DEFAULT_WARP_BLOCK_BUDGET,
        }
    }
}

/// Why peering could not start, or a peer could not be added.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum P2pError {
    /// The identity could not be loaded or created.
    #[error("p2p identity: {0}")]
    Identity(#[from] IdentityError),
    /// The known peers could not be read.
    #[error("known peers: {0}")]
    Peering(#[from] peering_file::PeeringFileError),
    /// The transport could not be built.
    #[error("p2p transport: {0}")]
    Transport(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// An address could not be bound.
    #[error("cannot listen on {addr} (--p2p-bind; --no-p2p turns peering off): {why}")]
    Bind {
        /// The address.
        addr: Multiaddr,
        /// The cause.
        why: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A peer address is not usable.
    #[error(transparent)]
    BadPeer(#[from] BadPeer),
    /// The swarm task is gone.
    #[error("peering stopped")]
    Stopped,
}

/// Why a peer cannot be added.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BadPeer {
    /// The text is no multiaddress.
    #[error("invalid multiaddress {text:?}: {source}")]
    Unparsable {
        /// What was given.
        text: String,
        /// The parser's reason.
        source: libp2p::multiaddr::Error,
    },
    /// The multiaddress does not end in `/p2p/<id>` after a transport part.
    #[error("multiaddress {text:?} must be a transport address ending in /p2p/<peerId>")]
    NoPeerId {
        /// What was given.
        text: String,
    },
    /// The address names this node itself.
    #[error("{0} is this node's own peer id")]
    OwnId(String),
    /// The swarm refused to peer with its own id.
    #[error("cannot peer with ourselves")]
    Ourselves,
    /// The peer was removed while it was being added.
    #[error("peer vanished")]
    Vanished,
}

/// The running peering service, as the REST layer sees it.
#[derive(Debug, Clone)]
pub struct P2p {
    /// Our peer id.
    pub peer_id: PeerId,
    registry: Arc<PeerRegistry>,
    commands: mpsc::Sender<Command>,
}

/// Splits a full multiaddr into its peer id (the trailing `/p2p/<id>`).
///
/// # Errors
/// [`P2pError::BadPeer`] when it does not parse or does not end in `/p2p/<id>`.
pub fn peer_address(text: &str) -> Result<(Multiaddr, PeerId), P2pError> {
    let addr: Multiaddr = text.trim().parse().map_err(|source| BadPeer::Unparsable {
        text: text.to_owned(),
        source,
    })?;
    match addr.iter().last() {
        Some(Protocol::P2p(id)) if addr.iter().count() > 1 => Ok((addr, id)),
        _ => Err(BadPeer::NoPeerId {
            text: text.to_owned(),
        }
        .into()),
    }
}

/// Checks that no other process listens on the TCP ports of `binds` (before anything is
/// created on disk; [`P2p::start`] binds them later).
///
/// # Errors
/// [`P2pError::Bind`] naming the first taken address.
pub fn check_binds(binds: &[Multiaddr]) -> Result<(), P2pError> {
    for addr in binds {
        swarm::port_is_free(addr).map_err(|e| P2pError::Bind {
            addr: addr.clone(),
            why: e.into(),
        })?;
    }
    Ok(())
}

impl P2p {
    /// Loads (or creates) the identity, binds, reads the known peers and starts the swarm
    /// and gossip tasks on the current tokio runtime.
    ///
    /// # Errors
    /// See [`P2pError`].
    pub async fn start(config: P2pConfig, engine: Arc<Engine>) -> Result<Self, P2pError> {
        let identity = Identity::load_or_create(&config.store)?;
        let peer_id = identity.peer_id();
        tracing::info!(%peer_id, "p2p identity");
        let registry = Arc::new(PeerRegistry::default());
        let mut known = 0usize;
        for entry in peering_file::load(&config.store)? {
            let alias = Some(entry.alias).filter(|a| !a.is_empty());
            add_configured(&registry, peer_id, &entry.multi_address, alias, &mut known);
        }
        for (addr, alias) in &config.peers {
            add_configured(
                &registry,
                peer_id,
                &addr.to_string(),
                alias.clone(),
                &mut known,
            );
        }
        let swarm = swarm::build(
            identity.keypair().clone(),
            known,
            config.unknown_peers_limit,
        )?;
        let protocol = StreamProtocol::try_from_owned(ledger_codec::gossip::protocol_id(
            &engine.params().network_name,
        ))
        .map_err(|e| P2pError::Transport(e.into()))?;
        tracing::info!(%protocol, known_peers = known, "peering");
        let (commands_tx, commands_rx) = mpsc::channel(64);
        let (actions_tx, actions_rx) = mpsc::channel(1_024);
        let gossip = gossip::Gossip::start(
            engine,
            Arc::clone(&registry),
            actions_tx,
            config.warp_block_budget,
        );
        let rules = SessionRules {
            read_timeout: config.read_timeout,
            heartbeat_max_age: config.heartbeat_max_age,
            unknown_peers_limit: config.unknown_peers_limit,
        };
        let mut task = swarm::SwarmTask::new(
            swarm,
            protocol,
            gossip,
            Arc::clone(&registry),
            rules,
            config.store.clone(),
            config.reconnect_interval,
            commands_rx,
            actions_rx,
        );
        // A taken port is reported by the swarm after `listen_on` returns: wait for every
        // listener's first address (or its failure) so the start fails with the reason.
        task.bind(&config.binds).await?;
        tokio::spawn(task.run());
        Ok(Self {
            peer_id,
            registry,
            commands: commands_tx,
        })
    }

    /// Every peer.
    pub fn peers(&self) -> Vec<PeerInfo> {
        self.registry.peers()
    }

    /// One peer by its base58 id.
    pub fn peer(&self, id: &str) -> Option<PeerInfo> {
        id.parse::<PeerId>()
            .ok()
            .and_then(|id| self.registry.peer(&id))
    }

    /// Peers with a connection.
    pub fn connected_peers(&self) -> usize {
        self.registry.connected_count()
    }

    /// Adds a known peer (full multiaddr), persists and dials it.
    ///
    /// # Errors
    /// [`P2pError::BadPeer`] for an unusable address or our own id.
    pub async fn add_peer(
        &self,
        multiaddr: &str,
        alias: Option<String>,
    ) -> Result<PeerInfo, P2pError> {
        let (addr, id) = peer_address(multiaddr)?;
        if id == self.peer_id {
            return Err(BadPeer::OwnId(multiaddr.to_owned()).into());
        }
        self.ask(|reply| Command::Add {
            addr,
            id,
            alias,
            reply,
        })
        .await
    }

    /// Removes a peer and disconnects it; false when it was not listed.
    ///
    /// # Errors
    /// [`P2pError::Stopped`].
    pub async fn remove_peer(&self, id: &str) -> Result<bool, P2pError> {
        let Ok(id) = id.parse::<PeerId>() else {
            return Ok(false);
        };
        self.ask(|reply| Command::Remove { id, reply }).await
    }

    /// Sends the swarm task a command and waits for its answer.
    async fn ask<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<T, BadPeer>>) -> Command,
    ) -> Result<T, P2pError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(command(reply))
            .await
            .map_err(|_| P2pError::Stopped)?;
        answer
            .await
            .map_err(|_| P2pError::Stopped)?
            .map_err(P2pError::BadPeer)
    }
}

fn add_configured(
    registry: &PeerRegistry,
    own: PeerId,
    text: &str,
    alias: Option<String>,
    known: &mut usize,
) {
    match peer_address(text) {
        Ok((_, id)) if id == own => {
            tracing::warn!(peer = %text, "ignoring a configured peer with this node's own id");
        }
        Ok((addr, id)) => {
            registry.add_known(id, registry::without_p2p(&addr), alias);
            *known += 1;
        }
        Err(e) => tracing::warn!(error = %e, "ignoring a configured peer"),
    }
}
