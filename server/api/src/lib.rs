//! The REST API of ledger-node: a thin axum layer over the engine and peering.
//!
//! [`router::app`] builds the whole API from an [`state::AppState`], which holds the node as
//! `Arc<dyn` [`node::NodeApi`]`>`; [`serve()`] runs it on a listener with the connection
//! limits. Handlers (`routes`) decode media types ([`media`]), call the engine or the
//! [`submit::SubmitService`], and answer errors with [`error::ApiError`].
//!
//! Modules, from the bottom up: the rules each piece needs ([`error`], [`media`],
//! [`access`], [`jwt`], [`admission`], [`rates`], [`rejects`], [`request_metrics`],
//! [`submit`], [`node`], [`events`], [`event_io`], [`config`], [`process`], [`dashboard`]), then the state
//! that holds them ([`state`]), then the handlers ([`routes`]), then the router over them
//! ([`router`]) and the accept loop ([`serve()`]); [`publisher`] feeds the event API from the
//! engine, using the REST shapes of [`routes`].

#![deny(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod access;
pub mod admission;
pub mod around;
pub mod config;
mod conn_clock;
mod conn_stream;
pub mod dashboard;
pub mod error;
pub mod event_io;
pub mod events;
pub mod jwt;
pub mod media;
pub mod node;
pub mod process;
pub mod publisher;
pub mod rates;
pub mod rejects;
pub mod request_metrics;
pub mod router;
pub mod routes;
pub mod serve;
pub mod state;
pub mod submit;
mod unread_body;

pub use serve::serve;
