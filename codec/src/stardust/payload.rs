//! Payloads: Treasury Transaction (4), Tagged Data (5), Transaction (6) with
//! its essence (1), and the [`Payload`] enum of what a block may carry (5, 6, 7).
//!
//! Each payload's [`Codec`] includes its `u32` type prefix, so its bytes are
//! exactly what ids are computed over.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::input::{TreasuryInput, UtxoInput};
use super::milestone::Milestone;
use super::output::{Output, TreasuryOutput};
use super::protocol::ProtocolParameters;
use super::unlock::Unlock;
use crate::error::{Context, Error, ErrorKind, Result};
use crate::hash::blake2b256;
use crate::types::{into_owned_variants, owned_list, tagged, u64_str, Bytes, Hash32};
use crate::wire::{read_optional, write_optional, Codec, Len, Prefix, Reader};

/// Tagged data tag: 0..=64 bytes.
pub const TAGGED_DATA_TAG: Len = Len::new(Prefix::U8, 0, 64);
/// Tagged data data: bounded by the block size.
pub const TAGGED_DATA_DATA: Len = Len::new(Prefix::U32, 0, super::block::MAX_BLOCK_LENGTH);
/// Inputs of a transaction: 1..=128.
pub const INPUTS: Len = Len::new(Prefix::U16, 1, 128);
/// Outputs of a transaction: 1..=128.
pub const OUTPUTS: Len = Len::new(Prefix::U16, 1, 128);
/// Unlocks of a transaction: 1..=128 (and equal to the input count).
pub const UNLOCKS: Len = Len::new(Prefix::U16, 1, 128);
/// Distinct native tokens over all outputs of a transaction.
pub const MAX_NATIVE_TOKENS_PER_TX: usize = 64;

fn expect_type(r: &mut Reader<'_>, ty: u32) -> Result<()> {
    let t = r.u32()?;
    if t != ty {
        return Err(ErrorKind::UnknownType(t).into());
    }
    Ok(())
}

/// Tagged Data (type 5).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaggedData<'a> {
    /// Tag, 0..=64 bytes.
    #[serde(default, skip_serializing_if = "Bytes::is_empty")]
    pub tag: Bytes<'a>,
    /// Data.
    #[serde(default, skip_serializing_if = "Bytes::is_empty")]
    pub data: Bytes<'a>,
}

impl<'a> TaggedData<'a> {
    /// Payload type.
    pub const KIND: u32 = 5;

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> TaggedData<'static> {
        TaggedData {
            tag: self.tag.into_owned(),
            data: self.data.into_owned(),
        }
    }

    fn read_body(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            tag: Bytes::borrowed(r.prefixed(&TAGGED_DATA_TAG).at("tag")?),
            data: Bytes::borrowed(r.prefixed(&TAGGED_DATA_DATA).at("data")?),
        })
    }

    fn encode_body(&self, out: &mut Vec<u8>) -> Result<()> {
        TAGGED_DATA_TAG
            .put_bytes(self.tag.as_slice(), out)
            .at("tag")?;
        TAGGED_DATA_DATA
            .put_bytes(self.data.as_slice(), out)
            .at("data")?;
        Ok(())
    }
}

/// The `Codec` of a payload written as its `u32` type, then its body (`read_body` /
/// `encode_body`).
macro_rules! kind_prefixed_codec {
    ($t:ident) => {
        impl<'a> Codec<'a> for $t<'a> {
            fn read(r: &mut Reader<'a>) -> Result<Self> {
                expect_type(r, Self::KIND)?;
                Self::read_body(r)
            }

            fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
                out.extend_from_slice(&Self::KIND.to_le_bytes());
                self.encode_body(out)
            }
        }
    };
}

kind_prefixed_codec!(TaggedData);

/// Serde for the essence's UTXO inputs.
mod inputs_serde {
    use super::*;

    pub(super) fn serialize<S: Serializer>(v: &[UtxoInput], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }

    pub(super) fn deserialize<'de, 'a, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Cow<'a, [UtxoInput]>, D::Error> {
        Vec::<UtxoInput>::deserialize(d).map(Cow::Owned)
    }
}

/// Transaction Essence (type 1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, rename_all = "camelCase")]
pub struct Essence<'a> {
    /// Network id (checked against the protocol parameters).
    #[serde(with = "u64_str")]
    pub network_id: u64,
    /// UTXO inputs, in significant order (a zerocopy slice of the wire).
    #[serde(with = "inputs_serde")]
    pub inputs: Cow<'a, [UtxoInput]>,
    /// BLAKE2b-256 commitment to the consumed outputs.
    pub inputs_commitment: Hash32<'a>,
    /// Outputs (types 3..=6).
    pub outputs: Vec<Output<'a>>,
    /// Optional tagged data.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "super::typed::t5_opt"
    )]
    pub payload: Option<TaggedData<'a>>,
}

