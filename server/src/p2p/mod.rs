//! Peering (libp2p gossip speaking Hornet's protocol, `docs/peering.md`). So far: the node's
//! peer identity in Hornet's key-file format. The gossip frames are in `ledger_codec::gossip`.

pub mod identity;

pub use identity::{Identity, IdentityError, IDENTITY_FILE};
