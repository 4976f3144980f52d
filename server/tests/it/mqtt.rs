//! The event API (TIP-28, docs/events.md): MQTT over a WebSocket at `/api/mqtt/v1` on the real
//! binary, with a client of the test's own (`mqtt_support`): the upgrade, milestones, blocks
//! as the node stores them, block metadata until referenced, the outputs and transaction
//! topics of a transfer, wildcards, a slow client, and hostile input.

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    thread,
    time::{Duration, Instant},
};

use ledger_codec::{
    stardust::{Block, Payload},
    Codec,
};
use serde_json::{json, Value};
use tungstenite::protocol::frame::coding::CloseCode;

use crate::{
    common::TestNode,
    mqtt_support::{connect_packet, json as json_of, names, packet, Client, Ended, Incoming},
    v2_support::*,
};

pub(crate) const WAIT: Duration = Duration::from_secs(20);

pub(crate) fn start(extra: &[&str]) -> TestNode {
    let mut args = vec!["--coordinator-interval", "0"];
    args.extend_from_slice(extra);
    TestNode::start_with(&args, &[])
}

/// Posts a binary tagged-data block on the node's tips; its id and bytes.
pub(crate) fn post_tagged(node: &TestNode, tag: &[u8], data: &[u8]) -> (String, Vec<u8>) {
    let tips = tips_of(&node.get("/api/core/v2/tips").json());
    let payload: Payload<'static> =
        serde_json::from_value(tagged_data(tag, data)).expect("payload");
    let bytes = block_bytes(&tips, Some(payload), 0);
    let reply = node.post(BLOCKS, &[("content-type", BINARY)], &bytes);
    let id = reply.assert_json(201)["blockId"]
        .as_str()
        .expect("blockId")
        .to_owned();
    (id, bytes)
}

fn raw_block(node: &TestNode, id: &str) -> Vec<u8> {
    let raw = node.get_with(&format!("{BLOCKS}/{id}"), &[("accept", BINARY_IOTA)]);
    assert_eq!(raw.status, 200);
    raw.body
}

pub(crate) fn milestone_index(payload: &[u8]) -> u64 {
    let v = json_of(payload);
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys.len(), 3, "{v}");
    let id = v["milestoneId"].as_str().expect("milestoneId");
    assert!(
        id.starts_with("0x") && id.len() == 66 && id == id.to_lowercase(),
        "{v}"
    );
    assert!(v["timestamp"].as_u64().is_some_and(|t| t > 0), "{v}");
    v["index"].as_u64().expect("index")
}

#[test]
fn the_upgrade_answers_mqtt_and_the_route_is_listed() {
    let node = start(&[]);
    let routes = node.get("/api/routes").json();
    assert!(
        routes["routes"]
            .as_array()
            .expect("routes")
            .contains(&json!("mqtt/v1")),
        "{routes}"
    );
    // A plain GET is not an upgrade: 400 naming it, in the error envelope.
    let message = node.get("/api/mqtt/v1").assert_error(400);
    assert!(message.contains("WebSocket"), "{message}");
    let c = Client::connected(&node, "");
    assert_eq!(c.protocol.as_deref(), Some("mqtt"));

    let off = TestNode::start_with(&["--no-mqtt"], &[]);
    let routes = off.get("/api/routes").json();
    assert!(!routes["routes"]
        .as_array()
        .expect("routes")
        .contains(&json!("mqtt/v1")));
    off.get("/api/mqtt/v1").assert_error(404);
}

/// Each thread of process `pid`: its name and nice value (`/proc/PID/task/TID/stat`, field 19).
fn thread_nice_values(pid: u32) -> Vec<(String, i64)> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).expect("task dir");
    dir.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("stat")).ok())
        .filter_map(|stat| {
            let name = stat.get(stat.find('(')? + 1..stat.rfind(')')?)?.to_owned();
            // After "pid (comm) ": state is field 3, nice field 19.
            let nice = stat
                .get(stat.rfind(')')? + 2..)?
                .split(' ')
                .nth(16)?
                .parse()
                .ok()?;
            Some((name, nice))
        })
        .collect()
}

