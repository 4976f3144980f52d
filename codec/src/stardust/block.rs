//! Block (TIP-24): `protocolVersion u8 ‖ parents (u8 count, 1..=8 × 32 B,
//! strictly ascending) ‖ payload (u32 length, 0 = none; type 5, 6 or 7) ‖
//! nonce u64`, at most 32768 bytes. Block id = BLAKE2b-256(block bytes).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::payload::Payload;
use super::protocol::ProtocolParameters;
use crate::error::{Context, Error, ErrorKind, Result};
use crate::hash::blake2b256;
use crate::types::{fixed_list, u64_str, FixedList};
use crate::wire::{
    check_strictly_ascending, read_optional, write_optional, Codec, Len, Prefix, Reader,
};

/// Largest serialized block.
pub const MAX_BLOCK_LENGTH: usize = 32768;
/// Parents: 1..=8.
pub const PARENTS: Len = Len::new(Prefix::U8, 1, 8);

/// A v2 block.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Block<'a> {
    /// Protocol version (checked against the parameters in [`Block::validate`]).
    pub protocol_version: u8,
    /// Parents, strictly ascending (a zerocopy slice of the wire).
    #[serde(with = "fixed_list")]
    pub parents: FixedList<'a, 32>,
    /// Optional payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload<'a>>,
    /// PoW nonce.
    #[serde(with = "u64_str")]
    pub nonce: u64,
}

impl<'a> Block<'a> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Block<'static> {
        Block {
            protocol_version: self.protocol_version,
            parents: Cow::Owned(self.parents.into_owned()),
            payload: self.payload.map(Payload::into_owned),
            nonce: self.nonce,
        }
    }

    /// Block id of serialized block bytes.
    pub fn id_of(bytes: &[u8]) -> [u8; 32] {
        blake2b256(bytes)
    }

    /// Block id (re-encodes; prefer [`Block::id_of`] on received bytes).
    ///
    /// # Errors
    /// As [`Codec::encode`]: a block with no wire form has no id.
    pub fn id(&self) -> Result<[u8; 32]> {
        Ok(blake2b256(&self.to_bytes()?))
    }

    /// Parses block JSON into the owned model and re-validates it: the JSON
    /// must describe a block that encodes and decodes (strictly) to itself.
    ///
    /// # Errors
    /// Malformed JSON ([`ErrorKind::Json`]) or any syntactic rule.
    pub fn from_json(s: &str) -> Result<Block<'static>> {
        let b: Block<'static> =
            serde_json::from_str(s).map_err(|e| Error::new(ErrorKind::Json(e.to_string())))?;
        b.check()?;
        Ok(b)
    }

    /// Parses block JSON from a `serde_json::Value`; see [`Block::from_json`].
    ///
    /// # Errors
    /// As [`Block::from_json`].
    pub fn from_json_value(v: serde_json::Value) -> Result<Block<'static>> {
        let b: Block<'static> =
            serde_json::from_value(v).map_err(|e| Error::new(ErrorKind::Json(e.to_string())))?;
        b.check()?;
        Ok(b)
    }

    /// Checks the syntactic rules on an in-memory block (e.g. built from JSON): it must have
    /// a wire form, and that form must decode strictly (the rules live once, in the reader).
    ///
    /// # Errors
    /// A list or byte string too long for its prefix, or any syntactic rule.
    pub fn check(&self) -> Result<()> {
        Block::decode(&self.to_bytes()?).map(drop)
    }

    /// The block as JSON text.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Checks that need the protocol parameters: protocol version, and for
    /// transactions network id, token supply and storage deposit; for
    /// milestones the migrated deposits.
    ///
    /// # Errors
    /// The broken rule with its location.
    pub fn validate(&self, params: &ProtocolParameters) -> Result<()> {
        if self.protocol_version != params.version {
            return Err(Error::invalid(format!(
                "protocol version {} is not {}",
                self.protocol_version, params.version
            ))
            .at("protocolVersion"));
        }
        match &self.payload {
            Some(Payload::Transaction(t)) => t.essence.validate(params).at("essence").at("payload"),
            Some(Payload::Milestone(m)) => m.validate(params).at("payload"),
            _ => Ok(()),
        }
    }
}

impl<'a> Codec<'a> for Block<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let start = r.position();
        let protocol_version = r.u8().at("protocolVersion")?;
        let n = r.len(&PARENTS).at("parents")?;
        let parents = r.slice_of::<[u8; 32]>(n).at("parents")?;
        check_strictly_ascending(parents.iter(), "parents", "parent")?;
        let payload = read_optional(r, Payload::read).at("payload")?;
        let nonce = r.u64().at("nonce")?;
        let len = r.position().saturating_sub(start);
        if len > MAX_BLOCK_LENGTH {
            return Err(Error::invalid(format!(
                "block is {len} bytes, more than {MAX_BLOCK_LENGTH}"
            )));
        }
        if let Some(Payload::Milestone(m)) = &payload {
            if m.parents.as_ref() != parents {
                return Err(
                    Error::invalid("milestone parents differ from the block's parents")
                        .at("parents")
                        .at("payload"),
                );
            }
        }
        Ok(Self {
            protocol_version,
            parents: Cow::Borrowed(parents),
            payload,
            nonce,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.protocol_version);
        PARENTS.put(self.parents.len(), out).at("parents")?;
        for p in self.parents.iter() {
            out.extend_from_slice(p);
        }
        write_optional(self.payload.as_ref(), out, |p, out| p.encode(out)).at("payload")?;
        out.extend_from_slice(&self.nonce.to_le_bytes());
        Ok(())
    }
}
