//! The resolved configuration of a running node: command line and environment over the
//! config file over the defaults.

use std::{
    fs,
    net::{Ipv4Addr, SocketAddr},
    path::PathBuf,
    time::Duration,
};

use ledger_api::{
    access::{DEFAULT_PROTECTED_ROUTES, DEFAULT_PUBLIC_ROUTES},
    admission::DEFAULT_MAX_PENDING_SUBMITS,
    config::{
        ApiConfig, DEFAULT_API_BIND, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT,
        DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_BUFFERED_BODY,
    },
    media::DEFAULT_BODY_LIMIT,
    serve::ConnectionLimits,
};
use ledger_p2p::{
    P2pConfig, DEFAULT_BIND as DEFAULT_P2P_BIND, DEFAULT_HEARTBEAT_MAX_AGE, DEFAULT_READ_TIMEOUT,
    DEFAULT_RECONNECT_INTERVAL, DEFAULT_UNKNOWN_PEERS_LIMIT, DEFAULT_WARP_BLOCK_BUDGET,
};

use crate::cli::RunArgs;

/// Default data directory.
pub const DEFAULT_DATA_DIR: &str = "./data";
/// Default address of the Prometheus endpoint (Hornet's default port).
pub const DEFAULT_METRICS_BIND: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 9311);
/// Default seconds between milestones of the built-in coordinator.
pub const DEFAULT_COORDINATOR_INTERVAL: f64 = 1.0;
/// The shortest milestone interval the built-in coordinator accepts (tests run it sub-second).
pub const MIN_COORDINATOR_INTERVAL: f64 = 0.05;

/// Errors resolving the configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The config file is not valid TOML for these settings.
    #[error("invalid config file {}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: Box<toml::de::Error>,
    },
    /// A setting has a value that makes no sense.
    #[error("invalid setting {name}: {reason}")]
    Invalid {
        /// The setting (long flag name).
        name: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
}

/// Everything `ledger-node run` needs, with defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// Directory for the block log, ledger and token secret.
    pub data_dir: PathBuf,
    /// Genesis file; `None` = the built-in dev genesis.
    pub genesis: Option<PathBuf>,
    /// Full snapshot file to start an empty data directory from.
    pub snapshot_full: Option<PathBuf>,
    /// Delta snapshot file on top of it.
    pub snapshot_delta: Option<PathBuf>,
    /// The REST API.
    pub api: ApiConfig,
    /// Prometheus endpoint address; `None` = no metrics listener (`--no-metrics`).
    pub metrics_bind: Option<SocketAddr>,
    /// Whether the built-in coordinator runs.
    pub coordinator: bool,
    /// Time between milestones; `None` = only on demand.
    pub coordinator_interval: Option<Duration>,
    /// The built-in coordinator's seed file; `None` = generated in the data dir.
    pub coordinator_key: Option<PathBuf>,
    /// External coordinator public keys whose milestones are accepted.
    pub coordinator_public_keys: Vec<[u8; 32]>,
    /// Valid coordinator signatures a milestone needs (at least 1).
    pub milestone_threshold: usize,
    /// PoW threads (at least 1).
    pub pow_workers: usize,
    /// v3 protocol parameters file; `None` = v3 off.
    pub v3_protocol_parameters: Option<PathBuf>,
    /// Log line format.
    pub log_format: crate::cli::LogFormat,
    /// Keep the indexer's output indexes.
    pub indexer: bool,
    /// The block log's durability: group commit with this fsync spacing.
    pub log_durability: ledger_engine::Durability,
    /// Peering (`None` with `--no-p2p`).
    pub p2p: Option<P2pConfig>,
    /// Automatic pruning.
    pub pruning: ledger_engine::PruningConfig,
    /// The event API's broker (`None` with `--no-mqtt`).
    pub mqtt: Option<ledger_events::BrokerConfig>,
    /// Automatic snapshots and the snapshot directory.
    pub snapshots: ledger_engine::SnapshotConfig,
    /// Size of new block log segment files.
    pub log_segment_size: u32,
    /// Milestone journal bytes between two ledger checkpoints.
    pub ledger_checkpoint_journal_size: u64,
    /// Page cache bytes of the history stores.
    pub history_cache_size: usize,
}

