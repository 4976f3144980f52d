//! Peering through real `ledger-node` processes on loopback (docs/peering.md §6).
//!
//! - `line_a_b_c_*`: a line A–B–C (A runs the coordinator, B and C follow it; A and C dial B):
//!   T1 up (peer entries, counters, heartbeat contents), T2 propagation both ways with the
//!   counter deltas and no echo, the responder answering a raw peer, T6 a silent raw peer
//!   dropped by the heartbeat grace, G1–G4 hostile frames (each raw peer dropped, B serving, the
//!   line still gossiping; a peer that sent random block bytes refused on redial), G5 a milestone
//!   with a broken signature, T5 B killed
//!   with SIGKILL and restarted on its port (same peer id, reconnected, counters kept, gossip
//!   again).
//! - `flood_*`: G7, 20 000 valid blocks from a raw peer into B while another raw peer never
//!   reads: B's memory under a ceiling, frames for the non-reader dropped and counted, A → C
//!   gossip still quick.
//! - `late_joiner_*`: T3, C starts empty after 32 milestones with blocks and transactions and
//!   catches up through B; ledgers, milestones, outputs and blocks are then identical. T4, C
//!   made known on B, killed, emptied but for its identity and restarted: the same again.
//! - `peer_routes_*`: POST/DELETE /peers (errors, persistence in peering.json across restarts),
//!   the identity file (Hornet's format, 0600, kept across restarts).
//! - `timeouts_*`: G6 half a frame then silence (read timeout), T6 the heartbeat age limit, the
//!   unknown-peer limit, with a raw peer that behaves as the control.
//! - `raw_peer_*`: the raw peer itself against a bare libp2p listener (no node).
//!
//! Bounds are generous for a loaded 2-core machine; polling is every 100 ms.

use crate::common;
use crate::p2p_support;
use crate::v2_support;

use std::{
    os::unix::fs::PermissionsExt,
    thread,
    time::{Duration, Instant},
};

use ledger_codec::{
    gossip::{Heartbeat, Message},
    stardust::{self, Block, Output, Payload, TaggedData},
    Codec,
};
use libp2p::identity::Keypair;
use p2p_support::{
    assert_peer_shape, assert_same, body_of, coordinator_public_key, free_port, gossip_protocol,
    heartbeat, keypair_of_seed, metric, peer_id_of_seed, raw::RawPeer, seed_of_identity_pem,
    wait_until, NodeConfig, PeerNode, Role,
};
use serde_json::{json, Value};
use v2_support::{basic_output, dev_key_spend, hex0x, DEV_NETWORK, DEV_SUPPLY, GENESIS_ADDRESS};

/// The coordinator's seed in every test network.
const COO_SEED: [u8; 32] = [7; 32];

/// A node named `name` running the built-in coordinator of `COO_SEED`, a milestone every
/// `interval` seconds (0: only on demand).
fn coordinator(name: &'static str, interval: f64) -> NodeConfig {
    NodeConfig::new(
        name,
        Role::Coordinator {
            seed: COO_SEED,
            interval,
        },
    )
}

/// A node named `name` following the coordinator of `COO_SEED`.
fn follower(name: &'static str) -> NodeConfig {
    NodeConfig::new(
        name,
        Role::Follower {
            coordinator_seed: COO_SEED,
        },
    )
}
/// Identity seeds of A and C (§6: peer ids known up front).
const SEED_A: [u8; 32] = [1; 32];
const SEED_C: [u8; 32] = [3; 32];

/// Peers connect and exchange their first messages (§6 T1: 5 s).
const UP: Duration = Duration::from_secs(15);
/// A block travels the line (§6 T2: 5 s).
const PROPAGATE: Duration = Duration::from_secs(10);
/// Poll period while sampling the flood.
const POLL_FLOOD: Duration = Duration::from_millis(50);
/// A hostile peer is dropped (§6 G: 2 s).
const HOSTILE: Duration = Duration::from_secs(5);

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Starts the line: B first (fixed port, so it can be restarted there; its own identity),
/// then A (coordinator, `interval` s) and C (follower), both dialing B.
fn start_line(interval: f64, b_args: &[&str]) -> (PeerNode, PeerNode, PeerNode) {
    let b = PeerNode::start(follower("B").port(free_port()).args(b_args));
    let a = PeerNode::start(
        coordinator("A", interval)
            .identity(SEED_A)
            .peer(&b.multiaddr, Some("bee")),
    );
    let c = PeerNode::start(
        follower("C")
            .identity(SEED_C)
            .peer(&b.multiaddr, Some("bee")),
    );
    (a, b, c)
}

/// `entry`, a `/peers` entry, is Hornet-shaped and shows `peer` as known (configured) under
/// `alias` at its exact transport address.
fn assert_known(entry: &Value, alias: &str, peer: &PeerNode) {
    assert_peer_shape(entry);
    assert_eq!(entry["relation"], json!("known"), "{entry}");
    assert_eq!(entry["alias"], json!(alias), "{entry}");
    assert_eq!(
        entry["multiAddresses"],
        json!([peer.transport_addr()]),
        "{entry}"
    );
}

/// Snapshot of one `/peers` entry's metrics.
fn metrics_of(node: &PeerNode, peer: &str) -> Value {
    node.entry(peer)["gossip"]["metrics"].clone()
}

fn delta(before: &Value, after: &Value, name: &str) -> i64 {
    let get = |v: &Value| {
        v[name]
            .as_i64()
            .unwrap_or_else(|| panic!("no metric {name} in {v}"))
    };
    get(after) - get(before)
}

/// A unique tag for test blocks.
fn tag(what: &str) -> Vec<u8> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("peering-{what}-{nanos}").into_bytes()
}

/// A block posted to `from` becomes retrievable on `to`; returns its id.
#[track_caller]
fn propagate(from: &PeerNode, to: &PeerNode, what: &str) -> String {
    let id = from.post_tagged(&tag(what), what.as_bytes());
    to.wait_block(&id, PROPAGATE);
    id
}

