//! The router: every endpoint in one list, and the layers wrapped once around it.

use std::sync::Arc;

use axum::{
    extract::DefaultBodyLimit,
    handler::Handler,
    http::Method,
    routing::{get, post, MethodRouter},
    Router,
};
use tower::{util::BoxCloneSyncService, ServiceBuilder};
use tower_http::{catch_panic::CatchPanicLayer, trace::TraceLayer};

use crate::{
    access, around::Around, error, request_metrics, routes, serve::ApiService, state::AppState,
};

/// The whole API as one service, ready for [`crate::serve`]: [`endpoints`] inside
/// [`with_layers`].
pub fn app(state: AppState) -> ApiService {
    let dashboard = state.dashboard.is_some();
    let endpoints = endpoints()
        .into_iter()
        .filter(|e| dashboard || !routes::dashboard::PATHS.contains(&e.path))
        .collect();
    with_layers(endpoints, state)
}

/// One endpoint of the API: its method, its path (axum syntax, `{param}` for a segment) and
/// its handler.
pub struct Endpoint {
    /// The HTTP method.
    pub method: Method,
    /// The path pattern.
    pub path: &'static str,
    handler: MethodRouter<AppState>,
}

impl Endpoint {
    /// `GET path`.
    fn get<H: Handler<T, AppState>, T: 'static>(path: &'static str, handler: H) -> Self {
        Self {
            method: Method::GET,
            path,
            handler: get(handler),
        }
    }

    /// `POST path`.
    fn post<H: Handler<T, AppState>, T: 'static>(path: &'static str, handler: H) -> Self {
        Self {
            method: Method::POST,
            path,
            handler: post(handler),
        }
    }
}

impl Endpoint {
    /// `DELETE path`.
    fn delete<H: Handler<T, AppState>, T: 'static>(path: &'static str, handler: H) -> Self {
        Self {
            method: Method::DELETE,
            path,
            handler: axum::routing::delete(handler),
        }
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// Every endpoint of the API, the one list the router is built from (and that the OpenAPI
/// document, `openapi.json`, is tested against). New endpoints are added here.
pub fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint::get("/health", routes::health),
        Endpoint::get("/api/routes", routes::routes),
        Endpoint::get("/api/openapi.json", routes::openapi::document),
        Endpoint::get("/api/core/v2/peers", routes::peers::list),
        Endpoint::post("/api/core/v2/peers", routes::peers::add),
        Endpoint::get("/api/core/v2/peers/{peer_id}", routes::peers::get_one),
        Endpoint::delete("/api/core/v2/peers/{peer_id}", routes::peers::remove),
        Endpoint::post("/api/core/v2/blocks", routes::blocks::submit),
        Endpoint::post("/api/core/v3/blocks", routes::v3::submit),
        Endpoint::get("/api/core/v3/blocks/{blockId}", routes::v3::get_block),
        Endpoint::get(
            "/api/core/v3/blocks/{blockId}/metadata",
            routes::v3::get_metadata,
        ),
        Endpoint::get("/api/core/v2/blocks/{block_id}", routes::blocks::get),
        Endpoint::get(
            "/api/core/v2/blocks/{block_id}/metadata",
            routes::blocks::metadata,
        ),
        Endpoint::get("/api/core/v2/info", routes::info::info),
        Endpoint::get("/api/core/v2/tips", routes::info::tips),
        Endpoint::get("/api/core/v2/treasury", routes::treasury::treasury),
        Endpoint::get("/api/core/v2/outputs/{output_id}", routes::outputs::get),
        Endpoint::get(
            "/api/core/v2/outputs/{output_id}/metadata",
            routes::outputs::metadata,
        ),
        Endpoint::get(
            "/api/core/v2/transactions/{transaction_id}/included-block",
            routes::transactions::included_block,
        ),
        Endpoint::get(
            "/api/core/v2/transactions/{transaction_id}/included-block/metadata",
            routes::transactions::included_block_metadata,
        ),
        Endpoint::get(
            "/api/core/v2/milestones/by-index/{index}",
            routes::milestones::by_index,
        ),
        Endpoint::get(
            "/api/core/v2/milestones/by-id/{milestone_id}",
            routes::milestones::by_id,
        ),
        Endpoint::get(
            "/api/core/v2/milestones/by-index/{index}/utxo-changes",
            routes::milestones::utxo_changes_by_index,
        ),
        Endpoint::get(
            "/api/core/v2/milestones/by-id/{milestone_id}/utxo-changes",
            routes::milestones::utxo_changes_by_id,
        ),
        // Hornet's and TIP-25's path for the same read (what iota-sdk calls).
        Endpoint::get(
            "/api/core/v2/milestones/{milestone_id}",
            routes::milestones::by_id,
        ),
        Endpoint::post("/api/core/v2/control/milestone", routes::control::milestone),
        Endpoint::post(
            "/api/core/v2/control/database/prune",
            routes::control::prune,
        ),
        Endpoint::post(
            "/api/core/v2/control/snapshots/create",
            routes::control::create_snapshot,
        ),
        Endpoint::post(
            "/api/core/v2/control/snapshot/create",
            routes::control::create_snapshot,
        ),
        Endpoint::get(
            "/api/explorer/v2/ledger/richest-addresses",
            routes::explorer::richest_addresses,
        ),
        Endpoint::get("/api/indexer/v1/outputs", routes::indexer::combined),
        Endpoint::get("/api/indexer/v1/outputs/basic", routes::indexer::basic),
        Endpoint::get("/api/indexer/v1/outputs/alias", routes::indexer::aliases),
        Endpoint::get(
            "/api/indexer/v1/outputs/alias/{alias_id}",
            routes::indexer::alias_by_id,
        ),
        Endpoint::get(
            "/api/indexer/v1/outputs/foundry",
            routes::indexer::foundries,
        ),
        Endpoint::get(
            "/api/indexer/v1/outputs/foundry/{foundry_id}",
            routes::indexer::foundry_by_id,
        ),
        Endpoint::get("/api/indexer/v1/outputs/nft", routes::indexer::nfts),
        Endpoint::get("/api/mqtt/v1", routes::mqtt::upgrade),
        Endpoint::get(
            "/api/indexer/v1/outputs/nft/{nft_id}",
            routes::indexer::nft_by_id,
        ),
        // The dashboard (left out by `app` with `--no-dashboard`).
        Endpoint::get("/", routes::dashboard::page),
        Endpoint::get("/dashboard", routes::dashboard::page),
        Endpoint::get("/dashboard/{asset}", routes::dashboard::asset),
        Endpoint::get("/api/dashboard/v1/stats", routes::dashboard::stats),
    ]
}

