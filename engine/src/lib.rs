//! The node's state: block log, tangle, ledger, rich list, coordinator.
pub mod log;