/// 100 bytes that are not a block (a fixed xorshift sequence).
fn random_bytes(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

/// A fresh raw peer connects to `node`, sends a heartbeat and is listed as an unknown,
/// connected peer; it is not dropped during a short wait.
fn well_behaved_raw_peer(node: &PeerNode) -> RawPeer {
    well_behaved_raw_peer_as(node, Keypair::generate_ed25519())
}

/// [`well_behaved_raw_peer`] with identity `key`.
fn well_behaved_raw_peer_as(node: &PeerNode, key: Keypair) -> RawPeer {
    let mut raw = node
        .raw_session_as(key)
        .unwrap_or_else(|e| panic!("raw peer to {}: {e}", node.config.name));
    raw.send_heartbeat(0, 0);
    let entry = node.wait_connected(&raw.id(), true, UP);
    assert_eq!(entry["relation"], json!("unknown"), "{entry}");
    assert_peer_shape(&entry);
    if let Err(e) = raw.stay(Duration::from_millis(300), None) {
        panic!("raw peer dropped before doing anything wrong: {e:?}");
    }
    raw
}

/// Sends `bytes` from a fresh raw peer to `node` and asserts the peer is dropped (stream and
/// connection) within [`HOSTILE`] and forgotten, while `node` keeps serving.
fn assert_hostile_dropped(node: &PeerNode, name: &str, bytes: &[u8], key: Keypair) {
    let mut raw = well_behaved_raw_peer_as(node, key);
    // The node may reset the stream while we write: the write's result does not matter.
    let _ = raw.send(bytes);
    let dropped = raw.wait_dropped(HOSTILE + secs(2));
    dropped.assert_within(HOSTILE, name);
    node.wait_not_listed(&raw.id(), secs(5));
    assert_eq!(node.node().get("/api/core/v2/info").status, 200, "{name}");
}

/// T1: every link up with the contract's fields and first messages exchanged.
fn check_up(a: &PeerNode, b: &PeerNode, c: &PeerNode) {
    assert_eq!(
        a.peer_id,
        peer_id_of_seed(SEED_A),
        "A's peer id from its identity.key"
    );
    assert_eq!(
        c.peer_id,
        peer_id_of_seed(SEED_C),
        "C's peer id from its identity.key"
    );
    for n in [a, b, c] {
        let line = format!("p2p listening on {}", n.multiaddr);
        wait_until(secs(5), &format!("{} logs {line:?}", n.config.name), || {
            if n.log().contains(&line) {
                Ok(())
            } else {
                Err(n.log())
            }
        });
    }

    // B sees both ends as unknown peers that dialed in, from loopback addresses.
    for end in [a, c] {
        let entry = b.wait_connected(&end.peer_id, true, UP);
        assert_peer_shape(&entry);
        assert_eq!(entry["relation"], json!("unknown"), "{entry}");
        let addrs = entry["multiAddresses"].as_array().expect("multiAddresses");
        assert!(!addrs.is_empty(), "{entry}");
        for addr in addrs {
            assert!(
                addr.as_str()
                    .is_some_and(|s| s.starts_with("/ip4/127.0.0.1/tcp/")),
                "{entry}"
            );
        }
    }
    // The ends know B as configured, under its alias and its exact address.
    for end in [a, c] {
        let entry = end.wait_connected(&b.peer_id, true, UP);
        assert_known(&entry, "bee", b);
        let single = end.get_auth(&format!("{}/{}", p2p_support::PEERS, b.peer_id));
        assert_eq!(
            single.status, 200,
            "GET /peers/{{id}} on {}",
            end.config.name
        );
        assert_eq!(single.json()["id"], json!(b.peer_id));
    }
    assert_eq!(a.peers().len(), 1, "{:?}", a.peers());
    assert_eq!(c.peers().len(), 1, "{:?}", c.peers());

    // Heartbeat and MilestoneRequest(0) went both ways on each link.
    let links = [(a, b), (b, a), (c, b), (b, c)];
    for (here, there) in links {
        let what = format!(
            "{} counts heartbeats and milestone requests with {}",
            here.config.name, there.config.name
        );
        wait_until(secs(5), &what, || {
            let e = here.entry(&there.peer_id);
            let ok = [
                "sentHeartbeats",
                "receivedHeartbeats",
                "sentMilestoneRequests",
                "receivedMilestoneRequests",
            ]
            .iter()
            .all(|m| metric(&e, m) >= 1);
            if ok {
                Ok(())
            } else {
                Err(e.to_string())
            }
        });
    }

    // B's heartbeat as A sees it matches B's own /info (milestones keep coming, so compare
    // when B's indexes are steady around the read) and B counts its two peers; B has
    // confirmed A's milestones by then.
    a.wait_ledger_index(2, UP);
    wait_until(
        secs(10),
        "A's copy of B's heartbeat equals B's /info",
        || {
            let before = (b.ledger_index(), b.latest_index());
            let entry = a.entry(&b.peer_id);
            let after = (b.ledger_index(), b.latest_index());
            let seen = (
                heartbeat(&entry, "solidMilestoneIndex"),
                heartbeat(&entry, "latestMilestoneIndex"),
            );
            let peers = heartbeat(&entry, "connectedPeers");
            if before == after && seen == before && seen.0 >= 1 && peers == 2 {
                Ok(())
            } else {
                Err(format!("B /info {before:?}..{after:?}, A sees {entry}"))
            }
        },
    );
    c.wait_ledger_index(a.ledger_index(), UP);
}

/// T2: a block posted at A reaches C through B with the §6 counter deltas and no echo; and a
/// block posted at C reaches A.
fn check_propagation(a: &PeerNode, b: &PeerNode, c: &PeerNode) -> String {
    let a_b = metrics_of(a, &b.peer_id);
    let b_a = metrics_of(b, &a.peer_id);
    let b_c = metrics_of(b, &c.peer_id);
    let c_b = metrics_of(c, &b.peer_id);
    let id = propagate(a, c, "t2-a-to-c");
    assert!(b.has_block(&id), "B stores what it forwards");
    wait_until(secs(5), "T2 counters move", || {
        let now = (
            metrics_of(a, &b.peer_id),
            metrics_of(b, &a.peer_id),
            metrics_of(b, &c.peer_id),
            metrics_of(c, &b.peer_id),
        );
        let ok = delta(&a_b, &now.0, "sentBlocks") >= 1
            && delta(&b_a, &now.1, "newBlocks") >= 1
            && delta(&b_a, &now.1, "receivedBlocks") >= 1
            && delta(&b_c, &now.2, "sentBlocks") >= 1
            && delta(&c_b, &now.3, "newBlocks") >= 1;
        if ok {
            Ok(())
        } else {
            Err(format!("before {a_b} {b_a} {b_c} {c_b}; now {now:?}"))
        }
    });
    // Give any echo time to arrive, then: nothing came back along the line.
    thread::sleep(secs(1));
    let a_b_now = metrics_of(a, &b.peer_id);
    let b_c_now = metrics_of(b, &c.peer_id);
    let c_b_now = metrics_of(c, &b.peer_id);
    assert_eq!(
        delta(&a_b, &a_b_now, "receivedBlocks"),
        0,
        "no echo to A: {a_b} → {a_b_now}"
    );
    assert_eq!(
        delta(&c_b, &c_b_now, "knownBlocks"),
        0,
        "C gets each block once: {c_b} → {c_b_now}"
    );
    assert_eq!(
        delta(&b_c, &b_c_now, "receivedBlocks"),
        0,
        "no echo from C to B: {b_c} → {b_c_now}"
    );

    // The other way round.
    let back = propagate(c, a, "t2-c-to-a");
    assert!(b.has_block(&back), "B stores what it forwards");
    id
}

/// The responder answers a raw peer: its heartbeat and MilestoneRequest(0) on open, a
/// BlockRequest with the block's bytes, MilestoneRequest(1) with milestone 1's block; the
/// counters of its entry follow.
fn check_responder(b: &PeerNode, known_block: &str) {
    let mut raw = well_behaved_raw_peer(b);
    // On open: a Heartbeat, then MilestoneRequest(0) (§2.4).
    let hb_at = raw
        .wait_seen(secs(5), |m| matches!(m, Message::Heartbeat(_)))
        .expect("B's heartbeat on stream open");
    let req_at = raw
        .wait_seen(secs(5), |m| {
            matches!(m, Message::MilestoneRequest { index: 0 })
        })
        .expect("B's MilestoneRequest(0) on stream open");
    assert!(hb_at < req_at, "heartbeat first: {:?}", raw.seen());
    let Some(Message::Heartbeat(hb)) = raw.seen().get(hb_at).cloned() else {
        unreachable!()
    };
    assert!(
        u64::from(hb.solid_milestone_index) <= b.ledger_index()
            && hb.solid_milestone_index >= 1
            && hb.latest_milestone_index >= hb.solid_milestone_index,
        "{hb:?}"
    );

    let want: [u8; 32] = hex::decode(&known_block[2..])
        .expect("hex id")
        .try_into()
        .expect("32 bytes");
    raw.send_message(&Message::BlockRequest { block_id: want });
    raw.wait_for(secs(5), |m| match m {
        Message::Block(bytes) => Block::id_of(bytes) == want,
        _ => false,
    })
    .expect("B answers a BlockRequest with that block");

    // Milestone 1: never a broadcast (those are new milestones), so only a reply.
    raw.send_message(&Message::MilestoneRequest { index: 1 });
    raw.wait_for(secs(5), |m| match m {
        Message::Block(bytes) => matches!(
            Block::decode(bytes),
            Ok(Block { payload: Some(Payload::Milestone(ms)), .. }) if ms.index == 1
        ),
        _ => false,
    })
    .expect("B answers MilestoneRequest(1) with milestone 1's block");

    let entry = wait_until(secs(5), "B counts the raw peer's traffic", || {
        let e = b.entry(&raw.id());
        let ok = metric(&e, "receivedHeartbeats") >= 1
            && metric(&e, "receivedBlockRequests") >= 1
            && metric(&e, "receivedMilestoneRequests") >= 1
            && metric(&e, "sentHeartbeats") >= 1
            && metric(&e, "sentMilestoneRequests") >= 1
            && metric(&e, "sentBlocks") >= 2;
        if ok {
            Ok(e)
        } else {
            Err(e.to_string())
        }
    });
    assert_peer_shape(&entry);
    // A raw peer heartbeating every second is kept.
    if let Err(e) = raw.stay(secs(2), Some(secs(1))) {
        panic!("a well-behaved raw peer was dropped: {e:?}");
    }
    // When it leaves, B forgets it.
    drop(raw);
    b.wait_not_listed(entry["id"].as_str().unwrap_or_default(), secs(10));
}

/// G5: a milestone block whose signature is broken (B's own latest milestone with one byte of
/// the signature flipped: still a well-formed block, but invalid) gets its sender dropped.
fn check_bad_milestone_signature(a: &PeerNode, b: &PeerNode, c: &PeerNode) {
    let mut raw = well_behaved_raw_peer(b);
    raw.send_message(&Message::MilestoneRequest { index: 0 });
    let is_milestone = |m: &Message<'static>| match m {
        Message::Block(bytes) => {
            Block::decode(bytes).is_ok_and(|blk| matches!(blk.payload, Some(Payload::Milestone(_))))
        }
        _ => false,
    };
    let Ok(Message::Block(bytes)) = raw.wait_for(secs(5), is_milestone) else {
        panic!("B answers MilestoneRequest(0) with a milestone block")
    };
    let mut bad = bytes.into_owned();
    // Block = … ‖ milestone payload ending in its signatures (type, key, 64-byte signature)
    // ‖ nonce u64: flip a byte in the R half of the last signature.
    let at = bad.len() - 8 - 64 + 5;
    if let Some(byte) = bad.get_mut(at) {
        *byte ^= 0x01;
    }
    match Block::decode(&bad) {
        Ok(Block {
            payload: Some(Payload::Milestone(ms)),
            ..
        }) => assert!(
            ms.verify_signatures().unwrap().iter().all(|ok| !ok),
            "the flipped byte breaks the signature"
        ),
        other => panic!("the tampered milestone block still decodes: {other:?}"),
    }
    raw.send_message(&Message::Block(bad.into()));
    raw.wait_dropped(HOSTILE + secs(2))
        .assert_within(HOSTILE, "G5 milestone with a bad signature");
    b.wait_not_listed(&raw.id(), secs(5));
    propagate(a, c, "after-g5");
}

