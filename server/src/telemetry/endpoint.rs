//! The metrics listener's router: `GET /metrics` and nothing else.

use std::sync::Arc;

use axum::{
    extract::State,
    http::{header, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
    Router,
};

use super::NodeMetrics;

/// The path Prometheus scrapes.
pub const METRICS_PATH: &str = "/metrics";

/// Content type of prometheus-client's text encoding (OpenMetrics 1.0).
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The router of the metrics listener.
pub fn router(metrics: Arc<NodeMetrics>) -> Router {
    Router::new()
        .route(METRICS_PATH, get(scrape))
        .with_state(metrics)
}

/// `GET /metrics`: every family, encoded off the async workers (reading the engine takes its
/// locks).
async fn scrape(State(metrics): State<Arc<NodeMetrics>>) -> Response {
    let encoded = tokio::task::spawn_blocking(move || metrics.encode().map_err(|e| e.to_string()))
        .await
        .map_err(|e| e.to_string())
        .and_then(|result| result);
    match encoded {
        Ok(text) => ([(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], text).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "encoding metrics failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}
