//! Harness for the peering tests: real `ledger-node` processes peering on loopback
//! ([`PeerNode`], [`NodeConfig`]), a hand-driven libp2p peer ([`raw::RawPeer`]), and helpers for
//! `/peers`, blocks and polling.
//!
//! Every node gets its own temp data dir, `--api-bind 127.0.0.1:0` and a loopback p2p bind
//! (`/ip4/127.0.0.1/tcp/0`, or a fixed free port for a node a test restarts); its bound
//! multiaddr is read from `<data-dir>/p2pstore/listen.addrs`. Identities can be pre-written
//! from a seed (Hornet's PEM format) so peer ids are known up front; coordinator keys come
//! from fixed seeds so followers can be given the public key.

pub mod raw;

use std::{
    fs,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use ledger_codec::ed25519::SigningKey;
use libp2p::identity::Keypair;
use serde_json::{json, Value};

use crate::common::{jwt_for, Reply, TestNode};

/// The dev genesis network name (engine/src/dev-genesis.json `protocolParameters.networkName`).
pub const DEV_NETWORK_NAME: &str = "ledger-dev";
/// Protected peers route.
pub const PEERS: &str = "/api/core/v2/peers";
/// Poll period.
pub const POLL: Duration = Duration::from_millis(100);

/// The gossip protocol id of the dev network.
pub fn gossip_protocol() -> String {
    ledger_codec::gossip::protocol_id(DEV_NETWORK_NAME)
}

/// DER prefix of a PKCS#8 Ed25519 private key holding only the seed (RFC 8410).
const PKCS8_ED25519_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// The libp2p keypair of an Ed25519 seed.
pub fn keypair_of_seed(seed: [u8; 32]) -> Keypair {
    let mut seed = seed;
    Keypair::ed25519_from_bytes(&mut seed).expect("32-byte seed")
}

/// The peer id (`12D3KooW…`) of an Ed25519 seed.
pub fn peer_id_of_seed(seed: [u8; 32]) -> String {
    keypair_of_seed(seed).public().to_peer_id().to_string()
}

/// Hornet's `identity.key` text for a seed: PEM `PRIVATE KEY` over PKCS#8 DER.
pub fn identity_pem(seed: [u8; 32]) -> String {
    let mut der = PKCS8_ED25519_PREFIX.to_vec();
    der.extend_from_slice(&seed);
    pem::encode(&pem::Pem::new("PRIVATE KEY", der))
}

/// The seed inside an `identity.key` text; panics unless it is Hornet's format.
pub fn seed_of_identity_pem(text: &str) -> [u8; 32] {
    let block =
        pem::parse(text).unwrap_or_else(|e| panic!("identity.key is not PEM ({e}): {text}"));
    assert_eq!(block.tag(), "PRIVATE KEY", "{text}");
    let der = block.contents();
    assert_eq!(der.len(), 48, "PKCS#8 Ed25519 seed only: {der:02x?}");
    assert_eq!(der.get(..16), Some(&PKCS8_ED25519_PREFIX[..]), "{der:02x?}");
    der.get(16..)
        .expect("48 bytes")
        .try_into()
        .expect("32 bytes")
}

/// Writes `<data_dir>/p2pstore/identity.key` for `seed` (dir 0700, file 0600).
pub fn write_identity(data_dir: &Path, seed: [u8; 32]) {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let store = data_dir.join("p2pstore");
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&store)
        .expect("p2pstore dir");
    let path = store.join("identity.key");
    fs::write(&path, identity_pem(seed)).expect("identity.key");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).expect("chmod identity.key");
}

/// The coordinator public key of a seed, as `0x` hex.
pub fn coordinator_public_key(seed: [u8; 32]) -> String {
    format!(
        "0x{}",
        hex::encode(SigningKey::from_seed(&seed).public_key())
    )
}

pub use ledger_test_support::process::free_port;

