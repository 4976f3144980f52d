//! v2 blocks for tests: tagged data and signed transactions, built with the codec (nonce 0,
//! for networks with `minPowScore` 0 such as the dev genesis).

use std::borrow::Cow;

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{
    inputs_commitment, Block, Ed25519Signature, Essence, Output, OutputId, Payload, TaggedData,
    Transaction, Unlock, UtxoInput,
};
use ledger_codec::types::{Bytes, Hash32};
use ledger_codec::Codec;

/// A block on `parents` carrying tagged data with `tag` and no data.
pub fn tagged_block(parents: Vec<[u8; 32]>, tag: &[u8]) -> Vec<u8> {
    block(
        parents,
        Payload::TaggedData(TaggedData {
            tag: Bytes::from(tag.to_vec()),
            data: Bytes::default(),
        }),
    )
}

/// A transaction on network `network_id` spending `inputs` (output id, output) into
/// `outputs`, unlocked by one signature of `key` and references to it.
pub fn transaction(
    network_id: u64,
    key: &SigningKey,
    inputs: &[([u8; 34], Output<'static>)],
    outputs: Vec<Output<'static>>,
) -> Transaction<'static> {
    let utxos: Vec<UtxoInput> = inputs
        .iter()
        .map(|(id, _)| {
            let id = OutputId::from_array(id);
            UtxoInput::new(id.transaction_id, id.index)
        })
        .collect();
    let essence = Essence {
        network_id,
        inputs: Cow::Owned(utxos),
        inputs_commitment: Hash32::from(
            inputs_commitment(inputs.iter().map(|(_, o)| o)).expect("test outputs encode"),
        ),
        outputs,
        payload: None,
    };
    let sig = key.sign(&essence.signing_hash().expect("a test essence encodes"));
    let mut unlocks = vec![Unlock::Signature(Cow::Owned(Ed25519Signature::new(
        key.public_key(),
        sig,
    )))];
    for _ in 1..inputs.len() {
        unlocks.push(Unlock::Reference(0));
    }
    Transaction { essence, unlocks }
}

/// A block on `parents` carrying `tx`.
pub fn transaction_block(parents: Vec<[u8; 32]>, tx: Transaction<'static>) -> Vec<u8> {
    block(parents, Payload::Transaction(tx))
}

/// The id of output `index` of transaction `tx`.
pub fn output_id(tx: [u8; 32], index: u16) -> [u8; 34] {
    OutputId {
        transaction_id: tx,
        index,
    }
    .to_array()
}

fn block(parents: Vec<[u8; 32]>, payload: Payload<'static>) -> Vec<u8> {
    Block {
        protocol_version: 2,
        parents: parents.into(),
        payload: Some(payload),
        nonce: 0,
    }
    .to_bytes()
    .expect("a test block encodes")
}
