//! The integration tests of ledger-engine, in one test binary (one link instead of one per file):
//! each former `tests/<name>.rs` is the module `<name>` here, so a test's full name is
//! `<name>::<test>` (e.g. `cargo test -p ledger-engine --test it engine_flow::`).

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions build fixtures (clippy.toml allows unwrap inside tests): a panic is the failure report"
)]
#![forbid(unsafe_code)]

mod dev_net;
mod engine_flow;
mod event_hook;
mod gossip_intake;
mod history_resume;
mod indexer_props;
mod ledger_model;
mod log_crash;
mod log_model;
mod pruning;
mod pruning_disk;
mod semantic_validation;
mod semantic_vectors;
mod signature_cache;
mod snapshot_corrupt;
mod snapshot_create;
mod snapshot_fixtures;
mod snapshot_model;
mod snapshot_writer;
mod tangle_props;
mod timing_hook;
mod whiteflag_vectors;
