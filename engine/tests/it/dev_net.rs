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