/// A size flag `name` given as `text` (its default when absent), in binary units within
/// `range`; `reason` says what is expected when it is not.
fn size_within<T: TryFrom<u64>>(
    (name, reason): (&'static str, &'static str),
    text: Option<&str>,
    default: T,
    range: std::ops::RangeInclusive<u64>,
) -> Result<T, ConfigError> {
    let invalid = || ConfigError::Invalid { name, reason };
    let Some(text) = text else {
        return Ok(default);
    };
    let bytes = ledger_engine::PruneTarget::parse_size(text).map_err(|_| invalid())?;
    if !range.contains(&bytes) {
        return Err(invalid());
    }
    T::try_from(bytes).map_err(|_| invalid())
}

/// The size of new log segment files given as `--log-segment-size`, checked.
fn log_segment_size(args: &RunArgs) -> Result<u32, ConfigError> {
    size_within(
        (
            "log-segment-size",
            "expected a size in binary units from 64KB to 2GB, like 64MB",
        ),
        args.log_segment_size.as_deref(),
        ledger_engine::DEFAULT_LOG_SEGMENT_SIZE,
        64 << 10..=2 << 30,
    )
}

/// `--ledger-checkpoint-journal-size`, checked.
fn ledger_checkpoint_journal_size(args: &RunArgs) -> Result<u64, ConfigError> {
    size_within(
        (
            "ledger-checkpoint-journal-size",
            "expected a size in binary units, like 8MB, or 0",
        ),
        args.ledger_checkpoint_journal_size.as_deref(),
        ledger_engine::DEFAULT_LEDGER_CHECKPOINT_BYTES,
        0..=u64::MAX,
    )
}

/// `--history-cache-size`, checked.
fn history_cache_size(args: &RunArgs) -> Result<usize, ConfigError> {
    size_within(
        (
            "history-cache-size",
            "expected a size in binary units from 1MB to 64GB, like 16MB",
        ),
        args.history_cache_size.as_deref(),
        ledger_engine::DEFAULT_HISTORY_CACHE_BYTES,
        1 << 20..=64 << 30,
    )
}

/// Default of `--pruning-target-size` (Hornet's).
pub const DEFAULT_PRUNING_TARGET_SIZE: &str = "30GB";
/// Default of `--pruning-threshold-percentage` (Hornet's).
pub const DEFAULT_PRUNING_THRESHOLD_PERCENTAGE: u8 = 10;
/// Default of `--pruning-cooldown`, seconds (Hornet's 5 minutes).
pub const DEFAULT_PRUNING_COOLDOWN_SECS: u64 = 300;

/// The pruning settings of `args`, defaults filled in.
fn pruning_config(args: &RunArgs) -> Result<ledger_engine::PruningConfig, ConfigError> {
    let size = args
        .pruning_target_size
        .as_deref()
        .unwrap_or(DEFAULT_PRUNING_TARGET_SIZE);
    let target_size =
        ledger_engine::PruneTarget::parse_size(size).map_err(|_| ConfigError::Invalid {
            name: "pruning-target-size",
            reason: "expected a size in binary units like 30GB (B, KB, MB, GB, TB), or 0 for off",
        })?;
    Ok(ledger_engine::PruningConfig {
        milestones_to_keep: args.pruning_milestones_to_keep.unwrap_or(0),
        target_size,
        threshold_percentage: args
            .pruning_threshold_percentage
            .unwrap_or(DEFAULT_PRUNING_THRESHOLD_PERCENTAGE)
            .min(100),
        cooldown: Duration::from_secs(
            args.pruning_cooldown
                .unwrap_or(DEFAULT_PRUNING_COOLDOWN_SECS),
        ),
    })
}

/// The snapshot settings of `args`, defaults filled in (Hornet's, docs/snapshots-pruning.md
/// §2.1).
fn snapshot_config(args: &RunArgs, data_dir: &std::path::Path) -> ledger_engine::SnapshotConfig {
    let off = ledger_engine::SnapshotConfig::off(data_dir);
    ledger_engine::SnapshotConfig {
        interval: args.snapshot_interval.unwrap_or(off.interval),
        depth: args.snapshot_depth.unwrap_or(off.depth),
        delta_threshold_percentage: args
            .snapshot_delta_threshold_percentage
            .unwrap_or(off.delta_threshold_percentage)
            .min(100),
        dir: args.snapshot_dir.clone().unwrap_or(off.dir),
    }
}