/// Polls `f` every [`POLL`] until it gives `Ok`, for at most `bound`; panics with `what` and
/// the last `Err` otherwise.
#[track_caller]
pub fn wait_until<T>(bound: Duration, what: &str, mut f: impl FnMut() -> Result<T, String>) -> T {
    let start = Instant::now();
    loop {
        match f() {
            Ok(v) => return v,
            Err(last) => {
                if start.elapsed() >= bound {
                    panic!("{what}: not within {bound:?}; last: {last}");
                }
            }
        }
        std::thread::sleep(POLL);
    }
}

/// Who issues milestones.
#[derive(Debug, Clone)]
pub enum Role {
    /// The built-in coordinator with this seed; `interval` seconds between milestones (0:
    /// only on demand).
    Coordinator { seed: [u8; 32], interval: f64 },
    /// `--no-coordinator`, accepting the milestones of the coordinator with this seed.
    Follower { coordinator_seed: [u8; 32] },
}

/// How to start one peering node.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// A name for messages.
    pub name: &'static str,
    /// Pre-written identity seed; `None` lets the node create its identity.
    pub identity_seed: Option<[u8; 32]>,
    /// A fixed p2p port (for a node the test restarts); `None` binds port 0.
    pub p2p_port: Option<u16>,
    /// Coordinator or follower.
    pub role: Role,
    /// `--peer` multiaddrs with their optional `--peer-alias`.
    pub peers: Vec<(String, Option<String>)>,
    /// Further flags.
    pub extra: Vec<String>,
}

impl NodeConfig {
    /// A node named `name` with `role`, no peers, port 0, its own identity.
    pub fn new(name: &'static str, role: Role) -> Self {
        Self {
            name,
            identity_seed: None,
            p2p_port: None,
            role,
            peers: Vec::new(),
            extra: Vec::new(),
        }
    }

    /// With a pre-written identity.
    pub fn identity(mut self, seed: [u8; 32]) -> Self {
        self.identity_seed = Some(seed);
        self
    }

    /// With a fixed p2p port.
    pub fn port(mut self, port: u16) -> Self {
        self.p2p_port = Some(port);
        self
    }

    /// With a static peer.
    pub fn peer(mut self, multiaddr: &str, alias: Option<&str>) -> Self {
        self.peers
            .push((multiaddr.to_owned(), alias.map(str::to_owned)));
        self
    }

    /// With extra flags.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.extra.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// The `run` flags (the coordinator key file lives in `dir`, outside the data dir).
    fn flags(&self, dir: &Path) -> Vec<String> {
        let port = self.p2p_port.unwrap_or(0);
        let mut flags = vec![
            format!("--p2p-bind=/ip4/127.0.0.1/tcp/{port}"),
            "--p2p-reconnect-interval=1".to_owned(),
        ];
        match &self.role {
            Role::Coordinator { seed, interval } => {
                let key = dir.join("coo.key");
                fs::write(&key, format!("0x{}\n", hex::encode(seed))).expect("coordinator key");
                flags.push(format!("--coordinator-key={}", key.display()));
                flags.push(format!("--coordinator-interval={interval}"));
            }
            Role::Follower { coordinator_seed } => {
                flags.push("--no-coordinator".to_owned());
                flags.push(format!(
                    "--coordinator-public-keys={}",
                    coordinator_public_key(*coordinator_seed)
                ));
            }
        }
        // --peer and --peer-alias pair by order: give aliases only when every peer has one.
        let all_aliased = self.peers.iter().all(|(_, a)| a.is_some());
        for (addr, alias) in &self.peers {
            flags.push(format!("--peer={addr}"));
            if all_aliased {
                if let Some(alias) = alias {
                    flags.push(format!("--peer-alias={alias}"));
                }
            }
        }
        flags.extend(self.extra.iter().cloned());
        flags
    }
}

/// A running peering node (or one killed and waiting for a restart).
pub struct PeerNode {
    /// Its configuration.
    pub config: NodeConfig,
    node: Option<TestNode>,
    /// The temp dir of a stopped node, kept for the restart.
    stopped_dir: Option<tempfile::TempDir>,
    flags: Vec<String>,
    token: String,
    /// Peer id, from `listen.addrs`.
    pub peer_id: String,
    /// The full loopback multiaddr (ending in `/p2p/<id>`), from `listen.addrs`.
    pub multiaddr: String,
}