#[test]
fn connections_run_below_the_nodes_priority_and_still_get_current_values() {
    let node = start(&[]);
    node.issue_milestone();
    let mut c = Client::connected(&node, "");
    // The current value comes at once (no milestone is issued meanwhile), read for the
    // connection on the REST threads.
    c.subscribe(1, &["milestone-info/latest"]);
    let (_, latest) = c.until("milestone-info/latest", |_| true, WAIT);
    assert!(milestone_index(&latest) >= 1);
    let threads = thread_nice_values(node.pid());
    let main = threads
        .iter()
        .find(|(name, _)| name == "ledger-node")
        .map(|(_, nice)| *nice)
        .expect("the main thread");
    let io: Vec<i64> = threads
        .iter()
        .filter(|(name, _)| name == "mqtt-io")
        .map(|(_, nice)| *nice)
        .collect();
    assert!(!io.is_empty(), "no mqtt-io thread: {threads:?}");
    // The node's own delta (server/api/src/event_io.rs, NICE_DELTA).
    assert!(
        io.iter().all(|n| *n == (main + 10).min(19)),
        "mqtt-io threads at {io:?}, the node at {main}"
    );
    assert!(
        threads
            .iter()
            .filter(|(name, _)| name.starts_with("tokio-rt") || name == "log-sync")
            .all(|(_, nice)| *nice == main),
        "the REST and log threads keep the node's priority: {threads:?}"
    );
}

