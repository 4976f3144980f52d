//! `ledger-node run`: bind, serve until SIGINT/SIGTERM, flush, return.

use std::{
    future::Future,
    io,
    io::{IsTerminal, Write},
    net::SocketAddr,
    path::PathBuf,
    sync::Arc,
    time::Duration,
};

use ledger_api::{
    access::AccessControl,
    jwt::{JwtAuth, JwtError},
    node::{EngineNode, NodeApi, NodeError},
    rates::BlockRates,
    router::app,
    serve::ConnectionLimits,
    state::AppState,
};
use ledger_codec::nova;
use ledger_engine::{Engine, EngineConfig, EngineError, Genesis, TimingObserver};
use ledger_p2p::{P2p, P2pError};

use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

use crate::{
    cli::LogFormat,
    config::NodeConfig,
    telemetry::{
        endpoint::{self, METRICS_PATH},
        timings::EngineTimings,
        MetricSources, NodeMetrics,
    },
};

/// How long blocking tasks (a snapshot being written, say) may take to end once the node has
/// shut down, before the process exits anyway.
pub const BLOCKING_TASKS_GRACE: Duration = Duration::from_secs(5);

/// How long open connections may take to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Errors that stop the node.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The token secret could not be loaded or created.
    #[error("API token secret: {0}")]
    Jwt(#[from] JwtError),
    /// The API address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: io::Error,
    },
    /// The metrics address could not be bound.
    #[error("cannot listen on {addr} for metrics (--metrics-bind; --no-metrics turns them off): {source}")]
    MetricsBind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: io::Error,
    },
    /// Serving failed.
    #[error("server: {0}")]
    Serve(#[from] io::Error),
    /// A file the node starts from could not be read.
    #[error("ledger: reading {}{}: {source}", what, path.display())]
    Read {
        /// What the file is (`"genesis "`, or empty).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The genesis file is not a valid genesis.
    #[error("ledger: {}: {source}", path.display())]
    Genesis {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: EngineError,
    },
    /// The v3 protocol parameters are not valid.
    #[error("ledger: {origin}: {source}")]
    V3Parameters {
        /// The file, or the built-in parameters.
        origin: String,
        /// What is wrong with them.
        source: ledger_codec::Error,
    },
    /// The ledger engine could not be opened.
    #[error("ledger: {0}")]
    Engine(#[from] EngineError),
    /// The snapshot files to start from are unusable or conflict with the data directory.
    #[error("ledger: {0}")]
    Start(#[from] crate::start::StartError),
    /// The task opening the engine failed.
    #[error("ledger: {0}")]
    OpenTask(#[from] tokio::task::JoinError),
    /// Peering could not start.
    #[error(transparent)]
    P2p(#[from] P2pError),
    /// The node failed to flush at shutdown.
    #[error("flushing the node at shutdown: {0}")]
    Flush(#[source] NodeError),
}

/// Logs through `tracing` to stderr, filtered by `RUST_LOG` (default `info`), as text or
/// as one JSON object per line.
pub fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // A log line that cannot be written is lost, nothing more: tracing-subscriber's default
    // reports a failed write with `eprintln!`, which panics when stderr itself fails (a full
    // disk under the log file, a closed pipe), and a panic in a request's task drops its
    // connection without an answer.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .log_internal_errors(false);
    // A second init (tests) is harmless; ignore it.
    let _ = match format {
        LogFormat::Text => builder.with_ansi(io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// The v3 protocol parameters of the dev default (TIP-49 testnet parameters of the vectors).
pub const DEV_V3_PROTOCOL_PARAMETERS: &str = include_str!("dev-v3-protocol-parameters.json");

/// Opens the ledger engine as `config` says (genesis, coordinator, PoW workers).
///
/// # Errors
/// [`RunError::Read`], [`RunError::Genesis`] or [`RunError::Engine`] when the genesis or the store
/// cannot be opened.
pub fn open_engine(config: &NodeConfig) -> Result<Arc<Engine>, RunError> {
    let from_snapshot = crate::start::snapshot_genesis(
        &config.data_dir,
        config.snapshot_full.as_deref(),
        config.snapshot_delta.as_deref(),
        config.genesis.as_deref(),
    )?;
    let genesis = match (&config.genesis, from_snapshot) {
        (_, Some(genesis)) => genesis,
        (Some(path), None) => {
            let text = std::fs::read_to_string(path).map_err(|source| RunError::Read {
                what: "genesis ",
                path: path.clone(),
                source,
            })?;
            Genesis::from_json(&text).map_err(|source| RunError::Genesis {
                path: path.clone(),
                source,
            })?
        }
        (None, None) => Genesis::dev(),
    };
    let mut engine_config = EngineConfig::dev(&config.data_dir);
    engine_config.genesis = genesis;
    engine_config.coordinator = config.coordinator;
    engine_config
        .coordinator_key_file
        .clone_from(&config.coordinator_key);
    engine_config
        .coordinator_public_keys
        .clone_from(&config.coordinator_public_keys);
    engine_config.milestone_threshold = config.milestone_threshold;
    engine_config.pow_workers = config.pow_workers;
    engine_config.indexer = config.indexer;
    engine_config.pruning = config.pruning.clone();
    engine_config.snapshots = config.snapshots.clone();
    engine_config.durability = config.log_durability;
    engine_config.log_segment_size = config.log_segment_size;
    engine_config.ledger_checkpoint_bytes = config.ledger_checkpoint_journal_size;
    engine_config.history_cache_bytes = config.history_cache_size;
    Ok(Engine::open(engine_config)?)
}

/// Reads the v3 protocol parameters from the configured file, or the dev default.
///
/// # Errors
/// [`RunError::Read`] or [`RunError::V3Parameters`] for an unreadable or invalid file.
pub fn load_v3_params(config: &NodeConfig) -> Result<nova::ProtocolParameters, RunError> {
    let (text, origin) = match &config.v3_protocol_parameters {
        Some(path) => (
            std::fs::read_to_string(path).map_err(|source| RunError::Read {
                what: "",
                path: path.clone(),
                source,
            })?,
            path.display().to_string(),
        ),
        None => (
            DEV_V3_PROTOCOL_PARAMETERS.to_owned(),
            "built-in v3 parameters".to_owned(),
        ),
    };
    nova::ProtocolParameters::from_json(&text)
        .map_err(|source| RunError::V3Parameters { origin, source })
}

/// Runs the node (engine, coordinator, REST API) until SIGINT or SIGTERM.
pub async fn run(config: NodeConfig) -> Result<(), RunError> {
    // Bind first: a taken port stops the start before anything is created on disk.
    let listener = bind(&config).await?;
    let metrics_listener = match config.metrics_bind {
        Some(addr) => Some(
            TcpListener::bind(addr)
                .await
                .map_err(|source| RunError::MetricsBind { addr, source })?,
        ),
        None => None,
    };
    if let Some(p2p) = &config.p2p {
        ledger_p2p::check_binds(&p2p.binds)?;
    }
    let v3 = load_v3_params(&config)?;
    let cfg = config.clone();
    let engine = tokio::task::spawn_blocking(move || open_engine(&cfg)).await??;
    tracing::info!(
        ledger_index = engine.ledger_index(),
        blocks = engine.block_count(),
        network = %engine.params().network_name,
        log_durability = ?config.log_durability,
        "ledger opened"
    );
    match engine.coordinator_public_key() {
        Some(key) => {
            tracing::info!(public_key = %format!("0x{}", hex::encode(key)), "built-in coordinator")
        }
        None if config.coordinator_public_keys.is_empty() => tracing::warn!(
            "no coordinator and no --coordinator-public-keys: no milestone will be accepted"
        ),
        None => tracing::info!(
            keys = config.coordinator_public_keys.len(),
            threshold = config.milestone_threshold,
            "following external coordinator milestones"
        ),
    }
    if let Some(interval) = config.coordinator_interval {
        engine.start_coordinator(interval);
    }
    let p2p = match &config.p2p {
        Some(p2p_config) => Some(P2p::start(p2p_config.clone(), Arc::clone(&engine)).await?),
        None => {
            tracing::info!("peering off (--no-p2p)");
            None
        }
    };
    let node = Arc::new(EngineNode {
        engine: Arc::clone(&engine),
        p2p,
    });
    run_with_state(
        &config,
        Listeners {
            api: listener,
            metrics: metrics_listener,
        },
        node,
        Some(v3),
        shutdown_signal(),
    )
    .await
}

/// Binds the API listener on `config.api.bind`.
async fn bind(config: &NodeConfig) -> Result<TcpListener, RunError> {
    TcpListener::bind(config.api.bind)
        .await
        .map_err(|source| RunError::Bind {
            addr: config.api.bind,
            source,
        })
}

/// Serves the API for `node` on `config.api.bind` until `shutdown` completes, then lets open
/// requests finish (at most [`SHUTDOWN_GRACE`]) and calls [`NodeApi::shutdown`]. Prints
/// `listening on http://ADDR` with the bound address on stdout once accepting.
pub async fn run_with(
    config: &NodeConfig,
    node: Arc<dyn NodeApi>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let listeners = Listeners {
        api: bind(config).await?,
        metrics: None,
    };
    run_with_state(config, listeners, node, None, shutdown).await
}

/// The bound sockets of a node: the API, and the metrics endpoint unless turned off.
struct Listeners {
    api: TcpListener,
    metrics: Option<TcpListener>,
}

/// [`run_with`] with the engine and v3 parameters behind the API.
async fn run_with_state(
    config: &NodeConfig,
    listeners: Listeners,
    node: Arc<dyn NodeApi>,
    v3: Option<nova::ProtocolParameters>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let jwt = JwtAuth::load_or_create(&config.data_dir)?;
    let access = AccessControl::new(
        config.api.public_routes.iter().cloned(),
        config.api.protected_routes.iter().cloned(),
        jwt,
    );
    let mut state = AppState::with_config(Arc::clone(&node), access, &config.api)
        .with_data_dir(config.data_dir.clone());
    if let Some(engine) = node.engine() {
        state = state.with_rates(BlockRates::spawn(engine));
    }
    if let Some(v3) = v3 {
        state = state.with_v3_params(v3);
    }
    if let (Some(mqtt), Some(engine)) = (&config.mqtt, node.engine()) {
        let broker = Arc::new(ledger_events::Broker::new(mqtt.clone(), Arc::default()));
        let publisher = ledger_api::publisher::EnginePublisher::start(Arc::clone(engine), broker)?;
        let io = ledger_api::event_io::EventIo::start()?;
        state = state.with_events(publisher, Arc::new(io));
    }
    state.rejects.spawn_logger();
    let limits = config.api.connections;
    // The metrics line comes before the API's: readers of stdout stop at the API line.
    let metrics = match (listeners.metrics, node.engine()) {
        (Some(listener), Some(engine)) => Some(spawn_metrics(listener, &state, engine, limits)?),
        _ => None,
    };
    let addr = listeners.api.local_addr()?;
    announce(addr)?;
    tracing::info!(%addr, data_dir = %config.data_dir.display(), "REST API up");

    ledger_api::serve(listeners.api, app(state), limits, shutdown, SHUTDOWN_GRACE).await?;
    if let Some(metrics) = metrics {
        metrics.stop().await;
    }

    tokio::task::spawn_blocking(move || node.shutdown())
        .await
        .map_err(|e| RunError::Flush(Box::new(e)))?
        .map_err(RunError::Flush)?;
    tracing::info!("stopped");
    Ok(())
}

/// The running metrics endpoint.
struct MetricsServer {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<io::Result<()>>,
}

impl MetricsServer {
    /// Stops accepting scrapes and waits for the open ones.
    async fn stop(self) {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "metrics endpoint failed"),
            Err(e) => tracing::warn!(error = %e, "metrics endpoint task failed"),
        }
    }
}

/// Scrapes that may be served at once (Prometheus scrapes one at a time).
const METRICS_MAX_CONNECTIONS: usize = 16;

/// Serves `GET /metrics` for the node behind `state` on `listener`, hooks the engine's
/// timings into its histograms, and prints `metrics on http://ADDR/metrics`.
fn spawn_metrics(
    listener: TcpListener,
    state: &AppState,
    engine: &Arc<Engine>,
    api_limits: ConnectionLimits,
) -> Result<MetricsServer, RunError> {
    let timings = Arc::new(EngineTimings::default());
    if !engine.observe_timings(Arc::clone(&timings) as Arc<dyn TimingObserver>) {
        tracing::warn!("engine timings are observed already: the duration histograms stay empty");
    }
    let sources = MetricSources {
        engine: Arc::clone(engine),
        node: Arc::clone(&state.node),
        rates: Arc::clone(&state.rates),
        submit: Arc::clone(&state.submit),
        api: Arc::clone(&state.api_metrics),
        p2p: state.node.p2p().cloned(),
        mqtt: state
            .events
            .as_ref()
            .map(|(e, _)| Arc::clone(e.broker().metrics())),
    };
    let metrics = Arc::new(NodeMetrics::new(sources, &timings));
    let addr = listener.local_addr()?;
    let mut out = io::stdout().lock();
    writeln!(out, "metrics on http://{addr}{METRICS_PATH}")?;
    out.flush()?;
    drop(out);
    tracing::info!(%addr, "metrics endpoint up");
    let limits = ConnectionLimits {
        header_timeout: api_limits.header_timeout,
        idle_timeout: api_limits.idle_timeout,
        max_connections: METRICS_MAX_CONNECTIONS,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(ledger_api::serve(
        listener,
        tower::util::BoxCloneSyncService::new(endpoint::router(metrics)),
        limits,
        async move {
            let _ = stopped.await;
        },
        SHUTDOWN_GRACE,
    ));
    Ok(MetricsServer { stop, task })
}

/// Prints the bound address on stdout (tests and scripts read it).
fn announce(addr: SocketAddr) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "listening on http://{addr}")?;
    out.flush()
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM. The handlers are installed when this is
/// called, not when the future is first polled: a signal that arrives while the node is still
/// starting (after it printed its address) stops it cleanly instead of killing it.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            let (mut interrupt, mut terminate) = match (interrupt, terminate) {
                (Ok(i), Ok(t)) => (i, t),
                (Err(e), _) | (_, Err(e)) => {
                    tracing::error!(error = %e, "cannot listen for SIGINT/SIGTERM");
                    return std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                _ = interrupt.recv() => tracing::info!("SIGINT received"),
                _ = terminate.recv() => tracing::info!("SIGTERM received"),
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
        tracing::info!("SIGINT received");
    }
}
