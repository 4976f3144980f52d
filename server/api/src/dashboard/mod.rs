//! The node dashboard: a single page in the browser (`GET /`, `GET /dashboard`) whose files are
//! embedded in the binary ([`assets`]), and the one JSON answer it polls besides the node's
//! own REST routes (`GET /api/dashboard/v1/stats`, [`stats`]). The page itself lives in
//! `server/api/dashboard/` (plain HTML, CSS and JavaScript, no build step; uPlot vendored with
//! its license).

pub mod assets;
pub mod stats;

use std::path::PathBuf;

/// The dashboard's settings, present in the API's state while the dashboard is on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dashboard {
    /// The data directory whose size the stats report; `None` reports no size.
    pub data_dir: Option<PathBuf>,
}