#[test]
fn milestones_blocks_and_metadata_until_referenced_in_one_order() {
    let node = start(&[]);
    // A confirmed milestone to have a current value (a fresh network has none).
    node.issue_milestone();
    let confirmed_before = node.get("/api/core/v2/info").json()["status"]["confirmedMilestone"]
        ["index"]
        .as_u64()
        .expect("index");
    let mut c = Client::connected(&node, "watcher");
    // A wildcard-only watcher: nobody holds the exact tag topic.
    let mut wild = Client::connected(&node, "wild");
    assert_eq!(
        wild.subscribe(1, &["blocks/#", "+/latest", "bad#"]),
        vec![1, 1, 0x80]
    );

    let codes = c.subscribe(
        1,
        &[
            "milestone-info/latest",
            "milestone-info/confirmed",
            "blocks",
            "milestones",
            "block-metadata/referenced",
        ],
    );
    assert_eq!(codes, vec![1; 5]);
    // Snapshots of the current milestone, after the SUBACK.
    let (_, latest) = c.until("milestone-info/latest", |_| true, WAIT);
    assert_eq!(milestone_index(&latest), confirmed_before);
    let (_, confirmed) = c.until("milestone-info/confirmed", |_| true, WAIT);
    assert_eq!(milestone_index(&confirmed), confirmed_before);

    let (id, bytes) = post_tagged(&node, b"mqtt", b"event");
    let (_, got) = c.until("blocks", |p| p == bytes.as_slice(), WAIT);
    assert_eq!(got, raw_block(&node, &id), "the bytes REST serves");
    let tag_topic = format!("blocks/tagged-data/{}", hex0x(b"mqtt"));
    let (seen, got) = wild.until(&tag_topic, |_| true, WAIT);
    assert_eq!(got, bytes);
    assert!(names(&seen).contains(&"blocks"), "{:?}", names(&seen));

    // Its metadata now (a snapshot), then when a milestone references it.
    let meta_topic = format!("block-metadata/{id}");
    assert_eq!(c.subscribe(2, &[&meta_topic]), vec![1]);
    let (_, meta) = c.until(&meta_topic, |_| true, WAIT);
    let meta = json_of(&meta);
    assert_eq!(meta["blockId"], json!(id));
    assert_eq!(meta["isSolid"], json!(true));
    assert!(meta.get("referencedByMilestoneIndex").is_none(), "{meta}");
    let parents: Vec<Value> = Block::decode(&bytes)
        .expect("block")
        .parents
        .iter()
        .map(|p| json!(hex0x(p)))
        .collect();
    assert_eq!(meta["parentBlockIds"], json!(parents), "{meta}");

    let issued = node.issue_milestone();
    let index = issued["index"].as_u64().expect("index");
    let (seen, confirmed) = c.until("milestone-info/confirmed", |_| true, WAIT);
    assert_eq!(milestone_index(&confirmed), index);
    let order = names(&seen);
    let pos = |t: &str| order.iter().position(|s| *s == t);
    let latest = pos("milestone-info/latest").expect("latest");
    let milestones = pos("milestones").expect("milestones");
    let referenced = pos("block-metadata/referenced").expect("referenced");
    let own = pos(&meta_topic).expect("the block's own metadata");
    assert!(latest < referenced && referenced <= own, "{order:?}");
    assert!(milestones < referenced, "{order:?}");
    assert_eq!(milestone_index(&seen[latest].1), index);
    let (_, ms_payload) = &seen[milestones];
    assert_eq!(&ms_payload[..4], &[7, 0, 0, 0], "a milestone payload");
    let milestone_block = raw_block(&node, issued["blockId"].as_str().expect("blockId"));
    assert!(
        seen.iter()
            .any(|(t, p)| t == "blocks" && *p == milestone_block),
        "the milestone's block on `blocks`"
    );
    let refs: Vec<Value> = seen
        .iter()
        .filter(|(t, _)| t == "block-metadata/referenced")
        .map(|(_, p)| json_of(p))
        .collect();
    let mine = refs
        .iter()
        .find(|m| m["blockId"] == json!(id))
        .expect("the block referenced");
    assert_eq!(mine["referencedByMilestoneIndex"], json!(index), "{mine}");
    assert_eq!(
        mine["ledgerInclusionState"],
        json!("noTransaction"),
        "{mine}"
    );
    assert!(mine["whiteFlagIndex"].is_u64(), "{mine}");
    assert_eq!(mine["parentBlockIds"], json!(parents));
    let wf: Vec<u64> = refs
        .iter()
        .map(|m| m["whiteFlagIndex"].as_u64().unwrap())
        .collect();
    assert!(
        wf.windows(2).all(|w| w[0] < w[1]),
        "white-flag order: {wf:?}"
    );
    let own_meta = json_of(&seen[own].1);
    assert_eq!(own_meta["referencedByMilestoneIndex"], json!(index));

    // The wildcard `+/latest` got the live event (a wildcard gets no snapshot).
    let (_, latest) = wild.until("milestone-info/latest", |_| true, WAIT);
    assert_eq!(milestone_index(&latest), index);

    // The next milestone: latest and confirmed again, strictly increasing.
    node.issue_milestone();
    let (_, next) = c.until("milestone-info/confirmed", |_| true, WAIT);
    assert_eq!(milestone_index(&next), index + 1);
}