/// How long a node may take to write `listen.addrs` after its API is up.
const LISTEN_ADDRS_BOUND: Duration = Duration::from_secs(30);

impl PeerNode {
    /// Starts a node as `config` says and waits for its `listen.addrs`.
    pub fn start(config: NodeConfig) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let data_dir = dir.path().join("data");
        if let Some(seed) = config.identity_seed {
            write_identity(&data_dir, seed);
        }
        let flags = config.flags(dir.path());
        let mut node = Self {
            config,
            node: None,
            stopped_dir: Some(dir),
            flags,
            token: String::new(),
            peer_id: String::new(),
            multiaddr: String::new(),
        };
        node.launch();
        node.token = jwt_for(&node.data_dir());
        node
    }

    fn launch(&mut self) {
        let dir = self.stopped_dir.take().expect("a stopped node");
        let args: Vec<&str> = self.flags.iter().map(String::as_str).collect();
        let node = TestNode::start_in(dir, &args, &[]);
        let (multiaddr, peer_id) = wait_for_listen_addrs(&node);
        if let Some(port) = self.config.p2p_port {
            assert!(
                multiaddr.starts_with(&format!("/ip4/127.0.0.1/tcp/{port}/p2p/")),
                "{}: bound {multiaddr}, asked for port {port}",
                self.config.name
            );
        }
        self.multiaddr = multiaddr;
        self.peer_id = peer_id;
        self.node = Some(node);
    }

    /// The running process; panics if it was killed.
    pub fn node(&self) -> &TestNode {
        self.node.as_ref().expect("node is running")
    }

    /// The data dir (also while stopped).
    pub fn data_dir(&self) -> PathBuf {
        match (&self.node, &self.stopped_dir) {
            (Some(n), _) => n.data_dir(),
            (None, Some(d)) => d.path().join("data"),
            (None, None) => unreachable!("a node is running or stopped"),
        }
    }

    /// `<data-dir>/p2pstore`.
    pub fn p2pstore(&self) -> PathBuf {
        self.data_dir().join("p2pstore")
    }

    /// The multiaddr without `/p2p/<id>`.
    pub fn transport_addr(&self) -> String {
        strip_p2p(&self.multiaddr)
    }

    /// SIGKILL; the data dir stays for [`PeerNode::restart`].
    pub fn kill_9(&mut self) {
        let node = self.node.take().expect("node is running");
        self.stopped_dir = Some(node.kill_9());
    }

    /// SIGTERM and wait; the data dir stays for [`PeerNode::restart`].
    pub fn stop(&mut self) {
        let mut node = self.node.take().expect("node is running");
        let status = node.terminate();
        assert!(
            status.success(),
            "{} exited with {status}",
            self.config.name
        );
        self.stopped_dir = Some(node.into_dir());
    }

    /// Starts the stopped node again with the same flags and data dir. The old
    /// `listen.addrs` is removed first, so the harness waits for the new one.
    pub fn restart(&mut self) {
        let _ = fs::remove_file(self.p2pstore().join("listen.addrs"));
        self.launch();
    }

    /// A GET with the node's token.
    pub fn get_auth(&self, path: &str) -> Reply {
        let bearer = format!("Bearer {}", self.token);
        self.node().get_with(path, &[("authorization", &bearer)])
    }

    /// `GET /peers` (asserts 200 and an array).
    pub fn peers(&self) -> Vec<Value> {
        let reply = self.get_auth(PEERS);
        assert_eq!(
            reply.status,
            200,
            "{} GET /peers: {}",
            self.config.name,
            String::from_utf8_lossy(&reply.body)
        );
        match reply.json() {
            Value::Array(a) => a,
            other => panic!("{} /peers is not an array: {other}", self.config.name),
        }
    }

    /// This node's `/peers` entry for peer `id`, if listed.
    pub fn peer_entry(&self, id: &str) -> Option<Value> {
        self.peers().into_iter().find(|p| p["id"] == json!(id))
    }

    /// Like [`PeerNode::peer_entry`], asserting it is listed.
    #[track_caller]
    pub fn entry(&self, id: &str) -> Value {
        self.peer_entry(id).unwrap_or_else(|| {
            panic!(
                "{} does not list {id}: {:?}",
                self.config.name,
                self.peers()
            )
        })
    }

    /// Waits until this node lists `id` with `connected == want`; returns the entry.
    #[track_caller]
    pub fn wait_connected(&self, id: &str, want: bool, bound: Duration) -> Value {
        let what = format!("{} shows {id} connected:{want}", self.config.name);
        wait_until(bound, &what, || match self.peer_entry(id) {
            Some(p) if p["connected"] == json!(want) => Ok(p),
            Some(p) => Err(p.to_string()),
            None => Err(format!("not listed in {:?}", self.peers())),
        })
    }

    /// Waits until this node does not list `id`.
    #[track_caller]
    pub fn wait_not_listed(&self, id: &str, bound: Duration) {
        let what = format!("{} forgets {id}", self.config.name);
        wait_until(bound, &what, || match self.peer_entry(id) {
            Some(p) => Err(p.to_string()),
            None => Ok(()),
        });
    }

    /// `POST /peers` with a JSON body and the token.
    pub fn post_peer(&self, body: &Value) -> Reply {
        let bearer = format!("Bearer {}", self.token);
        self.node().post(
            PEERS,
            &[
                ("authorization", &bearer),
                ("content-type", "application/json"),
            ],
            body.to_string().as_bytes(),
        )
    }

    /// `POST /peers` with the token, which must answer 201; the added peer's entry.
    pub fn add_peer(&self, multiaddr: &str, alias: &str) -> Value {
        let reply = self.post_peer(&json!({"multiAddress": multiaddr, "alias": alias}));
        assert_eq!(
            reply.status,
            201,
            "POST /peers on {}: {}",
            self.config.name,
            String::from_utf8_lossy(&reply.body)
        );
        reply.json()
    }

    /// `DELETE /peers/{id}` with the token.
    pub fn delete_peer(&self, id: &str) -> Reply {
        let bearer = format!("Bearer {}", self.token);
        self.node().request_with(
            "DELETE",
            &format!("{PEERS}/{id}"),
            &[("authorization", &bearer)],
        )
    }

    /// `/info`.
    pub fn info(&self) -> Value {
        let reply = self.node().get("/api/core/v2/info");
        assert_eq!(reply.status, 200, "{} /info", self.config.name);
        reply.json()
    }

    /// Confirmed (ledger) milestone index.
    pub fn ledger_index(&self) -> u64 {
        self.info()["status"]["confirmedMilestone"]["index"]
            .as_u64()
            .expect("confirmed index")
    }

    /// Latest milestone index.
    pub fn latest_index(&self) -> u64 {
        self.info()["status"]["latestMilestone"]["index"]
            .as_u64()
            .expect("latest index")
    }

    /// Waits until the ledger index is at least `index`.
    #[track_caller]
    pub fn wait_ledger_index(&self, index: u64, bound: Duration) {
        let what = format!("{} reaches ledger index {index}", self.config.name);
        wait_until(bound, &what, || {
            let now = self.ledger_index();
            if now >= index {
                Ok(())
            } else {
                Err(format!("at {now}"))
            }
        });
    }

    /// Issues one milestone on demand (coordinator nodes); returns its index.
    pub fn issue_milestone(&self) -> u64 {
        let bearer = format!("Bearer {}", self.token);
        let reply = self.node().post(
            "/api/core/v2/control/milestone",
            &[("authorization", &bearer)],
            b"",
        );
        assert_eq!(
            reply.status,
            200,
            "{} milestone: {}",
            self.config.name,
            String::from_utf8_lossy(&reply.body)
        );
        reply.json()["index"].as_u64().expect("index")
    }

    /// POSTs a tagged-data block (parents and nonce by the node); returns its block id.
    pub fn post_tagged(&self, tag: &[u8], data: &[u8]) -> String {
        let block = json!({"protocolVersion": 2, "payload": {
            "type": 5,
            "tag": format!("0x{}", hex::encode(tag)),
            "data": format!("0x{}", hex::encode(data)),
        }});
        self.node()
            .post_json("/api/core/v2/blocks", &block)
            .created_id()
    }

    /// Whether `GET /blocks/{id}` answers 200.
    pub fn has_block(&self, id: &str) -> bool {
        self.node().get(&format!("/api/core/v2/blocks/{id}")).status == 200
    }

    /// Waits until the block is retrievable.
    #[track_caller]
    pub fn wait_block(&self, id: &str, bound: Duration) {
        let what = format!("{} has block {id}", self.config.name);
        wait_until(bound, &what, || {
            if self.has_block(id) {
                Ok(())
            } else {
                Err("404".into())
            }
        });
    }

    /// A raw peer with a fresh identity whose gossip session with this node is up: the
    /// stream is open and the node's opening Heartbeat has arrived (nothing sent yet).
    ///
    /// Tests open raw sessions one at a time: libp2p-stream 0.5.0-alpha hands inbound
    /// streams to the node through a channel with one slot (`mpsc::channel(0)` in its
    /// `shared.rs`), so of several streams arriving in the same instant some are dropped
    /// before the node sees them ("Channel is full, dropping inbound stream", at debug
    /// level), and that peer gets no session; with three raw peers opening at once this
    /// happened in about one run in three.
    #[track_caller]
    pub fn raw_session(&self) -> raw::RawPeer {
        self.raw_session_as(Keypair::generate_ed25519())
            .unwrap_or_else(|e| panic!("raw peer session with {}: {e}", self.config.name))
    }

    /// [`PeerNode::raw_session`] with identity `key`; `Err` if the node refuses it.
    pub fn raw_session_as(&self, key: Keypair) -> Result<raw::RawPeer, String> {
        let mut raw = raw::RawPeer::connect_as(key, &self.multiaddr, &gossip_protocol())?;
        raw.wait_seen(Duration::from_secs(10), |m| {
            matches!(m, ledger_codec::gossip::Message::Heartbeat(_))
        })?;
        Ok(raw)
    }

    /// The node's log so far.
    pub fn log(&self) -> String {
        match &self.node {
            Some(n) => n.log(),
            None => String::new(),
        }
    }
}

