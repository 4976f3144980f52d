//! The axum application: state, routes and the layers around them.

use std::sync::Arc;

use axum::{
    extract::DefaultBodyLimit,
    middleware,
    routing::{get, post},
    Router,
};
use tower_http::{catch_panic::CatchPanicLayer, trace::TraceLayer};

use crate::{access, access::AccessControl, error, node::NodeApi, routes};

/// Default limit for request bodies: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

/// What every handler can reach. Cheap to clone (a few `Arc`s).
#[derive(Clone)]
pub struct AppState {
    /// The node behind the API.
    pub node: Arc<dyn NodeApi>,
    /// Route lists and token keys.
    pub access: Arc<AccessControl>,
    /// Largest accepted request body in bytes (413 above).
    pub body_limit: usize,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("access", &self.access)
            .field("body_limit", &self.body_limit)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State with the default body limit.
    pub fn new(node: Arc<dyn NodeApi>, access: AccessControl) -> Self {
        Self {
            node,
            access: Arc::new(access),
            body_limit: DEFAULT_BODY_LIMIT,
        }
    }

    /// The same state with another body limit.
    pub fn with_body_limit(mut self, limit: usize) -> Self {
        self.body_limit = limit;
        self
    }
}

/// The whole API as a router, ready for `axum::serve`.
pub fn app(state: AppState) -> Router {
    let body_limit = state.body_limit;
    Router::new()
        .route("/health", get(routes::health))
        .route("/api/routes", get(routes::routes))
        .route("/api/core/v2/peers", get(routes::peers::list))
        .route("/api/core/v2/blocks", post(routes::blocks::submit))
        // Access control runs only for requests that matched a route, on their path; an
        // unknown path falls through to the 404 below.
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            access::enforce,
        ))
        .fallback(error::unknown_route)
        .with_state(state)
        // Layers wrap from the inside out: the limit for axum's own body extractors, then
        // panics become 500s, then every non-JSON error becomes the JSON envelope, and the
        // trace span sees the final answer.
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(CatchPanicLayer::new())
        .layer(middleware::from_fn(error::json_errors))
        .layer(TraceLayer::new_for_http())
}
