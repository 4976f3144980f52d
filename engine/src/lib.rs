//! The node's state: block log, tangle, ledger, rich list, coordinator.
pub mod log;
pub mod richlist;
pub mod semantic;
pub mod tangle;
pub mod utxo;
