//! Milestone payload (type 7, TIP-29) with its options: Receipt (0, TIP-34)
//! and Protocol Parameters (1).
//!
//! The milestone id is BLAKE2b-256 of the essence: the payload bytes after
//! the `u32` type up to and including the options (no signatures).

use std::borrow::Cow;

use serde::{Deserialize, Serialize, Serializer};

use super::address::Address;
use super::check_types_ascending;
use super::payload::TreasuryTransaction;
use super::protocol::ProtocolParameters;
use super::unlock::{sig_list, Ed25519Signature};
use crate::error::{Context, Error, ErrorKind, Result};
use crate::hash::blake2b256;
use crate::types::{
    fixed_list, into_owned_variants, owned_list, tagged, u64_str, Bytes, Fixed, FixedList, Hash32,
};
use crate::wire::{
    check_strictly_ascending, read_optional, type_bytes, write_optional, Codec, Len, Prefix, Reader,
};

/// Parents: 1..=8.
pub const PARENTS: Len = Len::new(Prefix::U8, 1, 8);
/// Milestone metadata: up to 8192 bytes (TIP-29, iota.go).
pub const METADATA: Len = Len::new(Prefix::U16, 0, 8192);
/// Options: 0..=2.
pub const OPTIONS: Len = Len::new(Prefix::U8, 0, 2);
/// Signatures: 1..=255.
pub const SIGNATURES: Len = Len::new(Prefix::U8, 1, 255);
/// Migrated funds entries of a receipt: 1..=127 (iota.go).
pub const FUNDS: Len = Len::new(Prefix::U16, 1, 127);
/// Protocol parameters option content: up to 8192 bytes.
pub const PARAMS: Len = Len::new(Prefix::U16, 0, 8192);
/// Smallest migrated amount (TIP-34).
pub const MIN_MIGRATED_AMOUNT: u64 = 1_000_000;

/// A legacy tail transaction hash: 243 trits in t5b1 (49 bytes, each byte a
/// value in -121..=121).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TailTransactionHash<'a>(pub Fixed<'a, 49>);

impl TailTransactionHash<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> TailTransactionHash<'static> {
        TailTransactionHash(self.0.into_owned())
    }

    /// Checks the t5b1 encoding: every byte in -121..=121 as `i8`.
    ///
    /// # Errors
    /// A byte outside the range.
    pub fn check(bytes: &[u8; 49]) -> Result<()> {
        for (i, b) in bytes.iter().enumerate() {
            let v = i8::from_le_bytes([*b]);
            if !(-121..=121).contains(&v) {
                return Err(Error::invalid(format!(
                    "tail transaction hash byte {i} ({v}) is not a valid t5b1 value"
                )));
            }
        }
        Ok(())
    }
}

impl<'a> Codec<'a> for TailTransactionHash<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let b = r.array::<49>()?;
        Self::check(b)?;
        Ok(Self(Fixed::borrowed(b)))
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(self.0.as_array());
        Ok(())
    }
}

/// A migrated funds entry (90 bytes).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MigratedFundsEntry<'a> {
    /// Legacy bundle tail.
    pub tail_transaction_hash: TailTransactionHash<'a>,
    /// Target (Ed25519) address.
    pub address: Address<'a>,
    /// Migrated amount.
    #[serde(with = "u64_str")]
    pub deposit: u64,
}

impl MigratedFundsEntry<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> MigratedFundsEntry<'static> {
        MigratedFundsEntry {
            tail_transaction_hash: self.tail_transaction_hash.into_owned(),
            address: self.address.into_owned(),
            deposit: self.deposit,
        }
    }

    /// Deposit within `MIN_MIGRATED_AMOUNT..=token supply`.
    ///
    /// # Errors
    /// The deposit out of range.
    pub fn validate(&self, params: &ProtocolParameters) -> Result<()> {
        if self.deposit < MIN_MIGRATED_AMOUNT || self.deposit > params.token_supply {
            return Err(Error::invalid(format!(
                "migrated deposit {} out of range {MIN_MIGRATED_AMOUNT}..={}",
                self.deposit, params.token_supply
            ))
            .at("deposit"));
        }
        Ok(())
    }
}