#[test]
fn a_transfer_on_outputs_unlock_and_transaction_topics() {
    let node = start(&[]);
    let receiver_hash = [0x11; 32];
    let receiver = hex0x(&receiver_hash);
    let bech32 = ed25519_bech32(&receiver_hash);
    let tx = genesis_split(1_000_000, &receiver);
    let tx_id = hex0x(&tx.id().expect("tx id"));
    let genesis_out = genesis_output_id();

    let mut c = Client::connected(&node, "wallet");
    let unlock = format!("outputs/unlock/address/{bech32}");
    let plus = format!("outputs/unlock/+/{bech32}");
    let included = format!("transactions/{tx_id}/included-block");
    let spent_topic = format!("outputs/{genesis_out}");
    assert_eq!(
        c.subscribe(1, &[&unlock, &plus, &included, &spent_topic]),
        vec![1; 4]
    );
    // The genesis output is unspent now: its snapshot.
    let (_, now) = c.until(&spent_topic, |_| true, WAIT);
    assert_eq!(json_of(&now)["metadata"]["isSpent"], json!(false));

    let block = json!({"protocolVersion": 2, "payload": Payload::Transaction(tx)});
    let block_id = node.post_json(BLOCKS, &block).assert_json(201)["blockId"]
        .as_str()
        .expect("blockId")
        .to_owned();
    let index = node.issue_milestone()["index"].as_u64().expect("index");

    let (_, spent) = c.until(
        &spent_topic,
        |p| json_of(p)["metadata"]["isSpent"] == json!(true),
        WAIT,
    );
    let spent = json_of(&spent);
    assert_eq!(
        spent["metadata"]["milestoneIndexSpent"],
        json!(index),
        "{spent}"
    );
    assert_eq!(
        spent["metadata"]["transactionIdSpent"],
        json!(tx_id),
        "{spent}"
    );

    // The created output on the address topic and on the literal `+` topic (the filter
    // with `+` also matches the `address` name: both arrive, each once).
    let mut got = Vec::new();
    let deadline = Instant::now() + WAIT;
    while got.len() < 3 && Instant::now() < deadline {
        if let Some((t, p)) = c.next_publish(Duration::from_secs(1)) {
            got.push((t, p));
        }
    }
    let on = |topic: &str| got.iter().filter(|(t, _)| t == topic).count();
    assert_eq!(on(&unlock), 1, "{:?}", names(&got));
    assert_eq!(on(&plus), 1, "{:?}", names(&got));
    assert_eq!(on(&included), 1, "{:?}", names(&got));
    let (_, created) = got.iter().find(|(t, _)| *t == unlock).expect("created");
    let created = json_of(created);
    let m = &created["metadata"];
    assert_eq!(m["transactionId"], json!(tx_id));
    assert_eq!(m["isSpent"], json!(false));
    assert_eq!(m["milestoneIndexBooked"], json!(index));
    assert_eq!(m["ledgerIndex"], json!(index));
    let rest = node
        .get(&format!("/api/core/v2/outputs/{tx_id}0000"))
        .json();
    assert_eq!(created["output"], rest["output"]);
    let (_, included_block) = got.iter().find(|(t, _)| *t == included).expect("included");
    assert_eq!(*included_block, raw_block(&node, &block_id));

    // A late subscriber to included-block gets the current value.
    let mut late = Client::connected(&node, "late");
    late.subscribe(1, &[&included]);
    let (_, again) = late.until(&included, |_| true, WAIT);
    assert_eq!(again, raw_block(&node, &block_id));
}

#[test]
fn hostile_input_is_closed_and_the_node_stays_healthy() {
    let node = start(&["--mqtt-max-subscriptions", "2"]);
    let within = Duration::from_secs(5);

    // A text frame.
    let mut c = Client::connected(&node, "text");
    c.ws.send(tungstenite::Message::Text("hello".into()))
        .expect("send");
    assert_eq!(c.closed_within(within), Some(Some(CloseCode::Unsupported)));

    // A malformed packet: SUBSCRIBE without filters.
    let mut c = Client::connected(&node, "malformed");
    c.send(&packet(0x82, &[0, 1]));
    assert!(c.closed_within(within).is_some(), "malformed packet");

    // A remaining length in five bytes.
    let mut c = Client::open(&node);
    c.send(&[0x10, 0xff, 0xff, 0xff, 0xff, 0x01]);
    assert!(c.closed_within(within).is_some(), "malformed length");

    // An oversized packet, refused from its header alone.
    let mut c = Client::connected(&node, "big");
    c.send(&[0x30, 0x80, 0x80, 0x40]);
    assert!(c.closed_within(within).is_some(), "oversized");

    // A packet before CONNECT.
    let mut c = Client::open(&node);
    c.send(&[0xc0, 0]);
    assert!(c.closed_within(within).is_some(), "PINGREQ before CONNECT");

    // MQTT 5: CONNACK 0x01, then closed.
    let mut c = Client::open(&node);
    c.send(&connect_packet("MQTT", 5, "v5"));
    assert_eq!(c.next(within), Ok(Incoming::ConnAck(1)));
    assert!(c.closed_within(within).is_some(), "MQTT 5");

    // Too many subscriptions: SUBACK 0x80 beyond the cap, the connection stays.
    let mut c = Client::connected(&node, "greedy");
    assert_eq!(c.subscribe(1, &["a", "b", "c"]), vec![1, 1, 0x80]);
    c.send(&[0xc0, 0]);
    assert_eq!(c.next(within), Ok(Incoming::Other(0xd0)), "PINGRESP");

    // No CONNECT: closed after the 10 s CONNECT wait.
    let started = Instant::now();
    let mut c = Client::open(&node);
    let closed = c.closed_within(Duration::from_secs(20));
    assert!(closed.is_some(), "no CONNECT");
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );

    assert_eq!(node.get("/health").status, 200);
    assert_eq!(node.get("/api/core/v2/info").status, 200);
}

