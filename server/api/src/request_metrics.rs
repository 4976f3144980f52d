//! What the REST API counts for Prometheus: requests by status code and method, error
//! answers, and (read from the PoW pool at scrape time) node PoW requests.

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::Method,
    middleware::Next,
    response::Response,
};
use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

/// Labels of `iota_restapi_requests_total` (Hornet's echo middleware has `code` and
/// `method`; `host` and `url` are left out: their values are client-chosen, unbounded).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The answer's status code.
    pub code: u16,
    /// The request method, or `OTHER` for a method outside HTTP's standard ones.
    pub method: &'static str,
}

/// Counters of the API, updated by [`count_requests`].
#[derive(Debug, Default)]
pub struct ApiMetrics {
    requests: Family<RequestLabels, Counter>,
    // A gauge, as in Hornet (`iota_restapi_http_request_errors`), though it only grows.
    errors: Gauge,
}

impl ApiMetrics {
    /// Counts one answered request.
    pub fn record(&self, method: &Method, code: u16) {
        self.requests
            .get_or_create(&RequestLabels {
                code,
                method: method_label(method),
            })
            .inc();
        // Hornet counts every request its error handler answers: 4xx and 5xx alike.
        if code >= 400 {
            self.errors.inc();
        }
    }

    /// Requests counted with this code and method so far.
    pub fn requests(&self, method: &Method, code: u16) -> u64 {
        self.requests
            .get_or_create(&RequestLabels {
                code,
                method: method_label(method),
            })
            .get()
    }

    /// Adds the API's families to `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "iota_restapi_requests",
            "How many HTTP requests processed, partitioned by status code and HTTP method",
            self.requests.clone(),
        );
        registry.register(
            "iota_restapi_http_request_errors",
            "The amount of encountered HTTP request errors",
            self.errors.clone(),
        );
    }
}

/// HTTP's standard methods, the label values of `method`.
const STANDARD_METHODS: [&str; 9] = [
    "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE",
];

/// The label value of `method`: a bounded set, so a client cannot grow the family.
fn method_label(method: &Method) -> &'static str {
    STANDARD_METHODS
        .iter()
        .find(|m| **m == method.as_str())
        .copied()
        .unwrap_or("OTHER")
}

/// Middleware counting every request with the status of its final answer.
pub async fn count_requests(
    State(metrics): State<Arc<ApiMetrics>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    let response = next.run(request).await;
    metrics.record(&method, response.status().as_u16());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_count_4xx_and_5xx_and_methods_stay_bounded() {
        let metrics = ApiMetrics::default();
        metrics.record(&Method::POST, 201);
        metrics.record(&Method::GET, 404);
        metrics.record(&Method::GET, 503);
        let odd = Method::from_bytes(b"BREW").expect("method");
        metrics.record(&odd, 405);
        assert_eq!(metrics.requests(&Method::POST, 201), 1);
        assert_eq!(metrics.requests(&Method::GET, 404), 1);
        assert_eq!(metrics.errors.get(), 3);
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        assert!(
            text.contains(r#"iota_restapi_requests_total{code="405",method="OTHER"} 1"#),
            "{text}"
        );
        assert!(!text.contains("BREW"), "{text}");
        assert!(
            text.contains("iota_restapi_http_request_errors 3"),
            "{text}"
        );
    }
}