/// Routes `endpoints` and wraps the router in everything the API needs around them: the
/// request counters of the metrics, tracing, JSON errors, panic catching, access control on
/// requests to the endpoints, the body limit and the JSON 404 fallback.
pub fn with_layers(endpoints: Vec<Endpoint>, state: AppState) -> ApiService {
    let body_limit = state.body.limit;
    let api_metrics = Arc::clone(&state.api_metrics);
    let access = Arc::clone(&state.access);
    let paths = access::RoutePaths::new(endpoints.iter().map(|e| e.path));
    let routes = endpoints
        .into_iter()
        .fold(Router::new(), |router, e| router.route(e.path, e.handler));
    let router = routes
        .fallback(error::unknown_route)
        .with_state(state.clone());
    // The layers wrap the router once, outside it: `Router::layer` would wrap every route
    // instead, and axum clones a layered route's whole service stack for each request.
    // From the outside in: the request counters and the trace span see the final answer,
    // every non-JSON error becomes the JSON envelope, panics become 500s, access control
    // (on requests to a route; any other path falls through to the 404), and the limit for
    // axum's own body extractors.
    let layered = ServiceBuilder::new()
        .layer(Around(request_metrics::CountRequests::new(api_metrics)))
        .layer(TraceLayer::new_for_http())
        .layer(Around(error::JsonErrors))
        .layer(CatchPanicLayer::new())
        .layer(Around(access::Enforce::new(access, paths)))
        .layer(DefaultBodyLimit::max(body_limit))
        .service(router);
    BoxCloneSyncService::new(layered)
}

#[cfg(test)]
pub(crate) mod tests {
    use axum::{
        body::{Body, Bytes},
        http::{header, HeaderValue, Method, Request, StatusCode},
        Json,
    };
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;
    use crate::{access::AccessControl, jwt::JwtAuth, media::ApiJson, node::StubNode};

    /// Sends `request` to `router`: the status, the content type and the whole body.
    pub(crate) async fn send(
        service: ApiService,
        request: Request<Body>,
    ) -> (StatusCode, Option<HeaderValue>, Bytes) {
        let response = service.oneshot(request).await.expect("infallible");
        let status = response.status();
        let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
        let body = response.into_body().collect().await.expect("body");
        (status, content_type, body.to_bytes())
    }

    fn state() -> AppState {
        AppState::new(
            Arc::new(StubNode { coordinator: true }),
            AccessControl::with_defaults(JwtAuth::from_secret(&[9; 32])),
        )
        .with_body_limit(64)
    }

