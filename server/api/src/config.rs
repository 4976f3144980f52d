//! The API's settings, as the node's configuration resolves them (flags `--api-*`,
//! `--http-*`, `--public-routes`, `--protected-routes`, `--no-pow`, `--no-dashboard`).

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    time::Duration,
};

use crate::{
    access::{DEFAULT_PROTECTED_ROUTES, DEFAULT_PUBLIC_ROUTES},
    admission::DEFAULT_MAX_PENDING_SUBMITS,
    media::DEFAULT_BODY_LIMIT,
    serve::{default_max_connections, ConnectionLimits},
};

/// Default REST API address.
pub const DEFAULT_API_BIND: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 14265);
/// Default time for a request header, in seconds.
pub const DEFAULT_HEADER_TIMEOUT: f64 = 10.0;
/// Default `--http-idle-timeout` in seconds.
pub const DEFAULT_IDLE_TIMEOUT: f64 = 60.0;
/// Default time for a whole request body, in seconds.
pub const DEFAULT_BODY_TIMEOUT: f64 = 30.0;
/// Default cap on request-body bytes buffered at once over all connections.
pub const DEFAULT_MAX_BUFFERED_BODY: usize = 64 << 20;

/// How the REST API listens, limits its clients and admits submissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiConfig {
    /// REST API address.
    pub bind: SocketAddr,
    /// Largest request body in bytes.
    pub body_limit: usize,
    /// Public route patterns.
    pub public_routes: Vec<String>,
    /// Protected route patterns.
    pub protected_routes: Vec<String>,
    /// Connections: time for a header, idle time between requests, most at once.
    pub connections: ConnectionLimits,
    /// Time for a whole request body.
    pub body_timeout: Duration,
    /// Most request-body bytes buffered at once.
    pub max_buffered_body: usize,
    /// Most block submissions in flight at once.
    pub max_pending_submits: usize,
    /// Whether the node does PoW for submitted blocks.
    pub pow: bool,
    /// Whether the dashboard is served (`--no-dashboard` turns it off).
    pub dashboard: bool,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            bind: DEFAULT_API_BIND,
            body_limit: DEFAULT_BODY_LIMIT,
            public_routes: DEFAULT_PUBLIC_ROUTES
                .iter()
                .map(|&r| r.to_owned())
                .collect(),
            protected_routes: DEFAULT_PROTECTED_ROUTES
                .iter()
                .map(|&r| r.to_owned())
                .collect(),
            connections: ConnectionLimits {
                header_timeout: Duration::from_secs_f64(DEFAULT_HEADER_TIMEOUT),
                idle_timeout: Duration::from_secs_f64(DEFAULT_IDLE_TIMEOUT),
                max_connections: default_max_connections(),
            },
            body_timeout: Duration::from_secs_f64(DEFAULT_BODY_TIMEOUT),
            max_buffered_body: DEFAULT_MAX_BUFFERED_BODY,
            max_pending_submits: DEFAULT_MAX_PENDING_SUBMITS,
            pow: true,
            dashboard: true,
        }
    }
}