#[test]
fn line_a_b_c_up_propagation_liveness_hostile_and_kill_restart() {
    let proto = gossip_protocol();
    let (a, mut b, c) = start_line(1.0, &["--p2p-unknown-peers-limit=8"]);

    // B made its own identity: Hornet's PEM, 0600, its peer id.
    let key_path = b.p2pstore().join("identity.key");
    let key_text = std::fs::read_to_string(&key_path).expect("B's identity.key");
    let mode = std::fs::metadata(&key_path)
        .expect("stat")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "identity.key mode {mode:o}");
    assert_eq!(peer_id_of_seed(seed_of_identity_pem(&key_text)), b.peer_id);

    check_up(&a, &b, &c);
    let t2_block = check_propagation(&a, &b, &c);
    check_responder(&b, &t2_block);

    // T6: a raw peer that opens the stream and never sends a heartbeat is dropped within
    // 10 s (5 s grace + a liveness tick), not at once. Runs while the hostile cases go on.
    let silent_raw = b.raw_session();
    let silent = thread::spawn(move || {
        let mut raw = silent_raw;
        let dropped = raw.wait_dropped(secs(16));
        (raw.id(), dropped)
    });

    // G1–G4: each from a fresh raw peer; after each the line still gossips.
    let heartbeat_13 = {
        let mut v = vec![4u8, 13, 0];
        v.extend_from_slice(&[0; 13]);
        v
    };
    let random_block = {
        let mut v = vec![2u8, 100, 0];
        v.extend_from_slice(&random_bytes(100));
        assert!(Block::decode(&v[3..]).is_err(), "not a block");
        v
    };
    let cases: [(&str, Vec<u8>); 4] = [
        ("G1 unknown type 0x09", vec![9, 4, 0, 0, 0, 0, 0]),
        ("G2 Heartbeat of length 13", heartbeat_13),
        // 40 000 = 0x9c40; no body follows: the header alone must do it.
        (
            "G3 Block header announcing 40000 bytes",
            vec![2, 0x40, 0x9c],
        ),
        ("G4 Block of 100 random bytes", random_block),
    ];
    // G4's sender has a known identity so it can come back.
    let g4_key = [0x44; 32];
    for (i, (name, bytes)) in cases.iter().enumerate() {
        let key = if i == 3 {
            keypair_of_seed(g4_key)
        } else {
            Keypair::generate_ed25519()
        };
        assert_hostile_dropped(&b, name, bytes, key);
        propagate(&a, &c, "after-hostile");
    }
    // G4: the peer that sent invalid block bytes is refused when it comes back.
    match RawPeer::connect_as(keypair_of_seed(g4_key), &b.multiaddr, &proto) {
        Err(_) => {}
        Ok(mut again) => {
            again.send_heartbeat(0, 0);
            again
                .wait_dropped(secs(5))
                .assert_within(secs(3), "G4 peer redialing within 5 min is refused");
        }
    }
    assert!(
        b.peer_entry(&peer_id_of_seed(g4_key))
            .is_none_or(|e| e["connected"] == json!(false)),
        "banned peer not connected on B"
    );

    check_bad_milestone_signature(&a, &b, &c);

    let (silent_id, dropped) = silent.join().expect("silent raw peer thread");
    dropped.assert_within(secs(12), "T6 silent raw peer");
    let at = dropped.both_at().expect("dropped");
    assert!(
        at >= secs(3),
        "the silent peer got its heartbeat grace (dropped after {at:?})"
    );
    b.wait_not_listed(&silent_id, secs(5));

    // The line is intact after all of it.
    propagate(&a, &c, "after-hostile-all");
    for end in [&a, &c] {
        assert_eq!(end.entry(&b.peer_id)["connected"], json!(true));
    }

    // T5: SIGKILL B; both ends notice at once; B comes back on its port with its identity,
    // the ends reconnect, counters continue, and gossip flows again.
    let b_id = b.peer_id.clone();
    let b_addr = b.multiaddr.clone();
    let a_b_before = metrics_of(&a, &b_id);
    let c_b_before = metrics_of(&c, &b_id);
    b.kill_9();
    a.wait_connected(&b_id, false, secs(5));
    c.wait_connected(&b_id, false, secs(5));
    b.restart();
    assert_eq!(b.peer_id, b_id, "same peer id after restart");
    assert_eq!(b.multiaddr, b_addr, "same multiaddr after restart");
    assert_eq!(
        std::fs::read_to_string(&key_path).expect("identity.key"),
        key_text,
        "identity.key unchanged"
    );
    for (end, before) in [(&a, &a_b_before), (&c, &c_b_before)] {
        let entry = end.wait_connected(&b_id, true, UP);
        let now = &entry["gossip"]["metrics"];
        for m in p2p_support::METRICS {
            assert!(
                delta(before, now, m) >= 0,
                "{} reset {m} of B across the reconnect: {before} → {now}",
                end.config.name
            );
        }
        wait_until(secs(5), "heartbeats flow again", || {
            let now = metrics_of(end, &b_id);
            if delta(before, &now, "receivedHeartbeats") >= 1
                && delta(before, &now, "sentHeartbeats") >= 1
            {
                Ok(())
            } else {
                Err(format!("{before} → {now}"))
            }
        });
    }
    b.wait_ledger_index(a.ledger_index(), secs(20));
    propagate(&a, &c, "after-restart");
    propagate(&c, &a, "after-restart-back");
    c.wait_ledger_index(a.ledger_index(), secs(20));
}

