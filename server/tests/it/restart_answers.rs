//! Every answer is the same before and after a restart. The node opens its state from the
//! checkpoint beside the log (the milestone journal up to it, the blocks unreferenced then and
//! the log tail after it; engine/FORMAT.md, "History files"), not by replaying the log; each
//! restart here asserts that it did, and that it answers exactly like the node that built the
//! history.
//!
//! `every_answer_survives_a_clean_stop_and_a_kill` builds a history of about 40 milestones
//! (tagged data, value transactions between five addresses of the dev mnemonic with
//! consolidations, split payments, tag and sender features, a double spend, an NFT and an
//! alias, blocks that reference blocks several milestones old), records every answer of the
//! history routes as raw bytes (status, `Content-Type`, body) and compares them byte for byte
//! after a SIGTERM and a restart, then after a SIGKILL and a restart. The built-in
//! coordinator runs with `--coordinator-interval 0` and a thread of the test asks it for a
//! milestone every 60 ms while blocks are posted (the timer calls the same
//! `Engine::issue_milestone`): the ledger then stands still once the history is built, so even
//! the answers that name the current ledger index (output metadata, indexer pages, the rich
//! list without an index, `info`) can be compared whole.
//!
//! `answers_survive_kills_while_blocks_and_milestones_flow` runs the coordinator at 0.2 s,
//! posts blocks and value transactions from several threads and kills the node with SIGKILL
//! at random moments (`RESTART_ANSWERS_SEED` replays a failed run); after each restart every
//! acknowledged block is served, the milestone chain is contiguous, and the answers about the
//! part of the history that was confirmed before each kill are unchanged.
//!
//! Both collect every difference (with the request and the first differing bytes) and fail
//! once with the whole list. (The node serves no block children route, so there is none to
//! compare.)

use crate::common;
use crate::v2_support;

use std::{
    collections::BTreeSet,
    fmt::Write as _,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use common::{Reply, TestNode};
use ledger_codec::{
    ed25519::SigningKey,
    stardust::{self, Block, OutputId, Payload},
    Codec,
};
use serde_json::{json, Value};
use v2_support::{
    basic_output, block_bytes, dev_address_key, ed25519_bech32, genesis_output_id, hex0x,
    key_spend, tagged_data, tips_of, transaction_id, unhex, BINARY, BLOCKS, DEV_NETWORK,
    DEV_SUPPLY, GENESIS_ADDRESS, JSON_CT,
};

const INFO: &str = "/api/core/v2/info";
const MILESTONES: &str = "/api/core/v2/milestones";
const OUTPUTS: &str = "/api/core/v2/outputs";
const TRANSACTIONS: &str = "/api/core/v2/transactions";
const RICHEST: &str = "/api/explorer/v2/ledger/richest-addresses";
const INDEXER: &str = "/api/indexer/v1";

/// Every start of the first test: the coordinator issues milestones only when asked; a
/// ledger checkpoint at (nearly) every checkpoint, so that restarts open the ledger from one.
const FROZEN: &[&str] = &[
    "--no-p2p",
    "--coordinator-interval",
    "0",
    "--ledger-checkpoint-journal-size",
    "0",
];
/// Every start of the second test: a milestone every 0.2 s, as in the other tests, and
/// ledger checkpoints as in the first.
const FLOWING: &[&str] = &[
    "--no-p2p",
    "--coordinator-interval",
    "0.2",
    "--ledger-checkpoint-journal-size",
    "0",
];

/// Addresses of the dev mnemonic that trade (address 0 owns the genesis).
const ADDRESSES: usize = 5;
/// Milestones issued while the history is posted (a few more confirm its tail).
const HISTORY_MILESTONES: u32 = 36;
/// Pause of the milestone thread between two milestones.
const MILESTONE_PAUSE: Duration = Duration::from_millis(60);
/// Far above the dev network's storage deposit of any output used here.
const MIN_AMOUNT: u64 = 1_000_000;
/// The tag feature of some outputs (and the tag of the tagged-data blocks).
const TAG: &[u8] = b"restart-answers";
/// Bounds a hang on a loaded machine; asserts nothing about speed.
const TIMEOUT: Duration = Duration::from_secs(180);

// ---------------------------------------------------------------------------------------
// Recorded answers

/// How a reply is turned into what is compared.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Status, `Content-Type` and body as received.
    Raw,
    /// `/info` without `metrics` (block rates, which change with time): the rest of the body,
    /// re-serialised.
    InfoWithoutRates,
}

/// One answer: the request and everything of its reply that must not change.
struct Answer {
    path: String,
    accept: Option<&'static str>,
    kind: Kind,
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

impl Answer {
    fn of(path: String, accept: Option<&'static str>, kind: Kind, reply: &Reply) -> Self {
        let body = match kind {
            Kind::Raw => reply.body.clone(),
            Kind::InfoWithoutRates => {
                let mut info = reply.json();
                let removed = info.as_object_mut().and_then(|o| o.remove("metrics"));
                assert!(removed.is_some(), "no metrics in {info}");
                info.to_string().into_bytes()
            }
        };
        Self {
            path,
            accept,
            kind,
            status: reply.status,
            content_type: reply.content_type.clone(),
            body,
        }
    }

    fn request(&self) -> String {
        match self.accept {
            Some(accept) => format!("GET {} (Accept: {accept})", self.path),
            None => format!("GET {}", self.path),
        }
    }

    fn fetch(&self, node: &TestNode) -> Self {
        let headers: Vec<(&str, &str)> = self.accept.map(|a| ("accept", a)).into_iter().collect();
        let reply = node.get_with(&self.path, &headers);
        Self::of(self.path.clone(), self.accept, self.kind, &reply)
    }

