//! The black-box suites of `ledger-node`: each module runs the real binary (over HTTP, libp2p
//! and its command line) for one concern. One test binary for all of them, so the suite links
//! once; `cargo test -p ledger-server --test it <module>::` runs one concern.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions build fixtures; a broken fixture should panic the test"
)]

mod common;
mod mqtt_support;
mod p2p_support;
mod v2_support;

mod cli;
mod coordinator;
mod coordinator_flood;
mod dashboard;
mod disk_full;
mod http_api;
mod http_limits;
mod indexer;
mod layering;
mod logs;
mod long_run;
mod metrics;
mod mqtt;
mod mqtt_tips_receipts;
mod peering;
mod pruning;
mod pruning_disk;
mod restart_answers;
mod snapshot_create;
mod snapshot_join;
mod snapshot_start;
mod store_integrity;
mod tools_codec;
mod tools_snapshot;
mod v2_durability;
mod v2_flow;
mod v2_pow;
mod v2_reads;
mod v2_submit;
mod v3_blocks;
