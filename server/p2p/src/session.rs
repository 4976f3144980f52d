//! One gossip stream with one peer (`docs/peering.md` §2.4, §3.3): a writer task draining a
//! bounded queue, and a reader loop that checks frames, hands messages to [`Gossip`], sends
//! heartbeats and enforces the liveness rules. Any I/O error, timeout or protocol violation
//! ends the session and drops the peer.

use std::{
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use futures::{AsyncReadExt, AsyncWriteExt};
use ledger_codec::gossip::{FrameReader, Heartbeat, Message, LATEST_MILESTONE};
use libp2p::{PeerId, Stream};
use tokio::sync::{mpsc, Notify};

use crate::{
    gossip::{Gossip, Misbehaviour, PeerAction},
    registry::{Outgoing, PeerGossip, Refusal, SessionHandle},
};

/// Frames waiting in a peer's send queue at most (Hornet's send queue size).
pub const SEND_QUEUE: usize = 1_000;
/// A write that takes longer ends the session.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// A stream must carry a heartbeat this soon after it opens.
const FIRST_HEARTBEAT_GRACE: Duration = Duration::from_secs(5);
/// A heartbeat goes out at least this often.
const HEARTBEAT_EVERY: Duration = Duration::from_secs(30);
/// How often heartbeats and liveness are checked (a changed state goes out at most this
/// often).
const TICK: Duration = Duration::from_secs(1);

/// The timing rules of sessions.
#[derive(Debug, Clone, Copy)]
pub struct SessionRules {
    /// Silence that ends a session.
    pub read_timeout: Duration,
    /// Age of the last heartbeat that ends a session.
    pub heartbeat_max_age: Duration,
    /// Unknown peers that may hold a stream.
    pub unknown_peers_limit: usize,
}

static SESSION_IDS: AtomicU64 = AtomicU64::new(1);

/// How a session ended.
#[derive(Debug)]
enum End {
    Closed,
    Replaced,
    Io(String),
    Violation(String),
    Misbehaved(Misbehaviour),
    Silent(String),
}

/// How a session went, for the side that opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The stream was refused here, or ended for a reason already acted on.
    Done,
    /// The other side ended the stream before sending a single byte: it most likely dropped
    /// it on arrival (libp2p-stream hands over one inbound stream at a time), so the opener
    /// should reconnect rather than wait for the idle connection to close.
    EndedUnread,
}

/// Runs the gossip session of `peer` over `stream` (opened by `opener`) until it ends.
pub async fn run(
    gossip: Arc<Gossip>,
    rules: SessionRules,
    peer: PeerId,
    opener: PeerId,
    stream: Stream,
) -> Outcome {
    let (tx, rx) = mpsc::channel::<Outgoing>(SEND_QUEUE);
    let close = Arc::new(Notify::new());
    let queued = Arc::new(AtomicUsize::new(0));
    let handle = SessionHandle {
        id: SESSION_IDS.fetch_add(1, Ordering::Relaxed),
        opener,
        out: tx,
        queued: Arc::clone(&queued),
        close: Arc::clone(&close),
    };
    let session_id = handle.id;
    let counters = match gossip
        .registry
        .attach(peer, handle, rules.unknown_peers_limit)
    {
        Ok((counters, replaced)) => {
            if let Some(old) = replaced {
                old.close.notify_one();
            }
            counters
        }
        Err(Refusal::Duplicate) => {
            tracing::debug!(%peer, "second gossip stream refused (tie-break)");
            return Outcome::Done;
        }
        Err(Refusal::UnknownPeersFull) => {
            tracing::info!(%peer, "unknown peer refused: every unknown-peer slot is taken");
            let _ = gossip.actions.try_send(PeerAction::Drop {
                peer,
                ban: false,
                reason: "unknown-peer slots full".into(),
            });
            return Outcome::Done;
        }
    };
    tracing::info!(%peer, "gossip stream open");
    let (reader, writer) = stream.split();
    let writer_task = tokio::spawn(write_loop(writer, rx, queued, Arc::clone(&counters)));
    gossip.send_to(&peer, &Message::Heartbeat(gossip.heartbeat()));
    gossip.send_to(
        &peer,
        &Message::MilestoneRequest {
            index: LATEST_MILESTONE,
        },
    );
    let mut read_any = false;
    let end = read_loop(
        &gossip,
        rules,
        peer,
        &counters,
        reader,
        &close,
        &mut read_any,
    )
    .await;
    writer_task.abort();
    let current = gossip.registry.detach(&peer, session_id);
    if current && !read_any && matches!(end, End::Closed | End::Io(_)) {
        tracing::info!(%peer, "gossip stream ended before the peer sent anything");
        return Outcome::EndedUnread;
    }
    match end {
        End::Closed => tracing::info!(%peer, "gossip stream closed"),
        End::Replaced => tracing::debug!(%peer, "gossip stream replaced"),
        // Not a reason to close the connections: a stream that lost a simultaneous-dial
        // tie-break is reset by the other side while the winner may be on its way. A
        // connection left without a stream idles out (10 s) and a known peer is redialed.
        End::Io(e) if current => tracing::info!(%peer, error = %e, "gossip stream ended"),
        End::Io(e) => tracing::debug!(%peer, error = %e, "superseded gossip stream ended"),
        End::Violation(e) | End::Silent(e) => {
            tracing::warn!(%peer, reason = %e, "dropping peer");
            drop_peer(&gossip, peer, false, e);
        }
        End::Misbehaved(e) => {
            tracing::warn!(%peer, reason = %e, "dropping and banning peer");
            drop_peer(&gossip, peer, true, e.to_string());
        }
    }
    Outcome::Done
}