/// The value of the first sample of `name` (with its labels) in a scrape.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

fn scrape(node: &TestNode) -> String {
    let addr = node.metrics_addr.expect("metrics address");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    agent
        .get(&format!("http://{addr}/metrics"))
        .call()
        .expect("scrape")
        .body_mut()
        .read_to_string()
        .expect("body")
}

/// Blocks the slow-client test submits while one client never reads (issue 26), from
/// [`FLOOD_SUBMITTERS`] threads, each block carrying [`FLOOD_DATA`] bytes of data.
const FLOOD_BLOCKS: u64 = 20_000;
const FLOOD_SUBMITTERS: u64 = 4;
const FLOOD_DATA: usize = 4096;

/// The node's anonymous resident memory in KiB (`RssAnon`): heap and stacks, without the
/// mapped block log's page cache, which grows with every stored block whoever listens.
fn rss_anon_kib(node: &TestNode) -> u64 {
    std::fs::read_to_string(format!("/proc/{}/status", node.pid()))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Whether a `blocks` payload is a block of [`submit_chain`].
fn flood_tag(block: &[u8]) -> bool {
    matches!(
        Block::decode(block).map(|b| b.payload),
        Ok(Some(Payload::TaggedData(d))) if d.tag.0.starts_with(b"flood-")
    )
}

/// Submits `count` binary tagged-data blocks of `data` bytes, chained on the submitter's own
/// previous block (the first on the node's tips); how many were created.
fn submit_chain(node: &TestNode, submitter: u64, count: u64, data: &[u8]) -> u64 {
    let mut parents = tips_of(&node.get("/api/core/v2/tips").json());
    let mut created = 0;
    for i in 0..count {
        let tag = format!("flood-{submitter}-{i}");
        let payload: Payload<'static> =
            serde_json::from_value(tagged_data(tag.as_bytes(), data)).expect("payload");
        let bytes = block_bytes(&parents, Some(payload), 0);
        let reply = node.post(BLOCKS, &[("content-type", BINARY_IOTA)], &bytes);
        if reply.status == 201 {
            created += 1;
            parents = vec![Block::id_of(&bytes)];
        }
    }
    created
}

#[test]
fn a_client_that_never_reads_is_dropped_while_others_keep_receiving() {
    let node = TestNode::start_with(
        &[
            "--coordinator-interval",
            "1",
            // 4 MiB (about 1 000 flood blocks): room for the good client's reader to be
            // descheduled a while on a busy machine; the slow client overflows it anyway.
            "--mqtt-client-queue",
            "4194304",
        ],
        &[],
    );
    let mut slow = Client::connected(&node, "slow");
    slow.subscribe(1, &["blocks"]);
    let mut good = Client::connected(&node, "good");
    good.subscribe(1, &["milestone-info/confirmed", "blocks"]);
    let metrics = scrape(&node);
    assert_eq!(
        sample(&metrics, "iota_mqtt_clients_connected"),
        Some(2.0),
        "{metrics}"
    );
    assert_eq!(sample(&metrics, "iota_mqtt_subscriptions"), Some(3.0));
    let anon_before = rss_anon_kib(&node);

    // The good client reads on its own thread: when each milestone index came, the blocks
    // of the flood, and all blocks (milestones' among them).
    let stop = Arc::new(AtomicBool::new(false));
    let blocks_seen = Arc::new(AtomicU64::new(0));
    let flood_seen = Arc::new(AtomicU64::new(0));
    let reader = {
        let stop = Arc::clone(&stop);
        let blocks_seen = Arc::clone(&blocks_seen);
        let flood_seen = Arc::clone(&flood_seen);
        thread::spawn(move || {
            let mut milestones = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match good.next(Duration::from_millis(200)) {
                    Ok(Incoming::Publish { topic, payload, .. }) => {
                        if topic == "blocks" {
                            blocks_seen.fetch_add(1, Ordering::Relaxed);
                            if flood_tag(&payload) {
                                flood_seen.fetch_add(1, Ordering::Relaxed);
                            }
                        } else {
                            let index = json_of(&payload)["index"].as_u64().expect("index");
                            milestones.push((Instant::now(), index));
                        }
                    }
                    Ok(_) | Err(Ended::Timeout) => {}
                    Err(Ended::Closed(code)) => panic!("the good client was closed: {code:?}"),
                }
            }
            milestones
        })
    };

    // 20 000 blocks of 4 KiB (80 MiB sent to each `blocks` subscriber): far more than the
    // slow client's queue (4 MiB) and its socket's buffers hold. The node's anonymous
    // memory is sampled throughout: an unbounded queue would hold most of the 80 MiB.
    let data = vec![0x5a; FLOOD_DATA];
    let peak_anon = AtomicU64::new(anon_before);
    let flooding = AtomicBool::new(true);
    let created: u64 = thread::scope(|s| {
        s.spawn(|| {
            while flooding.load(Ordering::Relaxed) {
                peak_anon.fetch_max(rss_anon_kib(&node), Ordering::Relaxed);
                thread::sleep(Duration::from_millis(100));
            }
        });
        let per = FLOOD_BLOCKS / FLOOD_SUBMITTERS;
        let submitters: Vec<_> = (0..FLOOD_SUBMITTERS)
            .map(|t| {
                let (node, data) = (&node, &data);
                s.spawn(move || submit_chain(node, t, per, data))
            })
            .collect();
        let created = submitters
            .into_iter()
            .map(|h| h.join().expect("submitter"))
            .sum();
        flooding.store(false, Ordering::Relaxed);
        created
    });
    assert_eq!(created, FLOOD_BLOCKS, "every block is created");

    // The slow client is disconnected after its backlog time (10 s) at most.
    let deadline = Instant::now() + Duration::from_secs(40);
    let dropped_client = loop {
        let m = scrape(&node);
        if sample(&m, "iota_mqtt_clients_connected") == Some(1.0) {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "the slow client is still connected:\n{m}"
        );
        thread::sleep(Duration::from_millis(500));
    };
    let full = sample(
        &dropped_client,
        r#"iota_mqtt_dropped_total{reason="queue_full"}"#,
    )
    .expect("dropped family");
    assert!(full > 0.0, "{dropped_client}");
    assert!(
        slow.closed_within(Duration::from_secs(10)).is_some(),
        "the slow client's connection is closed"
    );

    // The good client keeps receiving blocks and milestones afterwards.
    let before = blocks_seen.load(Ordering::Relaxed);
    post_tagged(&node, b"after", b"still here");
    thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    let milestones = reader.join().expect("reader");
    assert!(blocks_seen.load(Ordering::Relaxed) > before);
    let indexes: Vec<u64> = milestones.iter().map(|&(_, i)| i).collect();
    assert!(indexes.len() >= 3, "{indexes:?}");
    assert!(
        indexes.windows(2).all(|w| w[1] == w[0] + 1),
        "consecutive: {indexes:?}"
    );
    // Milestones kept their cadence (one a second): no stall of the node behind the slow
    // client (hornet #1687, docs/events.md §6). A liveness bound, ten intervals wide.
    let longest_gap = milestones
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .max()
        .unwrap_or_default();
    assert!(
        longest_gap < Duration::from_secs(10),
        "milestones stalled for {longest_gap:?}"
    );
    assert_eq!(
        flood_seen.load(Ordering::Relaxed),
        created,
        "the good client got every block of the flood"
    );
    // The slow client's memory stayed bounded: the peak growth of the node's anonymous
    // memory is far below the 80 MiB it was sent.
    let grown_mib = peak_anon
        .load(Ordering::Relaxed)
        .saturating_sub(anon_before)
        / 1024;
    eprintln!(
        "{created} blocks; the good client saw {} of them and {} milestones (longest gap \
         {longest_gap:?}); {full} messages dropped for the slow client; RssAnon peak growth \
         {grown_mib} MiB",
        flood_seen.load(Ordering::Relaxed),
        indexes.len()
    );
    assert!(
        grown_mib < 48,
        "RssAnon grew by {grown_mib} MiB at its peak"
    );
    drop(slow);
}