impl<'a> Essence<'a> {
    /// Essence type.
    pub const KIND: u8 = 1;

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Essence<'static> {
        Essence {
            network_id: self.network_id,
            inputs: Cow::Owned(self.inputs.into_owned()),
            inputs_commitment: self.inputs_commitment.into_owned(),
            outputs: owned_list(self.outputs, Output::into_owned),
            payload: self.payload.map(TaggedData::into_owned),
        }
    }

    /// The signing message: BLAKE2b-256 of the serialized essence.
    ///
    /// # Errors
    /// As [`Codec::encode`]: an essence with no wire form cannot be signed.
    pub fn signing_hash(&self) -> Result<[u8; 32]> {
        Ok(blake2b256(&self.to_bytes()?))
    }

    fn check_inputs(inputs: &[UtxoInput]) -> Result<()> {
        for (i, inp) in inputs.iter().enumerate() {
            if inp.kind() != UtxoInput::KIND {
                return Err(
                    Error::new(ErrorKind::UnknownType(inp.kind().into())).at_index("inputs", i)
                );
            }
            if inp.index() > super::ids::MAX_OUTPUT_INDEX {
                return Err(Error::invalid(format!(
                    "output index {} out of range 0..=127",
                    inp.index()
                ))
                .at_index("inputs", i));
            }
            let earlier = inputs.get(..i).unwrap_or_default();
            if earlier
                .iter()
                .any(|p| p.transaction_id == inp.transaction_id && p.index() == inp.index())
            {
                return Err(Error::new(ErrorKind::Duplicate("input")).at_index("inputs", i));
            }
        }
        Ok(())
    }

    fn check_outputs(outputs: &[Output<'_>]) -> Result<()> {
        // Distinct native tokens over all outputs.
        let total: usize = outputs.iter().map(|o| o.native_tokens().len()).sum();
        if total > MAX_NATIVE_TOKENS_PER_TX {
            let mut ids: Vec<&[u8; 38]> = outputs
                .iter()
                .flat_map(|o| o.native_tokens().iter().map(|n| n.id.as_array()))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            if ids.len() > MAX_NATIVE_TOKENS_PER_TX {
                return Err(Error::invalid(format!(
                    "{} distinct native tokens, more than {MAX_NATIVE_TOKENS_PER_TX}",
                    ids.len()
                ))
                .at("outputs"));
            }
        }
        // Chain-constrained outputs with a non-zero id are unique.
        let mut chains: Vec<(u8, [u8; 38])> = Vec::new();
        for (i, o) in outputs.iter().enumerate() {
            let key = match o {
                Output::Alias(a) if !a.alias_id.is_zero() => {
                    let mut k = [0u8; 38];
                    k[..32].copy_from_slice(a.alias_id.as_array());
                    Some((4, k))
                }
                Output::Nft(n) if !n.nft_id.is_zero() => {
                    let mut k = [0u8; 38];
                    k[..32].copy_from_slice(n.nft_id.as_array());
                    Some((6, k))
                }
                Output::Foundry(_) => o.foundry_id().map(|id| (5, id)),
                _ => None,
            };
            if let Some(k) = key {
                if chains.contains(&k) {
                    return Err(Error::new(ErrorKind::Duplicate("chain id")).at_index("outputs", i));
                }
                chains.push(k);
            }
        }
        Ok(())
    }

    /// Checks that need the protocol parameters: network id, amounts within
    /// the token supply (each and in sum), storage deposit (TIP-19) and
    /// storage deposit return bounds.
    ///
    /// # Errors
    /// The broken rule with its location.
    pub fn validate(&self, params: &ProtocolParameters) -> Result<()> {
        let nid = params.network_id();
        if self.network_id != nid {
            return Err(
                Error::invalid(format!("network id {} is not {nid}", self.network_id))
                    .at("networkId"),
            );
        }
        let mut sum: u64 = 0;
        for (i, o) in self.outputs.iter().enumerate() {
            validate_output(o, params).at_index("outputs", i)?;
            sum = sum
                .checked_add(o.amount())
                .filter(|s| *s <= params.token_supply)
                .ok_or_else(|| {
                    Error::invalid("sum of output amounts exceeds the token supply")
                        .at_index("outputs", i)
                })?;
        }
        Ok(())
    }
}

