//! `ledger-node`, the composition root: the command line and configuration ([`cli`],
//! [`config`]), starting and stopping the node over the engine, peering (`ledger-p2p`) and the
//! REST API (`ledger-api`) ([`run`]), the offline tools ([`tools`]) and the `/metrics`
//! listener serving what each crate registers ([`telemetry`]).

#![deny(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod cli;
pub mod config;
pub mod run;
pub mod snapshot_tools;
pub mod start;
pub mod telemetry;
pub mod tools;
