//! Message types, the length rule of each, and the 3-byte frame header.

use std::fmt;

use super::error::FrameError;

/// Bytes of a frame header: type u8 ‖ length u16 LE.
pub const HEADER_LEN: usize = 3;

/// Largest Block payload (Hornet's `BlockBinSerializedMaxSize`).
pub const MAX_BLOCK_LEN: usize = 32_768;

/// Largest frame: a header and a Block payload of [`MAX_BLOCK_LEN`] bytes.
pub const MAX_FRAME_LEN: usize = HEADER_LEN + MAX_BLOCK_LEN;

/// The type byte of a gossip frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MessageType {
    /// A request for a milestone by index.
    MilestoneRequest = 1,
    /// Raw v2 block bytes.
    Block = 2,
    /// A request for a block by id.
    BlockRequest = 3,
    /// The sender's milestone indexes and peer counts.
    Heartbeat = 4,
}

impl MessageType {
    /// The type a type byte names.
    ///
    /// # Errors
    /// [`FrameError::UnknownType`] for 0 and 5..=255.
    pub const fn from_u8(b: u8) -> Result<Self, FrameError> {
        Ok(match b {
            1 => Self::MilestoneRequest,
            2 => Self::Block,
            3 => Self::BlockRequest,
            4 => Self::Heartbeat,
            other => return Err(FrameError::UnknownType(other)),
        })
    }

    /// The type byte.
    pub const fn as_u8(self) -> u8 {
        self as u8
    }

    /// The exact payload size of a fixed-size type; `None` for Block.
    pub const fn fixed_len(self) -> Option<u16> {
        match self {
            Self::MilestoneRequest => Some(4),
            Self::Block => None,
            Self::BlockRequest => Some(32),
            Self::Heartbeat => Some(14),
        }
    }

    /// Checks a payload length against this type's rule.
    ///
    /// # Errors
    /// [`FrameError::WrongLength`] for a fixed-size type whose length differs
    /// from its size, [`FrameError::BlockTooLarge`] for a Block over
    /// [`MAX_BLOCK_LEN`].
    pub const fn check_len(self, len: usize) -> Result<(), FrameError> {
        match self.fixed_len() {
            Some(expected) => {
                if len == expected as usize {
                    Ok(())
                } else {
                    Err(FrameError::WrongLength {
                        message_type: self,
                        expected,
                        // A header length is a u16; an encoder never asks
                        // about a fixed type with another length.
                        got: if len > u16::MAX as usize {
                            u16::MAX
                        } else {
                            len as u16
                        },
                    })
                }
            }
            None => {
                if len <= MAX_BLOCK_LEN {
                    Ok(())
                } else {
                    Err(FrameError::BlockTooLarge {
                        len,
                        max: MAX_BLOCK_LEN,
                    })
                }
            }
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MilestoneRequest => "MilestoneRequest",
            Self::Block => "Block",
            Self::BlockRequest => "BlockRequest",
            Self::Heartbeat => "Heartbeat",
        })
    }
}

/// A checked frame header: a known type and a payload length its rule allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// The message type.
    pub message_type: MessageType,
    /// The payload length, within the type's rule (so ≤ [`MAX_BLOCK_LEN`]).
    pub len: u16,
}

impl FrameHeader {
    /// Parses and checks the 3 header bytes.
    ///
    /// # Errors
    /// An unknown type, or a length the type does not allow.
    pub fn parse(bytes: [u8; HEADER_LEN]) -> Result<Self, FrameError> {
        let [t, l0, l1] = bytes;
        let message_type = MessageType::from_u8(t)?;
        let len = u16::from_le_bytes([l0, l1]);
        message_type.check_len(usize::from(len))?;
        Ok(Self { message_type, len })
    }

    /// The 3 header bytes.
    pub fn to_bytes(self) -> [u8; HEADER_LEN] {
        let [l0, l1] = self.len.to_le_bytes();
        [self.message_type.as_u8(), l0, l1]
    }

    /// Header and payload bytes together.
    pub fn frame_len(self) -> usize {
        HEADER_LEN + usize::from(self.len)
    }
}
