//! MQTT client bytes, decoded packet by packet and fed to a connection whole and in chunks
//! (first byte = chunk size): lengths agree with the fixed header, chunking changes nothing.
#![no_main]
#![forbid(unsafe_code)]
use ledger_events::fuzzing::fuzz_mqtt_stream;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_mqtt_stream(data));
