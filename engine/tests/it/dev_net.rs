//! The network the engine's end-to-end modules run on: the dev genesis with its whole supply
//! owned by a known key, and engines opened on it.

use ledger_codec::ed25519::SigningKey;
use ledger_codec::stardust::{Address, Output};
use ledger_codec::types::Hash32;
use ledger_engine::{Durability, EngineConfig, Genesis};

/// The dev genesis' supply, all in one output owned by [`key`].
pub(crate) const SUPPLY: u64 = 1_813_620_509_061_365;

/// The key that owns the genesis output.
pub(crate) fn key() -> SigningKey {
    SigningKey::from_seed(&[7; 32])
}

/// The dev genesis with its output moved to [`key`]'s address.
pub(crate) fn genesis() -> Genesis {
    let text = ledger_engine::DEV_GENESIS_JSON.replace(
        "0xd18f653d669d2267974caac6ff6254effd5e6c0eeebe3e25944193fbfcafb9c0",
        &format!("0x{}", hex::encode(key().address())),
    );
    Genesis::from_json(&text).unwrap()
}

/// A dev engine's configuration in `dir` on [`genesis`], its log synced every `sync_ms`, a
/// ledger checkpoint written at every checkpoint (so that every restart in these tests opens
/// the ledger from one; a restart without one is what the previous format's tests see).
pub(crate) fn config(dir: &std::path::Path, sync_ms: u32) -> EngineConfig {
    let mut c = EngineConfig::dev(dir);
    c.genesis = genesis();
    c.durability = Durability::Deferred {
        interval_ms: sync_ms,
    };
    c.ledger_checkpoint_bytes = 0;
    c
}

/// A basic output of `amount` to the Ed25519 address `to`.
pub(crate) fn basic(amount: u64, to: [u8; 32]) -> Output<'static> {
    Output::basic(amount, Address::Ed25519(Hash32::from(to)))
}

/// Funds moving along a chain of keys, one transaction per step: the genesis output first,
/// then at each step an output to the current holder and the rest to the next key.
pub(crate) struct KeyChain {
    holder: SigningKey,
    input: ([u8; 34], Output<'static>),
}

/// What one [`KeyChain::step`] submitted.
pub(crate) struct Step {
    /// The tagged-data block submitted first.
    pub(crate) tagged_block: [u8; 32],
    /// The transaction's block.
    pub(crate) tx_block: [u8; 32],
    /// The transaction: output 0 to the holder, output 1 (the rest) to the next key.
    pub(crate) tx_id: [u8; 32],
}

impl KeyChain {
    /// The chain at the genesis output, held by [`key`].
    pub(crate) fn new() -> Self {
        Self {
            holder: key(),
            input: ([0u8; 34], basic(SUPPLY, key().address())),
        }
    }

    /// Step `i` (from 1; the next key's seed): submits a tagged-data block tagged `m{i}`, then a
    /// transaction that sends `to_holder` to the holder and the rest to key `i`, which
    /// becomes the holder.
    pub(crate) fn step(&mut self, engine: &ledger_engine::Engine, i: u32, to_holder: u64) -> Step {
        use ledger_codec::stardust::{Block, Payload};
        use ledger_codec::Codec;
        use ledger_test_support::blocks;

        let data = blocks::tagged_block(engine.select_parents(), format!("m{i}").as_bytes());
        let tagged_block = engine.submit_v2(&data).unwrap().block_id;
        let next = SigningKey::from_seed(&[u8::try_from(i).unwrap(); 32]);
        let amount = self.input.1.amount();
        let outputs: Vec<Output<'static>> = vec![
            basic(to_holder, self.holder.address()),
            basic(amount - to_holder, next.address()),
        ];
        let input = self.input.clone();
        let tx = blocks::transaction(
            engine.params().network_id(),
            &self.holder,
            &[input],
            outputs.clone(),
        );
        let block = blocks::transaction_block(engine.select_parents(), tx);
        let tx_id = match Block::decode(&block).unwrap().payload {
            Some(Payload::Transaction(t)) => t.id().unwrap(),
            _ => unreachable!(),
        };
        let tx_block = engine.submit_v2(&block).unwrap().block_id;
        self.input = (blocks::output_id(tx_id, 1), outputs[1].clone());
        self.holder = next;
        Step {
            tagged_block,
            tx_block,
            tx_id,
        }
    }
}
