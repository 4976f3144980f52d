//! What the tests and benchmarks of every ledger-node crate share: where the repository's own
//! copy of the public test vectors lives, how to load them, and the expectation tables read
//! against them (one copy each, so two crates' tests cannot drift apart).
//!
//! Besides paths, JSON and bytes it holds the test keys ([`keys`]: the dev genesis key from
//! the public test mnemonic), built on the codec's signing key; the MQTT packets a test client
//! sends ([`mqtt`], written apart from the node's broker); and runs of the workspace's
//! binaries ([`process`]).

#![forbid(unsafe_code)]
#![deny(missing_docs, unreachable_pub)]

use std::path::PathBuf;

use serde_json::Value;

pub mod blocks;
pub mod keys;
pub mod ledger;
pub mod mqtt;
pub mod nova_negative;
pub mod process;

/// The repository's vendored test vectors (`vectors/` at the repository root), byte-identical to
/// the public set.
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors"))
}

/// Loads `vectors/<generation>/<file>` as JSON; panics naming the file on any problem.
pub fn load(generation: &str, file: &str) -> Value {
    let path = vectors_dir().join(generation).join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read vector file {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON in {}: {e}", path.display()))
}

/// The entries of a vector file: either a top-level list or `{"vectors": [...]}`.
pub fn entries(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("vectors")
            .and_then(|v| v.as_array())
            .cloned()
            .expect("vector file without a list"),
        _ => panic!("vector file is neither a list nor an object"),
    }
}

/// The entries of `vectors/<generation>/<file>`.
pub fn load_entries(generation: &str, file: &str) -> Vec<Value> {
    entries(&load(generation, file))
}

/// The v3 protocol parameters of the first entry of `vectors/nova/protocol_parameters.json`,
/// the set the v3 vectors are built with.
pub fn nova_protocol_parameters() -> ledger_codec::nova::ProtocolParameters {
    let params = &load_entries("nova", "protocol_parameters.json")[0]["json"];
    ledger_codec::nova::ProtocolParameters::from_json(&params.to_string())
        .expect("vectors/nova/protocol_parameters.json parses")
}

/// Hex (`0x…` or bare) to bytes; panics with the vector's name on bad hex.
pub fn hex_bytes(name: &str, s: &str) -> Vec<u8> {
    let s = ledger_codec::hexstr::strip_0x(s).unwrap_or(s);
    hex::decode(s).unwrap_or_else(|e| panic!("vector {name:?}: bad hex: {e}"))
}