impl<'a> Codec<'a> for MigratedFundsEntry<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let tail_transaction_hash = TailTransactionHash::read(r).at("tailTransactionHash")?;
        let address = Address::read(r)?;
        if address.kind() != Address::ED25519 {
            return Err(Error::new(ErrorKind::UnknownType(address.kind().into())).at("address"));
        }
        Ok(Self {
            tail_transaction_hash,
            address,
            deposit: r.u64().at("deposit")?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        self.tail_transaction_hash.encode(out)?;
        self.address.encode(out)?;
        out.extend_from_slice(&self.deposit.to_le_bytes());
        Ok(())
    }
}

/// Receipt milestone option (type 0).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Receipt<'a> {
    /// Legacy milestone index of the migration.
    pub migrated_at: u32,
    /// Last receipt for `migrated_at`.
    #[serde(rename = "final")]
    pub last: bool,
    /// Entries, sorted by tail transaction hash.
    pub funds: Vec<MigratedFundsEntry<'a>>,
    /// The treasury transaction (u32 length-prefixed on the wire, as iota.go).
    pub transaction: TreasuryTransaction<'a>,
}

impl<'a> Receipt<'a> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Receipt<'static> {
        Receipt {
            migrated_at: self.migrated_at,
            last: self.last,
            funds: owned_list(self.funds, MigratedFundsEntry::into_owned),
            transaction: self.transaction.into_owned(),
        }
    }

    fn read_body(r: &mut Reader<'a>) -> Result<Self> {
        let migrated_at = r.u32().at("migratedAt")?;
        let last = match r.u8().at("final")? {
            0 => false,
            1 => true,
            b => return Err(Error::invalid(format!("final flag {b} is not 0 or 1")).at("final")),
        };
        let funds: Vec<MigratedFundsEntry<'a>> = crate::wire::read_list(r, &FUNDS, "funds")?;
        check_strictly_ascending(
            funds.iter().map(|f| &f.tail_transaction_hash),
            "funds",
            "tail transaction hash",
        )?;
        let transaction = read_optional(r, TreasuryTransaction::read)
            .at("transaction")?
            .ok_or_else(|| Error::invalid("treasury transaction missing").at("transaction"))?;
        Ok(Self {
            migrated_at,
            last,
            funds,
            transaction,
        })
    }

    fn encode_body(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.migrated_at.to_le_bytes());
        out.push(u8::from(self.last));
        FUNDS.put(self.funds.len(), out).at("funds")?;
        for f in &self.funds {
            f.encode(out)?;
        }
        write_optional(Some(&self.transaction), out, |t, out| t.encode(out))
            .at("receipt.transaction")?;
        Ok(())
    }
}

/// Protocol parameters milestone option (type 1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProtocolParamsOption<'a> {
    /// Milestone index from which the parameters apply.
    pub target_milestone_index: u32,
    /// Protocol version from then on.
    pub protocol_version: u8,
    /// Serialized [`ProtocolParameters`].
    pub params: Bytes<'a>,
}

impl ProtocolParamsOption<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> ProtocolParamsOption<'static> {
        ProtocolParamsOption {
            target_milestone_index: self.target_milestone_index,
            protocol_version: self.protocol_version,
            params: self.params.into_owned(),
        }
    }

    /// Decodes the carried parameters.
    ///
    /// # Errors
    /// Bytes that are not protocol parameters.
    pub fn parameters(&self) -> Result<ProtocolParameters> {
        ProtocolParameters::decode(self.params.as_slice())
    }
}

/// A milestone option.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MilestoneOption<'a> {
    /// Type 0.
    Receipt(Receipt<'a>),
    /// Type 1.
    ProtocolParams(ProtocolParamsOption<'a>),
}

type_bytes!(MilestoneOption<'_> {
    RECEIPT = 0 => Receipt, PROTOCOL_PARAMS = 1 => ProtocolParams,
});

into_owned_variants!(MilestoneOption: Receipt, ProtocolParams);

