//! The TIP-28 event broker of ledger-node: MQTT 3.1 / 3.1.1 over any byte transport (the API
//! crate carries it on a WebSocket at `/api/mqtt/v1`), as docs/events.md describes.
//!
//! From the bottom up: [`packet`] (the pure codec, fuzzed), [`topic`] (filters and matching),
//! [`metrics`], [`feed`] (the messages of the clients that hold one set of filters, stored
//! once), [`outbox`] (a client's byte-bounded queue of answers), [`delivery`] (what a
//! connection writes), [`broker`] (clients, audiences, the subscription index, fan-out) and
//! [`session`] (one connection's protocol, without I/O).
//! Nothing here knows the engine or HTTP: the API crate feeds events in and bytes through.

#![deny(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod broker;
pub mod delivery;
pub mod feed;
#[doc(hidden)]
pub mod fuzzing;
pub mod metrics;
pub mod outbox;
pub mod packet;
pub mod session;
pub mod topic;

pub use broker::{Broker, BrokerConfig};