#[test]
fn one_client_above_the_cap_gets_connack_3_and_the_same_id_replaces_the_old_one() {
    let node = start(&["--mqtt-max-clients", "1"]);
    let mut first = Client::connected(&node, "only");
    let mut second = Client::open(&node);
    second.send(&connect_packet("MQTT", 4, "another"));
    assert_eq!(second.next(WAIT), Ok(Incoming::ConnAck(3)));
    assert!(second.closed_within(Duration::from_secs(5)).is_some());
    // The same client id connecting again takes the place of the first connection.
    let mut again = Client::connected(&node, "only");
    assert!(
        first.closed_within(Duration::from_secs(5)).is_some(),
        "replaced"
    );
    assert_eq!(again.subscribe(1, &["blocks"]), vec![1]);
    let metrics = scrape(&node);
    assert_eq!(
        sample(&metrics, "iota_mqtt_clients_connected"),
        Some(1.0),
        "{metrics}"
    );
    assert!(
        metrics.contains("iota_mqtt_published_total{topic_class=\"blocks\"}"),
        "{metrics}"
    );
}

/// `mqtt-swarm`'s measuring core (ledger-load's `swarm`, run in-process) against the real
/// node: every created probe reaches every `blocks` subscriber exactly once, address
/// subscribers stay connected, nobody is dropped.
#[test]
fn the_subscriber_swarm_times_every_probe_on_every_blocks_subscriber() {
    use ledger_load::swarm::{connect_all, measure, plan_for, Role};
    let node = start(&[]);
    let url = node.url("");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let report = runtime.block_on(async {
        let plan = plan_for(&url, None).await.expect("loopback URL");
        let roles = vec![
            Role::Blocks,
            Role::Blocks,
            Role::Blocks,
            Role::Address(ed25519_bech32(&[7; 32])),
            Role::Address(ed25519_bech32(&[8; 32])),
        ];
        let subscribers = connect_all(&plan, roles, 60).await.expect("subscribed");
        measure(
            &plan,
            subscribers,
            60,
            10,
            Duration::from_secs(2),
            Duration::from_secs(1),
        )
        .await
    });
    assert_eq!((report.subscribers, report.blocks_subscribers), (5, 3));
    assert!(report.probes_created >= 5, "{report}");
    assert_eq!(report.probes_created, report.probes_sent, "{report}");
    assert_eq!(report.expected_deliveries, 3 * report.probes_created);
    assert_eq!(report.deliveries, report.expected_deliveries, "{report}");
    assert!(report.messages >= report.deliveries, "{report}");
    assert_eq!(report.dropped, 0, "{report}");
}