/// Lines of a node's log shown when a test fails.
const LOG_TAIL_LINES: usize = 80;

impl Drop for PeerNode {
    /// On a failing test, prints the tail of the node's log (the temp dir goes with it).
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.log();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines
                .get(lines.len().saturating_sub(LOG_TAIL_LINES)..)
                .unwrap_or_default();
            eprintln!(
                "--- {} ({}) log, last {} lines ---\n{}",
                self.config.name,
                self.peer_id,
                tail.len(),
                tail.join("\n")
            );
        }
    }
}

/// Polls `<data-dir>/p2pstore/listen.addrs` until it holds a loopback multiaddr ending in
/// `/p2p/<id>`; returns (multiaddr, peer id).
fn wait_for_listen_addrs(node: &TestNode) -> (String, String) {
    let path = node.data_dir().join("p2pstore").join("listen.addrs");
    let start = Instant::now();
    loop {
        if let Ok(text) = fs::read_to_string(&path) {
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            if let Some(addr) = lines.iter().find(|l| l.starts_with("/ip4/127.0.0.1/tcp/")) {
                let (_, id) = addr
                    .rsplit_once("/p2p/")
                    .unwrap_or_else(|| panic!("listen.addrs line without /p2p/: {addr:?}"));
                for line in &lines {
                    assert!(
                        line.ends_with(&format!("/p2p/{id}")),
                        "listen.addrs lines name one peer id: {text:?}"
                    );
                }
                return ((*addr).to_owned(), id.to_owned());
            }
        }
        if start.elapsed() > LISTEN_ADDRS_BOUND {
            panic!(
                "no loopback multiaddr in {} within {LISTEN_ADDRS_BOUND:?}; log:\n{}",
                path.display(),
                node.log()
            );
        }
        std::thread::sleep(POLL);
    }
}

