//! v3 (IOTA 2.0 "Nova") wire format: TIP-45/46 (see `docs/nova-format.md`).
//!
//! Decoding borrows: ids, parents, inputs and allotments are zerocopy views
//! into the input. JSON follows TIP-48 strictly (u64 as strings, `0x` hex,
//! exact lengths, no unknown fields); a [`Block`] read from JSON is checked
//! by the same rules as one read from bytes.

pub mod address;
pub mod block;
pub mod commitment;
pub mod fuzzing;
pub mod json;
pub mod output;
pub mod params;
pub mod proof;
pub mod transaction;

pub use address::Address;
pub use block::{
    check_block_syntax, BasicBody, Block, Body, Header, Payload, TaggedData, ValidationBody,
};
pub use commitment::Commitment;
pub use output::{Feature, Output, UnlockCondition};
pub use params::{network_id, ProtocolParameters};
pub use transaction::{
    chain_id, merkle_root, ContextInput, SignedTransaction, Transaction, Unlock, UtxoInput,
};