/// Blocks in the G7 flood.
const FLOOD_BLOCKS: usize = 20_000;
/// Bytes of tagged data in each flood block (a block of about 1.5 KB).
const FLOOD_DATA: usize = 1_400;
/// B's resident memory must stay under this during the flood.
const FLOOD_RSS_CEILING_KIB: u64 = 320 * 1024;

/// `FLOOD_BLOCKS` valid dev blocks (minPowScore 0, nonce 0), a chain hanging off `first_parent`,
/// as gossip Block frames.
fn flood_frames(first_parent: [u8; 32]) -> (Vec<u8>, [u8; 32]) {
    let mut frames = Vec::with_capacity(FLOOD_BLOCKS * (FLOOD_DATA + 120));
    let mut parent = first_parent;
    for i in 0..FLOOD_BLOCKS {
        let mut data = vec![0x5a; FLOOD_DATA];
        data[..8].copy_from_slice(&(i as u64).to_le_bytes());
        let payload = Payload::TaggedData(TaggedData {
            tag: b"g7-flood".to_vec().into(),
            data: data.into(),
        });
        let bytes = v2_support::block_bytes(&[parent], Some(payload), 0);
        parent = Block::id_of(&bytes);
        Message::Block(bytes.into())
            .encode(&mut frames)
            .expect("frame");
    }
    (frames, parent)
}

