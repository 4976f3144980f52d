//! The topic names of the event API (docs/events.md §1.1, inx-mqtt `topics.go`): which topics
//! a block and an output are published on. IDs are lowercase `0x` hex, addresses bech32 with
//! the node's HRP (§1.3).

use ledger_codec::{
    hash::blake2b256,
    stardust::{Block, Output, Payload, UnlockCondition},
};

use crate::routes::ids::to_hex;

/// `milestone-info/latest`.
pub const MILESTONE_LATEST: &str = "milestone-info/latest";
/// `milestone-info/confirmed`.
pub const MILESTONE_CONFIRMED: &str = "milestone-info/confirmed";
/// `milestones`.
pub const MILESTONES: &str = "milestones";
/// `blocks`.
pub const BLOCKS: &str = "blocks";
/// `block-metadata/referenced`.
pub const REFERENCED: &str = "block-metadata/referenced";
/// `tip-score-updates`: block metadata of blocks entering or leaving the tip pool (inx-mqtt
/// only, docs/events.md §1.1).
pub const TIP_SCORE_UPDATES: &str = "tip-score-updates";
/// `receipts`: a confirmed milestone's receipt option, binary.
pub const RECEIPTS: &str = "receipts";

/// The first level of `block-metadata/{blockId}` and `block-metadata/referenced`.
pub const BLOCK_METADATA: &str = "block-metadata";

/// `block-metadata/{blockId}`.
pub fn block_metadata(id: &[u8; 32]) -> String {
    format!("{BLOCK_METADATA}/{}", to_hex(id))
}

/// `transactions/{transactionId}/included-block`.
pub fn included_block(tx: &[u8]) -> String {
    format!("transactions/{}/included-block", to_hex(tx))
}

/// `outputs/{outputId}`.
pub fn output(id: &[u8; 34]) -> String {
    format!("outputs/{}", to_hex(id))
}

/// The block topics below `blocks` for `block` (`blocks` itself always applies):
/// `blocks/transaction[/tagged-data[/{tag}]]` and `blocks/tagged-data[/{tag}]`, a tag topic
/// only for a non-empty tag.
pub fn block_subtopics(block: &Block<'_>) -> Vec<String> {
    let (base, tagged) = match &block.payload {
        Some(Payload::TaggedData(t)) => ("blocks/tagged-data", Some(t)),
        Some(Payload::Transaction(tx)) => match &tx.essence.payload {
            Some(t) => ("blocks/transaction/tagged-data", Some(t)),
            None => return vec!["blocks/transaction".to_owned()],
        },
        _ => return Vec::new(),
    };
    let mut topics = Vec::with_capacity(3);
    if base.starts_with("blocks/transaction") {
        topics.push("blocks/transaction".to_owned());
    }
    topics.push(base.to_owned());
    if let Some(t) = tagged.filter(|t| !t.tag.as_slice().is_empty()) {
        topics.push(format!("{base}/{}", to_hex(t.tag.as_slice())));
    }
    topics
}

/// The unlock-condition topics of `output`: `outputs/unlock/{condition}/{bech32}` for each
/// condition naming an address, then `outputs/unlock/+/{bech32}` once per distinct address
/// (docs/events.md §1.3; Timelock and Sender are not used). `spent` appends `/spent`.
pub fn unlock_topics(output: &Output<'_>, hrp: &str, spent: bool) -> Vec<String> {
    let suffix = if spent { "/spent" } else { "" };
    let mut topics = Vec::new();
    let mut addresses: Vec<String> = Vec::new();
    for uc in output.unlock_conditions() {
        let (name, address) = match uc {
            UnlockCondition::Address(a) => ("address", a),
            UnlockCondition::StorageDepositReturn { return_address, .. } => {
                ("storage-return", return_address)
            }
            UnlockCondition::Expiration { return_address, .. } => ("expiration", return_address),
            UnlockCondition::StateControllerAddress(a) => ("state-controller", a),
            UnlockCondition::GovernorAddress(a) => ("governor", a),
            UnlockCondition::ImmutableAliasAddress(a) => ("immutable-alias", a),
            UnlockCondition::Timelock(_) => continue,
        };
        let Ok(bech32) = address.to_bech32(hrp) else {
            continue;
        };
        topics.push(format!("outputs/unlock/{name}/{bech32}{suffix}"));
        if !addresses.contains(&bech32) {
            addresses.push(bech32);
        }
    }
    for a in addresses {
        topics.push(format!("outputs/unlock/+/{a}{suffix}"));
    }
    topics
}

/// The chain topic of a newly created alias, NFT or foundry output: `outputs/alias/{id}`,
/// `outputs/nft/{id}` or `outputs/foundry/{id}`, a zero alias or NFT id replaced by the one
/// derived from the output id (TIP-18/19).
pub fn chain_topic(output: &Output<'_>, output_id: &[u8; 34]) -> Option<String> {
    let implicit = |id: &[u8; 32]| {
        if id.iter().all(|b| *b == 0) {
            blake2b256(output_id)
        } else {
            *id
        }
    };
    match output {
        Output::Alias(a) => Some(format!(
            "outputs/alias/{}",
            to_hex(&implicit(a.alias_id.as_array()))
        )),
        Output::Nft(n) => Some(format!(
            "outputs/nft/{}",
            to_hex(&implicit(n.nft_id.as_array()))
        )),
        Output::Foundry(_) => output
            .foundry_id()
            .map(|id| format!("outputs/foundry/{}", to_hex(&id))),
        _ => None,
    }
}