    /// What differs between this answer and `now`, if anything.
    fn difference(&self, now: &Self) -> Option<String> {
        let mut out = String::new();
        if self.status != now.status {
            let _ = write!(out, " status {} → {};", self.status, now.status);
        }
        if self.content_type != now.content_type {
            let _ = write!(
                out,
                " Content-Type {:?} → {:?};",
                self.content_type, now.content_type
            );
        }
        if self.body != now.body {
            let at = self
                .body
                .iter()
                .zip(&now.body)
                .position(|(a, b)| a != b)
                .unwrap_or(self.body.len().min(now.body.len()));
            let _ = write!(
                out,
                " body differs from byte {at} (length {} → {}):\n      before: {}\n      after:  {}",
                self.body.len(),
                now.body.len(),
                excerpt(&self.body, at),
                excerpt(&now.body, at)
            );
        }
        (!out.is_empty()).then_some(out)
    }
}

/// The bytes around `at`: text when the body is UTF-8, hex otherwise.
fn excerpt(body: &[u8], at: usize) -> String {
    let start = at.saturating_sub(60);
    let end = (at + 100).min(body.len());
    let part = body.get(start..end).unwrap_or_default();
    match std::str::from_utf8(body) {
        Ok(_) => format!("…{}…", String::from_utf8_lossy(part)),
        Err(_) => format!("…{}… (hex, from byte {start})", hex::encode(part)),
    }
}

/// Asks every recorded request again and returns what differs, each line naming `when` and
/// the request.
fn compare(node: &TestNode, answers: &[Answer], when: &str) -> Vec<String> {
    answers
        .iter()
        .filter_map(|a| {
            a.difference(&a.fetch(node))
                .map(|d| format!("{when}: {}:{d}", a.request()))
        })
        .collect()
}

/// Asks the node and keeps each answer.
struct Recorder<'n> {
    node: &'n TestNode,
    answers: Vec<Answer>,
    asked: BTreeSet<(String, Option<&'static str>)>,
}

impl<'n> Recorder<'n> {
    fn new(node: &'n TestNode) -> Self {
        Self {
            node,
            answers: Vec::new(),
            asked: BTreeSet::new(),
        }
    }

    /// `GET path` (with `Accept: accept`), recorded once; returns the reply.
    fn ask(&mut self, path: &str, accept: Option<&'static str>) -> Reply {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("accept", a)).into_iter().collect();
        let reply = self.node.get_with(path, &headers);
        if self.asked.insert((path.to_owned(), accept)) {
            self.answers
                .push(Answer::of(path.to_owned(), accept, Kind::Raw, &reply));
        }
        reply
    }

    /// `GET path` as JSON, asserting 200.
    fn json(&mut self, path: &str) -> Value {
        let reply = self.ask(path, None);
        assert_eq!(
            reply.status,
            200,
            "{path}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        reply.json()
    }

    /// `GET path` as JSON and as v2 binary, asserting 200; returns the JSON.
    fn both(&mut self, path: &str) -> Value {
        let binary = self.ask(path, Some(BINARY));
        assert_eq!(
            binary.status,
            200,
            "{path} (binary): {}",
            String::from_utf8_lossy(&binary.body)
        );
        self.json(path)
    }

    /// `/info` without its rates; returns the whole body.
    fn info(&mut self) -> Value {
        let reply = self.node.get(INFO);
        assert_eq!(reply.status, 200);
        self.answers.push(Answer::of(
            INFO.to_owned(),
            None,
            Kind::InfoWithoutRates,
            &reply,
        ));
        reply.json()
    }

    /// Walks an indexer query page by page (`pageSize`, then each `cursor`), recording every
    /// page; returns the number of pages and the items.
    fn pages(&mut self, query: &str, page_size: usize) -> (usize, Vec<String>) {
        let sep = if query.contains('?') { '&' } else { '?' };
        let mut path = format!("{INDEXER}/{query}{sep}pageSize={page_size}");
        let mut items = Vec::new();
        for pages in 1.. {
            assert!(pages < 500, "{query}: paging does not end");
            let page = self.json(&path);
            items.extend(
                page["items"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{path}: {page}"))
                    .iter()
                    .map(|i| i.as_str().unwrap().to_owned()),
            );
            match page.get("cursor").and_then(Value::as_str) {
                Some(cursor) => {
                    path = format!("{INDEXER}/{query}{sep}cursor={cursor}&pageSize={page_size}");
                }
                None => return (pages, items),
            }
        }
        unreachable!()
    }
}

// ---------------------------------------------------------------------------------------
// Reading the node

fn confirmed_index(node: &TestNode) -> u32 {
    let info = node.get(INFO).json();
    let index = info["status"]["confirmedMilestone"]["index"].as_u64();
    u32::try_from(index.expect("confirmed index")).expect("index fits u32")
}

/// The id of a milestone payload given as JSON.
fn milestone_id(payload: &Value) -> String {
    match serde_json::from_value::<Payload<'static>>(payload.clone()).expect("milestone JSON") {
        Payload::Milestone(m) => hex0x(&m.id().expect("milestone id")),
        other => panic!("not a milestone: {other:?}"),
    }
}

fn inclusion_state(meta: &Value) -> Option<&str> {
    meta.get("ledgerInclusionState").and_then(Value::as_str)
}

/// Posts `payload` in a block, as JSON with parents filled by the node or as binary on the
/// node's tips; asserts 201 and returns the block id.
fn post_payload(node: &TestNode, payload: Payload<'static>, binary: bool) -> String {
    if binary {
        let tips = tips_of(&node.get("/api/core/v2/tips").json());
        let bytes = block_bytes(&tips, Some(payload), 0);
        node.post(BLOCKS, &[("content-type", BINARY)], &bytes)
            .created_id()
    } else {
        let body = json!({"protocolVersion": 2, "payload": payload});
        node.post_json(BLOCKS, &body).created_id()
    }
}

fn tagged(tag: &[u8], data: &[u8]) -> Payload<'static> {
    serde_json::from_value(tagged_data(tag, data)).expect("tagged data")
}

// ---------------------------------------------------------------------------------------
// A wallet over addresses of the dev mnemonic

/// An unspent output the wallet can spend.
#[derive(Clone)]
struct Utxo {
    id: ([u8; 32], u16),
    output: Value,
    amount: u64,
}

/// One way a pending spend may end: the block carrying it and the outputs it creates.
struct Candidate {
    block: String,
    created: Vec<(usize, Utxo)>,
}

/// A spend by `sender` not yet referenced; with two candidates, a double spend.
struct Pending {
    sender: usize,
    candidates: Vec<Candidate>,
}

struct Wallet {
    keys: Vec<SigningKey>,
    hashes: Vec<[u8; 32]>,
    utxos: Vec<Vec<Utxo>>,
    pending: Vec<Pending>,
    /// Every transaction posted (hex ids), conflicting ones too.
    transactions: Vec<String>,
    included: usize,
    conflicting: usize,
}

impl Wallet {
    fn new() -> Self {
        let keys: Vec<SigningKey> = (0..ADDRESSES)
            .map(|i| dev_address_key(u32::try_from(i).unwrap()))
            .collect();
        let hashes: Vec<[u8; 32]> = keys.iter().map(SigningKey::address).collect();
        assert_eq!(hex0x(&hashes[0]), GENESIS_ADDRESS);
        let mut utxos = vec![Vec::new(); ADDRESSES];
        utxos[0].push(Utxo {
            id: ([0; 32], 0),
            output: basic_output(DEV_SUPPLY, GENESIS_ADDRESS),
            amount: DEV_SUPPLY,
        });
        Self {
            keys,
            hashes,
            utxos,
            pending: Vec::new(),
            transactions: Vec::new(),
            included: 0,
            conflicting: 0,
        }
    }

