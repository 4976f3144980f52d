//! Ed25519 verification with ZIP-215 semantics, single and batched.
