//! Inputs: UTXO (0, 35 bytes, a zerocopy view) and Treasury (1, receipts only).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zerocopy::little_endian::U16;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::ids::OutputId;
use crate::error::{ErrorKind, Result};
use crate::types::{tagged, Hash32};
use crate::wire::{Codec, Reader};

/// A UTXO input exactly as on the wire: `0 ‖ transaction id ‖ index u16 LE`.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, PartialEq, Eq, Hash, Debug,
)]
#[repr(C)]
pub struct UtxoInput {
    kind: u8,
    /// The transaction that created the consumed output.
    pub transaction_id: [u8; 32],
    index: U16,
}

impl UtxoInput {
    /// Wire type.
    pub const KIND: u8 = 0;

    /// A UTXO input.
    pub fn new(transaction_id: [u8; 32], index: u16) -> Self {
        Self {
            kind: Self::KIND,
            transaction_id,
            index: U16::new(index),
        }
    }

    /// The wire type byte as read (0 once validated).
    pub fn kind(&self) -> u8 {
        self.kind
    }

    /// The output index.
    pub fn index(&self) -> u16 {
        self.index.get()
    }

    /// The consumed output's id.
    ///
    /// # Errors
    /// Index above 127.
    pub fn output_id(&self) -> Result<OutputId> {
        OutputId::new(self.transaction_id, self.index())
    }

    /// The 35 wire bytes.
    pub fn as_bytes(&self) -> &[u8] {
        IntoBytes::as_bytes(self)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UtxoJson<'a> {
    transaction_id: Hash32<'a>,
    transaction_output_index: u16,
}

impl Serialize for UtxoInput {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        tagged::serialize(
            s,
            0,
            &UtxoJson {
                transaction_id: Hash32::borrowed(&self.transaction_id),
                transaction_output_index: self.index(),
            },
        )
    }
}

crate::types::tagged::deserialize_tagged!(UtxoInput, |ty, rest| {
    tagged::require_type::<D::Error>(ty, 0, "a UTXO input")?;
    let j = tagged::rest::<D, UtxoJson<'static>>(rest)?;
    Ok(Self::new(
        j.transaction_id.to_array(),
        j.transaction_output_index,
    ))
});

/// A treasury input (type 1): the milestone id of the previous treasury output.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TreasuryInput<'a> {
    /// Milestone that created the consumed treasury output.
    pub milestone_id: Hash32<'a>,
}

impl TreasuryInput<'_> {
    /// Its type byte.
    pub const KIND: u8 = 1;

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> TreasuryInput<'static> {
        TreasuryInput {
            milestone_id: self.milestone_id.into_owned(),
        }
    }
}

impl<'a> Codec<'a> for TreasuryInput<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        match r.u8()? {
            TreasuryInput::KIND => Ok(Self {
                milestone_id: Hash32::borrowed(r.array()?),
            }),
            t => Err(ErrorKind::UnknownType(t.into()).into()),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(TreasuryInput::KIND);
        out.extend_from_slice(self.milestone_id.as_array());
        Ok(())
    }
}

/// Any input.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Input<'a> {
    /// Type 0.
    Utxo(Cow<'a, UtxoInput>),
    /// Type 1.
    Treasury(TreasuryInput<'a>),
}

impl Input<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Input<'static> {
        match self {
            Self::Utxo(u) => Input::Utxo(Cow::Owned(u.into_owned())),
            Self::Treasury(t) => Input::Treasury(t.into_owned()),
        }
    }
}

impl<'a> Codec<'a> for Input<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        match r.rest().first() {
            Some(0) => Ok(Self::Utxo(Cow::Borrowed(r.view::<UtxoInput>()?))),
            Some(1) => Ok(Self::Treasury(TreasuryInput::read(r)?)),
            Some(t) => Err(ErrorKind::UnknownType((*t).into()).into()),
            None => Err(ErrorKind::UnexpectedEnd { needed: 1 }.into()),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        match self {
            Self::Utxo(u) => out.extend_from_slice(u.as_bytes()),
            Self::Treasury(t) => t.encode(out)?,
        }
        Ok(())
    }
}

impl Serialize for Input<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Utxo(u) => u.serialize(s),
            Self::Treasury(t) => tagged::serialize(s, TreasuryInput::KIND.into(), t),
        }
    }
}

impl<'de> Deserialize<'de> for Input<'_> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let kind = v.get("type").and_then(serde_json::Value::as_u64);
        match kind.and_then(|k| u8::try_from(k).ok()) {
            Some(UtxoInput::KIND) => UtxoInput::deserialize(v)
                .map(|u| Self::Utxo(Cow::Owned(u)))
                .map_err(serde::de::Error::custom),
            Some(TreasuryInput::KIND) => {
                super::typed::t1::deserialize::<_, TreasuryInput<'static>>(v)
                    .map(Self::Treasury)
                    .map_err(serde::de::Error::custom)
            }
            _ => Err(serde::de::Error::custom("unknown or missing input type")),
        }
    }
}
