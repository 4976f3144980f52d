//! The dashboard's routes: the page at `/` and `/dashboard`, its files under `/dashboard/`,
//! and `GET /api/dashboard/v1/stats` (see [`crate::dashboard`]). Left out of the router with
//! `--no-dashboard` ([`PATHS`]).

use axum::{
    extract::{Path, State},
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
};

use crate::{
    dashboard::{
        assets::{self, Asset},
        stats::Stats,
    },
    error::ApiError,
    routes::ids::json_response,
    state::AppState,
};

/// Every path the dashboard adds to the router.
pub const PATHS: &[&str] = &[
    "/",
    "/dashboard",
    "/dashboard/{asset}",
    "/api/dashboard/v1/stats",
];

/// `asset` with its content type and the dashboard's security headers.
fn serve(asset: &'static Asset) -> Response {
    (
        assets::security_headers(),
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        )],
        asset.body,
    )
        .into_response()
}

/// `GET /` and `GET /dashboard`: the page.
pub async fn page() -> Response {
    serve(&assets::INDEX)
}

/// `GET /dashboard/{asset}`: one of the page's files; 404 for any other name.
pub async fn asset(Path(name): Path<String>) -> Result<Response, ApiError> {
    assets::find(&name)
        .map(serve)
        .ok_or_else(|| ApiError::not_found(format!("no dashboard file {name:?}")))
}

/// `GET /api/dashboard/v1/stats`: the figures the dashboard charts, never cached.
pub async fn stats(State(state): State<AppState>) -> Result<Response, ApiError> {
    let engine = std::sync::Arc::clone(state.engine()?);
    let data_dir = state.dashboard.as_ref().and_then(|d| d.data_dir.clone());
    let rates = state.rates.get();
    let rejects = std::sync::Arc::clone(&state.rejects);
    let stats = tokio::task::spawn_blocking(move || {
        Stats::read(&engine, rates, &rejects, data_dir.as_deref())
    })
    .await
    .map_err(ApiError::internal)?;
    let mut response = json_response(&stats)?;
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
