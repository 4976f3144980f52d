//! The command line of `ledger-node`.

use std::{net::SocketAddr, path::PathBuf};

use clap::{Args, Parser, Subcommand};
use serde::Deserialize;

/// A node for the block-DAG ledger (v2 Stardust and v3 Nova blocks).
///
/// Without a subcommand it runs the node (like `ledger-node run`): a single-node dev network
/// with the built-in coordinator, data in ./data and the REST API on 127.0.0.1:14265.
#[derive(Debug, Parser)]
#[command(
    name = "ledger-node",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do (default: run the node).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Flags of `run`, accepted without the subcommand too.
    #[command(flatten)]
    pub run: RunArgs,
}

impl Cli {
    /// The command to carry out: `run` with the top-level flags when none was given.
    pub fn into_command(self) -> Command {
        self.command
            .unwrap_or_else(|| Command::Run(Box::new(self.run)))
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the node.
    Run(Box<RunArgs>),
    /// Helper tools.
    #[command(subcommand)]
    Tools(Tool),
}

/// `ledger-node tools ...`.
#[derive(Debug, Subcommand)]
pub enum Tool {
    /// Print a token (JWT) for the protected API routes of the node using this data dir
    /// (creates the secret there if the node has not run yet).
    Jwt(JwtArgs),
    /// Decode a v2 block (0x hex or raw bytes on stdin) and print its JSON; exit code 1 and
    /// the reason on stderr if it is invalid.
    Decode(CodecArgs),
    /// Encode v2 block JSON (on stdin) and print its bytes as 0x hex; exit code 1 and the
    /// reason on stderr if it is invalid.
    Encode(CodecArgs),
    /// Print the ids of a v2 block (0x hex, JSON or raw bytes on stdin): blockId,
    /// transactionId and outputIds, milestoneId, powScore.
    Id(CodecArgs),
    /// Copy every intact record of a data dir whose log is damaged into a new data dir (the
    /// old one is only read), with the coordinator key and token secret; see engine/FORMAT.md.
    Salvage(SalvageArgs),
    /// Print the headers, counts and sizes of a TIP-35 full snapshot file and optional delta
    /// (each read completely), and check that the delta continues the full file; exit code 1
    /// and the reason on stderr if a file is malformed or the delta does not chain.
    SnapshotInfo(SnapshotFilesArgs),
    /// Load a TIP-35 full snapshot file and optional delta as a node would and print Hornet's
    /// ledger hashes (`snap-hash --json`'s keys) as one JSON object.
    SnapHash(SnapHashArgs),
}

/// Arguments of `tools snapshot-info`.
#[derive(Debug, Args)]
pub struct SnapshotFilesArgs {
    /// The full snapshot file.
    #[arg(value_name = "FULL_FILE")]
    pub full: PathBuf,
    /// A delta snapshot file on top of it.
    #[arg(value_name = "DELTA_FILE")]
    pub delta: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tools snap-hash`.
#[derive(Debug, Args)]
pub struct SnapHashArgs {
    /// The full snapshot file.
    #[arg(value_name = "FULL_FILE", required_unless_present = "data_dir")]
    pub full: Option<PathBuf>,
    /// A delta snapshot file on top of it.
    #[arg(value_name = "DELTA_FILE")]
    pub delta: Option<PathBuf>,
    /// Instead of files: the data directory of a stopped node (its ledger at its confirmed
    /// milestone).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["full", "delta"])]
    pub data_dir: Option<PathBuf>,
    /// With --data-dir: the genesis file the node was started with (not needed for the dev
    /// genesis or a node started from snapshot files).
    #[arg(long, value_name = "FILE", requires = "data_dir")]
    pub genesis: Option<PathBuf>,
}

/// Arguments of `tools salvage`.
#[derive(Debug, Args)]
pub struct SalvageArgs {
    /// The data dir of the node that refused to start.
    #[arg(long, value_name = "DIR")]
    pub data_dir: PathBuf,
    /// A new data dir to create (must not exist or be empty).
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
}

/// Arguments of `tools decode`, `tools encode` and `tools id`.
#[derive(Debug, Args)]
pub struct CodecArgs {
    /// Protocol parameters (JSON: version, networkName, bech32Hrp, minPowScore,
    /// belowMaxDepth, rentStructure, tokenSupply; or an /info answer holding them under
    /// "protocol"); with them the block must also pass the checks that need them (protocol
    /// version, network id, token supply, storage deposit).
    #[arg(long, value_name = "FILE")]
    pub protocol_parameters: Option<PathBuf>,
}

/// Arguments of `tools jwt`.
#[derive(Debug, Args)]
pub struct JwtArgs {
    /// Data directory of the node whose secret signs the token.
    #[arg(
        long,
        env = "LEDGER_NODE_DATA_DIR",
        value_name = "DIR",
        default_value = "./data"
    )]
    pub data_dir: PathBuf,
}

/// Settings of `ledger-node run`. Each is also read from the environment (`LEDGER_NODE_*`)
/// and from the TOML file given by `--config`, whose keys are the long flag names
/// (`api-bind = "127.0.0.1:14265"`). Precedence: command line, environment, file, default.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RunArgs {
    /// TOML config file whose keys are the long flag names (e.g. `data-dir = "/var/ledger"`);
    /// flags and LEDGER_NODE_* variables override it.
    #[arg(long, env = "LEDGER_NODE_CONFIG", value_name = "FILE")]
    #[serde(skip)]
    pub config: Option<PathBuf>,

    /// Directory holding the block log, the ledger and the API token secret
    /// [default: ./data].
    #[arg(long, env = "LEDGER_NODE_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Genesis file (JSON: protocol parameters and initial outputs) used when the data dir
    /// is empty [default: the built-in dev genesis].
    #[arg(long, env = "LEDGER_NODE_GENESIS", value_name = "FILE")]
    pub genesis: Option<PathBuf>,

    /// Start a new node from this TIP-35 full snapshot file (Hornet's format) instead of a
    /// genesis; the data directory must be empty. A full file with target 0 (Hornet's
    /// `snap-gen` output) is a genesis. The ledger it describes is kept in the data directory,
    /// so later starts need no flag [default: none].
    #[arg(long, env = "LEDGER_NODE_SNAPSHOT_FULL", value_name = "FILE")]
    pub snapshot_full: Option<PathBuf>,

    /// A delta snapshot file applied on top of --snapshot-full (its chain id must be the full
    /// file's target milestone id) [default: none].
    #[arg(long, env = "LEDGER_NODE_SNAPSHOT_DELTA", value_name = "FILE")]
    pub snapshot_delta: Option<PathBuf>,

    /// Address and port the REST API listens on; port 0 picks a free port, printed at start
    /// [default: 127.0.0.1:14265].
    #[arg(long, env = "LEDGER_NODE_API_BIND", value_name = "ADDR:PORT")]
    pub api_bind: Option<SocketAddr>,

    /// Address and port of the Prometheus endpoint (GET /metrics, its own listener); port 0
    /// picks a free port, printed at start [default: 127.0.0.1:9311].
    #[arg(long, env = "LEDGER_NODE_METRICS_BIND", value_name = "ADDR:PORT")]
    pub metrics_bind: Option<SocketAddr>,

    /// Do not serve Prometheus metrics: no metrics listener is opened.
    #[arg(
        long,
        env = "LEDGER_NODE_NO_METRICS",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_metrics: Option<bool>,

    /// Seconds between milestones of the built-in coordinator, fractions allowed (at least 0.05;
    /// milestone timestamps still advance by at least 1 s each); 0 issues milestones only on
    /// demand (POST /api/core/v2/control/milestone) [default: 1].
    #[arg(long, env = "LEDGER_NODE_COORDINATOR_INTERVAL", value_name = "SECS")]
    pub coordinator_interval: Option<f64>,

    /// Do not run the built-in coordinator, so no milestones are issued by this node.
    #[arg(
        long,
        env = "LEDGER_NODE_NO_COORDINATOR",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_coordinator: Option<bool>,

    /// File holding the built-in coordinator's Ed25519 seed (32 bytes as hex); it must exist
    /// [default: DATA_DIR/coordinator.key, generated on first start].
    #[arg(long, env = "LEDGER_NODE_COORDINATOR_KEY", value_name = "FILE")]
    pub coordinator_key: Option<PathBuf>,

    /// Comma-separated Ed25519 public keys (32 bytes as hex) of external coordinators whose
    /// milestones this node accepts, e.g. with --no-coordinator to follow another node's
    /// coordinator [default: none; the built-in coordinator's own key is always accepted].
    #[arg(
        long,
        env = "LEDGER_NODE_COORDINATOR_PUBLIC_KEYS",
        value_name = "LIST",
        value_delimiter = ','
    )]
    pub coordinator_public_keys: Option<Vec<String>>,

    /// Valid signatures by distinct coordinator keys a milestone needs [default: 1].
    #[arg(long, env = "LEDGER_NODE_MILESTONE_THRESHOLD", value_name = "N")]
    pub milestone_threshold: Option<usize>,

    /// Number of threads doing proof of work for submitted blocks without a nonce
    /// [default: all cores].
    #[arg(long, env = "LEDGER_NODE_POW_WORKERS", value_name = "N")]
    pub pow_workers: Option<usize>,

    /// Never do proof of work for clients: a block without a nonce then gets 503 unless the
    /// network's minimum PoW score is 0.
    #[arg(
        long,
        env = "LEDGER_NODE_NO_POW",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_pow: Option<bool>,

    /// TIP-49 protocol parameters (one JSON object) for v3 (Nova) blocks
    /// [default: the built-in dev parameters].
    #[arg(long, env = "LEDGER_NODE_V3_PROTOCOL_PARAMETERS", value_name = "FILE")]
    pub v3_protocol_parameters: Option<PathBuf>,

    /// Largest request body the API accepts, in bytes; larger ones get 413
    /// [default: 1048576].
    #[arg(long, env = "LEDGER_NODE_API_BODY_LIMIT", value_name = "BYTES")]
    pub api_body_limit: Option<usize>,

    /// Comma-separated route patterns open to everyone (`*` matches anything, e.g.
    /// `/api/core/v2/blocks*`) [default: every route except peers and admin routes].
    #[arg(
        long,
        env = "LEDGER_NODE_PUBLIC_ROUTES",
        value_name = "LIST",
        value_delimiter = ','
    )]
    pub public_routes: Option<Vec<String>>,

    /// Comma-separated route patterns that need `Authorization: Bearer <token>` with a token
    /// from `ledger-node tools jwt`; the public list is checked first, routes on neither list
    /// get 403 [default: /api/*, i.e. every API route not public: /api/core/v2/peers and
    /// /api/core/v2/control/*].
    #[arg(
        long,
        env = "LEDGER_NODE_PROTECTED_ROUTES",
        value_name = "LIST",
        value_delimiter = ','
    )]
    pub protected_routes: Option<Vec<String>>,

    /// Seconds a client has to send a request's header, from the connection's accept or from
    /// the header's first byte; slower connections are closed [default: 10].
    #[arg(long, env = "LEDGER_NODE_HTTP_HEADER_TIMEOUT", value_name = "SECS")]
    pub http_header_timeout: Option<f64>,

    /// Seconds a keep-alive connection may stay idle between two requests before it is
    /// closed [default: 60].
    #[arg(long, env = "LEDGER_NODE_HTTP_IDLE_TIMEOUT", value_name = "SECS")]
    pub http_idle_timeout: Option<f64>,

    /// Seconds a client has to send a whole request body; slower bodies get 408
    /// [default: 30].
    #[arg(long, env = "LEDGER_NODE_HTTP_BODY_TIMEOUT", value_name = "SECS")]
    pub http_body_timeout: Option<f64>,

    /// Most API connections open at once; further clients wait [default: 80 % of the
    /// open-file limit].
    #[arg(long, env = "LEDGER_NODE_HTTP_MAX_CONNECTIONS", value_name = "N")]
    pub http_max_connections: Option<usize>,

    /// Most request-body bytes buffered at once over all connections; a body that does not
    /// fit gets 503 with Retry-After instead of being read [default: 67108864 (64 MiB)].
    #[arg(long, env = "LEDGER_NODE_HTTP_MAX_BUFFERED_BODY", value_name = "BYTES")]
    pub http_max_buffered_body: Option<usize>,

    /// Most block submissions in flight at once (POST /blocks, v2 and v3, from routing to the
    /// answer); more get 503 with Retry-After at once [default: 4096].
    #[arg(long, env = "LEDGER_NODE_API_MAX_PENDING_SUBMITS", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub api_max_pending_submits: Option<u64>,

    /// Prune automatically to keep this many milestones below the confirmed one; 0 = off
    /// [default: 0]. Counted from the confirmed milestone; pruning never goes closer than 20
    /// milestones to it and moves at least 6 milestones at a time (Hornet's rules).
    #[arg(long, env = "LEDGER_NODE_PRUNING_MILESTONES_TO_KEEP", value_name = "N")]
    pub pruning_milestones_to_keep: Option<u32>,

    /// Prune automatically when the data directory (block log and history) reaches this
    /// size, in binary units like Hornet (30GB = 30 x 2^30 bytes); 0 = off [default: 30GB].
    /// With --pruning-milestones-to-keep too, the larger target wins.
    #[arg(long, env = "LEDGER_NODE_PRUNING_TARGET_SIZE", value_name = "SIZE")]
    pub pruning_target_size: Option<String>,

    /// Pruning by size goes this percentage below --pruning-target-size [default: 10].
    #[arg(long, env = "LEDGER_NODE_PRUNING_THRESHOLD_PERCENTAGE", value_name = "P",
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub pruning_threshold_percentage: Option<u8>,

    /// Seconds between two runs of pruning by size [default: 300].
    #[arg(long, env = "LEDGER_NODE_PRUNING_COOLDOWN", value_name = "SECS")]
    pub pruning_cooldown: Option<u64>,

    /// Do not serve the event API (MQTT over WebSocket at /api/mqtt/v1, TIP-28).
    #[arg(
        long,
        env = "LEDGER_NODE_NO_MQTT",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_mqtt: Option<bool>,

    /// Most MQTT clients connected at once; one more gets CONNACK 0x03 [default: 1000].
    #[arg(long, env = "LEDGER_NODE_MQTT_MAX_CLIENTS", value_name = "N")]
    pub mqtt_max_clients: Option<usize>,

    /// Most topic filters one MQTT client holds; more get SUBACK 0x80 [default: 1000].
    #[arg(long, env = "LEDGER_NODE_MQTT_MAX_SUBSCRIPTIONS", value_name = "N")]
    pub mqtt_max_subscriptions: Option<usize>,

    /// Bytes of messages queued per MQTT client: beyond it messages are dropped (counted in
    /// iota_mqtt_dropped_total), and a client that stays behind for 10 s is disconnected
    /// [default: 4194304 (4 MiB)].
    #[arg(long, env = "LEDGER_NODE_MQTT_CLIENT_QUEUE", value_name = "BYTES")]
    pub mqtt_client_queue: Option<usize>,

    /// Milestones between two automatic snapshots (TIP-35 full or delta files in
    /// --snapshot-dir); 0 = off [default: 0].
    #[arg(long, env = "LEDGER_NODE_SNAPSHOT_INTERVAL", value_name = "N")]
    pub snapshot_interval: Option<u32>,

    /// An automatic snapshot's target is this many milestones below the confirmed one; at
    /// least below-max-depth + 5 (20) [default: 50].
    #[arg(long, env = "LEDGER_NODE_SNAPSHOT_DEPTH", value_name = "N")]
    pub snapshot_depth: Option<u32>,

    /// A delta snapshot larger than this percentage of the full file (and than 50 MiB) is
    /// replaced by a new full file; 0 = always a delta [default: 50].
    #[arg(long, env = "LEDGER_NODE_SNAPSHOT_DELTA_THRESHOLD_PERCENTAGE", value_name = "P",
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub snapshot_delta_threshold_percentage: Option<u8>,

    /// Size of new block log segment files, in binary units (64KB to 2GB). Pruning gives disk
    /// back one whole segment at a time, so smaller segments follow the pruning index more
    /// closely; existing segments keep their size [default: 64MB].
    #[arg(long, env = "LEDGER_NODE_LOG_SEGMENT_SIZE", value_name = "SIZE")]
    pub log_segment_size: Option<String>,

    /// Milestone journal written between two ledger checkpoints, in binary units. A ledger
    /// checkpoint holds the unspent outputs (≈ 132 bytes each) so that a restart applies only
    /// the journal after it; one is also never written before the journal grew by the last
    /// one's size. 0 = at every checkpoint once the journal grew [default: 8MB].
    #[arg(
        long,
        env = "LEDGER_NODE_LEDGER_CHECKPOINT_JOURNAL_SIZE",
        value_name = "SIZE"
    )]
    pub ledger_checkpoint_journal_size: Option<String>,

    /// Heap the history stores on disk (spent outputs, milestone index) may use for their page
    /// caches together, in binary units; what is not cached is read from the files through
    /// the kernel's page cache [default: 16MB].
    #[arg(long, env = "LEDGER_NODE_HISTORY_CACHE_SIZE", value_name = "SIZE")]
    pub history_cache_size: Option<String>,

    /// Directory of the automatic snapshot files (full_snapshot.bin, delta_snapshot.bin) and
    /// of those POST /control/snapshots/create writes [default: DATA_DIR/snapshots].
    #[arg(long, env = "LEDGER_NODE_SNAPSHOT_DIR", value_name = "DIR")]
    pub snapshot_dir: Option<PathBuf>,

    /// Least time between two fsyncs of the block log, in milliseconds (group commit: a
    /// submit is answered after the fsync that covers it; concurrent submits share one).
    /// 0 fsyncs as soon as the previous one ends: lower latency, more fsyncs per second
    /// [default: 1].
    #[arg(long, env = "LEDGER_NODE_LOG_SYNC_INTERVAL_MS", value_name = "MS",
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub log_sync_interval_ms: Option<u32>,

    /// Do not keep the indexer's output indexes: the /api/indexer/v1 routes then answer 503.
    /// Saves their memory and their share of each confirmation.
    #[arg(
        long,
        env = "LEDGER_NODE_NO_INDEXER",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_indexer: Option<bool>,

    /// Do not serve the dashboard: GET /, /dashboard, /dashboard/* and
    /// /api/dashboard/v1/stats then answer 404.
    #[arg(
        long,
        env = "LEDGER_NODE_NO_DASHBOARD",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_dashboard: Option<bool>,

    /// Address to listen on for peers, as a multiaddr; repeatable
    /// [default: /ip4/0.0.0.0/tcp/15600]. The bound addresses are logged and written to
    /// DATA_DIR/p2pstore/listen.addrs.
    #[arg(
        long,
        env = "LEDGER_NODE_P2P_BIND",
        value_name = "MULTIADDR",
        value_delimiter = ','
    )]
    pub p2p_bind: Option<Vec<String>>,

    /// A known peer, as a multiaddr ending in /p2p/<peerId>, e.g.
    /// /ip4/127.0.0.1/tcp/15601/p2p/12D3KooW…; repeatable. Dialed and redialed for as long
    /// as the node runs, like the peers in DATA_DIR/p2pstore/peering.json [default: none].
    #[arg(
        long,
        env = "LEDGER_NODE_PEER",
        value_name = "MULTIADDR",
        value_delimiter = ','
    )]
    pub peer: Option<Vec<String>>,

    /// Alias of the --peer at the same position; repeatable [default: none].
    #[arg(
        long,
        env = "LEDGER_NODE_PEER_ALIAS",
        value_name = "NAME",
        value_delimiter = ','
    )]
    pub peer_alias: Option<Vec<String>>,

    /// Peers that are not known (not configured) which may gossip with this node at once
    /// [default: 4].
    #[arg(long, env = "LEDGER_NODE_P2P_UNKNOWN_PEERS_LIMIT", value_name = "N")]
    pub p2p_unknown_peers_limit: Option<usize>,

    /// Blocks no milestone references yet that a catching-up node holds (about 1 KB of memory
    /// each) before warp sync starts no further milestone's cone; its window starts at the
    /// next 3 milestones and doubles at each confirmation, up to 150, while it holds less than
    /// half of this (0: always the next 3) [default: 50000].
    #[arg(long, env = "LEDGER_NODE_P2P_WARP_BLOCK_BUDGET", value_name = "N")]
    pub p2p_warp_block_budget: Option<usize>,

    /// Longest wait between two dials of a known peer that is not connected; the wait starts
    /// at 1 s and doubles up to this [default: 30].
    #[arg(long, env = "LEDGER_NODE_P2P_RECONNECT_INTERVAL", value_name = "SECS")]
    pub p2p_reconnect_interval: Option<f64>,

    /// Silence on a gossip stream after which the peer is dropped [default: 60].
    #[arg(long, env = "LEDGER_NODE_P2P_READ_TIMEOUT", value_name = "SECS")]
    pub p2p_read_timeout: Option<f64>,

    /// Age of a peer's last heartbeat after which it is dropped [default: 100].
    #[arg(long, env = "LEDGER_NODE_P2P_HEARTBEAT_MAX_AGE", value_name = "SECS")]
    pub p2p_heartbeat_max_age: Option<f64>,

    /// Do not peer: no p2p listener, no gossip (the node then gets blocks only through its
    /// API).
    #[arg(
        long,
        env = "LEDGER_NODE_NO_P2P",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_p2p: Option<bool>,

    /// Log line format on stderr: `text`, or `json` (one object per line). What is logged is
    /// set with the RUST_LOG environment variable (e.g. `RUST_LOG=debug`,
    /// `RUST_LOG=info,ledger_engine=debug`) [default: text].
    #[arg(
        long,
        env = "LEDGER_NODE_LOG_FORMAT",
        value_name = "FORMAT",
        value_enum
    )]
    pub log_format: Option<LogFormat>,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

impl RunArgs {
    /// Each setting from `self`, or from `lower` where `self` has none.
    pub fn or(self, lower: Self) -> Self {
        Self {
            config: self.config.or(lower.config),
            data_dir: self.data_dir.or(lower.data_dir),
            genesis: self.genesis.or(lower.genesis),
            snapshot_full: self.snapshot_full.or(lower.snapshot_full),
            snapshot_delta: self.snapshot_delta.or(lower.snapshot_delta),
            api_bind: self.api_bind.or(lower.api_bind),
            metrics_bind: self.metrics_bind.or(lower.metrics_bind),
            no_metrics: self.no_metrics.or(lower.no_metrics),
            coordinator_interval: self.coordinator_interval.or(lower.coordinator_interval),
            no_coordinator: self.no_coordinator.or(lower.no_coordinator),
            coordinator_key: self.coordinator_key.or(lower.coordinator_key),
            coordinator_public_keys: self
                .coordinator_public_keys
                .or(lower.coordinator_public_keys),
            milestone_threshold: self.milestone_threshold.or(lower.milestone_threshold),
            pow_workers: self.pow_workers.or(lower.pow_workers),
            log_sync_interval_ms: self.log_sync_interval_ms.or(lower.log_sync_interval_ms),
            no_pow: self.no_pow.or(lower.no_pow),
            v3_protocol_parameters: self.v3_protocol_parameters.or(lower.v3_protocol_parameters),
            api_body_limit: self.api_body_limit.or(lower.api_body_limit),
            public_routes: self.public_routes.or(lower.public_routes),
            protected_routes: self.protected_routes.or(lower.protected_routes),
            log_format: self.log_format.or(lower.log_format),
            http_header_timeout: self.http_header_timeout.or(lower.http_header_timeout),
            http_idle_timeout: self.http_idle_timeout.or(lower.http_idle_timeout),
            http_body_timeout: self.http_body_timeout.or(lower.http_body_timeout),
            http_max_connections: self.http_max_connections.or(lower.http_max_connections),
            http_max_buffered_body: self.http_max_buffered_body.or(lower.http_max_buffered_body),
            no_indexer: self.no_indexer.or(lower.no_indexer),
            no_dashboard: self.no_dashboard.or(lower.no_dashboard),
            p2p_bind: self.p2p_bind.or(lower.p2p_bind),
            peer: self.peer.or(lower.peer),
            peer_alias: self.peer_alias.or(lower.peer_alias),
            p2p_unknown_peers_limit: self
                .p2p_unknown_peers_limit
                .or(lower.p2p_unknown_peers_limit),
            p2p_warp_block_budget: self.p2p_warp_block_budget.or(lower.p2p_warp_block_budget),
            p2p_reconnect_interval: self.p2p_reconnect_interval.or(lower.p2p_reconnect_interval),
            p2p_read_timeout: self.p2p_read_timeout.or(lower.p2p_read_timeout),
            p2p_heartbeat_max_age: self.p2p_heartbeat_max_age.or(lower.p2p_heartbeat_max_age),
            no_p2p: self.no_p2p.or(lower.no_p2p),
            api_max_pending_submits: self
                .api_max_pending_submits
                .or(lower.api_max_pending_submits),
            pruning_milestones_to_keep: self
                .pruning_milestones_to_keep
                .or(lower.pruning_milestones_to_keep),
            pruning_target_size: self.pruning_target_size.or(lower.pruning_target_size),
            pruning_threshold_percentage: self
                .pruning_threshold_percentage
                .or(lower.pruning_threshold_percentage),
            pruning_cooldown: self.pruning_cooldown.or(lower.pruning_cooldown),
            no_mqtt: self.no_mqtt.or(lower.no_mqtt),
            mqtt_max_clients: self.mqtt_max_clients.or(lower.mqtt_max_clients),
            mqtt_max_subscriptions: self.mqtt_max_subscriptions.or(lower.mqtt_max_subscriptions),
            mqtt_client_queue: self.mqtt_client_queue.or(lower.mqtt_client_queue),
            snapshot_interval: self.snapshot_interval.or(lower.snapshot_interval),
            snapshot_depth: self.snapshot_depth.or(lower.snapshot_depth),
            snapshot_delta_threshold_percentage: self
                .snapshot_delta_threshold_percentage
                .or(lower.snapshot_delta_threshold_percentage),
            snapshot_dir: self.snapshot_dir.or(lower.snapshot_dir),
            log_segment_size: self.log_segment_size.or(lower.log_segment_size),
            ledger_checkpoint_journal_size: self
                .ledger_checkpoint_journal_size
                .or(lower.ledger_checkpoint_journal_size),
            history_cache_size: self.history_cache_size.or(lower.history_cache_size),
        }
    }
}
