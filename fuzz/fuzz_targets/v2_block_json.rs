//! v2 block JSON: accepted JSON encodes to bytes that decode to the same block.
#![no_main]
#![forbid(unsafe_code)]
use ledger_codec::fuzzing::fuzz_v2_block_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_v2_block_json(data));
