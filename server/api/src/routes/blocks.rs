//! v2 blocks: `POST /api/core/v2/blocks` (JSON or binary, parents and nonce filled in by the
//! node), `GET /api/core/v2/blocks/{blockId}` and `GET /api/core/v2/blocks/{blockId}/metadata`.
//!
//! Submit validation runs in Hornet's order (`docs/decisions.md`): protocol version → rules for a
//! block without parents → network id → PoW score (the node mines when the nonce is 0) →
//! syntax → parents known, solid and not below max depth (in the engine). Every rule broken
//! is a 400 `invalid block: …`; parents or PoW that cannot be filled in are a 503.

use axum::{
    extract::{Path, State},
    http::{header, HeaderValue, StatusCode},
    response::Response,
};
use serde::Serialize;
use serde_json::Value;

use ledger_codec::{
    stardust::{Block, Payload},
    Codec,
};
use ledger_engine::{BlockStatus, Engine, Inclusion, V2Draft, V2Fields};

use crate::{
    admission::SubmitSlot,
    error::ApiError,
    media::{binary, Accept, Encoding, RawBody},
    routes::ids::{json_response, parse_hex_id, to_hex, v2_binary},
    state::AppState,
};

/// Body of a successful submit.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmitResponse {
    /// The id of the stored block.
    pub block_id: String,
}

fn invalid(message: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("invalid block: {message}"))
}

/// `POST /api/core/v2/blocks`: 201 with `Location: 0x<id>` and `{"blockId":"0x…"}`.
pub async fn submit(
    State(state): State<AppState>,
    _slot: SubmitSlot,
    body: RawBody,
) -> Result<Response, ApiError> {
    let answer = store(&state, body).await;
    if let Err(e) = &answer {
        state.rejects.record(e);
    }
    answer
}

/// The work of [`submit`]: read the body by media type, hand the block to the submit
/// service, answer with its id.
async fn store(state: &AppState, body: RawBody) -> Result<Response, ApiError> {
    let engine = state.engine()?;
    let draft = match body.media.encoding() {
        Encoding::Json => json_draft(&body.bytes)?,
        Encoding::V2Binary => V2Draft::Bytes(body.bytes.to_vec()),
        Encoding::V3Binary => {
            return Err(ApiError::UnsupportedMediaType(format!(
                "{} (v2 blocks are application/vnd.ledger.serializer-v1 or JSON)",
                body.media.name()
            )))
        }
    };
    let block_id = state.submit.submit_v2(engine, draft).await?;
    let id = to_hex(&block_id);
    let location = HeaderValue::from_str(&id).map_err(ApiError::internal)?;
    let mut response = json_response(&SubmitResponse { block_id: id })?;
    *response.status_mut() = StatusCode::CREATED;
    response.headers_mut().insert(header::LOCATION, location);
    Ok(response)
}

/// A submitted JSON block: the block's fields, with parents and nonce optional and the
/// version read loosely so that each rule can answer with its own message.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SubmitJson {
    #[serde(default)]
    protocol_version: Option<Value>,
    #[serde(default)]
    parents: Option<Value>,
    #[serde(default)]
    payload: Option<Payload<'static>>,
    #[serde(default)]
    nonce: Option<Value>,
}

/// Parents given as JSON: hex block ids (the codec's own JSON rules).
#[derive(serde::Deserialize)]
#[serde(transparent)]
struct JsonParents(
    #[serde(with = "ledger_codec::types::fixed_list")] ledger_codec::types::FixedList<'static, 32>,
);

/// The fields of a JSON block (serde shape errors are 400s). The payload is read straight
/// from the body into the codec's model, without an intermediate JSON tree; the rules on the
/// fields are the engine's ([`Engine::prepare_v2`]).
fn json_draft(body: &[u8]) -> Result<V2Draft, ApiError> {
    let json_error = |e: serde_json::Error| invalid(format!("invalid JSON: {e}"));
    // serde would read a struct from an array too.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Err(invalid("invalid JSON: the body must be a JSON object"));
    }
    let submit: SubmitJson = serde_json::from_slice(body).map_err(json_error)?;
    let protocol_version = match &submit.protocol_version {
        None => return Err(invalid("protocolVersion is missing")),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| invalid(format!("protocolVersion invalid: {v}")))?,
    };
    // A missing or empty nonce is 0 (Hornet).
    let nonce = match submit.nonce {
        None | Some(Value::Null) => 0,
        Some(Value::String(s)) if s.is_empty() => 0,
        Some(v) => ledger_codec::types::u64_str::deserialize(v).map_err(json_error)?,
    };
    let parents = match submit.parents {
        None | Some(Value::Null) => None,
        Some(given) => Some(
            serde_json::from_value::<JsonParents>(given)
                .map_err(json_error)?
                .0,
        ),
    };
    Ok(V2Draft::Fields(Box::new(V2Fields {
        protocol_version,
        parents,
        payload: submit.payload,
        nonce,
    })))
}

