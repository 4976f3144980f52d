//! Shared helpers for the data-driven tests: where the vectors live and how to load them.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository's vendored test vectors (`vectors/`).
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(ledger_codec::VECTORS_DIR)
}

/// Loads `vectors/<generation>/<file>` as JSON.
pub fn load(generation: &str, file: &str) -> serde_json::Value {
    let path = vectors_dir().join(generation).join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read vector file {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON in {}: {e}", path.display()))
}

/// Hex (`0x…`) to bytes; panics with the vector's name on bad hex.
pub fn hex_bytes(name: &str, s: &str) -> Vec<u8> {
    let s = s.strip_prefix("0x").unwrap_or(s);
    hex::decode(s).unwrap_or_else(|e| panic!("vector {name:?}: bad hex: {e}"))
}

/// The entries of a vector file: either a top-level list or `{"vectors": [...]}`.
pub fn entries(v: &serde_json::Value) -> Vec<serde_json::Value> {
    match v {
        serde_json::Value::Array(a) => a.clone(),
        serde_json::Value::Object(o) => o
            .get("vectors")
            .and_then(|v| v.as_array())
            .cloned()
            .expect("vector file without a list"),
        _ => panic!("vector file is neither a list nor an object"),
    }
}
