//! `POST /api/core/v2/blocks` until the engine can take blocks: checks the body like the real
//! endpoint (413, 415) and answers 503.

use crate::{error::ApiError, media::RawBody};

/// `POST /api/core/v2/blocks`: 413 / 415 as the real endpoint, otherwise 503.
pub async fn submit(body: RawBody) -> ApiError {
    tracing::debug!(
        media = body.media.name(),
        len = body.bytes.len(),
        "block submitted"
    );
    ApiError::unavailable("block submission is not implemented yet")
}