impl<'a> Codec<'a> for MilestoneOption<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(match r.u8()? {
            Self::RECEIPT => Self::Receipt(Receipt::read_body(r)?),
            Self::PROTOCOL_PARAMS => Self::ProtocolParams(ProtocolParamsOption {
                target_milestone_index: r.u32().at("targetMilestoneIndex")?,
                protocol_version: r.u8().at("protocolVersion")?,
                params: Bytes::borrowed(r.prefixed(&PARAMS).at("params")?),
            }),
            t => return Err(ErrorKind::UnknownType(t.into()).into()),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.kind());
        match self {
            Self::Receipt(r) => r.encode_body(out)?,
            Self::ProtocolParams(p) => {
                out.extend_from_slice(&p.target_milestone_index.to_le_bytes());
                out.push(p.protocol_version);
                PARAMS.put_bytes(p.params.as_slice(), out).at("params")?;
            }
        }
        Ok(())
    }
}

impl Serialize for MilestoneOption<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Receipt(r) => tagged::serialize(s, self.kind().into(), r),
            Self::ProtocolParams(p) => tagged::serialize(s, self.kind().into(), p),
        }
    }
}

crate::types::tagged::deserialize_tagged!(MilestoneOption<'_>, |ty, rest| {
    Ok(match u8::try_from(ty).ok() {
        Some(Self::RECEIPT) => Self::Receipt(tagged::rest::<D, Receipt<'static>>(rest)?),
        Some(Self::PROTOCOL_PARAMS) => {
            Self::ProtocolParams(tagged::rest::<D, ProtocolParamsOption<'static>>(rest)?)
        }
        _ => {
            return Err(serde::de::Error::custom(format!(
                "unknown milestone option type {ty}"
            )))
        }
    })
});

/// Milestone payload (type 7).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Milestone<'a> {
    /// Milestone index.
    pub index: u32,
    /// Unix seconds.
    pub timestamp: u32,
    /// Protocol version.
    pub protocol_version: u8,
    /// Previous milestone id (zero for the first).
    pub previous_milestone_id: Hash32<'a>,
    /// Parents (sorted, unique; equal to the block's parents).
    #[serde(with = "fixed_list")]
    pub parents: FixedList<'a, 32>,
    /// TIP-4 root of the newly referenced blocks.
    pub inclusion_merkle_root: Hash32<'a>,
    /// TIP-4 root of the applied transactions' blocks.
    pub applied_merkle_root: Hash32<'a>,
    /// Free metadata.
    #[serde(default, skip_serializing_if = "Bytes::is_empty")]
    pub metadata: Bytes<'a>,
    /// Options (at most one per type, ascending).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<MilestoneOption<'a>>,
    /// Signatures, sorted by public key (zerocopy slice of the wire).
    #[serde(with = "sig_list")]
    pub signatures: Cow<'a, [Ed25519Signature]>,
}