impl NodeConfig {
    /// Resolves `args` (command line and environment, as parsed by clap) over the config file
    /// they name, over the defaults.
    pub fn resolve(args: RunArgs) -> Result<Self, ConfigError> {
        let file = match &args.config {
            Some(path) => {
                let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
                toml::from_str::<RunArgs>(&text).map_err(|source| ConfigError::Parse {
                    path: path.clone(),
                    source: Box::new(source),
                })?
            }
            None => RunArgs::default(),
        };
        Self::from_args(args.or(file))
    }

    /// Fills in the defaults of merged settings and checks them.
    pub fn from_args(args: RunArgs) -> Result<Self, ConfigError> {
        let pruning = pruning_config(&args)?;
        let data_dir = args
            .data_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        let snapshots = snapshot_config(&args, &data_dir);
        let log_segment_size = log_segment_size(&args)?;
        let ledger_checkpoint_journal_size = ledger_checkpoint_journal_size(&args)?;
        let history_cache_size = history_cache_size(&args)?;
        let pow_workers = at_least_one("pow-workers", args.pow_workers)?
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let api_body_limit =
            at_least_one("api-body-limit", args.api_body_limit)?.unwrap_or(DEFAULT_BODY_LIMIT);
        let routes = |given: Option<Vec<String>>, default: &[&str]| match given {
            Some(list) => list
                .into_iter()
                .map(|r| r.trim().to_owned())
                .filter(|r| !r.is_empty())
                .collect(),
            None => default.iter().map(|&r| r.to_owned()).collect(),
        };
        let interval = args
            .coordinator_interval
            .unwrap_or(DEFAULT_COORDINATOR_INTERVAL);
        if !interval.is_finite()
            || interval < 0.0
            || (interval > 0.0 && interval < MIN_COORDINATOR_INTERVAL)
        {
            return Err(ConfigError::Invalid {
                name: "coordinator-interval",
                reason: "must be 0 (on demand) or a number of seconds of at least 0.05",
            });
        }
        let coordinator = !args.no_coordinator.unwrap_or(false);
        let mqtt = mqtt_config(&args)?;
        let p2p = p2p_config(
            &args,
            args.data_dir
                .as_deref()
                .unwrap_or(std::path::Path::new(DEFAULT_DATA_DIR)),
        )?;
        let coordinator_public_keys = args
            .coordinator_public_keys
            .unwrap_or_default()
            .iter()
            .map(|k| k.trim())
            .filter(|k| !k.is_empty())
            .map(parse_public_key)
            .collect::<Result<Vec<_>, _>>()?;
        let mut distinct = coordinator_public_keys.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < coordinator_public_keys.len() {
            return Err(ConfigError::Invalid {
                name: "coordinator-public-keys",
                reason: "a key is listed twice (a milestone signature counts once per key)",
            });
        }
        let signers = coordinator_public_keys.len() + usize::from(coordinator);
        let milestone_threshold =
            match at_least_one("milestone-threshold", args.milestone_threshold)? {
                Some(n) if n > 1 && coordinator => {
                    return Err(ConfigError::Invalid {
                        name: "milestone-threshold",
                        reason: "the built-in coordinator signs alone: use 1, or --no-coordinator",
                    })
                }
                Some(n) if n > signers && signers > 0 => {
                    return Err(ConfigError::Invalid {
                        name: "milestone-threshold",
                        reason: "exceeds the number of coordinator keys",
                    })
                }
                Some(n) => n,
                None => 1,
            };
        let api = ApiConfig {
            bind: args.api_bind.unwrap_or(DEFAULT_API_BIND),
            body_limit: api_body_limit,
            public_routes: routes(args.public_routes, DEFAULT_PUBLIC_ROUTES),
            protected_routes: routes(args.protected_routes, DEFAULT_PROTECTED_ROUTES),
            connections: ConnectionLimits {
                header_timeout: seconds(
                    "http-header-timeout",
                    args.http_header_timeout,
                    DEFAULT_HEADER_TIMEOUT,
                )?,
                idle_timeout: seconds(
                    "http-idle-timeout",
                    args.http_idle_timeout,
                    DEFAULT_IDLE_TIMEOUT,
                )?,
                max_connections: at_least_one("http-max-connections", args.http_max_connections)?
                    .unwrap_or_else(ledger_api::serve::default_max_connections),
            },
            body_timeout: seconds(
                "http-body-timeout",
                args.http_body_timeout,
                DEFAULT_BODY_TIMEOUT,
            )?,
            max_buffered_body: match args.http_max_buffered_body {
                Some(n) if n < api_body_limit => {
                    return Err(ConfigError::Invalid {
                        name: "http-max-buffered-body",
                        reason: "must be at least --api-body-limit",
                    })
                }
                Some(n) => n,
                None => DEFAULT_MAX_BUFFERED_BODY.max(api_body_limit),
            },
            max_pending_submits: args
                .api_max_pending_submits
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(DEFAULT_MAX_PENDING_SUBMITS),
            pow: !args.no_pow.unwrap_or(false),
            dashboard: !args.no_dashboard.unwrap_or(false),
        };
        Ok(Self {
            p2p,
            mqtt,
            api,
            pruning,
            snapshots,
            log_segment_size,
            ledger_checkpoint_journal_size,
            history_cache_size,
            data_dir,
            genesis: args.genesis,
            snapshot_full: args.snapshot_full,
            snapshot_delta: args.snapshot_delta,
            metrics_bind: (!args.no_metrics.unwrap_or(false))
                .then(|| args.metrics_bind.unwrap_or(DEFAULT_METRICS_BIND)),
            coordinator,
            coordinator_interval: (interval > 0.0).then(|| Duration::from_secs_f64(interval)),
            coordinator_key: args.coordinator_key,
            coordinator_public_keys,
            milestone_threshold,
            indexer: !args.no_indexer.unwrap_or(false),
            log_durability: args
                .log_sync_interval_ms
                .map_or_else(ledger_engine::Durability::default, |interval_ms| {
                    ledger_engine::Durability::Group { interval_ms }
                }),
            pow_workers,
            v3_protocol_parameters: args.v3_protocol_parameters,
            log_format: args.log_format.unwrap_or_default(),
        })
    }
}