/// Checks one output against the protocol parameters: amount ≤ supply,
/// amount ≥ minimum storage deposit, SDRUC return amount ≥ the minimum
/// deposit of a return output.
///
/// # Errors
/// The broken rule.
pub fn validate_output(o: &Output<'_>, params: &ProtocolParameters) -> Result<()> {
    let amount = o.amount();
    if amount > params.token_supply {
        return Err(
            Error::invalid(format!("amount {amount} exceeds the token supply")).at("amount"),
        );
    }
    let min = o.rent_cost(&params.rent_structure);
    if amount < min {
        return Err(Error::invalid(format!(
            "amount {amount} is below the storage deposit {min}"
        ))
        .at("amount"));
    }
    // A Basic output with a single Address unlock condition is 46 bytes for every address type.
    let return_min = params.rent_structure.min_deposit(46);
    for (i, uc) in o.unlock_conditions().iter().enumerate() {
        if let super::UnlockCondition::StorageDepositReturn { amount: ret, .. } = uc {
            if *ret < return_min {
                return Err(Error::invalid(format!(
                    "storage deposit return amount {ret} is below the minimum {return_min}"
                ))
                .at_index("unlockConditions", i));
            }
            if *ret > amount {
                return Err(Error::invalid(
                    "storage deposit return amount exceeds the output amount",
                )
                .at_index("unlockConditions", i));
            }
        }
    }
    Ok(())
}

impl<'a> Codec<'a> for Essence<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let t = r.u8()?;
        if t != Self::KIND {
            return Err(ErrorKind::UnknownType(t.into()).into());
        }
        let network_id = r.u64().at("networkId")?;
        let n = r.len(&INPUTS).at("inputs")?;
        let inputs = r.slice_of::<UtxoInput>(n).at("inputs")?;
        Self::check_inputs(inputs)?;
        let inputs_commitment = Hash32::borrowed(r.array().at("inputsCommitment")?);
        let n = r.len(&OUTPUTS).at("outputs")?;
        let mut outputs = Vec::with_capacity(n);
        for i in 0..n {
            // Pushed straight from the `Ok` (no `map_err` over the whole
            // result): an output is ~200 bytes, and each move is a memcpy.
            match Output::read(r) {
                Ok(Output::Treasury(_)) => {
                    return Err(Error::new(ErrorKind::UnknownType(2)).at_index("outputs", i))
                }
                Ok(o) => outputs.push(o),
                Err(e) => return Err(e.at_index("outputs", i)),
            }
        }
        Self::check_outputs(&outputs)?;
        let payload = read_optional(r, |r| {
            expect_type(r, TaggedData::KIND)?;
            TaggedData::read_body(r)
        })
        .at("payload")?;
        Ok(Self {
            network_id,
            inputs: Cow::Borrowed(inputs),
            inputs_commitment,
            outputs,
            payload,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(Self::KIND);
        out.extend_from_slice(&self.network_id.to_le_bytes());
        INPUTS.put(self.inputs.len(), out).at("inputs")?;
        for i in self.inputs.iter() {
            out.extend_from_slice(i.as_bytes());
        }
        out.extend_from_slice(self.inputs_commitment.as_array());
        OUTPUTS.put(self.outputs.len(), out).at("outputs")?;
        for (i, o) in self.outputs.iter().enumerate() {
            o.encode(out).at_index("outputs", i)?;
        }
        write_optional(self.payload.as_ref(), out, |p, out| p.encode(out)).at("payload")?;
        Ok(())
    }
}

super::typed_struct_serde!(Essence, 1);
super::typed_struct_serde!(TreasuryTransaction, 4);

/// Transaction (type 6): essence and one unlock per input.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transaction<'a> {
    /// What is signed.
    pub essence: Essence<'a>,
    /// One per input.
    pub unlocks: Vec<Unlock<'a>>,
}

