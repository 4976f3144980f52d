//! v3 block bytes: decode → encode gives the same bytes (and so does the JSON round trip).
#![no_main]
#![forbid(unsafe_code)]
use ledger_codec::nova::fuzzing::fuzz_v3_block;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_v3_block(data));