/// The block `id`'s bytes, or 404.
pub(crate) fn block_bytes(engine: &Engine, id: &[u8; 32]) -> Result<Vec<u8>, ApiError> {
    engine
        .block_bytes(id)
        .map(|b| b.to_vec())
        .ok_or_else(|| ApiError::not_found(format!("block not found: {}", to_hex(id))))
}

/// A block as JSON or binary, by `Accept`.
pub(crate) fn block_response(bytes: Vec<u8>, accept: Accept) -> Result<Response, ApiError> {
    if let Some(media) = v2_binary(accept.0) {
        return Ok(binary(media, bytes));
    }
    let block = Block::decode(&bytes).map_err(ApiError::internal)?;
    json_response(&block)
}

/// `GET /api/core/v2/blocks/{blockId}`: the block as JSON, or its bytes when `Accept` asks
/// for v2 binary.
pub async fn get(
    State(state): State<AppState>,
    Path(block_id): Path<String>,
    accept: Accept,
) -> Result<Response, ApiError> {
    let id = parse_hex_id::<32>("blockId", &block_id)?;
    let engine = state.engine()?;
    block_response(block_bytes(engine, &id)?, accept)
}

/// Block metadata in Hornet's shape (fields omitted as Hornet omits them).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockMetadata {
    /// The block id.
    pub block_id: String,
    /// Its parents, in wire order.
    pub parents: Vec<String>,
    /// Whether its past cone is complete.
    pub is_solid: bool,
    /// The milestone that referenced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referenced_by_milestone_index: Option<u32>,
    /// The milestone index it carries, for milestone blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub milestone_index: Option<u32>,
    /// `noTransaction`, `included` or `conflicting`, once referenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_inclusion_state: Option<&'static str>,
    /// TIP-2 conflict reason, when conflicting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_reason: Option<u8>,
    /// Position in its milestone's white-flag order, once referenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub white_flag_index: Option<u32>,
    /// For a solid unreferenced block: whether a new block should reference it (lazy tip).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub should_promote: Option<bool>,
    /// For a solid unreferenced block: whether it is below max depth and must be re-sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub should_reattach: Option<bool>,
}

impl BlockMetadata {
    /// Builds the metadata of block `id` from what the engine reports.
    pub fn new(id: &[u8; 32], meta: &BlockStatus) -> Self {
        let mut m = Self {
            block_id: to_hex(id),
            parents: meta.parents.iter().map(|p| to_hex(p)).collect(),
            is_solid: meta.view.solid,
            referenced_by_milestone_index: None,
            milestone_index: meta.view.milestone_index,
            ledger_inclusion_state: None,
            conflict_reason: None,
            white_flag_index: None,
            should_promote: None,
            should_reattach: None,
        };
        match (meta.view.referenced_by, meta.view.inclusion) {
            (Some(index), inclusion) => {
                m.referenced_by_milestone_index = Some(index);
                m.white_flag_index = meta.view.white_flag_index;
                let (state, reason) = match inclusion {
                    Inclusion::Included => ("included", None),
                    Inclusion::Conflicting(code) => ("conflicting", Some(code)),
                    Inclusion::NoTransaction | Inclusion::Pending => ("noTransaction", None),
                };
                m.ledger_inclusion_state = Some(state);
                m.conflict_reason = reason.filter(|&c| c != 0);
            }
            (None, _) => {
                if let Some(score) = meta.tip_score {
                    let (promote, reattach) = score.promote_reattach();
                    m.should_promote = Some(promote);
                    m.should_reattach = Some(reattach);
                }
            }
        }
        m
    }
}