    /// The API plus test-only routes under `/api/core/v2/blocks*` (public by default).
    fn test_app() -> ApiService {
        #[derive(serde::Deserialize)]
        struct Thing {
            #[expect(
                dead_code,
                reason = "read only by serde: the test needs a field to fail on"
            )]
            n: u32,
        }
        let mut endpoints = endpoints();
        endpoints.extend([
            Endpoint::get("/api/core/v2/blocks/panic", || async {
                panic!("boom") as StatusCode
            }),
            Endpoint::post(
                "/api/core/v2/blocks/axum-json",
                |Json(v): Json<serde_json::Value>| async move { Json(v) },
            ),
            Endpoint::post(
                "/api/core/v2/blocks/api-json",
                |ApiJson(_): ApiJson<Thing>| async { StatusCode::OK },
            ),
        ]);
        with_layers(endpoints, state())
    }

    async fn call(
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: &str,
    ) -> (StatusCode, serde_json::Value) {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(ct) = content_type {
            request = request.header(header::CONTENT_TYPE, ct);
        }
        let request = request.body(Body::from(body.to_owned())).expect("request");
        let (status, ct, bytes) = send(test_app(), request).await;
        if bytes.is_empty() {
            return (status, serde_json::Value::Null);
        }
        assert_eq!(
            ct.as_ref().and_then(|v| v.to_str().ok()),
            Some("application/json"),
            "{path}"
        );
        (status, serde_json::from_slice(&bytes).expect("JSON body"))
    }

    fn assert_envelope(got: &(StatusCode, serde_json::Value), status: StatusCode, needle: &str) {
        let (s, json) = got;
        assert_eq!(*s, status, "{json}");
        assert_eq!(
            json["error"]["code"],
            serde_json::json!(status.as_u16()),
            "{json}"
        );
        let message = json["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{needle:?} not in {json}");
    }

    #[tokio::test]
    async fn panic_becomes_a_json_500_without_details() {
        let got = call(Method::GET, "/api/core/v2/blocks/panic", None, "").await;
        assert_envelope(
            &got,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal server error",
        );
        assert!(!got.1.to_string().contains("boom"));
    }

    #[tokio::test]
    async fn axum_json_rejections_become_json_400_and_415() {
        let path = "/api/core/v2/blocks/axum-json";
        let syntax = call(Method::POST, path, Some("application/json"), "{").await;
        assert_envelope(&syntax, StatusCode::BAD_REQUEST, "JSON");
        let no_type = call(Method::POST, path, Some("text/plain"), "{}").await;
        assert_envelope(&no_type, StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type");
        let too_big = call(
            Method::POST,
            path,
            Some("application/json"),
            &" ".repeat(65),
        )
        .await;
        assert_envelope(&too_big, StatusCode::PAYLOAD_TOO_LARGE, "");
    }

    #[tokio::test]
    async fn api_json_maps_every_failure() {
        let path = "/api/core/v2/blocks/api-json";
        assert_eq!(
            call(Method::POST, path, None, r#"{"n":1}"#).await.0,
            StatusCode::OK
        );
        let wrong = call(Method::POST, path, None, r#"{"n":"x"}"#).await;
        assert_envelope(&wrong, StatusCode::BAD_REQUEST, "invalid JSON body");
        let syntax = call(Method::POST, path, None, "{").await;
        assert_envelope(&syntax, StatusCode::BAD_REQUEST, "invalid JSON body");
        let binary = call(
            Method::POST,
            path,
            Some("application/vnd.ledger.serializer-v1"),
            "{}",
        )
        .await;
        assert_envelope(&binary, StatusCode::UNSUPPORTED_MEDIA_TYPE, "serializer-v1");
        let big = call(Method::POST, path, None, &" ".repeat(65)).await;
        assert_envelope(&big, StatusCode::PAYLOAD_TOO_LARGE, "64 bytes");
    }

    #[tokio::test]
    async fn protected_route_without_token_is_403_before_anything_else() {
        let got = call(Method::GET, "/api/core/v2/peers", None, "").await;
        assert_envelope(&got, StatusCode::FORBIDDEN, crate::error::NOT_PUBLIC);
        // Wrong method on a protected path: still 403, the route is not public.
        let got = call(Method::POST, "/api/core/v2/peers", None, "").await;
        assert_envelope(&got, StatusCode::FORBIDDEN, crate::error::NOT_PUBLIC);
        // A protected path that names no route: the 404, access control says nothing.
        let got = call(Method::GET, "/api/core/v2/control/nope", None, "").await;
        assert_envelope(&got, StatusCode::NOT_FOUND, "/api/core/v2/control/nope");
    }
}
