//! The REST layer of ledger-node: a thin axum app over the engine.
