//! The gossip protocol's logic, shared by every peer session (`docs/peering.md` §4): block
//! intake cheapest check first, duplicate suppression, the responder, broadcast, and the
//! sync loop that drives the requester and warp sync.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU32, AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use ledger_codec::gossip::{Heartbeat, Message, MessageType};
use ledger_codec::stardust::Block;
use ledger_engine::{BlockId, BroadcastHook, Engine, SubmitError};
use libp2p::PeerId;
use tokio::sync::{mpsc, Semaphore};

use parking_lot::Mutex;

use crate::{
    fifo::Fifo,
    registry::{Outgoing, PeerGossip, PeerRegistry},
    requester::{warp_window, window_end, Requester, Want, WarpSpan},
};

/// Milestones warp sync asks for ahead of the confirmed index (Hornet's
/// `warpsync.advancementRange`).
pub const WARP_WINDOW: u32 = 150;
/// Milestones whose cones are always fetched (and walked for missing blocks): warp sync's
/// span at the start, and the least it holds at the budget (see [`WarpSpan`]).
const WARP_NARROW: u32 = 3;
/// Blocks whose senders are remembered until they are broadcast.
const SENDERS_CAP: usize = 50_000;
/// Ids of blocks found invalid, so re-sent bytes are punished without decoding again.
const REJECTED_CAP: usize = 16_384;
/// Ids of requested blocks (never broadcast).
const REQUESTED_CAP: usize = 50_000;
/// Batches of solid blocks waiting to be broadcast.
const BROADCAST_QUEUE: usize = 1_000;
/// How often the sync loop runs.
const SYNC_TICK: Duration = Duration::from_millis(100);
/// How often the cones of the next milestones are walked for missing blocks.
const CONE_WALK_EVERY: Duration = Duration::from_millis(500);
/// Requests sent per sync tick at most.
const REQUESTS_PER_TICK: usize = 2_000;

/// Why a peer is dropped.
#[derive(Debug, thiserror::Error)]
pub enum Misbehaviour {
    /// It sent a block the engine refused as invalid (banned for a while).
    #[error("{0}")]
    InvalidBlock(#[source] SubmitError),
    /// It sent again a block refused as invalid before.
    #[error("invalid block: re-sent an invalid block")]
    ResentInvalid,
}

/// A command for the swarm task, issued by gossip.
#[derive(Debug)]
pub enum PeerAction {
    /// Close every connection of the peer; ban its id for a while if `ban`.
    Drop {
        /// The peer.
        peer: PeerId,
        /// Ban it.
        ban: bool,
        /// Why (logged).
        reason: String,
    },
}

/// Gossip state shared by all sessions.
pub struct Gossip {
    pub(super) engine: Arc<Engine>,
    pub(super) registry: Arc<PeerRegistry>,
    pub(super) requester: Requester,
    pub(super) actions: mpsc::Sender<PeerAction>,
    // Validation workers: one permit per core.
    validation: Semaphore,
    // Blocks being validated, with every peer that sent them meanwhile.
    inflight: Mutex<HashMap<BlockId, Vec<PeerId>>>,
    // Senders of stored blocks, until the block is broadcast (or evicted).
    senders: Mutex<Fifo<BlockId, Vec<PeerId>>>,
    rejected: Mutex<Fifo<BlockId, ()>>,
    requested: Mutex<Fifo<BlockId, ()>>,
    /// Broadcast batches dropped because the queue was full.
    pub broadcast_dropped: AtomicU64,
    /// Blocks ignored while unsynced (neither requested nor milestones).
    pub ignored_unsynced: AtomicU64,
    // The highest milestone index whose cone is fetched on arrival of its blocks (warp sync's
    // `window_end`, set by the sync loop): parents of blocks in cones beyond it are not
    // asked for; the cone walk asks for them once the milestone is among the next ones.
    cone_limit: AtomicU32,
    // How far ahead warp sync works (see `WarpSpan`).
    warp_span: Mutex<WarpSpan>,
}

impl std::fmt::Debug for Gossip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gossip").finish_non_exhaustive()
    }
}

/// Hands the engine's solid blocks to the broadcaster without blocking the caller.
struct BroadcastQueue {
    tx: mpsc::Sender<Vec<BlockId>>,
    gossip: std::sync::Weak<Gossip>,
}

