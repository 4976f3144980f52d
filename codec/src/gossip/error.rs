//! The gossip framing's error: a protocol violation by the sending peer.

use super::header::MessageType;

/// A frame that breaks the gossip protocol, or a message too large to frame.
///
/// Every variant read from a peer is a violation: the caller drops that peer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A type byte that names no gossip message (0 and 5..=255).
    #[error("unknown gossip message type {0}")]
    UnknownType(u8),
    /// A fixed-size message whose header announces another length.
    #[error("{message_type} payload must be {expected} bytes, the header says {got}")]
    WrongLength {
        /// The message type of the frame.
        message_type: MessageType,
        /// The size the type requires.
        expected: u16,
        /// The length in the header.
        got: u16,
    },
    /// A Block payload over the maximum: announced in a header, or handed to
    /// the encoder.
    #[error("block payload of {len} bytes exceeds the maximum of {max}")]
    BlockTooLarge {
        /// The announced or given payload length.
        len: usize,
        /// The maximum, [`super::MAX_BLOCK_LEN`].
        max: usize,
    },
}
