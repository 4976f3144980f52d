//! `ledger-node run`: bind, serve until SIGINT/SIGTERM, flush, return.

use std::{
    future::Future,
    io,
    io::{IsTerminal, Write},
    net::SocketAddr,
    sync::Arc,
    time::Duration,
};

use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

use crate::{
    access::AccessControl,
    app::{app, AppState},
    config::NodeConfig,
    jwt::{JwtAuth, JwtError},
    node::{NodeApi, NodeError, StubNode},
};

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
    /// Serving failed.
    #[error("server: {0}")]
    Serve(#[from] io::Error),
    /// The node failed to flush at shutdown.
    #[error("flushing the node at shutdown: {0}")]
    Flush(NodeError),
}

/// Logs through `tracing` to stderr, filtered by `RUST_LOG` (default `info`).
pub fn init_tracing() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // A second init (tests) is harmless; ignore it.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(io::stderr().is_terminal())
        .with_writer(io::stderr)
        .try_init();
}

/// Runs the node with [`StubNode`] behind the API until SIGINT or SIGTERM.
pub async fn run(config: NodeConfig) -> Result<(), RunError> {
    let node = Arc::new(StubNode {
        coordinator: config.coordinator,
    });
    run_with(&config, node, shutdown_signal()).await
}

/// Serves the API for `node` on `config.api_bind` until `shutdown` completes, then lets open
/// requests finish (at most [`SHUTDOWN_GRACE`]) and calls [`NodeApi::shutdown`]. Prints
/// `listening on http://ADDR` with the bound address on stdout once accepting.
pub async fn run_with(
    config: &NodeConfig,
    node: Arc<dyn NodeApi>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let jwt = JwtAuth::load_or_create(&config.data_dir)?;
    let access = AccessControl::new(
        config.public_routes.iter().cloned(),
        config.protected_routes.iter().cloned(),
        jwt,
    );
    let state = AppState::new(Arc::clone(&node), access).with_body_limit(config.api_body_limit);
    let listener = TcpListener::bind(config.api_bind)
        .await
        .map_err(|source| RunError::Bind {
            addr: config.api_bind,
            source,
        })?;
    let addr = listener.local_addr()?;
    announce(addr)?;
    tracing::info!(%addr, data_dir = %config.data_dir.display(), "REST API up");

    let (stopping_tx, stopping_rx) = tokio::sync::oneshot::channel::<()>();
    let server = axum::serve(listener, app(state)).with_graceful_shutdown(async move {
        shutdown.await;
        tracing::info!("shutting down: no new connections");
        let _ = stopping_tx.send(());
    });
    let grace = async move {
        if stopping_rx.await.is_ok() {
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } else {
            // The server ended without a signal; let it report.
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        served = server => served?,
        () = grace => tracing::warn!("connections still open after the grace period; closing"),
    }

    tokio::task::spawn_blocking(move || node.shutdown())
        .await
        .map_err(|e| RunError::Flush(Box::new(e)))?
        .map_err(RunError::Flush)?;
    tracing::info!("stopped");
    Ok(())
}

/// Prints the bound address on stdout (tests and scripts read it).
fn announce(addr: SocketAddr) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "listening on http://{addr}")?;
    out.flush()
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT received"),
        () = term => tracing::info!("SIGTERM received"),
    }
}