/// G7: a raw peer floods B with 20 000 valid blocks while another raw peer on B never reads:
/// B's memory stays under a fixed ceiling, B drops frames for the non-reader (and counts
/// them), and a block from A still reaches C during the flood.
#[test]
fn flood_keeps_memory_bounded_and_gossip_flowing() {
    let (a, b, c) = start_line(1.0, &["--p2p-unknown-peers-limit=8"]);
    b.wait_connected(&a.peer_id, true, UP);
    b.wait_connected(&c.peer_id, true, UP);
    a.wait_ledger_index(2, UP);
    c.wait_ledger_index(a.ledger_index(), UP);

    // The non-reader: one heartbeat, then it never reads again.
    let mut idle = b.raw_session();
    idle.send_heartbeat(0, 0);
    let idle_id = idle.id();

    let tips = b.node().get("/api/core/v2/tips").json();
    let first_parent = v2_support::tips_of(&tips)[0];
    let (frames, last_block) = flood_frames(first_parent);
    let mut flooder = b.raw_session();
    flooder.send_heartbeat(0, 0);
    let flooding = thread::spawn(move || {
        for chunk in frames.chunks(64 * 1024) {
            flooder.send(chunk)?;
        }
        // Returned so the connection stays until B has taken it all in.
        Ok::<_, String>(flooder)
    });

    // While it runs: B's memory, the non-reader's dropped frames, and gossip A → C.
    let start = Instant::now();
    let mut max_rss = 0;
    let mut max_dropped = 0;
    let mut through = None;
    let mut t2_block = None;
    while start.elapsed() < secs(60) {
        max_rss = max_rss.max(b.node().rss_kib());
        if let Some(e) = b.peer_entry(&idle_id) {
            max_dropped = max_dropped.max(metric(&e, "droppedPackets"));
        }
        if t2_block.is_none() && start.elapsed() >= Duration::from_millis(500) {
            t2_block = Some((
                a.post_tagged(&tag("g7"), b"during the flood"),
                Instant::now(),
            ));
        }
        if let Some((id, at)) = &t2_block {
            if through.is_none() && c.has_block(id) {
                through = Some(at.elapsed());
            }
        }
        if through.is_some() && flooding.is_finished() && b.has_block(&hex0x(&last_block)) {
            break;
        }
        thread::sleep(POLL_FLOOD);
    }
    let flooder = flooding.join().expect("flood thread");
    // The last blocks of the flood may overflow the non-reader's queue only after the last
    // sample above (B relays a block after storing it): look a little longer.
    let settle = Instant::now();
    while max_dropped == 0 && settle.elapsed() < secs(5) {
        if let Some(e) = b.peer_entry(&idle_id) {
            max_dropped = max_dropped.max(metric(&e, "droppedPackets"));
        }
        thread::sleep(POLL_FLOOD);
    }
    eprintln!(
        "G7: {FLOOD_BLOCKS} blocks in {:?}; B's RSS peak {max_rss} KiB; non-reader droppedPackets \
         up to {max_dropped}; A → C {through:?}",
        start.elapsed()
    );
    assert!(
        flooder.is_ok(),
        "the flood was cut off: {:?}",
        flooder.err()
    );
    assert!(
        b.has_block(&hex0x(&last_block)),
        "B took in the whole flood within 60 s"
    );
    assert!(
        max_rss > 0 && max_rss < FLOOD_RSS_CEILING_KIB,
        "B's RSS peaked at {max_rss} KiB"
    );
    assert!(
        max_dropped >= 1,
        "B dropped frames for the peer that never reads (max droppedPackets {max_dropped})"
    );
    let through = through.expect("a block from A reached C during the flood");
    assert!(
        through <= secs(30),
        "A → C took {through:?} during the flood"
    );
    drop(idle);
}

// ---------------------------------------------------------------------------------------
// T3 late join.

const OTHER: &str = "0x2222222222222222222222222222222222222222222222222222222222222222";

#[test]
fn late_joiner_catches_up_to_an_identical_ledger() {
    // A issues milestones on demand so every node can stop at the same index.
    let b = PeerNode::start(follower("B"));
    let a = PeerNode::start(
        coordinator("A", 0.0)
            .identity(SEED_A)
            .peer(&b.multiaddr, None),
    );
    a.wait_connected(&b.peer_id, true, UP);
    b.wait_connected(&a.peer_id, true, UP);

    let mut blocks = Vec::new();
    let mut txs: Vec<String> = Vec::new();
    let mut outputs: Vec<String> = Vec::new();
    let mut input = ([0u8; 32], 0u16);
    let mut remainder = DEV_SUPPLY;
    for i in 1..=32u64 {
        if i % 4 == 1 {
            blocks.push(a.post_tagged(&tag("late"), &i.to_le_bytes()));
            blocks.push(a.post_tagged(&tag("late-bis"), &i.to_le_bytes()));
        }
        if i % 8 == 2 {
            let amount = 1_000_000 * i;
            let spent: Output<'static> =
                serde_json::from_value(basic_output(remainder, GENESIS_ADDRESS)).expect("output");
            remainder -= amount;
            let tx = dev_key_spend(
                input,
                &spent,
                vec![
                    basic_output(amount, OTHER),
                    basic_output(remainder, GENESIS_ADDRESS),
                ],
                DEV_NETWORK,
            );
            let tx_id = tx.id().unwrap();
            let payload = serde_json::to_value(Payload::Transaction(tx)).expect("payload");
            blocks.push(
                a.node()
                    .post_json(
                        "/api/core/v2/blocks",
                        &json!({"protocolVersion": 2, "payload": payload}),
                    )
                    .created_id(),
            );
            for index in 0..2u16 {
                let oid = stardust::OutputId {
                    transaction_id: tx_id,
                    index,
                };
                outputs.push(hex0x(&oid.to_array()));
            }
            txs.push(hex0x(&tx_id));
            input = (tx_id, 1);
        }
        assert_eq!(a.issue_milestone(), i);
    }
    let l = a.ledger_index();
    assert_eq!(l, 32);
    b.wait_ledger_index(l, secs(30));

    // C starts empty and catches up through B alone, its warp sync held at the next three
    // milestones throughout (a budget of 0 unreferenced blocks), which must still reach the
    // same ledger.
    let mut c = PeerNode::start(
        follower("C")
            .identity(SEED_C)
            .port(free_port())
            .peer(&b.multiaddr, None)
            .args(&["--p2p-warp-block-budget", "0"]),
    );
    c.wait_ledger_index(l, secs(60));
    assert_eq!(c.ledger_index(), l);
    assert_eq!(c.latest_index(), l);

    let nodes = [&a, &b, &c];
    for index in [l, l / 2, 1] {
        assert_same(
            &nodes,
            &format!("/api/explorer/v2/ledger/richest-addresses?top=1000&ledgerIndex={index}"),
        );
    }
    for index in 1..=l {
        assert_same(&nodes, &format!("/api/core/v2/milestones/by-index/{index}"));
        assert_same(
            &nodes,
            &format!("/api/core/v2/milestones/by-index/{index}/utxo-changes"),
        );
    }
    assert_eq!(outputs.len(), 8);
    for id in &outputs {
        assert_same(&nodes, &format!("/api/core/v2/outputs/{id}"));
        assert_same(&nodes, &format!("/api/core/v2/outputs/{id}/metadata"));
    }
    for tx in &txs {
        assert_same(
            &nodes,
            &format!("/api/core/v2/transactions/{tx}/included-block"),
        );
        assert_same(
            &nodes,
            &format!("/api/core/v2/transactions/{tx}/included-block/metadata"),
        );
    }
    for id in &blocks {
        assert_same(&nodes, &format!("/api/core/v2/blocks/{id}"));
        assert_same(&nodes, &format!("/api/core/v2/blocks/{id}/metadata"));
    }
    let genesis_oid = hex0x(&[0u8; 34]);
    let spent = body_of(&c, &format!("/api/core/v2/outputs/{genesis_oid}/metadata"));
    let spent: Value = serde_json::from_slice(&spent).expect("JSON");
    assert_eq!(spent["isSpent"], json!(true), "{spent}");

    // C fetched by requests, and B counted exactly what C sent.
    let c_b = c.entry(&b.peer_id);
    assert_eq!(c_b["relation"], json!("known"), "{c_b}");
    assert!(metric(&c_b, "sentMilestoneRequests") > 0, "{c_b}");
    assert!(metric(&c_b, "sentBlockRequests") > 0, "{c_b}");
    wait_until(secs(10), "B received exactly C's requests", || {
        let sent = c.entry(&b.peer_id);
        let got = b.entry(&c.peer_id);
        if metric(&sent, "sentMilestoneRequests") == metric(&got, "receivedMilestoneRequests")
            && metric(&sent, "sentBlockRequests") == metric(&got, "receivedBlockRequests")
        {
            Ok(())
        } else {
            Err(format!("C: {sent}\nB: {got}"))
        }
    });

    // T4: B makes C known (POST turns the unknown inbound peer into a known one); C is
    // killed, its store deleted but for identity.key, and restarted empty: B shows it
    // disconnected meanwhile, then the same peer id again, and C catches up as before.
    b.add_peer(&c.multiaddr, "sea");
    let entry = b.entry(&c.peer_id);
    assert_eq!(entry["relation"], json!("known"), "{entry}");
    assert_eq!(entry["alias"], json!("sea"), "{entry}");
    assert_eq!(entry["connected"], json!(true), "{entry}");
    let c_id = c.peer_id.clone();
    let b_c_before = metrics_of(&b, &c_id);
    c.kill_9();
    b.wait_connected(&c_id, false, secs(5));
    for item in std::fs::read_dir(c.data_dir()).expect("C's data dir") {
        let path = item.expect("dir entry").path();
        if path.file_name() == Some(std::ffi::OsStr::new("p2pstore")) {
            for file in std::fs::read_dir(&path).expect("p2pstore") {
                let file = file.expect("dir entry").path();
                if file.file_name() != Some(std::ffi::OsStr::new("identity.key")) {
                    std::fs::remove_file(&file).expect("remove");
                }
            }
        } else if path.is_dir() {
            std::fs::remove_dir_all(&path).expect("remove");
        } else {
            std::fs::remove_file(&path).expect("remove");
        }
    }
    c.restart();
    assert_eq!(c.peer_id, c_id, "same peer id from the kept identity.key");
    c.wait_ledger_index(l, secs(60));
    b.wait_connected(&c_id, true, UP);
    // C really started empty: it asked B for milestones and blocks again (B keeps counting
    // on the same entry).
    let b_c_after = metrics_of(&b, &c_id);
    for m in ["receivedMilestoneRequests", "receivedBlockRequests"] {
        assert!(
            delta(&b_c_before, &b_c_after, m) >= 1,
            "{m}: {b_c_before} → {b_c_after}"
        );
    }
    for index in [l, l / 2] {
        assert_same(
            &[&a, &c],
            &format!("/api/explorer/v2/ledger/richest-addresses?top=1000&ledgerIndex={index}"),
        );
    }
    for index in 1..=l {
        assert_same(
            &[&a, &c],
            &format!("/api/core/v2/milestones/by-index/{index}"),
        );
    }
    for id in &outputs {
        assert_same(&[&a, &c], &format!("/api/core/v2/outputs/{id}/metadata"));
    }
}

