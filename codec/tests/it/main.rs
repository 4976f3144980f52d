//! The integration tests of ledger-codec, in one test binary (one link instead of one per file):
//! each former `tests/<name>.rs` is the module `<name>` here, so a test's full name is
//! `<name>::<test>` (e.g. `cargo test -p ledger-codec --test it ed25519_vectors::`).

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions build fixtures (clippy.toml allows unwrap inside tests): a panic is the failure report"
)]
#![forbid(unsafe_code)]

mod ed25519_vectors;
mod encode_limits;
mod gossip_frames;
mod nova_negative;
mod nova_props;
mod nova_rules;
mod nova_vectors;
mod pow_vectors;
mod stardust_props;
mod stardust_vectors;
mod vendored_vectors;