/// The metadata of block `id`, or 404.
pub(crate) fn metadata_of(engine: &Engine, id: &[u8; 32]) -> Result<BlockMetadata, ApiError> {
    let status = engine
        .block_status(id)
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::not_found(format!("block not found: {}", to_hex(id))))?;
    Ok(BlockMetadata::new(id, &status))
}

/// `GET /api/core/v2/blocks/{blockId}/metadata`.
pub async fn metadata(
    State(state): State<AppState>,
    Path(block_id): Path<String>,
) -> Result<Response, ApiError> {
    let id = parse_hex_id::<32>("blockId", &block_id)?;
    json_response(&metadata_of(state.engine()?, &id)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_engine::{BlockView, TipScoring};

    /// A solid block's status; its tip score at `cmi` from OCRI/YCRI when unreferenced.
    fn status(
        referenced_by: Option<u32>,
        inclusion: Inclusion,
        (ocri, ycri, cmi): (u32, u32, u32),
    ) -> BlockStatus {
        BlockStatus {
            parents: vec![[1; 32], [2; 32]],
            view: BlockView {
                solid: true,
                referenced_by,
                white_flag_index: referenced_by.map(|_| 3),
                inclusion,
                milestone_index: None,
            },
            tip_score: referenced_by
                .is_none()
                .then(|| TipScoring::default().score(ocri, ycri, cmi)),
        }
    }

    fn json(s: &BlockStatus) -> Value {
        serde_json::to_value(BlockMetadata::new(&[9; 32], s)).expect("JSON")
    }

    #[test]
    fn referenced_blocks_have_inclusion_state_and_no_tip_advice() {
        let cases = [
            (Inclusion::NoTransaction, "noTransaction", None),
            (Inclusion::Included, "included", None),
            (Inclusion::Conflicting(1), "conflicting", Some(1)),
        ];
        for (inclusion, state, reason) in cases {
            let j = json(&status(Some(7), inclusion, (0, 0, 7)));
            assert_eq!(j["referencedByMilestoneIndex"], 7, "{j}");
            assert_eq!(j["ledgerInclusionState"], state, "{j}");
            assert_eq!(j["whiteFlagIndex"], 3, "{j}");
            assert_eq!(j.get("conflictReason").and_then(Value::as_u64), reason);
            assert!(j.get("shouldPromote").is_none(), "{j}");
            assert!(j.get("shouldReattach").is_none(), "{j}");
            assert!(j.get("milestoneIndex").is_none(), "{j}");
        }
    }

    #[test]
    fn unreferenced_solid_blocks_get_hornet_tip_advice() {
        // (cmi, ocri, ycri) → (shouldPromote, shouldReattach)
        let cases = [
            ((20, 20, 20), (false, false)),
            ((20, 7, 20), (false, false)),  // OCRI delta 13: non-lazy
            ((20, 6, 20), (true, false)),   // OCRI delta 14: semi-lazy
            ((20, 5, 20), (true, false)),   // delta 15: still attachable
            ((20, 4, 20), (false, true)),   // delta 16: below max depth
            ((20, 20, 11), (true, false)),  // YCRI delta 9 > 8: lazy
            ((20, 20, 12), (false, false)), // YCRI delta 8
        ];
        for ((cmi, ocri, ycri), (promote, reattach)) in cases {
            let j = json(&status(None, Inclusion::Pending, (ocri, ycri, cmi)));
            assert_eq!(j["shouldPromote"], promote, "{cmi} {ocri} {ycri}: {j}");
            assert_eq!(j["shouldReattach"], reattach, "{cmi} {ocri} {ycri}: {j}");
            assert!(j.get("ledgerInclusionState").is_none(), "{j}");
            assert!(j.get("referencedByMilestoneIndex").is_none(), "{j}");
        }
        // Not solid: the engine gives no tip score, so no advice.
        let mut unsolid = status(None, Inclusion::Pending, (0, 0, 20));
        unsolid.view.solid = false;
        unsolid.tip_score = None;
        let j = json(&unsolid);
        assert_eq!(j["isSolid"], false);
        assert!(j.get("shouldPromote").is_none(), "{j}");
        assert_eq!(j["parents"][1], to_hex(&[2; 32]));
    }
}