// ---------------------------------------------------------------------------------------
// The /peers routes, peering.json, identity.key.

/// The `peers` array of `<data-dir>/p2pstore/peering.json` (empty if the file is absent).
fn peering_json(node: &PeerNode) -> Vec<Value> {
    let path = node.p2pstore().join("peering.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("peering.json is not JSON ({e}): {text}"));
            v["peers"]
                .as_array()
                .unwrap_or_else(|| panic!("peering.json without peers array: {text}"))
                .clone()
        }
        Err(_) => Vec::new(),
    }
}

#[test]
fn peer_routes_persist_in_peering_json_and_identity_survives_restart() {
    const SEED_E: [u8; 32] = [5; 32];
    let mut d = PeerNode::start(coordinator("D", 0.5));
    let e = PeerNode::start(follower("E").identity(SEED_E));
    assert_eq!(e.peer_id, peer_id_of_seed(SEED_E));

    // D created its identity: Hornet's PEM in a 0700 store, file 0600.
    let store = d.p2pstore();
    let key_path = store.join("identity.key");
    let key_text = std::fs::read_to_string(&key_path).expect("identity.key");
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&key_path), 0o600, "identity.key mode");
    assert_eq!(mode(&store), 0o700, "p2pstore mode");
    assert_eq!(peer_id_of_seed(seed_of_identity_pem(&key_text)), d.peer_id);

    // Protected, empty, and the error cases.
    assert_eq!(
        d.node().get(p2p_support::PEERS).status,
        403,
        "needs a token"
    );
    assert_eq!(d.peers(), Vec::<Value>::new());
    for bad in [
        json!({"multiAddress": "garbage"}),
        json!({"multiAddress": e.transport_addr()}),
        json!({"multiAddress": format!("{}/p2p/notapeerid", e.transport_addr())}),
    ] {
        d.post_peer(&bad).assert_error(400);
    }
    d.post_peer(&json!({"multiAddress": d.multiaddr}))
        .assert_error(400);
    d.delete_peer(&e.peer_id).assert_error(404);
    assert_eq!(
        d.get_auth(&format!("{}/{}", p2p_support::PEERS, e.peer_id))
            .status,
        404
    );
    assert!(peering_json(&d).is_empty());

    // POST adds a known peer, persists it and connects.
    let added = d.add_peer(&e.multiaddr, "echo");
    assert_eq!(added["id"], json!(e.peer_id), "{added}");
    assert_known(&added, "echo", &e);
    let entry = d.wait_connected(&e.peer_id, true, UP);
    assert_eq!(entry["alias"], json!("echo"), "{entry}");
    let back = e.wait_connected(&d.peer_id, true, UP);
    assert_eq!(back["relation"], json!("unknown"), "{back}");
    assert_eq!(
        peering_json(&d),
        vec![json!({"multiAddress": e.multiaddr, "alias": "echo"})]
    );
    // The follower gets D's milestones by gossip.
    e.wait_ledger_index(d.ledger_index().max(1), secs(20));

    // POSTing it again changes nothing.
    let again = d.post_peer(&json!({"multiAddress": e.multiaddr, "alias": "echo"}));
    assert!(
        (200..300).contains(&again.status),
        "re-POST: {} {}",
        again.status,
        String::from_utf8_lossy(&again.body)
    );
    assert_eq!(peering_json(&d).len(), 1, "{:?}", peering_json(&d));
    assert_eq!(
        d.peers()
            .iter()
            .filter(|p| p["id"] == json!(e.peer_id))
            .count(),
        1
    );

    // A restart keeps the identity and the known peer, and reconnects to it.
    let d_id = d.peer_id.clone();
    d.stop();
    e.wait_not_listed(&d_id, secs(10));
    d.restart();
    assert_eq!(d.peer_id, d_id, "same peer id after restart");
    assert_eq!(
        std::fs::read_to_string(&key_path).expect("identity.key"),
        key_text
    );
    let entry = d.wait_connected(&e.peer_id, true, UP);
    assert_eq!(entry["relation"], json!("known"), "{entry}");
    assert_eq!(entry["alias"], json!("echo"), "{entry}");
    e.wait_connected(&d.peer_id, true, UP);

    // DELETE removes it from the file and disconnects.
    let deleted = d.delete_peer(&e.peer_id);
    assert_eq!(
        deleted.status,
        204,
        "{}",
        String::from_utf8_lossy(&deleted.body)
    );
    assert!(peering_json(&d).is_empty(), "{:?}", peering_json(&d));
    d.wait_not_listed(&e.peer_id, secs(10));
    e.wait_not_listed(&d.peer_id, secs(10));
    d.delete_peer(&e.peer_id).assert_error(404);

    // And it stays gone after a restart.
    d.stop();
    d.restart();
    let start = Instant::now();
    while start.elapsed() < secs(3) {
        assert!(d.peer_entry(&e.peer_id).is_none(), "{:?}", d.peers());
        thread::sleep(p2p_support::POLL);
    }
}

