//! v3 (IOTA 2.0 "Nova") blocks: `POST /api/core/v3/blocks`, `GET /api/core/v3/blocks/{blockId}`
//! and `GET /api/core/v3/blocks/{blockId}/metadata`.
//!
//! Submit checks what the node can check without a v3 ledger: protocol version, network id
//! against the configured v3 protocol parameters, every syntactic rule, and the issuer's block
//! signature. Any failure is a 400 with the reason (iota-core answers 500 for most). An
//! accepted block is stored durably in the block log and answered with 201, `Location` = the
//! bare 36-byte block id, and `{"blockId":"0x…"}` (or the 36 id bytes when `Accept` asks for
//! v3 binary). A known block is 201 with the same id.
//!
//! The node runs no v3 consensus, so every stored block's metadata is
//! `{"blockId":"0x…","blockState":"pending"}` ("booked by the node but not yet accepted").

use axum::{
    extract::{Path, State},
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::{
    admission::SubmitSlot,
    error::ApiError,
    media::{binary, Accept, Encoding, MediaType, RawBody},
    state::AppState,
};
use ledger_codec::{nova, types, Codec};

/// Body of a successful `POST /api/core/v3/blocks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockCreated {
    /// The 36-byte block id, `0x` hex.
    pub block_id: String,
}

/// Body of `GET /api/core/v3/blocks/{blockId}/metadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockMetadata {
    /// The 36-byte block id, `0x` hex.
    pub block_id: String,
    /// Always [`PENDING`] on this node: it stores v3 blocks but runs no v3 consensus.
    pub block_state: String,
}

/// The block state of every stored v3 block (TIP-48: booked, not yet accepted).
pub const PENDING: &str = "pending";

/// `POST /api/core/v3/blocks`: validates and stores a v3 block given as JSON or v3 binary.
///
/// # Errors
/// 400 for any invalid block or body, 413/415 from the body extractor (a v2 binary type is
/// 415), 503 when the node has no engine or no v3 parameters, 500 only for storage faults.
pub async fn submit(
    State(state): State<AppState>,
    _slot: SubmitSlot,
    Accept(accept): Accept,
    body: RawBody,
) -> Result<Response, ApiError> {
    let answer = store(&state, accept, &body).await;
    if let Err(e) = &answer {
        state.rejects.record(e);
    }
    answer
}

/// The work of [`submit`].
async fn store(state: &AppState, accept: MediaType, body: &RawBody) -> Result<Response, ApiError> {
    let bytes = block_bytes(body)?;
    let submitted = state
        .submit
        .submit_v3(state.engine()?, bytes, state.v3_params()?)
        .await?;
    let id = types::to_hex(&submitted.block_id);
    tracing::debug!(block_id = %id, inserted = submitted.inserted, "v3 block submitted");
    let location = HeaderValue::from_str(&id).map_err(ApiError::internal)?;
    let mut response = if accept.encoding() == Encoding::V3Binary {
        binary(accept, Bytes::copy_from_slice(&submitted.block_id))
    } else {
        Json(BlockCreated { block_id: id }).into_response()
    };
    *response.status_mut() = StatusCode::CREATED;
    response.headers_mut().insert(header::LOCATION, location);
    Ok(response)
}

/// The serialized block of a submit body: v3 binary as is, JSON parsed and encoded.
fn block_bytes(body: &RawBody) -> Result<Vec<u8>, ApiError> {
    match body.media.encoding() {
        // A v2 block type on the v3 route: the client picked the wrong media type.
        Encoding::V2Binary => Err(ApiError::UnsupportedMediaType(body.media.name().to_owned())),
        _ if body.bytes.is_empty() => Err(ApiError::bad_request(
            "invalid block: the request body is empty",
        )),
        Encoding::V3Binary => Ok(body.bytes.to_vec()),
        Encoding::Json => {
            let text = std::str::from_utf8(&body.bytes).map_err(|e| {
                ApiError::bad_request(format!("invalid JSON body: not UTF-8 ({e})"))
            })?;
            // Encoded once; the engine's decode applies the binary rules.
            nova::Block::json_to_bytes(text)
                .map_err(|e| ApiError::bad_request(format!("invalid block: {e}")))
        }
    }
}

/// Parses a 36-byte block id from the path (`0x` + 72 hex digits, either case).
fn parse_block_id(text: &str) -> Result<[u8; 36], ApiError> {
    types::parse_hex_array::<36>(text)
        .map_err(|e| ApiError::bad_request(format!("invalid v3 block id: {e}")))
}

/// The stored bytes of block `id`, or 404.
fn stored(state: &AppState, id: &[u8; 36]) -> Result<Bytes, ApiError> {
    state
        .engine()?
        .block_v3_bytes(id)
        .map(Bytes::from_owner)
        .ok_or_else(|| not_found(id))
}

/// 404 for an unknown block id.
fn not_found(id: &[u8; 36]) -> ApiError {
    ApiError::not_found(format!("v3 block {} not found", types::to_hex(id)))
}

/// `GET /api/core/v3/blocks/{blockId}`: the block as JSON, or its bytes when `Accept` asks
/// for v3 binary.
///
/// # Errors
/// 400 for a malformed id, 404 for an unknown block.
pub async fn get_block(
    State(state): State<AppState>,
    Accept(accept): Accept,
    Path(block_id): Path<String>,
) -> Result<Response, ApiError> {
    let id = parse_block_id(&block_id)?;
    let bytes = stored(&state, &id)?;
    if accept.encoding() == Encoding::V3Binary {
        return Ok(binary(accept, bytes));
    }
    // Stored blocks were validated on submit: failing to decode one is a real fault.
    let block = nova::Block::decode(&bytes).map_err(|e| {
        ApiError::internal(format!(
            "stored v3 block {} does not decode: {e}",
            types::to_hex(&id)
        ))
    })?;
    let json = serde_json::to_value(&block).map_err(ApiError::internal)?;
    Ok(Json(json).into_response())
}

/// `GET /api/core/v3/blocks/{blockId}/metadata`: `{"blockId":…,"blockState":"pending"}`.
///
/// # Errors
/// 400 for a malformed id, 404 for an unknown block.
pub async fn get_metadata(
    State(state): State<AppState>,
    Path(block_id): Path<String>,
) -> Result<Json<BlockMetadata>, ApiError> {
    let id = parse_block_id(&block_id)?;
    if state.engine()?.block_v3_bytes(&id).is_none() {
        return Err(not_found(&id));
    }
    Ok(Json(BlockMetadata {
        block_id: types::to_hex(&id),
        block_state: PENDING.to_owned(),
    }))
}