fn drop_peer(gossip: &Gossip, peer: PeerId, ban: bool, reason: String) {
    let _ = gossip
        .actions
        .try_send(PeerAction::Drop { peer, ban, reason });
}

async fn write_loop(
    mut writer: futures::io::WriteHalf<Stream>,
    mut rx: mpsc::Receiver<Outgoing>,
    queued: Arc<AtomicUsize>,
    counters: Arc<PeerGossip>,
) {
    while let Some(out) = rx.recv().await {
        queued.fetch_sub(out.frame.len(), Ordering::Relaxed);
        match tokio::time::timeout(WRITE_TIMEOUT, writer.write_all(&out.frame)).await {
            Ok(Ok(())) => counters.sent(out.kind),
            _ => break,
        }
        // Flush when the queue is drained (yamux buffers small writes).
        if rx.is_empty()
            && tokio::time::timeout(WRITE_TIMEOUT, writer.flush())
                .await
                .map_or(true, |r| r.is_err())
        {
            break;
        }
    }
    let _ = writer.close().await;
}

async fn read_loop(
    gossip: &Arc<Gossip>,
    rules: SessionRules,
    peer: PeerId,
    counters: &PeerGossip,
    mut reader: futures::io::ReadHalf<Stream>,
    close: &Notify,
    read_any: &mut bool,
) -> End {
    let opened = Instant::now();
    let mut frames = FrameReader::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut last_read = Instant::now();
    let mut sent: Option<(Heartbeat, Instant)> = Some((gossip.heartbeat(), Instant::now()));
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = close.notified() => return End::Replaced,
            _ = tick.tick() => {
                if last_read.elapsed() >= rules.read_timeout {
                    return End::Silent(format!("nothing read for {:?}", rules.read_timeout));
                }
                match counters.heartbeat() {
                    None if opened.elapsed() >= FIRST_HEARTBEAT_GRACE => {
                        return End::Silent("no heartbeat within 5 s of the stream opening".into());
                    }
                    Some((_, at)) if at.elapsed() >= rules.heartbeat_max_age => {
                        return End::Silent(format!(
                            "last heartbeat older than {:?}",
                            rules.heartbeat_max_age
                        ));
                    }
                    // An unknown peer that is behind our pruning index cannot be served
                    // what it needs (Hornet's `checkHeartbeats`); known peers stay.
                    Some((theirs, _))
                        if theirs.solid_milestone_index < gossip.engine.pruning_index()
                            && !gossip.registry.is_known(&peer) =>
                    {
                        return End::Silent(format!(
                            "unknown peer at confirmed milestone {}, below our pruning index {}",
                            theirs.solid_milestone_index,
                            gossip.engine.pruning_index()
                        ));
                    }
                    _ => {}
                }
                let hb = gossip.heartbeat();
                let due = match sent {
                    Some((last, at)) => last != hb || at.elapsed() >= HEARTBEAT_EVERY,
                    None => true,
                };
                if due {
                    gossip.send_to(&peer, &Message::Heartbeat(hb));
                    sent = Some((hb, Instant::now()));
                }
            }
            read = reader.read(&mut buf) => {
                let n = match read {
                    Ok(0) => return End::Closed,
                    Ok(n) => n,
                    Err(e) => return End::Io(e.to_string()),
                };
                last_read = Instant::now();
                *read_any = true;
                let mut input = buf.get(..n).unwrap_or_default();
                while !input.is_empty() {
                    match frames.feed(&mut input) {
                        Ok(Some(msg)) => {
                            if let Err(m) = gossip.on_message(peer, counters, msg).await {
                                return End::Misbehaved(m);
                            }
                        }
                        Ok(None) => {}
                        Err(e) => return End::Violation(e.to_string()),
                    }
                }
            }
        }
    }
}
