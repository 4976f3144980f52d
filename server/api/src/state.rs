//! What the handlers reach: [`AppState`], one `Arc` cloned per request. Extractors and
//! middleware that need only a part take it as a sub-state ([`FromRef`]): the body rules
//! ([`BodyLimits`]), the submit slots ([`Admission`]); access control gets its rules when the
//! router is built.

use std::sync::Arc;

use axum::extract::FromRef;
use ledger_codec::nova;
use ledger_engine::Engine;

use crate::{
    access::AccessControl, admission::Admission, config::ApiConfig, dashboard::Dashboard,
    error::ApiError, event_io::EventIo, events::EventService, media::BodyLimits, node::NodeApi,
    rates::BlockRates, rejects::RejectTally, request_metrics::ApiMetrics, submit::SubmitService,
};

/// What every handler can reach: one `Arc`, so the per-request clones axum makes cost one
/// atomic increment. Fields are read through `Deref` (`state.node`, `state.submit`, …).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The contents of an [`AppState`].
#[derive(Clone)]
pub struct Shared {
    /// The node behind the API.
    pub node: Arc<dyn NodeApi>,
    /// Route lists and token keys.
    pub access: Arc<AccessControl>,
    /// Largest body, time for a body, and the budget of body bytes buffered at once.
    pub body: BodyLimits,
    /// v3 protocol parameters for `POST /api/core/v3/blocks`.
    pub v3_params: Option<Arc<nova::ProtocolParameters>>,
    /// The submit service (nonce search, durability wait) behind both submit routes.
    pub submit: Arc<SubmitService>,
    /// Block rates for `info.metrics` (all 0 unless [`AppState::with_rates`] attached a
    /// sampler).
    pub rates: Arc<BlockRates>,
    /// Refused submissions, summarised in the log.
    pub rejects: Arc<RejectTally>,
    /// Requests counted for the Prometheus endpoint.
    pub api_metrics: Arc<ApiMetrics>,
    /// Block submissions in flight at once.
    pub admission: Admission,
    /// The dashboard's settings; `None` when it is off (`--no-dashboard`): its routes are then
    /// left out of the router.
    pub dashboard: Option<Dashboard>,
    /// The event API (`/api/mqtt/v1`), when on, and the threads its connections run on.
    pub events: Option<(Arc<dyn EventService>, Arc<EventIo>)>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("access", &self.access)
            .field("body", &self.body)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl FromRef<AppState> for BodyLimits {
    fn from_ref(state: &AppState) -> Self {
        state.body.clone()
    }
}

impl FromRef<AppState> for Admission {
    fn from_ref(state: &AppState) -> Self {
        state.admission.clone()
    }
}

impl AppState {
    /// The contents, for the builder methods (copied if a clone is alive).
    fn shared(&mut self) -> &mut Shared {
        Arc::make_mut(&mut self.0)
    }

    /// State with the defaults of [`ApiConfig`].
    pub fn new(node: Arc<dyn NodeApi>, access: AccessControl) -> Self {
        Self::with_config(node, access, &ApiConfig::default())
    }

    /// State with the limits of `config`.
    pub fn with_config(node: Arc<dyn NodeApi>, access: AccessControl, config: &ApiConfig) -> Self {
        Self(Arc::new(Shared {
            node,
            access: Arc::new(access),
            body: BodyLimits::new(
                config.body_limit,
                config.body_timeout,
                config.max_buffered_body,
            ),
            v3_params: None,
            submit: Arc::new(SubmitService::new(config.pow)),
            rates: Arc::default(),
            rejects: Arc::default(),
            api_metrics: Arc::default(),
            admission: Admission::new(config.max_pending_submits),
            dashboard: config.dashboard.then(Dashboard::default),
            events: None,
        }))
    }

    /// The same state with the block rates `info.metrics` reports.
    pub fn with_rates(mut self, rates: Arc<BlockRates>) -> Self {
        self.shared().rates = rates;
        self
    }

    /// The same state with the data directory whose size the dashboard reports (no effect
    /// when the dashboard is off).
    pub fn with_data_dir(mut self, dir: std::path::PathBuf) -> Self {
        if let Some(dashboard) = &mut self.shared().dashboard {
            dashboard.data_dir = Some(dir);
        }
        self
    }

    /// The same state with the event API served at `/api/mqtt/v1`, its connections run on
    /// `io`.
    pub fn with_events(mut self, events: Arc<dyn EventService>, io: Arc<EventIo>) -> Self {
        self.shared().events = Some((events, io));
        self
    }

    /// The same state with v3 protocol parameters.
    pub fn with_v3_params(mut self, params: nova::ProtocolParameters) -> Self {
        self.shared().v3_params = Some(Arc::new(params));
        self
    }

    /// The same state with another body limit.
    pub fn with_body_limit(mut self, limit: usize) -> Self {
        let body = &mut self.shared().body;
        *body = BodyLimits::new(limit, body.timeout, body.max_buffered());
        self
    }

    /// The node's engine, or 503 when the node has none.
    ///
    /// # Errors
    /// [`ApiError::ServiceUnavailable`] without an engine.
    pub fn engine(&self) -> Result<&Arc<Engine>, ApiError> {
        self.node
            .engine()
            .ok_or_else(|| ApiError::unavailable("the ledger is not available on this node"))
    }

    /// The v3 protocol parameters, or 503 when none are configured.
    ///
    /// # Errors
    /// [`ApiError::ServiceUnavailable`] without parameters.
    pub fn v3_params(&self) -> Result<&Arc<nova::ProtocolParameters>, ApiError> {
        self.v3_params
            .as_ref()
            .ok_or_else(|| ApiError::unavailable("v3 blocks are not enabled on this node"))
    }
}