impl<'a> Transaction<'a> {
    /// Payload type.
    pub const KIND: u32 = 6;

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Transaction<'static> {
        Transaction {
            essence: self.essence.into_owned(),
            unlocks: owned_list(self.unlocks, Unlock::into_owned),
        }
    }

    /// Transaction id: BLAKE2b-256 of the whole payload (with type and unlocks).
    ///
    /// # Errors
    /// As [`Codec::encode`].
    pub fn id(&self) -> Result<[u8; 32]> {
        Ok(blake2b256(&self.to_bytes()?))
    }

    /// Output ids of the created outputs.
    ///
    /// # Errors
    /// As [`Transaction::id`].
    pub fn output_ids(&self) -> Result<Vec<super::OutputId>> {
        let id = self.id()?;
        Ok((0u16..)
            .zip(&self.essence.outputs)
            .map(|(i, _)| super::OutputId {
                transaction_id: id,
                index: i,
            })
            .collect())
    }

    fn read_body(r: &mut Reader<'a>) -> Result<Self> {
        let essence = Essence::read(r).at("essence")?;
        let n = r.len(&UNLOCKS).at("unlocks")?;
        if n != essence.inputs.len() {
            return Err(Error::new(ErrorKind::CountOutOfRange {
                min: essence.inputs.len(),
                max: essence.inputs.len(),
                got: n,
            })
            .at("unlocks"));
        }
        let mut unlocks = Vec::with_capacity(n);
        for i in 0..n {
            unlocks.push(Unlock::read(r).at_index("unlocks", i)?);
        }
        Unlock::check_list(&unlocks)?;
        Ok(Self { essence, unlocks })
    }

    fn encode_body(&self, out: &mut Vec<u8>) -> Result<()> {
        self.essence.encode(out).at("essence")?;
        UNLOCKS.put(self.unlocks.len(), out).at("unlocks")?;
        for u in &self.unlocks {
            u.encode(out)?;
        }
        Ok(())
    }
}

kind_prefixed_codec!(Transaction);

/// Treasury Transaction (type 4): only inside a receipt milestone option.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct TreasuryTransaction<'a> {
    /// The previous treasury output.
    #[serde(with = "super::typed::t1")]
    pub input: TreasuryInput<'a>,
    /// The new treasury output.
    #[serde(with = "super::typed::t2")]
    pub output: TreasuryOutput,
}

impl<'a> TreasuryTransaction<'a> {
    /// Payload type.
    pub const KIND: u32 = 4;

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> TreasuryTransaction<'static> {
        TreasuryTransaction {
            input: self.input.into_owned(),
            output: self.output,
        }
    }
}

impl<'a> Codec<'a> for TreasuryTransaction<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        expect_type(r, Self::KIND)?;
        Ok(Self {
            input: TreasuryInput::read(r).at("input")?,
            output: TreasuryOutput::read(r).at("output")?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&Self::KIND.to_le_bytes());
        self.input.encode(out)?;
        self.output.encode(out)?;
        Ok(())
    }
}

/// What a block may carry: Tagged Data (5), Transaction (6), Milestone (7).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Payload<'a> {
    /// Type 5.
    TaggedData(TaggedData<'a>),
    /// Type 6.
    Transaction(Transaction<'a>),
    /// Type 7.
    Milestone(Milestone<'a>),
}

into_owned_variants!(Payload: TaggedData, Transaction, Milestone);

impl Payload<'_> {
    /// Payload type.
    pub fn kind(&self) -> u32 {
        match self {
            Self::TaggedData(_) => TaggedData::KIND,
            Self::Transaction(_) => Transaction::KIND,
            Self::Milestone(_) => Milestone::KIND,
        }
    }
}

impl<'a> Codec<'a> for Payload<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(match r.u32()? {
            TaggedData::KIND => Self::TaggedData(TaggedData::read_body(r)?),
            Transaction::KIND => Self::Transaction(Transaction::read_body(r)?),
            Milestone::KIND => Self::Milestone(Milestone::read_body(r)?),
            t => return Err(ErrorKind::UnknownType(t).into()),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        match self {
            Self::TaggedData(p) => p.encode(out)?,
            Self::Transaction(p) => p.encode(out)?,
            Self::Milestone(p) => p.encode(out)?,
        }
        Ok(())
    }
}

impl Serialize for Payload<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::TaggedData(p) => tagged::serialize(s, self.kind(), p),
            Self::Transaction(p) => tagged::serialize(s, self.kind(), p),
            Self::Milestone(p) => tagged::serialize(s, self.kind(), p),
        }
    }
}

crate::types::tagged::deserialize_tagged!(Payload<'_>, |ty, rest| {
    Ok(match ty {
        TaggedData::KIND => Self::TaggedData(tagged::rest::<D, TaggedData<'static>>(rest)?),
        Transaction::KIND => Self::Transaction(tagged::rest::<D, Transaction<'static>>(rest)?),
        Milestone::KIND => Self::Milestone(tagged::rest::<D, Milestone<'static>>(rest)?),
        t => {
            return Err(serde::de::Error::custom(format!(
                "payload type {t} is not allowed in a block"
            )))
        }
    })
});
