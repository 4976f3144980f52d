//! The JSON payloads of the event API as inx-mqtt writes them (docs/events.md §1.2), built
//! from the REST shapes so that each field rule has one copy.

use ledger_codec::{
    stardust::{Block, MilestoneOption, Output, Payload},
    Codec,
};
use ledger_engine::{BlockId, Engine, MilestoneInfo, OutputRead};
use serde_json::{json, Value};

use crate::routes::{
    blocks::BlockMetadata,
    ids::to_hex,
    outputs::{OutputMetadata, OutputResponse},
};

/// `milestone-info/*`: `{"index","timestamp","milestoneId"}` (not the TIP's stale names).
pub(super) fn milestone_info(info: &MilestoneInfo) -> Vec<u8> {
    json!({
        "index": info.index,
        "timestamp": info.timestamp,
        "milestoneId": to_hex(&info.milestone_id),
    })
    .to_string()
    .into_bytes()
}

/// `block-metadata/*`: the REST metadata plus `parentBlockIds` (inx-mqtt's name for
/// `parents`; both are sent, docs/events.md §7). `None` for a block the node does not know.
pub(super) fn block_metadata(engine: &Engine, id: &BlockId) -> Option<Vec<u8>> {
    let status = match engine.block_status(id) {
        Ok(status) => status?,
        Err(e) => {
            tracing::warn!(block = %to_hex(id), "block metadata not published: {e}");
            return None;
        }
    };
    let mut value = serde_json::to_value(BlockMetadata::new(id, &status)).ok()?;
    if let Value::Object(map) = &mut value {
        let parents = map
            .get("parents")
            .cloned()
            .unwrap_or(Value::Array(Vec::new()));
        map.insert("parentBlockIds".to_owned(), parents);
    }
    serde_json::to_vec(&value).ok()
}

/// `receipts`: the receipt option of the milestone in `block` (a block's bytes) as the SDK
/// decodes it (`ReceiptMilestoneOption`): the option without its type byte. `None` when the
/// block carries no milestone with a receipt.
pub(super) fn receipt(block: &[u8]) -> Option<Vec<u8>> {
    let Block {
        payload: Some(Payload::Milestone(milestone)),
        ..
    } = Block::decode(block).ok()?
    else {
        return None;
    };
    let option = MilestoneOption::Receipt(milestone.receipt()?.clone());
    let mut bytes = option.to_bytes().ok()?;
    bytes.remove(0);
    Some(bytes)
}

/// `outputs/*`: `{"metadata","output"}` as REST answers it, for `read` as given (the caller
/// sets the ledger index and spent state the event stands for).
pub(super) fn output(read: &OutputRead) -> Option<Vec<u8>> {
    let output = Output::decode(&read.bytes).ok()?;
    serde_json::to_vec(&OutputResponse {
        metadata: OutputMetadata::new(read),
        output,
    })
    .ok()
}