impl BroadcastHook for BroadcastQueue {
    fn solid(&self, ids: Vec<BlockId>) {
        if self.tx.try_send(ids).is_err() {
            if let Some(g) = self.gossip.upgrade() {
                g.broadcast_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl Gossip {
    /// Creates the shared state, hooks the engine's broadcast and starts the broadcaster
    /// and the sync loop; warp sync starts no new cone at `warp_block_budget` unreferenced blocks.
    pub fn start(
        engine: Arc<Engine>,
        registry: Arc<PeerRegistry>,
        actions: mpsc::Sender<PeerAction>,
        warp_block_budget: usize,
    ) -> Arc<Self> {
        let (tx, rx) = mpsc::channel(BROADCAST_QUEUE);
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        let gossip = Arc::new(Self {
            engine,
            registry,
            requester: Requester::default(),
            actions,
            validation: Semaphore::new(workers),
            inflight: Mutex::new(HashMap::new()),
            senders: Mutex::new(Fifo::new(SENDERS_CAP)),
            rejected: Mutex::new(Fifo::new(REJECTED_CAP)),
            requested: Mutex::new(Fifo::new(REQUESTED_CAP)),
            broadcast_dropped: AtomicU64::new(0),
            ignored_unsynced: AtomicU64::new(0),
            cone_limit: AtomicU32::new(u32::MAX),
            warp_span: Mutex::new(WarpSpan::new(WARP_WINDOW, WARP_NARROW, warp_block_budget)),
        });
        let hook = BroadcastQueue {
            tx,
            gossip: Arc::downgrade(&gossip),
        };
        if !gossip.engine.set_broadcast_hook(Arc::new(hook)) {
            tracing::warn!("the engine's broadcast hook is taken: blocks will not be gossiped");
        }
        tokio::spawn(Arc::clone(&gossip).broadcaster(rx));
        tokio::spawn(Arc::clone(&gossip).sync_loop());
        gossip
    }

    /// Our heartbeat: confirmed, pruned, latest, peer counts (clamped).
    pub fn heartbeat(&self) -> Heartbeat {
        let s = self.engine.sync_state();
        let clamp = |n: usize| u8::try_from(n).unwrap_or(u8::MAX);
        Heartbeat {
            solid_milestone_index: s.confirmed,
            pruned_milestone_index: s.pruned,
            latest_milestone_index: s.latest,
            connected_peers: clamp(self.registry.connected_count()),
            synced_peers: clamp(self.registry.synced_count(s.confirmed)),
        }
    }

    /// Queues `msg` for `peer`; a full queue (frames or bytes) drops it and counts
    /// `droppedPackets`.
    pub fn send_to(&self, peer: &PeerId, msg: &Message<'_>) {
        let Some(session) = self.registry.session(peer) else {
            return;
        };
        let Ok(frame) = msg.to_bytes() else { return };
        let out = Outgoing {
            kind: msg.message_type(),
            frame: Bytes::from(frame),
        };
        if !session.offer(out) {
            if let Some(g) = self.registry.gossip(peer) {
                PeerGossip::bump(&g.dropped_packets);
            }
        }
    }

    /// Handles one well-formed message from `peer` (counted here as received).
    ///
    /// # Errors
    /// The peer misbehaved and must be dropped.
    pub async fn on_message(
        self: &Arc<Self>,
        peer: PeerId,
        counters: &PeerGossip,
        msg: Message<'static>,
    ) -> Result<(), Misbehaviour> {
        match msg {
            Message::Heartbeat(hb) => {
                PeerGossip::bump(&counters.received_heartbeats);
                counters.set_heartbeat(hb);
            }
            Message::MilestoneRequest { index } => {
                PeerGossip::bump(&counters.received_milestone_requests);
                let index = match index {
                    0 => self.engine.sync_state().latest,
                    i => i,
                };
                if let Some(bytes) = self
                    .engine
                    .milestone_block_id(index)
                    .and_then(|id| self.engine.block_bytes(&id))
                {
                    self.send_to(&peer, &Message::Block((&*bytes).into()));
                }
            }
            Message::BlockRequest { block_id } => {
                PeerGossip::bump(&counters.received_block_requests);
                if let Some(bytes) = self.engine.block_bytes(&block_id) {
                    self.send_to(&peer, &Message::Block((&*bytes).into()));
                }
            }
            Message::Block(bytes) => {
                PeerGossip::bump(&counters.received_blocks);
                self.on_block(peer, counters, bytes.into_owned()).await?;
            }
        }
        Ok(())
    }

    /// Block intake (`docs/peering.md` §4.1), cheapest check first.
    async fn on_block(
        self: &Arc<Self>,
        peer: PeerId,
        counters: &PeerGossip,
        bytes: Vec<u8>,
    ) -> Result<(), Misbehaviour> {
        let id = Block::id_of(&bytes);
        if self.rejected.lock().contains(&id) {
            return Err(Misbehaviour::ResentInvalid);
        }
        let requested_index = self.requester.fulfil(&Want::Block(id));
        if self.engine.has_block(&id) {
            PeerGossip::bump(&counters.known_blocks);
            self.add_sender(id, peer);
            return Ok(());
        }
        {
            let mut inflight = self.inflight.lock();
            if let Some(senders) = inflight.get_mut(&id) {
                PeerGossip::bump(&counters.known_blocks);
                senders.push(peer);
                return Ok(());
            }
            inflight.insert(id, vec![peer]);
        }
        let is_milestone = ledger_codec::stardust::payload_kind(&bytes)
            == Some(ledger_codec::stardust::Milestone::KIND);
        if requested_index.is_none()
            && !is_milestone
            && !self.engine.sync_state().is_almost_synced()
        {
            self.take_inflight(&id);
            self.ignored_unsynced.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        // Recorded before the store: the engine may announce the block as soon as it is
        // durable, before this task runs again.
        if requested_index.is_some() {
            self.requested.lock().insert(id, ());
        } else {
            self.senders.lock().entry(id, Vec::new).push(peer);
        }
        let result = {
            let _permit = self.validation.acquire().await;
            let engine = Arc::clone(&self.engine);
            tokio::task::spawn_blocking(move || engine.submit_gossip(&bytes)).await
        };
        let senders = self.take_inflight(&id);
        match result {
            Ok(Ok(stored)) => {
                if stored.inserted {
                    PeerGossip::bump(&counters.new_blocks);
                } else {
                    PeerGossip::bump(&counters.known_blocks);
                }
                if requested_index.is_none() {
                    let mut map = self.senders.lock();
                    if map.contains(&id) {
                        map.entry(id, Vec::new).extend(senders);
                    }
                }
                // Fetch the rest of a cone: parents of requested blocks and of milestones.
                // Never asked: anything at or below our own pruning index (hornet #1002).
                let pruned = self.engine.pruning_index();
                let cone_limit = self.cone_limit.load(Ordering::Relaxed);
                let cone = stored
                    .milestone_index
                    .or(requested_index.filter(|i| *i != 0))
                    .filter(|i| *i > pruned && *i <= cone_limit);
                if let Some(index) = cone {
                    // Asked at once, of the peer that sent the child (it has the parents):
                    // a cone is fetched one level per round trip, not per sync tick.
                    let now = Instant::now();
                    for p in stored.missing_parents {
                        let want = Want::Block(p);
                        if self.requester.request(want, index, now) {
                            self.requester.sent_now(&want, now);
                            self.send_to(&peer, &Message::BlockRequest { block_id: p });
                        }
                    }
                }
                if let Some(index) = stored.milestone_index {
                    self.requester.fulfil(&Want::Milestone(index));
                }
                Ok(())
            }
            Ok(Err(e @ SubmitError::Invalid(_))) => {
                self.rejected.lock().insert(id, ());
                self.senders.lock().remove(&id);
                self.requested.lock().remove(&id);
                for other in senders.iter().filter(|p| **p != peer) {
                    self.punish(*other, &e);
                }
                Err(Misbehaviour::InvalidBlock(e))
            }
            Ok(Err(e)) => {
                tracing::warn!(block = %ledger_codec::hexstr::to_hex(&id), error = %e, "cannot store a gossiped block");
                Ok(())
            }
            Err(e) => {
                tracing::error!(error = %e, "gossip validation task failed");
                Ok(())
            }
        }
    }

    fn take_inflight(&self, id: &BlockId) -> Vec<PeerId> {
        self.inflight.lock().remove(id).unwrap_or_default()
    }

    fn add_sender(&self, id: BlockId, peer: PeerId) {
        let mut map = self.senders.lock();
        if map.contains(&id) {
            map.entry(id, Vec::new).push(peer);
        }
    }

    /// Drops and bans a peer that sent an invalid block.
    pub fn punish(&self, peer: PeerId, reason: &SubmitError) {
        let _ = self.actions.try_send(PeerAction::Drop {
            peer,
            ban: true,
            reason: reason.to_string(),
        });
    }

    /// Sends solid blocks on to every peer with a stream but their senders; requested
    /// blocks are not passed on.
    async fn broadcaster(self: Arc<Self>, mut rx: mpsc::Receiver<Vec<BlockId>>) {
        while let Some(ids) = rx.recv().await {
            let sessions = self.registry.sessions();
            if sessions.is_empty() {
                continue;
            }
            for id in ids {
                if self.requested.lock().remove(&id).is_some() {
                    continue;
                }
                let senders = self.senders.lock().remove(&id).unwrap_or_default();
                let Some(bytes) = self.engine.block_bytes(&id) else {
                    continue;
                };
                let Ok(frame) = Message::Block((&*bytes).into()).to_bytes() else {
                    continue;
                };
                let frame = Bytes::from(frame);
                for (peer, session, counters) in &sessions {
                    if senders.contains(peer) {
                        continue;
                    }
                    let out = Outgoing {
                        kind: MessageType::Block,
                        frame: frame.clone(),
                    };
                    if !session.offer(out) {
                        PeerGossip::bump(&counters.dropped_packets);
                    }
                }
            }
        }
    }

    /// Drives warp sync and the requester: asks for missing milestones up to the best
    /// peer's index, walks the next milestones' cones for missing blocks, and sends due
    /// requests, each to one peer that has (or could have) the data.
    async fn sync_loop(self: Arc<Self>) {
        let mut tick = tokio::time::interval(SYNC_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_walk = Instant::now();
        loop {
            tick.tick().await;
            let sessions = self.registry.sessions();
            if sessions.is_empty() {
                continue;
            }
            let engine = Arc::clone(&self.engine);
            let gossip = Arc::clone(&self);
            let walk = last_walk.elapsed() >= CONE_WALK_EVERY;
            if walk {
                last_walk = Instant::now();
            }
            // Engine reads and the cone walk may take a while: off the async threads.
            let due = tokio::task::spawn_blocking(move || {
                let now = Instant::now();
                let state = engine.sync_state();
                gossip.requester.purge(state.confirmed, now, |w| match w {
                    Want::Block(id) => engine.has_block(id),
                    Want::Milestone(i) => engine.milestone_block_id(*i).is_some(),
                });
                let best_peer = gossip
                    .registry
                    .sessions()
                    .iter()
                    .filter_map(|(_, _, g)| g.heartbeat())
                    .map(|(hb, _)| hb.solid_milestone_index.max(hb.latest_milestone_index))
                    .max()
                    .unwrap_or(0);
                let target = best_peer.max(state.latest);
                let span = gossip
                    .warp_span
                    .lock()
                    .next(state.confirmed, engine.unreferenced_blocks());
                gossip
                    .cone_limit
                    .store(window_end(state.confirmed, span), Ordering::Relaxed);
                for index in warp_window(state.confirmed, target, span, |i| {
                    engine.milestone_block_id(i).is_some()
                }) {
                    gossip.requester.request(Want::Milestone(index), index, now);
                }
                if walk {
                    let end = state
                        .latest
                        .min(state.confirmed.saturating_add(WARP_NARROW));
                    for index in state.confirmed.saturating_add(1)..=end {
                        for id in engine.missing_in_milestone_cone(index, 1_024) {
                            gossip.requester.request(Want::Block(id), index, now);
                        }
                    }
                }
                gossip.requester.due(now, REQUESTS_PER_TICK)
            })
            .await
            .unwrap_or_default();
            for d in due {
                let Some(peer) = self.pick_peer(&sessions, d.index, d.attempt) else {
                    continue;
                };
                let msg = match d.want {
                    Want::Block(block_id) => Message::BlockRequest { block_id },
                    Want::Milestone(index) => Message::MilestoneRequest { index },
                };
                self.send_to(&peer, &msg);
            }
        }
    }

    /// One peer for a request in the cone of `index`: those whose heartbeat says they have
    /// it, else those that could have it, else any; rotated by `attempt`.
    fn pick_peer(
        &self,
        sessions: &[(PeerId, crate::registry::SessionHandle, Arc<PeerGossip>)],
        index: u32,
        attempt: u32,
    ) -> Option<PeerId> {
        let with = |f: &dyn Fn(&Heartbeat) -> bool| -> Vec<PeerId> {
            sessions
                .iter()
                .filter(|(_, _, g)| g.heartbeat().is_some_and(|(hb, _)| f(&hb)))
                .map(|(p, _, _)| *p)
                .collect()
        };
        let has =
            with(&|hb| hb.pruned_milestone_index < index && index <= hb.solid_milestone_index);
        let could =
            with(&|hb| hb.pruned_milestone_index < index && index <= hb.latest_milestone_index);
        let any: Vec<PeerId> = sessions.iter().map(|(p, _, _)| *p).collect();
        let pool = [has, could, any].into_iter().find(|v| !v.is_empty())?;
        pool.get(attempt as usize % pool.len()).copied()
    }
}
