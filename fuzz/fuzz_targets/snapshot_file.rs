//! TIP-35 snapshot files (first byte: a full file alone, or a full file and a delta): whatever
//! the strict readers read whole re-encodes to its bytes, and whatever loads is consistent.
#![no_main]
#![forbid(unsafe_code)]
use ledger_engine::snapshot::fuzzing::fuzz_snapshot_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_snapshot_file(data));