/// `addr` without its `/p2p/<id>` suffix.
pub fn strip_p2p(addr: &str) -> String {
    match addr.rsplit_once("/p2p/") {
        Some((transport, _)) => transport.to_owned(),
        None => addr.to_owned(),
    }
}

/// `gossip.metrics.<name>` of a peer entry (panics if missing).
#[track_caller]
pub fn metric(peer: &Value, name: &str) -> u64 {
    peer["gossip"]["metrics"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no gossip.metrics.{name} in {peer}"))
}

/// `gossip.heartbeat.<name>` of a peer entry (panics if missing).
#[track_caller]
pub fn heartbeat(peer: &Value, name: &str) -> u64 {
    peer["gossip"]["heartbeat"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no gossip.heartbeat.{name} in {peer}"))
}

/// The 11 metric names of the contract.
pub const METRICS: [&str; 11] = [
    "newBlocks",
    "knownBlocks",
    "receivedBlocks",
    "receivedBlockRequests",
    "receivedMilestoneRequests",
    "receivedHeartbeats",
    "sentBlocks",
    "sentBlockRequests",
    "sentMilestoneRequests",
    "sentHeartbeats",
    "droppedPackets",
];

/// Asserts the contract's shape of one peer entry: fields, types, both heartbeat spellings
/// agreeing, every metric a number, `multiAddresses` without `/p2p`.
#[track_caller]
pub fn assert_peer_shape(peer: &Value) {
    assert!(
        peer["id"]
            .as_str()
            .is_some_and(|s| s.starts_with("12D3KooW")),
        "{peer}"
    );
    let addrs = peer["multiAddresses"]
        .as_array()
        .unwrap_or_else(|| panic!("{peer}"));
    for a in addrs {
        let a = a.as_str().unwrap_or_else(|| panic!("{peer}"));
        assert!(
            a.starts_with('/') && !a.contains("/p2p"),
            "multiAddress {a:?} in {peer}"
        );
    }
    assert!(
        matches!(peer["relation"].as_str(), Some("known" | "unknown")),
        "{peer}"
    );
    assert!(peer["connected"].is_boolean(), "{peer}");
    if let Some(alias) = peer.get("alias") {
        assert!(alias.is_string(), "{peer}");
    }
    let hb = &peer["gossip"]["heartbeat"];
    for key in [
        "solidMilestoneIndex",
        "prunedMilestoneIndex",
        "latestMilestoneIndex",
        "connectedNeighbors",
        "syncedNeighbors",
        "connectedPeers",
        "syncedPeers",
    ] {
        assert!(hb[key].is_u64(), "gossip.heartbeat.{key} in {peer}");
    }
    assert_eq!(hb["connectedNeighbors"], hb["connectedPeers"], "{peer}");
    assert_eq!(hb["syncedNeighbors"], hb["syncedPeers"], "{peer}");
    for m in METRICS {
        metric(peer, m);
    }
    // `docs/peering.md` §4.8 invariant.
    assert!(
        metric(peer, "receivedBlocks") >= metric(peer, "newBlocks") + metric(peer, "knownBlocks"),
        "receivedBlocks >= newBlocks + knownBlocks: {peer}"
    );
}

/// GET `path` on `node`: status 200 and the body bytes.
#[track_caller]
pub fn body_of(node: &PeerNode, path: &str) -> Vec<u8> {
    let r = node.node().get(path);
    assert_eq!(
        r.status,
        200,
        "{} GET {path}: {}",
        node.config.name,
        String::from_utf8_lossy(&r.body)
    );
    r.body
}

/// Asserts that `path` answers 200 with the same bytes on every node of `nodes`.
#[track_caller]
pub fn assert_same(nodes: &[&PeerNode], path: &str) {
    let first = body_of(nodes[0], path);
    for n in &nodes[1..] {
        let other = body_of(n, path);
        assert!(
            other == first,
            "{path} differs: {} {} vs {} {}",
            nodes[0].config.name,
            String::from_utf8_lossy(&first),
            n.config.name,
            String::from_utf8_lossy(&other)
        );
    }
}