impl<'a> Milestone<'a> {
    /// Payload type.
    pub const KIND: u32 = 7;

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Milestone<'static> {
        Milestone {
            index: self.index,
            timestamp: self.timestamp,
            protocol_version: self.protocol_version,
            previous_milestone_id: self.previous_milestone_id.into_owned(),
            parents: Cow::Owned(self.parents.into_owned()),
            inclusion_merkle_root: self.inclusion_merkle_root.into_owned(),
            applied_merkle_root: self.applied_merkle_root.into_owned(),
            metadata: self.metadata.into_owned(),
            options: owned_list(self.options, MilestoneOption::into_owned),
            signatures: Cow::Owned(self.signatures.into_owned()),
        }
    }

    /// The essence bytes (index … options), which the id hashes and the
    /// signatures sign (via the id).
    ///
    /// # Errors
    /// As [`Codec::encode`].
    pub fn essence_bytes(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(256);
        self.encode_essence(&mut out)?;
        Ok(out)
    }

    /// Milestone id: BLAKE2b-256 of the essence bytes.
    ///
    /// # Errors
    /// As [`Codec::encode`].
    pub fn id(&self) -> Result<[u8; 32]> {
        Ok(blake2b256(&self.essence_bytes()?))
    }

    /// Verifies each signature over the milestone id (ZIP-215).
    ///
    /// # Errors
    /// As [`Codec::encode`]: without a wire form there is no id to verify.
    pub fn verify_signatures(&self) -> Result<Vec<bool>> {
        let id = self.id()?;
        Ok(self.signatures.iter().map(|s| s.verify(&id)).collect())
    }

    /// The receipt option, if any.
    pub fn receipt(&self) -> Option<&Receipt<'a>> {
        self.options.iter().find_map(|o| match o {
            MilestoneOption::Receipt(r) => Some(r),
            MilestoneOption::ProtocolParams(_) => None,
        })
    }

    /// Checks that need the protocol parameters: migrated deposits.
    ///
    /// # Errors
    /// The broken rule with its location.
    pub fn validate(&self, params: &ProtocolParameters) -> Result<()> {
        if let Some(r) = self.receipt() {
            for (i, f) in r.funds.iter().enumerate() {
                f.validate(params).at_index("funds", i).at("options")?;
            }
        }
        Ok(())
    }

    fn encode_essence(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.index.to_le_bytes());
        out.extend_from_slice(&self.timestamp.to_le_bytes());
        out.push(self.protocol_version);
        out.extend_from_slice(self.previous_milestone_id.as_array());
        PARENTS.put(self.parents.len(), out).at("parents")?;
        for p in self.parents.iter() {
            out.extend_from_slice(p);
        }
        out.extend_from_slice(self.inclusion_merkle_root.as_array());
        out.extend_from_slice(self.applied_merkle_root.as_array());
        METADATA
            .put_bytes(self.metadata.as_slice(), out)
            .at("metadata")?;
        OPTIONS.put(self.options.len(), out).at("options")?;
        for o in &self.options {
            o.encode(out)?;
        }
        Ok(())
    }

    pub(crate) fn read_body(r: &mut Reader<'a>) -> Result<Self> {
        let index = r.u32().at("index")?;
        let timestamp = r.u32().at("timestamp")?;
        let protocol_version = r.u8().at("protocolVersion")?;
        let previous_milestone_id = Hash32::borrowed(r.array().at("previousMilestoneId")?);
        let n = r.len(&PARENTS).at("parents")?;
        let parents = r.slice_of::<[u8; 32]>(n).at("parents")?;
        check_strictly_ascending(parents.iter(), "parents", "parent")?;
        let inclusion_merkle_root = Hash32::borrowed(r.array().at("inclusionMerkleRoot")?);
        let applied_merkle_root = Hash32::borrowed(r.array().at("appliedMerkleRoot")?);
        let metadata = Bytes::borrowed(r.prefixed(&METADATA).at("metadata")?);
        let options: Vec<MilestoneOption<'a>> = crate::wire::read_list(r, &OPTIONS, "options")?;
        check_types_ascending(options.iter().map(MilestoneOption::kind), "options")?;
        let n = r.len(&SIGNATURES).at("signatures")?;
        let signatures = r.slice_of::<Ed25519Signature>(n).at("signatures")?;
        Ed25519Signature::check_kinds(signatures, "signatures")?;
        check_strictly_ascending(
            signatures.iter().map(|s| &s.public_key),
            "signatures",
            "public key",
        )?;
        Ok(Self {
            index,
            timestamp,
            protocol_version,
            previous_milestone_id,
            parents: Cow::Borrowed(parents),
            inclusion_merkle_root,
            applied_merkle_root,
            metadata,
            options,
            signatures: Cow::Borrowed(signatures),
        })
    }
}

impl<'a> Codec<'a> for Milestone<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let t = r.u32()?;
        if t != Self::KIND {
            return Err(ErrorKind::UnknownType(t).into());
        }
        Self::read_body(r)
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&Self::KIND.to_le_bytes());
        self.encode_essence(out)?;
        SIGNATURES
            .put(self.signatures.len(), out)
            .at("signatures")?;
        for s in self.signatures.iter() {
            out.extend_from_slice(s.as_bytes());
        }
        Ok(())
    }
}
