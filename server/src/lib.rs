//! The REST layer of ledger-node: a thin axum app over the engine.
//!
//! Seams: [`app::app`] builds the router from an [`app::AppState`], which holds the node as
//! `Arc<dyn` [`node::NodeApi`]`>`; handlers answer errors with [`error::ApiError`] and
//! negotiate encodings with [`media`].

#![deny(missing_docs, unreachable_pub)]

pub mod access;
pub mod app;
pub mod cli;
pub mod config;
pub mod conn_clock;
pub mod error;
pub mod intake;
pub mod jwt;
mod locks;
pub mod media;
pub mod metrics;
pub mod node;
pub mod p2p;
pub mod pow_pool;
pub mod prometheus;
pub mod rejects;
pub mod routes;
pub mod run;
pub mod serve;
pub mod tools;