    fn hash(&self, i: usize) -> String {
        hex0x(&self.hashes[i])
    }

    fn bech32(&self, i: usize) -> String {
        ed25519_bech32(&self.hashes[i])
    }

    fn busy(&self, sender: usize) -> bool {
        self.pending.iter().any(|p| p.sender == sender)
    }

    /// A transaction of `sender` spending `inputs` into `outputs` (the owner among the
    /// wallet's addresses of each, `None` for outputs the wallet does not spend); returns the
    /// payload, its id and the created outputs the wallet keeps.
    fn transaction(
        &mut self,
        sender: usize,
        inputs: &[Utxo],
        outputs: Vec<(Option<usize>, Value)>,
    ) -> (Payload<'static>, [u8; 32], Vec<(usize, Utxo)>) {
        let spent: Vec<stardust::Output<'static>> = inputs
            .iter()
            .map(|u| serde_json::from_value(u.output.clone()).expect("output"))
            .collect();
        let refs: Vec<_> = inputs.iter().map(|u| u.id).zip(&spent).collect();
        let tx = key_spend(
            &self.keys[sender],
            &refs,
            outputs.iter().map(|(_, o)| o.clone()).collect(),
            DEV_NETWORK,
        );
        let id = transaction_id(&tx);
        self.transactions.push(hex0x(&id));
        let created = outputs
            .into_iter()
            .enumerate()
            .filter_map(|(i, (owner, output))| {
                let amount = output["amount"].as_str().unwrap().parse().unwrap();
                owner.map(|o| {
                    let index = u16::try_from(i).unwrap();
                    (
                        o,
                        Utxo {
                            id: (id, index),
                            output,
                            amount,
                        },
                    )
                })
            })
            .collect();
        (Payload::Transaction(tx), id, created)
    }

    /// Up to two of `sender`'s outputs, taken out of its spendable set.
    fn take_inputs(&mut self, sender: usize) -> Vec<Utxo> {
        let take = self.utxos[sender].len().min(2);
        self.utxos[sender].drain(..take).collect()
    }

    /// One payment by each idle address that holds funds: to another address, sometimes
    /// split in several outputs, sometimes with a tag or a sender feature; the rest back.
    /// Returns the blocks posted.
    fn pay(&mut self, node: &TestNode, round: u32) -> Vec<String> {
        let mut blocks = Vec::new();
        for sender in 0..ADDRESSES {
            if self.busy(sender) || self.utxos[sender].is_empty() {
                continue;
            }
            let r = u64::from(round);
            let s = sender as u64;
            let inputs = self.take_inputs(sender);
            let total: u64 = inputs.iter().map(|u| u.amount).sum();
            let amount = if sender == 0 {
                1_000_000_000 * (1 + (r * 7 + s) % 13) + r * 1_000
            } else {
                total / 3 + r * 10
            };
            if amount < 3 * MIN_AMOUNT || amount + MIN_AMOUNT > total {
                self.utxos[sender].extend(inputs);
                continue;
            }
            let receiver = (sender + 1 + (round as usize + sender) % (ADDRESSES - 1)) % ADDRESSES;
            let parts = 1 + (r + s) % 3;
            let mut outputs = Vec::new();
            for part in 0..parts {
                let value = if part + 1 == parts {
                    amount - amount / parts * (parts - 1)
                } else {
                    amount / parts
                };
                let mut output = basic_output(value, &self.hash(receiver));
                let sender_feature =
                    json!({"type": 0, "address": {"type": 0, "pubKeyHash": self.hash(sender)}});
                let tag_feature = json!({"type": 3, "tag": hex0x(TAG)});
                let features = match (part, round % 4) {
                    (0, 1) => vec![tag_feature],
                    (0, 2) => vec![sender_feature],
                    (0, 3) => vec![sender_feature, tag_feature],
                    _ => vec![],
                };
                if !features.is_empty() {
                    output["features"] = json!(features);
                }
                outputs.push((Some(receiver), output));
            }
            outputs.push((
                Some(sender),
                basic_output(total - amount, &self.hash(sender)),
            ));
            let (payload, _, created) = self.transaction(sender, &inputs, outputs);
            let block = post_payload(node, payload, (round as usize + sender).is_multiple_of(2));
            blocks.push(block.clone());
            self.pending.push(Pending {
                sender,
                candidates: vec![Candidate { block, created }],
            });
        }
        blocks
    }

    /// Two transactions spending the same outputs of an idle address (other than the
    /// genesis owner) to two receivers; white flag includes one. Returns the blocks, or none
    /// when no address is ready.
    fn double_spend(&mut self, node: &TestNode) -> Vec<String> {
        let Some(sender) = (1..ADDRESSES)
            .find(|&s| !self.busy(s) && self.utxos[s].iter().any(|u| u.amount > 4 * MIN_AMOUNT))
        else {
            return Vec::new();
        };
        let inputs = self.take_inputs(sender);
        let total: u64 = inputs.iter().map(|u| u.amount).sum();
        let mut candidates = Vec::new();
        for offset in [1, 2] {
            let receiver = (sender + offset) % ADDRESSES;
            let outputs = vec![
                (
                    Some(receiver),
                    basic_output(total / 2, &self.hash(receiver)),
                ),
                (
                    Some(sender),
                    basic_output(total - total / 2, &self.hash(sender)),
                ),
            ];
            let (payload, _, created) = self.transaction(sender, &inputs, outputs);
            let block = post_payload(node, payload, false);
            candidates.push(Candidate { block, created });
        }
        let blocks = candidates.iter().map(|c| c.block.clone()).collect();
        self.pending.push(Pending { sender, candidates });
        blocks
    }

