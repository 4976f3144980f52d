//! Every peer the node knows or talks to, with its live gossip statistics
//! (`docs/peering.md` §2.5). Written by the swarm task and the gossip sessions, read by
//! `GET /api/core/v2/peers` without touching the swarm.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc,
    },
    time::Instant,
};

use bytes::Bytes;
use ledger_codec::gossip::{Heartbeat, MessageType};
use libp2p::{Multiaddr, PeerId};
use tokio::sync::{mpsc, Notify};

use parking_lot::{Mutex, RwLock};

use crate::peer_info::{GossipInfo, PeerInfo, PeerStats, Relation};

/// What a session counts, per peer, across reconnects (`docs/peering.md` §4.8).
#[derive(Debug, Default)]
pub struct PeerGossip {
    /// Blocks from this peer stored for the first time (first sender only).
    pub new_blocks: AtomicU64,
    /// Blocks from this peer that were already stored or in flight.
    pub known_blocks: AtomicU64,
    /// Well-formed Block frames read.
    pub received_blocks: AtomicU64,
    /// Well-formed BlockRequest frames read.
    pub received_block_requests: AtomicU64,
    /// Well-formed MilestoneRequest frames read.
    pub received_milestone_requests: AtomicU64,
    /// Well-formed Heartbeat frames read.
    pub received_heartbeats: AtomicU64,
    /// Block frames written.
    pub sent_blocks: AtomicU64,
    /// BlockRequest frames written.
    pub sent_block_requests: AtomicU64,
    /// MilestoneRequest frames written.
    pub sent_milestone_requests: AtomicU64,
    /// Heartbeat frames written.
    pub sent_heartbeats: AtomicU64,
    /// Frames for the peer discarded because its send queue was full.
    pub dropped_packets: AtomicU64,
    /// The peer's last heartbeat and when it came.
    heartbeat: Mutex<Option<(Heartbeat, Instant)>>,
}

impl PeerGossip {
    /// Adds one to `counter`.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a frame of `kind` written to the peer.
    pub fn sent(&self, kind: MessageType) {
        Self::bump(match kind {
            MessageType::MilestoneRequest => &self.sent_milestone_requests,
            MessageType::Block => &self.sent_blocks,
            MessageType::BlockRequest => &self.sent_block_requests,
            MessageType::Heartbeat => &self.sent_heartbeats,
        });
    }

    /// Records a heartbeat received now.
    pub fn set_heartbeat(&self, hb: Heartbeat) {
        *self.heartbeat.lock() = Some((hb, Instant::now()));
    }

    /// The last heartbeat and when it came.
    pub fn heartbeat(&self) -> Option<(Heartbeat, Instant)> {
        *self.heartbeat.lock()
    }

    fn snapshot(&self) -> GossipInfo {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        GossipInfo {
            heartbeat: self.heartbeat().map(|(h, _)| h).unwrap_or_default(),
            stats: PeerStats {
                new_blocks: n(&self.new_blocks),
                known_blocks: n(&self.known_blocks),
                received_blocks: n(&self.received_blocks),
                received_block_requests: n(&self.received_block_requests),
                received_milestone_requests: n(&self.received_milestone_requests),
                received_heartbeats: n(&self.received_heartbeats),
                sent_blocks: n(&self.sent_blocks),
                sent_block_requests: n(&self.sent_block_requests),
                sent_milestone_requests: n(&self.sent_milestone_requests),
                sent_heartbeats: n(&self.sent_heartbeats),
                dropped_packets: n(&self.dropped_packets),
            },
        }
    }
}

/// Hornet's synced rule for a peer's heartbeat against our confirmed index: its solid index
/// at most two below the higher of its latest index and ours (saturating).
pub fn peer_is_synced(hb: &Heartbeat, our_confirmed: u32) -> bool {
    hb.solid_milestone_index
        >= hb
            .latest_milestone_index
            .max(our_confirmed)
            .saturating_sub(2)
}

/// A frame queued for a peer's writer, with its type for the counters.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The frame's type.
    pub kind: MessageType,
    /// The whole frame (header and payload).
    pub frame: Bytes,
}