/// The event API's limits, unless `--no-mqtt`.
fn mqtt_config(args: &RunArgs) -> Result<Option<ledger_events::BrokerConfig>, ConfigError> {
    if args.no_mqtt.unwrap_or(false) {
        return Ok(None);
    }
    let defaults = ledger_events::BrokerConfig::default();
    Ok(Some(ledger_events::BrokerConfig {
        max_clients: at_least_one("mqtt-max-clients", args.mqtt_max_clients)?
            .unwrap_or(defaults.max_clients),
        max_subscriptions: at_least_one("mqtt-max-subscriptions", args.mqtt_max_subscriptions)?
            .unwrap_or(defaults.max_subscriptions),
        client_queue_bytes: at_least_one("mqtt-client-queue", args.mqtt_client_queue)?
            .unwrap_or(defaults.client_queue_bytes),
        ..defaults
    }))
}

/// Peering settings, unless `--no-p2p`.
fn p2p_config(
    args: &RunArgs,
    data_dir: &std::path::Path,
) -> Result<Option<P2pConfig>, ConfigError> {
    if args.no_p2p.unwrap_or(false) {
        return Ok(None);
    }
    let binds = match &args.p2p_bind {
        Some(list) => list
            .iter()
            .map(|a| a.trim().parse())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| ConfigError::Invalid {
                name: "p2p-bind",
                reason: "must be multiaddrs such as /ip4/0.0.0.0/tcp/15600",
            })?,
        None => vec![DEFAULT_P2P_BIND.parse().map_err(|_| ConfigError::Invalid {
            name: "p2p-bind",
            reason: "default does not parse",
        })?],
    };
    let aliases = args.peer_alias.clone().unwrap_or_default();
    let peers = args
        .peer
        .clone()
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, text)| {
            ledger_p2p::peer_address(text)
                .map(|(addr, _)| (addr, aliases.get(i).cloned().filter(|a| !a.is_empty())))
                .map_err(|_| ConfigError::Invalid {
                    name: "peer",
                    reason: "must be multiaddrs ending in /p2p/<peerId>",
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let unknown_peers_limit = args
        .p2p_unknown_peers_limit
        .unwrap_or(DEFAULT_UNKNOWN_PEERS_LIMIT);
    Ok(Some(P2pConfig {
        store: data_dir.join(ledger_p2p::STORE_DIR),
        binds,
        peers,
        unknown_peers_limit,
        warp_block_budget: args
            .p2p_warp_block_budget
            .unwrap_or(DEFAULT_WARP_BLOCK_BUDGET),
        reconnect_interval: seconds(
            "p2p-reconnect-interval",
            args.p2p_reconnect_interval,
            DEFAULT_RECONNECT_INTERVAL,
        )?,
        read_timeout: seconds(
            "p2p-read-timeout",
            args.p2p_read_timeout,
            DEFAULT_READ_TIMEOUT,
        )?,
        heartbeat_max_age: seconds(
            "p2p-heartbeat-max-age",
            args.p2p_heartbeat_max_age,
            DEFAULT_HEARTBEAT_MAX_AGE,
        )?,
    }))
}

/// The count given for flag `name`, refused when it is 0.
fn at_least_one(name: &'static str, given: Option<usize>) -> Result<Option<usize>, ConfigError> {
    match given {
        Some(0) => Err(ConfigError::Invalid {
            name,
            reason: "must be at least 1",
        }),
        other => Ok(other),
    }
}

/// A positive, finite number of seconds from flag `name`, or `default`.
fn seconds(name: &'static str, given: Option<f64>, default: f64) -> Result<Duration, ConfigError> {
    let secs = given.unwrap_or(default);
    if secs.is_finite() && secs > 0.0 && secs < 1e9 {
        Ok(Duration::from_secs_f64(secs))
    } else {
        Err(ConfigError::Invalid {
            name,
            reason: "must be a positive number of seconds",
        })
    }
}

/// An Ed25519 public key given as 64 hex digits (0x optional, either case).
fn parse_public_key(text: &str) -> Result<[u8; 32], ConfigError> {
    ledger_codec::types::parse_config_hex(text).ok_or(ConfigError::Invalid {
        name: "coordinator-public-keys",
        reason: "each key must be 32 bytes as hex (64 hex digits, 0x optional)",
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn parse(args: &[&str]) -> RunArgs {
        let cli = Cli::try_parse_from(std::iter::once("ledger-node").chain(args.iter().copied()))
            .expect("parse");
        match cli.into_command() {
            Command::Run(run) => *run,
            other => panic!("not run: {other:?}"),
        }
    }

    #[test]
    fn size_flags_take_binary_units_within_their_range() {
        let config = |args: &[&str]| NodeConfig::from_args(parse(args));
        let ok = config(&[
            "run",
            "--history-cache-size",
            "4MB",
            "--log-segment-size",
            "1MB",
        ])
        .expect("valid sizes");
        assert_eq!(ok.history_cache_size, 4 << 20);
        assert_eq!(ok.log_segment_size, 1 << 20);
        let defaults = config(&["run"]).expect("defaults");
        assert_eq!(
            defaults.history_cache_size,
            ledger_engine::DEFAULT_HISTORY_CACHE_BYTES
        );
        for (flag, bad) in [
            ("--history-cache-size", "512KB"),
            ("--history-cache-size", "65GB"),
            ("--history-cache-size", "lots"),
            ("--log-segment-size", "3GB"),
        ] {
            let err = config(&["run", flag, bad]).expect_err(bad).to_string();
            assert!(
                err.contains(flag.trim_start_matches("--")),
                "{flag} {bad}: {err}"
            );
        }
    }

    #[test]
    fn no_arguments_give_the_dev_defaults() {
        let config = NodeConfig::from_args(RunArgs::default()).expect("defaults");
        // The defaults are the subsystems' own.
        assert_eq!(config.api, ApiConfig::default());
        assert_eq!(config.p2p, Some(P2pConfig::default()));
        assert_eq!(config.data_dir, PathBuf::from("./data"));
        assert_eq!(config.api.bind, "127.0.0.1:14265".parse().expect("addr"));
        assert_eq!(
            config.metrics_bind,
            Some("127.0.0.1:9311".parse().expect("addr"))
        );
        assert!(config.coordinator && config.api.pow);
        assert_eq!(config.coordinator_interval, Some(Duration::from_secs(1)));
        assert!(config.pow_workers >= 1);
        assert_eq!(config.api.body_limit, 1 << 20);
        assert_eq!(config.api.protected_routes, vec!["/api/*".to_owned()]);
        assert!(config.api.public_routes.iter().any(|r| r == "/health"));
        assert_eq!(
            config.log_durability,
            ledger_engine::Durability::Group { interval_ms: 1 }
        );
    }

    #[test]
    fn mqtt_flags_from_the_command_line_and_the_file() {
        let defaults = NodeConfig::from_args(RunArgs::default()).expect("defaults");
        assert_eq!(defaults.mqtt, Some(ledger_events::BrokerConfig::default()));
        let config = NodeConfig::from_args(parse(&[
            "--mqtt-max-clients=7",
            "--mqtt-max-subscriptions=8",
            "--mqtt-client-queue=9000",
        ]))
        .expect("valid");
        let mqtt = config.mqtt.expect("on");
        assert_eq!(
            (
                mqtt.max_clients,
                mqtt.max_subscriptions,
                mqtt.client_queue_bytes
            ),
            (7, 8, 9000)
        );
        assert_eq!(
            NodeConfig::from_args(parse(&["--no-mqtt"]))
                .expect("valid")
                .mqtt,
            None
        );
        for zero in [
            "--mqtt-max-clients=0",
            "--mqtt-max-subscriptions=0",
            "--mqtt-client-queue=0",
        ] {
            assert!(NodeConfig::from_args(parse(&[zero])).is_err(), "{zero}");
        }
        let file: RunArgs =
            toml::from_str("no-mqtt = false\nmqtt-client-queue = 1024\n").expect("TOML keys");
        let mqtt = NodeConfig::from_args(file)
            .expect("valid")
            .mqtt
            .expect("on");
        assert_eq!(mqtt.client_queue_bytes, 1024);
    }

    #[test]
    fn log_sync_interval_sets_the_group_commit_spacing_within_its_range() {
        for (given, interval_ms) in [("0", 0), ("5", 5), ("1000", 1000)] {
            let flag = format!("--log-sync-interval-ms={given}");
            let config = NodeConfig::from_args(parse(&[&flag])).expect("valid");
            assert_eq!(
                config.log_durability,
                ledger_engine::Durability::Group { interval_ms },
                "{flag}"
            );
        }
        for bad in ["1001", "-1", "x"] {
            let flag = format!("--log-sync-interval-ms={bad}");
            assert!(
                Cli::try_parse_from(["ledger-node", flag.as_str()]).is_err(),
                "{flag}"
            );
        }
    }

    #[test]
    fn peering_flags_pair_aliases_by_order_and_refuse_bad_addresses() {
        let defaults = NodeConfig::from_args(RunArgs::default()).expect("defaults");
        let p2p = defaults.p2p.expect("peering on by default");
        assert_eq!(p2p.binds, vec![DEFAULT_P2P_BIND.parse().expect("addr")]);
        assert_eq!(p2p.store, PathBuf::from("./data/p2pstore"));
        assert_eq!(p2p.unknown_peers_limit, 4);
        assert_eq!(p2p.reconnect_interval, Duration::from_secs(30));
        assert_eq!(p2p.read_timeout, Duration::from_secs(60));
        assert_eq!(p2p.heartbeat_max_age, Duration::from_secs(100));
        assert_eq!(p2p.warp_block_budget, 50_000);
        assert!(p2p.peers.is_empty());

        let id = "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN";
        let args = parse(&[
            "--p2p-bind=/ip4/127.0.0.1/tcp/0",
            "--p2p-bind=/ip6/::1/tcp/0",
            &format!("--peer=/ip4/10.0.0.1/tcp/15600/p2p/{id}"),
            &format!("--peer=/dns/b.example/tcp/15600/p2p/{id}"),
            "--peer-alias=a",
            "--p2p-reconnect-interval=1.5",
            "--p2p-warp-block-budget=0",
        ]);
        let p2p = NodeConfig::from_args(args).expect("valid").p2p.expect("on");
        assert_eq!(p2p.warp_block_budget, 0);
        assert_eq!(p2p.binds.len(), 2);
        assert_eq!(p2p.peers[0].1.as_deref(), Some("a"));
        assert_eq!(p2p.peers[1].1, None, "no alias at that position");
        assert_eq!(p2p.reconnect_interval, Duration::from_millis(1_500));

        for bad in [
            "--p2p-bind=0.0.0.0:15600",
            "--peer=/ip4/10.0.0.1/tcp/15600",
            "--peer=not-a-multiaddr",
            "--p2p-read-timeout=0",
        ] {
            assert!(
                NodeConfig::from_args(parse(&[bad])).is_err(),
                "{bad} accepted"
            );
        }
        let off = NodeConfig::from_args(parse(&["--no-p2p"])).expect("valid");
        assert_eq!(off.p2p, None);
    }

    #[test]
    fn the_coordinator_interval_takes_fractions_down_to_a_floor() {
        let sub_second = parse(&["--coordinator-interval=0.2"]);
        let config = NodeConfig::from_args(sub_second).expect("sub-second interval");
        assert_eq!(
            config.coordinator_interval,
            Some(Duration::from_millis(200))
        );
        for bad in ["0.01", "-1", "NaN", "inf"] {
            let args = parse(&[&format!("--coordinator-interval={bad}")]);
            assert!(NodeConfig::from_args(args).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn boolean_flags_take_the_usual_spellings() {
        for (text, value) in [
            ("1", true),
            ("yes", true),
            ("ON", true),
            ("True", true),
            ("0", false),
            ("no", false),
            ("off", false),
            ("false", false),
        ] {
            let args = parse(&[
                &format!("--no-pow={text}"),
                &format!("--no-coordinator={text}"),
                &format!("--no-metrics={text}"),
            ]);
            assert_eq!(args.no_pow, Some(value), "{text}");
            assert_eq!(args.no_coordinator, Some(value), "{text}");
            assert_eq!(args.no_metrics, Some(value), "{text}");
        }
        assert!(Cli::try_parse_from(["ledger-node", "--no-pow=maybe"]).is_err());
    }

    #[test]
    fn flags_parse_with_and_without_run() {
        let flags = [
            "--data-dir=/tmp/x",
            "--genesis=g.json",
            "--api-bind=0.0.0.0:1",
            "--metrics-bind=0.0.0.0:2",
            "--coordinator-interval=0",
            "--no-coordinator",
            "--coordinator-key=coo.key",
            "--coordinator-public-keys=0xAB000000000000000000000000000000000000000000000000000000000000cd,\
             1111111111111111111111111111111111111111111111111111111111111111",
            "--milestone-threshold=2",
            "--pow-workers=3",
            "--no-pow",
            "--v3-protocol-parameters=p.json",
            "--public-routes=/a,/b*",
            "--protected-routes=",
        ];
        let top = parse(&flags);
        let mut with_run = vec!["run"];
        with_run.extend(flags);
        assert_eq!(parse(&with_run), top);
        let config = NodeConfig::from_args(top).expect("valid");
        assert_eq!(config.data_dir, PathBuf::from("/tmp/x"));
        assert_eq!(config.genesis, Some(PathBuf::from("g.json")));
        assert_eq!(config.api.bind, "0.0.0.0:1".parse().expect("addr"));
        assert_eq!(
            config.metrics_bind,
            Some("0.0.0.0:2".parse().expect("addr"))
        );
        assert_eq!(config.coordinator_interval, None);
        assert!(!config.coordinator && !config.api.pow);
        assert_eq!(config.pow_workers, 3);
        assert_eq!(config.coordinator_key, Some(PathBuf::from("coo.key")));
        let mut first = [0u8; 32];
        first[0] = 0xab;
        first[31] = 0xcd;
        assert_eq!(config.coordinator_public_keys, vec![first, [0x11; 32]]);
        assert_eq!(config.milestone_threshold, 2);
        assert_eq!(config.v3_protocol_parameters, Some(PathBuf::from("p.json")));
        assert_eq!(
            config.api.public_routes,
            vec!["/a".to_owned(), "/b*".to_owned()]
        );
        assert!(config.api.protected_routes.is_empty());
    }

    #[test]
    fn boolean_flags_take_an_explicit_value() {
        let args = parse(&["--no-pow=false", "--no-coordinator=true"]);
        assert_eq!(args.no_pow, Some(false));
        assert_eq!(args.no_coordinator, Some(true));
    }

    #[test]
    fn command_line_wins_over_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("node.toml");
        fs::write(
            &file,
            "data-dir = \"/from/file\"\napi-bind = \"127.0.0.1:9\"\nno-pow = true\n\
             public-routes = [\"/health\"]\n",
        )
        .expect("write");
        let file_arg = format!("--config={}", file.display());
        let config = NodeConfig::resolve(parse(&[&file_arg, "--data-dir=/from/cli"])).expect("ok");
        assert_eq!(config.data_dir, PathBuf::from("/from/cli"));
        assert_eq!(config.api.bind, "127.0.0.1:9".parse().expect("addr"));
        assert!(!config.api.pow);
        assert_eq!(config.api.public_routes, vec!["/health".to_owned()]);
        assert_eq!(config.api.protected_routes, vec!["/api/*".to_owned()]);
    }

    #[test]
    fn metrics_take_the_flag_env_and_file_like_the_others() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("node.toml");
        fs::write(&file, "metrics-bind = \"127.0.0.1:9400\"\n").expect("write");
        let file_arg = format!("--config={}", file.display());
        let from_file = NodeConfig::resolve(parse(&[&file_arg])).expect("ok");
        assert_eq!(
            from_file.metrics_bind,
            Some("127.0.0.1:9400".parse().expect("addr"))
        );
        let from_cli =
            NodeConfig::resolve(parse(&[&file_arg, "--metrics-bind=127.0.0.1:9401"])).expect("ok");
        assert_eq!(
            from_cli.metrics_bind,
            Some("127.0.0.1:9401".parse().expect("addr"))
        );
        let off = NodeConfig::resolve(parse(&[&file_arg, "--no-metrics"])).expect("ok");
        assert_eq!(off.metrics_bind, None);
        fs::write(&file, "no-metrics = true\n").expect("write");
        let off_in_file = NodeConfig::resolve(parse(&[&file_arg])).expect("ok");
        assert_eq!(off_in_file.metrics_bind, None);
    }

    #[test]
    fn the_dashboard_is_on_unless_the_flag_or_the_file_turns_it_off() {
        assert!(NodeConfig::resolve(parse(&[])).expect("ok").api.dashboard);
        let off = NodeConfig::resolve(parse(&["--no-dashboard"])).expect("ok");
        assert!(!off.api.dashboard);
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("node.toml");
        fs::write(&file, "no-dashboard = true\n").expect("write");
        let file_arg = format!("--config={}", file.display());
        let off_in_file = NodeConfig::resolve(parse(&[&file_arg])).expect("ok");
        assert!(!off_in_file.api.dashboard);
        let cli_wins =
            NodeConfig::resolve(parse(&[&file_arg, "--no-dashboard=false"])).expect("ok");
        assert!(cli_wins.api.dashboard);
    }

    #[test]
    fn bad_config_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("node.toml");
        fs::write(&file, "data-dri = \"x\"\n").expect("write");
        let args = RunArgs {
            config: Some(file),
            ..RunArgs::default()
        };
        assert!(matches!(
            NodeConfig::resolve(args),
            Err(ConfigError::Parse { .. })
        ));
        let missing = RunArgs {
            config: Some(dir.path().join("missing.toml")),
            ..RunArgs::default()
        };
        assert!(matches!(
            NodeConfig::resolve(missing),
            Err(ConfigError::Read { .. })
        ));
        let invalid = [
            RunArgs {
                pow_workers: Some(0),
                ..RunArgs::default()
            },
            RunArgs {
                coordinator_public_keys: Some(vec!["0x12".into()]),
                ..RunArgs::default()
            },
            RunArgs {
                no_coordinator: Some(true),
                coordinator_public_keys: Some(vec!["11".repeat(32)]),
                milestone_threshold: Some(2),
                ..RunArgs::default()
            },
            RunArgs {
                milestone_threshold: Some(2),
                ..RunArgs::default()
            },
        ];
        for args in invalid {
            assert!(
                matches!(
                    NodeConfig::from_args(args.clone()),
                    Err(ConfigError::Invalid { .. })
                ),
                "{args:?}"
            );
        }
    }
}