    /// Settles every pending spend whose blocks are all referenced.
    fn settle(&mut self, node: &TestNode) {
        for p in std::mem::take(&mut self.pending) {
            let metas: Vec<Value> = p
                .candidates
                .iter()
                .map(|c| node.get(&format!("{BLOCKS}/{}/metadata", c.block)).json())
                .collect();
            if metas.iter().any(|m| inclusion_state(m).is_none()) {
                self.pending.push(p);
                continue;
            }
            let included: Vec<usize> = (0..metas.len())
                .filter(|&i| inclusion_state(&metas[i]) == Some("included"))
                .collect();
            assert_eq!(
                included.len(),
                1,
                "one spend of each input is included: {metas:?}"
            );
            self.included += 1;
            self.conflicting += metas.len() - 1;
            let winner = p.candidates.into_iter().nth(included[0]).unwrap();
            for (owner, utxo) in winner.created {
                self.utxos[owner].push(utxo);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The first test: a frozen history, a clean stop and a kill

/// What the history posted.
struct History {
    /// Blocks posted and acknowledged, and milestone blocks.
    blocks: Vec<String>,
    transactions: Vec<String>,
    nft_id: String,
    alias_id: String,
    alias_address: String,
    bech32: Vec<String>,
    included: usize,
    conflicting: usize,
}

/// Spends the genesis output into an NFT owned by address 1, an alias controlled by address
/// 2 and governed by address 0, and the rest back to address 0.
fn mint_nft_and_alias(node: &TestNode, wallet: &mut Wallet) -> (Vec<String>, [u8; 32]) {
    let inputs = wallet.take_inputs(0);
    assert_eq!(inputs.len(), 1, "the genesis output alone");
    let ed = |i: usize| json!({"type": 0, "pubKeyHash": wallet.hash(i)});
    let outputs = vec![
        (
            None,
            json!({"type": 6, "amount": MIN_AMOUNT.to_string(), "nftId": hex0x(&[0; 32]),
                   "unlockConditions": [{"type": 0, "address": ed(1)}],
                   "immutableFeatures": [{"type": 1, "address": ed(0)}]}),
        ),
        (
            None,
            json!({"type": 4, "amount": MIN_AMOUNT.to_string(), "aliasId": hex0x(&[0; 32]),
                   "stateIndex": 0, "foundryCounter": 0,
                   "unlockConditions": [{"type": 4, "address": ed(2)}, {"type": 5, "address": ed(0)}],
                   "immutableFeatures": [{"type": 1, "address": ed(0)}]}),
        ),
        (
            Some(0),
            basic_output(DEV_SUPPLY - 2 * MIN_AMOUNT, GENESIS_ADDRESS),
        ),
    ];
    let (payload, tx, created) = wallet.transaction(0, &inputs, outputs);
    let block = post_payload(node, payload, false);
    wallet.pending.push(Pending {
        sender: 0,
        candidates: vec![Candidate {
            block: block.clone(),
            created,
        }],
    });
    (vec![block], tx)
}

/// Posts the history while a thread issues milestones, then confirms its tail.
fn build_history(node: &Arc<TestNode>) -> History {
    let started = Instant::now();
    let token = node.jwt();
    let stop = Arc::new(AtomicBool::new(false));
    let issuer = {
        let node = Arc::clone(node);
        let stop = Arc::clone(&stop);
        let token = token.clone();
        std::thread::spawn(move || {
            let mut issued = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                issued.push(node.issue_milestone_with(&token));
                std::thread::sleep(MILESTONE_PAUSE);
            }
            issued
        })
    };

    let mut wallet = Wallet::new();
    let (mut blocks, mint_tx) = mint_nft_and_alias(node, &mut wallet);
    // Blocks with the confirmed index when they were acknowledged, for references back.
    let mut acked_at: Vec<(String, u32)> = Vec::new();
    let mut double_spent = false;
    let mut round = 0u32;
    loop {
        let cmi = confirmed_index(node);
        if cmi >= HISTORY_MILESTONES && double_spent {
            break;
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "history stuck at milestone {cmi}"
        );
        round += 1;
        let mut posted = Vec::new();
        let tag = format!("round {round}");
        posted.push(post_payload(node, tagged(TAG, tag.as_bytes()), false));
        posted.push(post_payload(node, tagged(b"other", tag.as_bytes()), true));
        if !double_spent && cmi >= 8 {
            let pair = wallet.double_spend(node);
            double_spent = !pair.is_empty();
            posted.extend(pair);
        }
        posted.extend(wallet.pay(node, round));
        // Every third round, a block whose parents include blocks 4 and 9 milestones old
        // (below-max-depth is 15) besides the current tips.
        if round.is_multiple_of(3) && cmi >= 10 {
            let old = |age: u32| {
                acked_at
                    .iter()
                    .rev()
                    .find(|(_, at)| *at + age <= cmi)
                    .map(|(id, _)| unhex(id).try_into().expect("32-byte id"))
            };
            let mut parents: Vec<[u8; 32]> = [old(4), old(9)].into_iter().flatten().collect();
            parents.extend(tips_of(&node.get("/api/core/v2/tips").json()));
            parents.sort_unstable();
            parents.dedup();
            parents.truncate(8);
            let bytes = block_bytes(&parents, Some(tagged(b"old parents", tag.as_bytes())), 0);
            posted.push(
                node.post(BLOCKS, &[("content-type", BINARY)], &bytes)
                    .created_id(),
            );
        }
        wallet.settle(node);
        acked_at.extend(posted.iter().map(|id| (id.clone(), cmi)));
        blocks.extend(posted);
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    let mut issued = issuer.join().expect("milestone thread");
    eprintln!(
        "history: {round} rounds, {} milestones, {:?}",
        issued.len(),
        started.elapsed()
    );
    // Confirm the tail: every spend settled, then a milestone over the last posts.
    while !wallet.pending.is_empty() {
        assert!(started.elapsed() < TIMEOUT, "spends never settle");
        issued.push(node.issue_milestone_with(&token));
        wallet.settle(node);
    }
    issued.push(node.issue_milestone_with(&token));
    blocks.extend(
        issued
            .iter()
            .map(|m| m["blockId"].as_str().expect("blockId").to_owned()),
    );

    let nft_id = hex0x(&stardust::nft_id(&OutputId {
        transaction_id: mint_tx,
        index: 0,
    }));
    let alias_id = stardust::alias_id(&OutputId {
        transaction_id: mint_tx,
        index: 1,
    });
    let mut alias_address = [8u8; 33];
    alias_address[1..].copy_from_slice(&alias_id);
    History {
        blocks,
        transactions: wallet.transactions.clone(),
        nft_id,
        alias_id: hex0x(&alias_id),
        alias_address: stardust::Address::decode(&alias_address)
            .unwrap()
            .to_bech32("rms")
            .unwrap(),
        bech32: (0..ADDRESSES).map(|i| wallet.bech32(i)).collect(),
        included: wallet.included,
        conflicting: wallet.conflicting,
    }
}

/// How much of the history the recorded answers cover, to keep the test from passing on a
/// thin one.
#[derive(Debug, Default)]
struct Coverage {
    milestones: u32,
    blocks: usize,
    outputs: usize,
    spent: usize,
    rich_lists: usize,
    most_pages: usize,
}

/// Records every answer about the history.
fn record_all(node: &TestNode, history: &History) -> (Vec<Answer>, Coverage) {
    let mut rec = Recorder::new(node);
    let mut coverage = Coverage::default();
    let info = rec.info();
    let cmi = u32::try_from(
        info["status"]["confirmedMilestone"]["index"]
            .as_u64()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        info["status"]["latestMilestone"], info["status"]["confirmedMilestone"],
        "{info}"
    );
    coverage.milestones = cmi;

    // Milestones: payload by index and by id, JSON and binary; utxo changes.
    let mut blocks: BTreeSet<String> = history.blocks.iter().cloned().collect();
    let mut outputs: BTreeSet<String> = BTreeSet::from([genesis_output_id()]);
    let mut timestamps = Vec::new();
    for index in 1..=cmi {
        let milestone = rec.both(&format!("{MILESTONES}/by-index/{index}"));
        assert_eq!(milestone["index"], index, "{milestone}");
        timestamps.push(milestone["timestamp"].as_u64().expect("timestamp"));
        blocks.extend(
            milestone["parents"]
                .as_array()
                .expect("parents")
                .iter()
                .map(|p| p.as_str().unwrap().to_owned()),
        );
        let id = milestone_id(&milestone);
        rec.both(&format!("{MILESTONES}/by-id/{id}"));
        rec.both(&format!("{MILESTONES}/{id}"));
        let changes = rec.json(&format!("{MILESTONES}/by-index/{index}/utxo-changes"));
        rec.json(&format!("{MILESTONES}/by-id/{id}/utxo-changes"));
        for list in ["createdOutputs", "consumedOutputs"] {
            outputs.extend(
                changes[list]
                    .as_array()
                    .expect(list)
                    .iter()
                    .map(|o| o.as_str().unwrap().to_owned()),
            );
        }
    }
    for path in [
        format!("{MILESTONES}/by-index/{}", cmi + 1),
        format!("{MILESTONES}/by-index/{}/utxo-changes", cmi + 1),
        format!("{MILESTONES}/by-id/{}", hex0x(&[7; 32])),
        format!("{BLOCKS}/{}", hex0x(&[7; 32])),
        format!("{OUTPUTS}/{}0000", hex0x(&[7; 32])),
        format!("{TRANSACTIONS}/{}/included-block", hex0x(&[7; 32])),
    ] {
        assert_eq!(rec.ask(&path, None).status, 404, "{path}");
    }

    // Blocks: bytes, JSON and metadata, each referenced by a milestone (the genesis solid
    // entry point, a parent of the first milestone, is no block: its answers are kept too).
    let entry_point = hex0x(&[0; 32]);
    if blocks.remove(&entry_point) {
        rec.ask(&format!("{BLOCKS}/{entry_point}"), None);
        rec.ask(&format!("{BLOCKS}/{entry_point}/metadata"), None);
    }
    for id in &blocks {
        let bytes = rec.ask(&format!("{BLOCKS}/{id}"), Some(BINARY));
        assert_eq!(bytes.status, 200, "block {id}");
        assert_eq!(&hex0x(&Block::id_of(&bytes.body)), id);
        rec.json(&format!("{BLOCKS}/{id}"));
        let meta = rec.json(&format!("{BLOCKS}/{id}/metadata"));
        // The latest milestone block only is referenced by none (the next milestone will).
        assert!(
            meta.get("referencedByMilestoneIndex").is_some() || meta["milestoneIndex"] == cmi,
            "block {id} is not referenced: {meta}"
        );
    }
    coverage.blocks = blocks.len();

    // Transactions (conflicting ones answer 404, and must keep doing so).
    let transactions: BTreeSet<String> = history
        .transactions
        .iter()
        .cloned()
        .chain(outputs.iter().map(|o| o[..66].to_owned()))
        .filter(|tx| *tx != hex0x(&[0; 32]))
        .collect();
    for tx in &transactions {
        let path = format!("{TRANSACTIONS}/{tx}/included-block");
        rec.ask(&path, Some(BINARY));
        rec.ask(&path, None);
        rec.ask(&format!("{path}/metadata"), None);
    }

    // Outputs, created and spent.
    for id in &outputs {
        rec.both(&format!("{OUTPUTS}/{id}"));
        let meta = rec.json(&format!("{OUTPUTS}/{id}/metadata"));
        coverage.spent += usize::from(meta["isSpent"] == true);
    }
    coverage.outputs = outputs.len();

    // The rich list at old indexes and the latest.
    let mut tops = BTreeSet::new();
    for index in [
        0,
        1,
        2,
        cmi / 4,
        cmi / 3,
        cmi / 2,
        2 * cmi / 3,
        3 * cmi / 4,
        cmi - 1,
        cmi,
    ] {
        for top in [3, 10] {
            let reply = rec.ask(&format!("{RICHEST}?ledgerIndex={index}&top={top}"), None);
            if reply.status == 200 && top == 3 {
                tops.insert(reply.json()["top"].to_string());
            }
        }
    }
    rec.json(&format!("{RICHEST}?top=10"));
    rec.json(RICHEST);
    coverage.rich_lists = tops.len();

    // The indexer: every address, several filters, small pages.
    let mut queries: Vec<(String, usize)> = Vec::new();
    for address in &history.bech32 {
        queries.push((format!("outputs/basic?address={address}"), 2));
        queries.push((format!("outputs?unlockableByAddress={address}"), 3));
        queries.push((format!("outputs/basic?sender={address}"), 2));
        queries.push((format!("outputs/basic?unlockableByAddress={address}"), 1000));
        queries.push((format!("outputs/nft?address={address}"), 2));
        queries.push((format!("outputs/alias?stateController={address}"), 2));
        queries.push((format!("outputs/alias?governor={address}"), 2));
        queries.push((format!("outputs/nft?issuer={address}"), 2));
    }
    let middle = timestamps[timestamps.len() / 2];
    queries.extend([
        ("outputs".to_owned(), 7),
        (format!("outputs/basic?tag={}", hex0x(TAG)), 2),
        (format!("outputs?createdAfter={middle}"), 4),
        (format!("outputs?createdBefore={middle}"), 4),
        (
            format!("outputs/basic?createdAfter={middle}&hasNativeTokens=false"),
            5,
        ),
        (
            "outputs/basic?hasExpiration=false&hasTimelock=false".to_owned(),
            9,
        ),
        ("outputs/nft".to_owned(), 1),
        ("outputs/alias".to_owned(), 1),
        (
            format!("outputs/foundry?aliasAddress={}", history.alias_address),
            1,
        ),
    ]);
    for (query, page_size) in &queries {
        let (pages, _) = rec.pages(query, *page_size);
        coverage.most_pages = coverage.most_pages.max(pages);
    }
    for path in [
        format!("{INDEXER}/outputs/nft/{}", history.nft_id),
        format!("{INDEXER}/outputs/alias/{}", history.alias_id),
    ] {
        rec.json(&path);
    }
    rec.json("/api/core/v2/tips");
    (rec.answers, coverage)
}

#[test]
fn every_answer_survives_a_clean_stop_and_a_kill() {
    let started = Instant::now();
    let node = Arc::new(TestNode::start_with(FROZEN, &[]));
    let history = build_history(&node);
    let mut node = Arc::try_unwrap(node).unwrap_or_else(|_| panic!("one owner"));
    let (answers, coverage) = record_all(&node, &history);
    eprintln!(
        "recorded {} answers after {:?}; {coverage:?}, {} transactions included, {} conflicting",
        answers.len(),
        started.elapsed(),
        history.included,
        history.conflicting
    );
    assert!(coverage.milestones >= 30, "{coverage:?}");
    assert!(coverage.spent >= 30, "{coverage:?}");
    assert!(coverage.rich_lists >= 4, "{coverage:?}");
    assert!(coverage.most_pages >= 5, "{coverage:?}");
    assert!(history.included >= 30, "{} included", history.included);
    assert_eq!(history.conflicting, 1);

    let mut differences = Vec::new();
    let status = node.terminate();
    assert!(status.success(), "SIGTERM: {status}");
    let node = TestNode::start_in(node.into_dir(), FROZEN, &[]);
    assert_resumed(&node, "after SIGTERM");
    differences.extend(compare(&node, &answers, "after SIGTERM and restart"));
    assert!(
        node.log().contains("the ledger opens at its checkpoint"),
        "the restart did not open the ledger from its checkpoint:\n{}",
        node.log()
    );
    let node = TestNode::start_in(node.kill_9(), FROZEN, &[]);
    assert_resumed(&node, "after SIGKILL");
    differences.extend(compare(&node, &answers, "after SIGKILL and restart"));
    // Without the ledger checkpoint (the previous format's data directory): the whole
    // journal is applied, to the same answers.
    let dir = node.kill_9();
    std::fs::remove_file(dir.path().join("data/history/ledger.checkpoint"))
        .expect("a ledger checkpoint was written");
    let node = TestNode::start_in(dir, FROZEN, &[]);
    assert_resumed(&node, "without the ledger checkpoint");
    differences.extend(compare(&node, &answers, "without the ledger checkpoint"));
    eprintln!("compared three times after {:?}", started.elapsed());
    assert!(
        differences.is_empty(),
        "{} of {} answers changed:\n{}",
        differences.len(),
        answers.len(),
        differences.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// The second test: kills while blocks and milestones flow

/// A small xorshift generator; the seed is printed so a failed run can be replayed with
/// `RESTART_ANSWERS_SEED`.
struct Rng(u64);

impl Rng {
    fn seeded() -> (Self, u64) {
        let seed = std::env::var("RESTART_ANSWERS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                u64::from(now.subsec_nanos()) ^ now.as_secs()
            });
        (Self(seed | 1), seed)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Kill rounds: the node is killed this many times.
const KILLS: u32 = 5;
/// Tagged-data clients posting while the node runs.
const CLIENTS: u32 = 2;
/// Blocks whose metadata a snapshot records at most.
const SNAPSHOT_BLOCKS: usize = 120;

fn wait_for_index(node: &TestNode, index: u32, started: Instant) -> u32 {
    loop {
        let cmi = confirmed_index(node);
        if cmi >= index {
            return cmi;
        }
        assert!(started.elapsed() < TIMEOUT, "milestones stopped at {cmi}");
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// A tagged-data block: JSON without parents, or binary with zero parents (the node fills
/// them in either way).
fn flowing_block(client: u32, i: u32) -> (&'static str, Vec<u8>) {
    let tag = format!("flow-{client}-{i}");
    if i.is_multiple_of(2) {
        let body = json!({"protocolVersion": 2, "payload": tagged_data(TAG, tag.as_bytes())});
        (JSON_CT, body.to_string().into_bytes())
    } else {
        let mut bytes = block_bytes(&[[0; 32]], Some(tagged(TAG, tag.as_bytes())), 0);
        // One parent of 32 bytes → zero parents.
        bytes.splice(1..34, [0u8]);
        (BINARY, bytes)
    }
}

/// The genesis owner's one basic output (every payment sends part of it away and the rest
/// back): its id and JSON.
fn genesis_owner_output(node: &TestNode) -> (([u8; 32], u16), Value) {
    let address = ed25519_bech32(&unhex(GENESIS_ADDRESS).try_into().unwrap());
    let page = node
        .get(&format!("{INDEXER}/outputs/basic?address={address}"))
        .json();
    let items = page["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{page}");
    let id = items[0].as_str().unwrap();
    let output = node.get(&format!("{OUTPUTS}/{id}")).json()["output"].clone();
    let bytes = unhex(id);
    let tx: [u8; 32] = bytes[..32].try_into().unwrap();
    ((tx, u16::from_le_bytes([bytes[32], bytes[33]])), output)
}

/// Starts the clients: tagged data from `CLIENTS` threads, and a chain of payments from the
/// genesis owner to addresses 1.. (each sent once the one before is included). Every 201 goes
/// to `acked`; a client stops at `stop` or when the node is gone. The payment thread returns
/// how many payments were included.
fn start_clients(
    node: &Arc<TestNode>,
    acked: &Arc<Mutex<Vec<String>>>,
    stop: &Arc<AtomicBool>,
    kill: u32,
) -> Vec<JoinHandle<usize>> {
    let mut threads: Vec<JoinHandle<usize>> = (0..CLIENTS)
        .map(|c| {
            let (node, acked, stop) = (Arc::clone(node), Arc::clone(acked), Arc::clone(stop));
            std::thread::spawn(move || {
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let (media, body) = flowing_block(kill * CLIENTS + c, i);
                    match node.try_post(BLOCKS, &[("content-type", media)], &body) {
                        Some(reply) => acked.lock().unwrap().push(reply.created_id()),
                        None => break,
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                0
            })
        })
        .collect();
    let (mut input, mut spent) = genesis_owner_output(node);
    let (node, acked, stop) = (Arc::clone(node), Arc::clone(acked), Arc::clone(stop));
    threads.push(std::thread::spawn(move || {
        let key = dev_address_key(0);
        let hashes: Vec<String> = (1..4)
            .map(|i| hex0x(&dev_address_key(i).address()))
            .collect();
        for n in 0usize.. {
            let total: u64 = spent["amount"].as_str().unwrap().parse().unwrap();
            let amount = MIN_AMOUNT * (1 + (n as u64 + u64::from(kill)) % 7);
            let rest = basic_output(total - amount, GENESIS_ADDRESS);
            let receiver = &hashes[n % hashes.len()];
            let output = serde_json::from_value(spent.clone()).expect("output");
            let tx = key_spend(
                &key,
                &[(input, &output)],
                vec![basic_output(amount, receiver), rest.clone()],
                DEV_NETWORK,
            );
            let tx_id = transaction_id(&tx);
            let body = json!({"protocolVersion": 2, "payload": Payload::Transaction(tx)});
            let Some(reply) = node.try_post(
                BLOCKS,
                &[("content-type", JSON_CT)],
                body.to_string().as_bytes(),
            ) else {
                return n;
            };
            let id = reply.created_id();
            acked.lock().unwrap().push(id.clone());
            loop {
                if stop.load(Ordering::Relaxed) {
                    return n;
                }
                let Some(meta) = node.try_get(&format!("{BLOCKS}/{id}/metadata")) else {
                    return n;
                };
                match inclusion_state(&meta.json()) {
                    None => std::thread::sleep(Duration::from_millis(20)),
                    Some("included") => break,
                    Some(other) => panic!("payment {id} is {other}: {}", meta.json()),
                }
            }
            (input, spent) = ((tx_id, 1), rest);
        }
        unreachable!()
    }));
    threads
}

/// The answers about milestone `index` (payload by index as JSON and binary, by id, utxo
/// changes, the rich list at it), or `None` if the node went away meanwhile.
fn milestone_answers(node: &TestNode, index: u32) -> Option<Vec<Answer>> {
    let mut answers = Vec::new();
    let mut ask = |path: String, accept: Option<&'static str>| {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("accept", a)).into_iter().collect();
        let reply = node.try_get_with(&path, &headers)?;
        assert_eq!(
            reply.status,
            200,
            "{path}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        answers.push(Answer::of(path, accept, Kind::Raw, &reply));
        Some(reply)
    };
    let by_index = format!("{MILESTONES}/by-index/{index}");
    ask(by_index.clone(), Some(BINARY))?;
    let milestone = ask(by_index, None)?.json();
    let by_id = format!("{MILESTONES}/by-id/{}", milestone_id(&milestone));
    ask(by_id.clone(), Some(BINARY))?;
    ask(by_id, None)?;
    ask(format!("{MILESTONES}/by-index/{index}/utxo-changes"), None)?;
    ask(format!("{RICHEST}?ledgerIndex={index}&top=5"), None)?;
    Some(answers)
}

/// Records the answers about each milestone from `from` on as soon as it is confirmed, until
/// `stop` or until the node is gone (a milestone whose answers were cut short is dropped).
fn watch_milestones(
    node: &Arc<TestNode>,
    stop: &Arc<AtomicBool>,
    from: u32,
) -> JoinHandle<Vec<Answer>> {
    let (node, stop) = (Arc::clone(node), Arc::clone(stop));
    std::thread::spawn(move || {
        let mut answers = Vec::new();
        let mut next = from;
        while !stop.load(Ordering::Relaxed) {
            let Some(info) = node.try_get(INFO) else {
                break;
            };
            let cmi = info.json()["status"]["confirmedMilestone"]["index"]
                .as_u64()
                .expect("confirmed index");
            while u64::from(next) <= cmi {
                let Some(more) = milestone_answers(&node, next) else {
                    return answers;
                };
                answers.extend(more);
                next += 1;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        answers
    })
}

/// The metadata of the referenced blocks among a sample of `blocks` (the metadata of a
/// referenced block never changes).
fn referenced_metadata(node: &TestNode, blocks: &[String]) -> Vec<Answer> {
    let step = blocks.len().div_ceil(SNAPSHOT_BLOCKS).max(1);
    let mut answers = Vec::new();
    for id in blocks.iter().step_by(step) {
        let path = format!("{BLOCKS}/{id}/metadata");
        let reply = node.get(&path);
        assert_eq!(reply.status, 200, "{path}");
        if reply.json().get("referencedByMilestoneIndex").is_some() {
            answers.push(Answer::of(path, None, Kind::Raw, &reply));
        }
    }
    answers
}

/// The restarted node opened its state from the checkpoint, not by replaying the log.
fn assert_resumed(node: &TestNode, when: &str) {
    let log = node.log();
    assert!(
        log.contains("opened the state at the checkpoint")
            && !log.contains("replaying the block log"),
        "{when}: the node did not resume from its checkpoint:\n{log}"
    );
}

/// After a restart: every acknowledged block is served with its bytes, and milestones
/// `1..=CMI` form one chain (each by index, found by its id, naming the one before). Returns
/// the confirmed index.
fn check_restarted(node: &TestNode, acked: &[String], when: &str) -> u32 {
    for id in acked {
        let reply = node.get_with(&format!("{BLOCKS}/{id}"), &[("accept", BINARY)]);
        assert_eq!(reply.status, 200, "{when}: acknowledged block {id} lost");
        assert_eq!(
            &hex0x(&Block::id_of(&reply.body)),
            id,
            "{when}: block {id} has other bytes"
        );
    }
    let cmi = confirmed_index(node);
    let mut previous: Option<String> = None;
    for index in 1..=cmi {
        let reply = node.get(&format!("{MILESTONES}/by-index/{index}"));
        assert_eq!(
            reply.status, 200,
            "{when}: milestone {index} of 1..={cmi} missing"
        );
        let milestone = reply.json();
        assert_eq!(milestone["index"], index, "{when}: {milestone}");
        if let Some(previous) = &previous {
            assert_eq!(
                milestone["previousMilestoneId"],
                *previous,
                "{when}: milestone {index} does not follow {}",
                index - 1
            );
        }
        let id = milestone_id(&milestone);
        let by_id = node.get(&format!("{MILESTONES}/by-id/{id}"));
        assert_eq!(
            by_id.status, 200,
            "{when}: milestone {index} not found by id"
        );
        previous = Some(id);
    }
    cmi
}

#[test]
fn answers_survive_kills_while_blocks_and_milestones_flow() {
    let (mut rng, seed) = Rng::seeded();
    eprintln!("RESTART_ANSWERS_SEED={seed}");
    let started = Instant::now();
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    // Answers recorded before each kill: the kill they preceded, the answers, the first
    // milestone they do not cover.
    let mut snapshots: Vec<(u32, Vec<Answer>, u32)> = Vec::new();
    let mut payments = 0;
    let mut differences = Vec::new();
    let mut highest_confirmed = 0;
    let mut dir = tempfile::tempdir().expect("temp dir");
    for kill in 0..=KILLS {
        let node = Arc::new(TestNode::start_in(dir, FLOWING, &[]));
        let when = format!("seed {seed}, start {kill}");
        if kill > 0 {
            let acked = acked.lock().unwrap().clone();
            assert_resumed(&node, &when);
            let cmi = check_restarted(&node, &acked, &when);
            assert!(
                cmi >= highest_confirmed,
                "{when}: confirmed index went back from {highest_confirmed} to {cmi}"
            );
            for (before, answers, _) in &snapshots {
                differences.extend(compare(
                    &node,
                    answers,
                    &format!("{when} (recorded before kill {before})"),
                ));
            }
        }
        if kill == KILLS {
            break;
        }
        // Let blocks left unreferenced by the kill be confirmed, so the genesis owner's
        // output is settled.
        let start = confirmed_index(&node);
        wait_for_index(&node, start + 2, started);
        let stop = Arc::new(AtomicBool::new(false));
        let from = snapshots.last().map_or(1, |s| s.2);
        let watcher = watch_milestones(&node, &stop, from);
        let clients = start_clients(&node, &acked, &stop, kill);
        let at = wait_for_index(&node, start + 4, started);
        let sample = acked.lock().unwrap().clone();
        let mut answers = referenced_metadata(&node, &sample);
        let delay = rng.below(1500);
        std::thread::sleep(Duration::from_millis(delay));
        highest_confirmed = confirmed_index(&node);
        node.send_kill_9();
        stop.store(true, Ordering::Relaxed);
        for client in clients {
            payments += client.join().expect("client thread");
        }
        answers.extend(watcher.join().expect("milestone watcher"));
        // The watcher went from the first milestone not recorded before to the last it saw.
        let recorded_upto = answers
            .iter()
            .filter_map(|a| a.path.strip_prefix(&format!("{MILESTONES}/by-index/")))
            .filter_map(|rest| rest.parse::<u32>().ok())
            .max()
            .unwrap_or(from - 1);
        eprintln!(
            "kill {}: {delay} ms after milestone {at}; {} answers recorded, up to milestone {recorded_upto}; {highest_confirmed} confirmed just before",
            kill + 1,
            answers.len()
        );
        snapshots.push((kill + 1, answers, recorded_upto + 1));
        let node = Arc::try_unwrap(node).unwrap_or_else(|_| panic!("clients finished"));
        dir = node.kill_9();
    }
    let acked = acked.lock().unwrap().len();
    eprintln!(
        "{acked} blocks acknowledged, {payments} payments included, in {:?}",
        started.elapsed()
    );
    assert!(acked > 100, "only {acked} blocks acknowledged");
    assert!(
        payments >= KILLS as usize,
        "only {payments} payments included"
    );
    assert!(
        differences.is_empty(),
        "seed {seed}: {} answers changed:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// The third test: the node ends itself halfway through writing a history file

/// Where a node ends itself (`LEDGER_NODE_CRASH_AT`, engine/src/history/mod.rs): the N-th
/// time it reaches the point (the open writes checkpoint 1, then one per milestone).
const CRASH_POINTS: &[&str] = &[
    "checkpoint-before-write@12",
    "checkpoint-before-rename@12",
    "journal-half-written@11",
    // Spent outputs moving from the ledger to `history/spent.redb` at a checkpoint.
    "spent-before-commit@6",
    "spent-after-commit@6",
    // A ledger checkpoint renamed into place (written at every checkpoint here, see
    // `FLOWING`).
    "ledger-checkpoint-before-rename@4",
    // Milestone index rows committed to `history/milestones.redb` (before each ledger
    // checkpoint here).
    "milestone-index-before-commit@5",
    "milestone-index-after-commit@5",
];

#[test]
fn a_crash_inside_a_checkpoint_or_the_journal_loses_nothing() {
    let started = Instant::now();
    let mut differences = Vec::new();
    for (n, point) in CRASH_POINTS.iter().enumerate() {
        let dir = tempfile::tempdir().expect("temp dir");
        let node = Arc::new(TestNode::start_in(
            dir,
            FLOWING,
            &[("LEDGER_NODE_CRASH_AT", point)],
        ));
        let acked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = watch_milestones(&node, &stop, 1);
        let clients = start_clients(&node, &acked, &stop, u32::try_from(n).unwrap_or(0));
        // The node ends itself; clients and watcher stop when it no longer answers.
        while node.try_get(INFO).is_some() {
            assert!(
                started.elapsed() < TIMEOUT,
                "{point}: the node did not stop at its crash point"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::Relaxed);
        for client in clients {
            client.join().expect("client thread");
        }
        let answers = watcher.join().expect("milestone watcher");
        let log = node.log();
        assert!(
            log.contains(&format!("LEDGER_NODE_CRASH_AT={point}")),
            "{point}: the node stopped elsewhere:\n{log}"
        );
        let node = Arc::try_unwrap(node).unwrap_or_else(|_| panic!("clients finished"));
        let node = TestNode::start_in(node.kill_9(), FLOWING, &[]);
        assert_resumed(&node, point);
        let acked = acked.lock().unwrap().clone();
        assert!(
            acked.len() > 20,
            "{point}: only {} blocks acknowledged",
            acked.len()
        );
        check_restarted(&node, &acked, point);
        differences.extend(compare(&node, &answers, point));
        eprintln!(
            "{point}: {} acknowledged blocks and {} answers kept",
            acked.len(),
            answers.len()
        );
    }
    assert!(
        differences.is_empty(),
        "{} answers changed:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
