//! Byte-exact, zero-copy codec for the ledger's two block generations.
//!
//! - [`stardust`]: v2 blocks (TIP-18..24, 29), their ids, PoW and syntax rules.
//! - [`nova`]: v3 blocks (TIP-45/46).
//! - [`pow`]: Curl-P-81, b1t6 and the TIP-12 proof of work.
//! - [`ed25519`]: ZIP-215 signature verification, single and batched.
//! - [`gossip`]: the IOTA gossip wire framing (typed messages, TLV frames, an
//!   incremental frame reader) and its libp2p protocol id; no I/O.
//!
//! Decoding borrows from the input: ids, keys, tags, data and outputs are
//! views into the caller's buffer. The same types, with owned contents
//! (`'static`), are the owned model that carries serde JSON.

#![forbid(unsafe_code)]
#![deny(missing_docs, unreachable_pub)]

pub mod ed25519;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod gossip;
pub mod hash;
pub mod hexstr;
pub mod merkle;
pub mod nova;
pub mod pow;
pub mod stardust;
pub mod types;
pub mod wire;

pub use error::{Context, Error, ErrorKind, Result};

pub use wire::{Codec, Reader};