/// `--no-p2p`: no listener, no listen.addrs, no peers.
#[test]
fn no_p2p_runs_without_a_listener() {
    let node = common::TestNode::start_with(&["--no-p2p"], &[]);
    let token = format!("Bearer {}", node.jwt());
    let peers = node.get_with(p2p_support::PEERS, &[("authorization", &token)]);
    assert_eq!(peers.status, 200);
    assert_eq!(peers.json(), json!([]));
    assert!(!node
        .data_dir()
        .join("p2pstore")
        .join("listen.addrs")
        .exists());
    assert!(!node.log().contains("p2p listening on"), "{}", node.log());
}

// ---------------------------------------------------------------------------------------
// Timeouts and limits on a lone node (no peers but raw ones).

#[test]
fn timeouts_read_heartbeat_age_and_unknown_peer_limit() {
    let f = PeerNode::start(coordinator("F", 1.0).args(&[
        "--p2p-read-timeout=2",
        "--p2p-heartbeat-max-age=3",
        "--p2p-unknown-peers-limit=3",
    ]));
    assert!(f.log().contains(&coordinator_public_key(COO_SEED)[2..]));
    let proto = gossip_protocol();

    // Sessions are opened one at a time (see `raw_session`), then each runs in a thread.
    // Control: heartbeats every 0.5 s keep a peer for longer than both limits.
    let mut raw = f.raw_session();
    raw.send_heartbeat(0, 0);
    let control = thread::spawn(move || raw.stay(secs(7), Some(Duration::from_millis(500))));

    // G6: half a frame, then silence: dropped by the 2 s read timeout.
    let mut raw = f.raw_session();
    raw.send_heartbeat(0, 0);
    let half = thread::spawn(move || {
        let frame = Message::Heartbeat(Heartbeat::default())
            .to_bytes()
            .expect("frame");
        raw.send(&frame[..8]).expect("half a frame");
        raw.wait_dropped(secs(12))
    });

    // T6: one heartbeat, then only block requests (so reads never time out): dropped once the
    // heartbeat is older than 3 s.
    let mut raw = f.raw_session();
    raw.send_heartbeat(0, 0);
    let stale = thread::spawn(move || {
        let mut last = Instant::now();
        raw.wait_dropped_with(secs(16), |raw| {
            if last.elapsed() >= Duration::from_millis(500) {
                let _ = raw.send(
                    &Message::BlockRequest {
                        block_id: [0xab; 32],
                    }
                    .to_bytes()
                    .expect("frame"),
                );
                last = Instant::now();
            }
        })
    });

    let half = half.join().expect("G6 thread");
    half.assert_within(secs(6), "G6 half a frame then silence");
    assert!(
        half.both_at()
            .is_some_and(|t| t >= Duration::from_millis(1500)),
        "G6 dropped by the read timeout, not at once: {half:?}"
    );
    let stale = stale.join().expect("T6 thread");
    stale.assert_within(secs(12), "T6 heartbeat older than 3 s");
    assert!(
        stale
            .both_at()
            .is_some_and(|t| t >= Duration::from_millis(2500)),
        "T6 dropped by the heartbeat age, not at once: {stale:?}"
    );
    let kept = control.join().expect("control thread");
    // Kept for 7 s, and F talked to it (at least its heartbeat and MilestoneRequest(0)).
    assert!(
        matches!(kept, Ok(frames) if frames >= 2),
        "control peer: {kept:?}"
    );
    assert_eq!(f.node().get("/api/core/v2/info").status, 200);

    // Unknown-peer limit 3: three heartbeating peers hold streams, a fourth is turned away.
    wait_until(secs(10), "F forgot the earlier raw peers", || {
        let n = f.peers().len();
        if n == 0 {
            Ok(())
        } else {
            Err(format!("{n} peers: {:?}", f.peers()))
        }
    });
    let holders: Vec<_> = (0..3)
        .map(|_| {
            let mut raw = f.raw_session();
            raw.send_heartbeat(0, 0);
            thread::spawn(move || raw.stay(secs(10), Some(Duration::from_millis(500))))
        })
        .collect();
    let connected = f
        .peers()
        .iter()
        .filter(|p| p["connected"] == json!(true))
        .count();
    assert_eq!(connected, 3, "{:?}", f.peers());
    match RawPeer::connect_as(Keypair::generate_ed25519(), &f.multiaddr, &proto) {
        Err(_) => {}
        Ok(mut fourth) => {
            let mut last = Instant::now();
            fourth
                .wait_dropped_with(secs(7), |raw| {
                    if last.elapsed() >= Duration::from_millis(500) {
                        raw.send_heartbeat(0, 0);
                        last = Instant::now();
                    }
                })
                .assert_within(HOSTILE, "a fourth unknown peer beyond the limit of 3");
        }
    }
    for h in holders {
        let kept = h.join().expect("holder thread");
        assert!(
            kept.is_ok(),
            "a peer within the limit was dropped: {kept:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The raw peer itself, against a bare libp2p listener (no node).

#[test]
fn raw_peer_sees_frames_stream_resets_and_closed_connections() {
    let proto = gossip_protocol();
    assert!(proto.starts_with("/iota-gossip/") && proto.ends_with("/1.0.0"));
    let mut listener = RawPeer::listen(&proto);

    let mut dialer = RawPeer::connect(&listener.listen_addr(), &proto);
    listener.accept(secs(5)).expect("inbound stream");
    dialer.send_heartbeat(3, 4);
    let got = listener
        .wait_for(secs(5), |m| matches!(m, Message::Heartbeat(_)))
        .expect("heartbeat");
    assert_eq!(
        got,
        Message::Heartbeat(Heartbeat {
            solid_milestone_index: 3,
            pruned_milestone_index: 0,
            latest_milestone_index: 4,
            connected_peers: 1,
            synced_peers: 1,
        })
    );
    listener.send_message(&Message::MilestoneRequest { index: 0 });
    dialer
        .wait_for(secs(5), |m| *m == Message::MilestoneRequest { index: 0 })
        .expect("milestone request");
    assert!(dialer.stay(Duration::from_millis(500), None).is_ok());

    // A bad frame from the other side is reported as such.
    listener.send(&[9, 0, 0]).expect("write");
    let dropped = dialer.wait_dropped(Duration::from_millis(500));
    assert!(
        matches!(
            dropped.stream_ended,
            Some((_, p2p_support::raw::Ended::BadFrame(_)))
        ),
        "{dropped:?}"
    );

    // Stream reset, connection kept: only the stream is reported.
    let mut second = RawPeer::connect(&listener.listen_addr(), &proto);
    listener.accept(secs(5)).expect("second inbound stream");
    listener.drop_stream();
    let dropped = second.wait_dropped(Duration::from_millis(1500));
    assert!(dropped.stream_ended.is_some(), "{dropped:?}");
    assert!(dropped.connection_closed.is_none(), "{dropped:?}");
    assert_eq!(second.connections(), 1);

    // The listener closes the connection: both are reported, quickly.
    let mut third = RawPeer::connect(&listener.listen_addr(), &proto);
    listener.accept(secs(5)).expect("third inbound stream");
    listener.disconnect();
    third
        .wait_dropped(secs(5))
        .assert_within(secs(2), "disconnect");

    // A dial to a port nobody listens on fails with an error, not a hang.
    let nobody = format!(
        "/ip4/127.0.0.1/tcp/{}/p2p/{}",
        free_port(),
        peer_id_of_seed([9; 32])
    );
    assert!(RawPeer::connect_as(keypair_of_seed([8; 32]), &nobody, &proto).is_err());
}

/// The harness's identity files and peer ids: the §1 vector, and the node's own reader
/// accepts what the harness writes.
#[test]
fn harness_identity_files_match_the_vectors_and_the_node_reader() {
    let pem_text = p2p_support::identity_pem([0; 32]);
    assert!(
        pem_text.contains("MC4CAQAwBQYDK2VwBCIEIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
        "{pem_text}"
    );
    assert_eq!(
        peer_id_of_seed([0; 32]),
        "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"
    );
    assert_eq!(seed_of_identity_pem(&pem_text), [0; 32]);
    for seed in [SEED_A, SEED_C] {
        let text = p2p_support::identity_pem(seed);
        let read = ledger_p2p::Identity::from_pem(&text, std::path::Path::new("x"))
            .expect("the node reads the harness's file");
        assert_eq!(read.peer_id().to_string(), peer_id_of_seed(seed));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    p2p_support::write_identity(dir.path(), SEED_A);
    let store = dir.path().join("p2pstore");
    let loaded = ledger_p2p::Identity::load_or_create(&store).expect("load");
    assert_eq!(loaded.peer_id().to_string(), peer_id_of_seed(SEED_A));
}

// ---------------------------------------------------------------------------------------
// A peer given by name.

#[test]
fn a_peer_given_by_dns_name_is_dialed_and_health_and_metrics_follow_hornet() {
    let a = PeerNode::start(coordinator("A", 0.5));
    // /ip4/127.0.0.1/tcp/PORT/p2p/ID → /dns4/localhost/tcp/PORT/p2p/ID
    let by_name = a
        .multiaddr
        .replacen("/ip4/127.0.0.1/", "/dns4/localhost/", 1);
    assert_ne!(by_name, a.multiaddr, "{}", a.multiaddr);
    let b = PeerNode::start(follower("B").peer(&by_name, Some("A")));
    let entry = b.wait_connected(&a.peer_id, true, UP);
    assert_eq!(entry["relation"], json!("known"));
    let shown = by_name.rsplit_once("/p2p/").expect("p2p part").0;
    assert_eq!(entry["multiAddresses"], json!([shown]), "{entry}");
    b.wait_ledger_index(a.ledger_index().max(1), PROPAGATE);
    // A follower is healthy when synced with a connected peer (Hornet's rule) ...
    wait_until(PROPAGATE, "B healthy", || {
        let info = b.info();
        match info["status"]["isHealthy"].as_bool() {
            Some(true) => Ok(()),
            _ => Err(info["status"].to_string()),
        }
    });
    // Hornet's per-peer gossip families on B's metrics endpoint.
    let metrics_addr = b.node().metrics_addr.expect("B's metrics address");
    let labels = format!(r#"address="{shown}",alias="A",id="{}""#, a.peer_id);
    wait_until(PROPAGATE, "B's gossip metrics", || {
        let text = ureq::get(&format!("http://{metrics_addr}/metrics"))
            .call()
            .map_err(|e| e.to_string())?
            .body_mut()
            .read_to_string()
            .map_err(|e| e.to_string())?;
        let value = |series: String| -> Option<f64> {
            text.lines()
                .find_map(|l| l.strip_prefix(&series)?.strip_prefix(' '))
                .and_then(|v| v.trim().parse().ok())
        };
        let connected = value(format!("iota_gossip_peers_connected_peers{{{labels}}}"));
        let heartbeats = value(format!(
            r#"iota_gossip_peers_heartbeats{{{labels},type="received"}}"#
        ));
        let new_blocks = value(format!(
            r#"iota_gossip_peers_blocks{{{labels},type="new"}}"#
        ));
        match (connected, heartbeats, new_blocks) {
            (Some(c), Some(h), Some(n)) if c == 1.0 && h >= 1.0 && n >= 1.0 => Ok(()),
            other => Err(format!("{other:?} in\n{text}")),
        }
    });
    // A follower without peers is not healthy; a node with its own coordinator is healthy
    // alone.
    let lone = PeerNode::start(follower("lone follower"));
    let status = lone.info()["status"].clone();
    assert_eq!(status["isHealthy"], json!(false), "{status}");
    assert_eq!(a.info()["status"]["isHealthy"], json!(true));
}

// ---------------------------------------------------------------------------------------
// A taken p2p port stops the start (libp2p's listeners set SO_REUSEPORT, which would let a
// second node share the port silently).

#[test]
fn a_taken_p2p_port_stops_the_start_and_names_the_flag() {
    let node = PeerNode::start(coordinator("first", 0.0));
    let bound = node
        .multiaddr
        .rsplit_once("/p2p/")
        .expect("p2p part")
        .0
        .to_owned();
    let dir = tempfile::tempdir().expect("dir");
    let err = common::run_fails(&dir.path().join("data"), &[&format!("--p2p-bind={bound}")]);
    assert!(err.contains("--p2p-bind"), "{err}");
    assert!(err.contains(&bound), "{err}");
    assert!(
        !dir.path().join("data").exists(),
        "a refused start created the data dir"
    );
    // The first node still holds it and serves.
    assert_eq!(node.info()["status"]["isHealthy"], json!(true));
}
