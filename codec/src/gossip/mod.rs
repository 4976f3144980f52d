//! The IOTA gossip wire format (`/iota-gossip/<networkId>/1.0.0`): typed
//! messages, their TLV frames and an incremental frame reader. No I/O.
//!
//! A frame is `type u8 ‖ length u16 LE ‖ payload`; frames follow each other
//! back to back on one stream and may be split anywhere across reads.
//!
//! | type | message | payload | frame bytes |
//! |---|---|---|---|
//! | 1 | [`Message::MilestoneRequest`] | milestone index u32 LE (0 = "your latest") | 7 |
//! | 2 | [`Message::Block`] | raw v2 block bytes, 0..=[`MAX_BLOCK_LEN`] | 3 + n |
//! | 3 | [`Message::BlockRequest`] | 32-byte block id | 35 |
//! | 4 | [`Message::Heartbeat`] | solid u32 ‖ pruned u32 ‖ latest u32 ‖ connected u8 ‖ synced u8 | 17 |
//!
//! Any other type (0 and 5..=255), a fixed-size type whose length is not
//! exactly its size, and a Block longer than [`MAX_BLOCK_LEN`] are protocol
//! violations ([`FrameError`]); a node drops the peer that sent them. Both
//! decoders check a header before they take or buffer any of its payload.
//!
//! - [`header`]: message types and the length rule of each.
//! - [`message`]: the typed messages, their encoding and one-shot decoding.
//! - [`reader`]: [`FrameReader`], fed arbitrary chunks of a stream.
//! - [`protocol`]: the libp2p protocol id.
//!
//! A Block payload is not decoded here: it is opaque bytes, checked only for
//! its length (the block decoder is [`crate::stardust::Block`]).

pub mod error;
pub mod header;
pub mod message;
pub mod protocol;
pub mod reader;

pub use error::FrameError;
pub use header::{FrameHeader, MessageType, HEADER_LEN, MAX_BLOCK_LEN, MAX_FRAME_LEN};
pub use message::{decode_frame, Heartbeat, Message, LATEST_MILESTONE};
pub use protocol::{protocol_id, protocol_id_for_network_id};
pub use reader::{FrameReader, Frames};
