//! What the REST API counts for Prometheus: requests by status code and method, error
//! answers, and (read from the PoW pool at scrape time) node PoW requests.

use std::{
    ops::ControlFlow,
    sync::{Arc, OnceLock},
};

use axum::{
    http::{Method, Request},
    response::Response,
};
use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

use crate::around::{Hook, Rewrite};

/// Labels of `iota_restapi_requests_total` (Hornet's echo middleware has `code` and
/// `method`; `host` and `url` are left out: their values are client-chosen, unbounded).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The answer's status code.
    pub code: u16,
    /// The request method, or `OTHER` for a method outside HTTP's standard ones.
    pub method: &'static str,
}

/// Status codes whose counters [`ApiMetrics`] keeps at hand: those the API answers with.
const CACHED_CODES: [u16; 11] = [200, 201, 400, 403, 404, 405, 408, 413, 415, 500, 503];

/// Counters of the API, updated by [`CountRequests`].
#[derive(Debug, Default)]
pub struct ApiMetrics {
    requests: Family<RequestLabels, Counter>,
    // A gauge, as in Hornet (`iota_restapi_http_request_errors`), though it only grows.
    errors: Gauge,
    // The counters of `requests` for each method (index in METHOD_LABELS) and each of the
    // CACHED_CODES, each filled from the family when first counted: afterwards counting
    // neither hashes the labels nor takes the family's lock. The family creates and exposes
    // its counters exactly as before; these are handles to the same values.
    cached: [[OnceLock<Counter>; CACHED_CODES.len()]; METHOD_LABELS.len()],
}

impl ApiMetrics {
    /// Counts one answered request.
    pub fn record(&self, method: &Method, code: u16) {
        self.record_index(method_index(method), code);
    }

    /// Counts one answered request whose method has the label `METHOD_LABELS[method]`.
    fn record_index(&self, method: usize, code: u16) {
        let labels = || RequestLabels {
            code,
            method: METHOD_LABELS.get(method).copied().unwrap_or(OTHER),
        };
        let cached = CACHED_CODES
            .iter()
            .position(|c| *c == code)
            .and_then(|slot| self.cached.get(method)?.get(slot));
        match cached {
            Some(cell) => cell
                .get_or_init(|| Counter::clone(&self.requests.get_or_create(&labels())))
                .inc(),
            None => self.requests.get_or_create(&labels()).inc(),
        };
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

/// The label value of a method outside HTTP's standard ones.
const OTHER: &str = "OTHER";

/// The label values of `method`: HTTP's standard methods, then [`OTHER`].
const METHOD_LABELS: [&str; 10] = [
    "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE", OTHER,
];

/// The index in [`METHOD_LABELS`] of `method`'s label: a bounded set, so a client cannot
/// grow the family.
fn method_index(method: &Method) -> usize {
    METHOD_LABELS
        .iter()
        .position(|m| *m != OTHER && *m == method.as_str())
        .unwrap_or(METHOD_LABELS.len() - 1)
}

/// The label value of `method`.
fn method_label(method: &Method) -> &'static str {
    METHOD_LABELS
        .get(method_index(method))
        .copied()
        .unwrap_or(OTHER)
}

/// Counts every request with the status of its final answer, as a layer
/// ([`crate::around::Around`]).
#[derive(Debug, Clone)]
pub struct CountRequests(Arc<ApiMetrics>);

impl CountRequests {
    /// Counts into `metrics`.
    pub fn new(metrics: Arc<ApiMetrics>) -> Self {
        Self(metrics)
    }
}

impl Hook for CountRequests {
    /// The counters, and the request's index in `METHOD_LABELS`.
    type Note = (Arc<ApiMetrics>, usize);

    fn before<B>(&self, request: &Request<B>) -> ControlFlow<Response, Self::Note> {
        ControlFlow::Continue((Arc::clone(&self.0), method_index(request.method())))
    }

    fn after((metrics, method): Self::Note, answer: Response) -> Result<Response, Rewrite> {
        metrics.record_index(method, answer.status().as_u16());
        Ok(answer)
    }
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

    #[test]
    fn cached_and_uncached_codes_count_into_the_family() {
        let metrics = ApiMetrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let encode = || {
            let mut text = String::new();
            prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
            text
        };
        assert!(!encode().contains("code="), "{}", encode());
        for _ in 0..3 {
            metrics.record(&Method::GET, 200);
        }
        metrics.record(&Method::GET, 302);
        metrics.record(&Method::GET, 302);
        let text = encode();
        assert!(
            text.contains(r#"iota_restapi_requests_total{code="200",method="GET"} 3"#),
            "{text}"
        );
        assert!(
            text.contains(r#"iota_restapi_requests_total{code="302",method="GET"} 2"#),
            "{text}"
        );
        assert_eq!(text.matches("code=").count(), 2, "{text}");
        assert_eq!(metrics.requests(&Method::GET, 200), 3);
    }
}