/// The live gossip stream of a peer: where its frames go, and how to end it.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    /// Distinguishes this session from a later one of the same peer.
    pub id: u64,
    /// The peer that opened the stream (the tie-break of a simultaneous dial).
    pub opener: PeerId,
    /// The writer's queue.
    pub out: mpsc::Sender<Outgoing>,
    /// Bytes of the frames in the writer's queue.
    pub queued: Arc<AtomicUsize>,
    /// Notified to end the session.
    pub close: Arc<Notify>,
}

/// Bytes a peer's send queue may hold (besides its frame count, `session::SEND_QUEUE`).
pub const SEND_QUEUE_BYTES: usize = 8 << 20;

impl SessionHandle {
    /// Queues a frame for the writer; false (the frame is dropped) when the queue holds
    /// its maximum of frames or of bytes.
    pub fn offer(&self, out: Outgoing) -> bool {
        let len = out.frame.len();
        if self.queued.fetch_add(len, Ordering::Relaxed) + len > SEND_QUEUE_BYTES
            || self.out.try_send(out).is_err()
        {
            self.queued.fetch_sub(len, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// One peer's entry.
#[derive(Debug)]
struct PeerEntry {
    addrs: Vec<Multiaddr>,
    alias: Option<String>,
    relation: Relation,
    connections: u32,
    session: Option<SessionHandle>,
    gossip: Arc<PeerGossip>,
}

impl PeerEntry {
    fn new(relation: Relation) -> Self {
        Self {
            addrs: Vec::new(),
            alias: None,
            relation,
            connections: 0,
            session: None,
            gossip: Arc::new(PeerGossip::default()),
        }
    }
}

/// Why a new gossip stream was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The peer already has a stream that wins the tie-break.
    Duplicate,
    /// The unknown-peer slots are taken.
    UnknownPeersFull,
}

/// The node's peers.
#[derive(Debug, Default)]
pub struct PeerRegistry {
    peers: RwLock<HashMap<PeerId, PeerEntry>>,
}

impl PeerRegistry {
    /// Adds or updates a known peer.
    pub fn add_known(&self, id: PeerId, addr: Multiaddr, alias: Option<String>) {
        let mut peers = self.peers.write();
        let entry = peers
            .entry(id)
            .or_insert_with(|| PeerEntry::new(Relation::Known));
        entry.relation = Relation::Known;
        entry.addrs = vec![addr];
        if alias.is_some() {
            entry.alias = alias;
        }
    }

    /// Forgets a peer; its session, if any, is returned so the caller can end it.
    pub fn remove(&self, id: &PeerId) -> Option<Option<SessionHandle>> {
        self.peers.write().remove(id).map(|e| e.session)
    }

    /// Whether `id` is a known peer.
    pub fn is_known(&self, id: &PeerId) -> bool {
        self.peers
            .read()
            .get(id)
            .is_some_and(|e| e.relation == Relation::Known)
    }

    /// A connection to `id` was established (`addr`: where it came from, for unknown peers).
    pub fn connected(&self, id: PeerId, addr: &Multiaddr) {
        let mut peers = self.peers.write();
        let entry = peers
            .entry(id)
            .or_insert_with(|| PeerEntry::new(Relation::Unknown));
        entry.connections += 1;
        if entry.relation == Relation::Unknown && entry.addrs.is_empty() {
            entry.addrs = vec![without_p2p(addr)];
        }
    }

    /// A connection to `id` closed; `remaining` are still open. An unknown peer without
    /// connections is forgotten.
    pub fn disconnected(&self, id: &PeerId, remaining: u32) {
        let mut peers = self.peers.write();
        let forget = match peers.get_mut(id) {
            Some(e) => {
                e.connections = remaining;
                remaining == 0 && e.relation != Relation::Known
            }
            None => false,
        };
        if forget {
            peers.remove(id);
        }
    }

    /// Takes a new gossip stream of `id` opened by `opener`, unless the peer's current
    /// stream wins the tie-break (the one opened by the smaller peer id) or, for an unknown
    /// peer, all `unknown_limit` slots are taken. A replaced session is returned to be ended.
    ///
    /// # Errors
    /// Why the stream is refused.
    pub fn attach(
        &self,
        id: PeerId,
        session: SessionHandle,
        unknown_limit: usize,
    ) -> Result<(Arc<PeerGossip>, Option<SessionHandle>), Refusal> {
        let mut peers = self.peers.write();
        let unknown_sessions = peers
            .iter()
            .filter(|(p, e)| **p != id && e.relation != Relation::Known && e.session.is_some())
            .count();
        let entry = peers
            .entry(id)
            .or_insert_with(|| PeerEntry::new(Relation::Unknown));
        if entry.relation != Relation::Known
            && entry.session.is_none()
            && unknown_sessions >= unknown_limit
        {
            return Err(Refusal::UnknownPeersFull);
        }
        if let Some(current) = &entry.session {
            if current.opener.to_bytes() <= session.opener.to_bytes() {
                return Err(Refusal::Duplicate);
            }
        }
        let replaced = entry.session.replace(session);
        Ok((Arc::clone(&entry.gossip), replaced))
    }

    /// Ends the registration of session `session_id` of `id`; false when it was not the
    /// peer's current session any more (replaced by another stream, or the peer removed).
    pub fn detach(&self, id: &PeerId, session_id: u64) -> bool {
        match self.peers.write().get_mut(id) {
            Some(e) if e.session.as_ref().is_some_and(|s| s.id == session_id) => {
                e.session = None;
                true
            }
            _ => false,
        }
    }

    /// The session of `id`.
    pub fn session(&self, id: &PeerId) -> Option<SessionHandle> {
        self.peers.read().get(id).and_then(|e| e.session.clone())
    }

    /// Every peer with a gossip stream, with its statistics.
    pub fn sessions(&self) -> Vec<(PeerId, SessionHandle, Arc<PeerGossip>)> {
        self.peers
            .read()
            .iter()
            .filter_map(|(id, e)| {
                e.session
                    .as_ref()
                    .map(|s| (*id, s.clone(), Arc::clone(&e.gossip)))
            })
            .collect()
    }

    /// The statistics of `id`.
    pub fn gossip(&self, id: &PeerId) -> Option<Arc<PeerGossip>> {
        self.peers.read().get(id).map(|e| Arc::clone(&e.gossip))
    }

    /// Peers with at least one connection.
    pub fn connected_count(&self) -> usize {
        self.peers
            .read()
            .values()
            .filter(|e| e.connections > 0)
            .count()
    }

    /// Peers with a gossip stream whose last heartbeat passes the synced rule.
    pub fn synced_count(&self, our_confirmed: u32) -> usize {
        self.peers
            .read()
            .values()
            .filter(|e| e.session.is_some())
            .filter(|e| {
                e.gossip
                    .heartbeat()
                    .is_some_and(|(hb, _)| peer_is_synced(&hb, our_confirmed))
            })
            .count()
    }

    /// Known peers and their addresses (to dial).
    pub fn known(&self) -> Vec<(PeerId, Vec<Multiaddr>)> {
        self.peers
            .read()
            .iter()
            .filter(|(_, e)| e.relation == Relation::Known)
            .map(|(id, e)| (*id, e.addrs.clone()))
            .collect()
    }

    /// Known peers with their aliases, as written to `peering.json`.
    pub fn known_with_alias(&self) -> Vec<(PeerId, Multiaddr, Option<String>)> {
        let mut out: Vec<_> = self
            .peers
            .read()
            .iter()
            .filter(|(_, e)| e.relation == Relation::Known)
            .filter_map(|(id, e)| e.addrs.first().map(|a| (*id, a.clone(), e.alias.clone())))
            .collect();
        out.sort_by_key(|a| a.0);
        out
    }

    /// Whether `id` has a connection.
    pub fn is_connected(&self, id: &PeerId) -> bool {
        self.peers.read().get(id).is_some_and(|e| e.connections > 0)
    }

    /// What is known of one peer.
    pub fn peer(&self, id: &PeerId) -> Option<PeerInfo> {
        self.peers.read().get(id).map(|e| view(id, e))
    }

    /// What is known of every peer, by id.
    pub fn peers(&self) -> Vec<PeerInfo> {
        let mut out: Vec<PeerInfo> = self
            .peers
            .read()
            .iter()
            .map(|(id, e)| view(id, e))
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }
}

fn view(id: &PeerId, e: &PeerEntry) -> PeerInfo {
    PeerInfo {
        id: id.to_base58(),
        multi_addresses: e.addrs.iter().map(ToString::to_string).collect(),
        alias: e.alias.clone(),
        relation: e.relation,
        connected: e.connections > 0,
        gossip: e.gossip.snapshot(),
    }
}

/// `addr` without a trailing `/p2p/<id>`.
pub fn without_p2p(addr: &Multiaddr) -> Multiaddr {
    addr.iter()
        .filter(|p| !matches!(p, libp2p::multiaddr::Protocol::P2p(_)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(id: u64, opener: PeerId) -> SessionHandle {
        let (out, _rx) = mpsc::channel(1);
        SessionHandle {
            id,
            opener,
            out,
            queued: Arc::default(),
            close: Arc::new(Notify::new()),
        }
    }

    #[test]
    fn the_stream_opened_by_the_smaller_peer_id_wins_on_both_sides() {
        let a = PeerId::random();
        let b = PeerId::random();
        let (small, large) = if a.to_bytes() < b.to_bytes() {
            (a, b)
        } else {
            (b, a)
        };
        // Whatever order the two streams arrive in, the one opened by `small` stays.
        for first_small in [true, false] {
            let reg = PeerRegistry::default();
            let (first, second) = if first_small {
                (small, large)
            } else {
                (large, small)
            };
            reg.attach(b, handle(1, first), 4).expect("first stream");
            let second_result = reg.attach(b, handle(2, second), 4);
            let kept = reg.session(&b).expect("a session").opener;
            assert_eq!(kept, small, "first_small={first_small}");
            assert_eq!(second_result.is_ok(), !first_small);
        }
    }

    #[test]
    fn unknown_peers_beyond_the_limit_are_refused_known_ones_are_not() {
        let reg = PeerRegistry::default();
        for i in 0..2 {
            let p = PeerId::random();
            reg.attach(p, handle(i, p), 2).expect("within the limit");
        }
        let extra = PeerId::random();
        assert_eq!(
            reg.attach(extra, handle(9, extra), 2).err(),
            Some(Refusal::UnknownPeersFull)
        );
        let known = PeerId::random();
        reg.add_known(known, "/ip4/127.0.0.1/tcp/1".parse().expect("addr"), None);
        assert!(reg.attach(known, handle(10, known), 2).is_ok());
    }

    #[test]
    fn the_send_queue_is_bounded_by_frames_and_by_bytes() {
        let (out, mut rx) = mpsc::channel(4);
        let h = SessionHandle {
            id: 1,
            opener: PeerId::random(),
            out,
            queued: Arc::default(),
            close: Arc::new(Notify::new()),
        };
        let frame = |n: usize| Outgoing {
            kind: MessageType::Block,
            frame: Bytes::from(vec![0u8; n]),
        };
        assert!(h.offer(frame(SEND_QUEUE_BYTES - 10)));
        assert!(!h.offer(frame(11)), "over the byte budget");
        assert!(h.offer(frame(10)));
        assert_eq!(h.queued.load(Ordering::Relaxed), SEND_QUEUE_BYTES);
        let taken = rx.try_recv().expect("queued frame");
        h.queued.fetch_sub(taken.frame.len(), Ordering::Relaxed);
        for _ in 0..3 {
            assert!(h.offer(frame(1)));
        }
        assert!(!h.offer(frame(1)), "over the frame count");
        assert_eq!(h.queued.load(Ordering::Relaxed), 10 + 3);
    }

    #[test]
    fn synced_rule_allows_two_behind_and_saturates() {
        let hb = |solid, latest| Heartbeat {
            solid_milestone_index: solid,
            latest_milestone_index: latest,
            ..Heartbeat::default()
        };
        assert!(peer_is_synced(&hb(10, 12), 5));
        assert!(!peer_is_synced(&hb(9, 12), 5));
        assert!(!peer_is_synced(&hb(10, 10), 13));
        assert!(peer_is_synced(&hb(0, 1), 0));
        assert!(peer_is_synced(&hb(0, 0), 2));
    }

    #[test]
    fn an_unknown_peer_is_forgotten_with_its_last_connection() {
        let reg = PeerRegistry::default();
        let p = PeerId::random();
        let addr: Multiaddr = format!("/ip4/127.0.0.1/tcp/5/p2p/{p}")
            .parse()
            .expect("addr");
        reg.connected(p, &addr);
        let view = reg.peer(&p).expect("listed");
        assert_eq!(
            view.multi_addresses,
            vec!["/ip4/127.0.0.1/tcp/5".to_owned()]
        );
        assert!(view.connected);
        reg.disconnected(&p, 0);
        assert!(reg.peer(&p).is_none());
    }
}
