//! Gossip stream bytes, read in chunks (first byte = chunk size): every message re-encodes to its frame bytes.
#![no_main]
#![forbid(unsafe_code)]
use ledger_codec::fuzzing::fuzz_gossip_frames;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_gossip_frames(data));
