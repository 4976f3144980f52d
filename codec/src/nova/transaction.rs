//! v3 transactions (TIP-45): inputs, context inputs, allotments, unlocks,
//! the Signed Transaction payload and the transaction ids.

use std::borrow::Cow;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zerocopy::little_endian::{U16, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::error::{Context, Error, ErrorKind, Result};
use crate::hash::{blake2b256, blake2b256_parts};
use crate::nova::address::{read_capabilities, write_capabilities};
use crate::nova::block::Payload;
use crate::nova::json::{self, tagged_enum, u64_str};
use crate::nova::output::Output;
use crate::types::{owned_list, Bytes, Fixed, Hash32};
use crate::wire::{fields_codec, type_bytes, write_optional, Codec, Len, Prefix, Reader};

/// Max inputs / outputs / context inputs / allotments / unlocks per transaction.
pub const MAX_IO: usize = 128;
const CONTEXT_INPUTS: Len = Len::new(Prefix::U16, 0, MAX_IO);
const INPUTS: Len = Len::new(Prefix::U16, 1, MAX_IO);
const ALLOTMENTS: Len = Len::new(Prefix::U16, 0, MAX_IO);
const OUTPUTS: Len = Len::new(Prefix::U16, 1, MAX_IO);
const UNLOCKS: Len = Len::new(Prefix::U16, 1, MAX_IO);
const MULTI_UNLOCKS: Len = Len::new(Prefix::U8, 2, 10);

// ---------------------------------------------------------------- inputs

/// UTXO input (type 0), 39 bytes, read as a zerocopy view.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct UtxoInput {
    /// Type byte (always 0).
    pub kind: u8,
    /// Transaction id (36 bytes).
    pub transaction_id: [u8; 36],
    /// Output index.
    pub transaction_output_index: U16,
}

impl UtxoInput {
    /// A new UTXO input.
    pub fn new(transaction_id: [u8; 36], index: u16) -> Self {
        Self {
            kind: 0,
            transaction_id,
            transaction_output_index: index.into(),
        }
    }

    /// The output id it spends (38 bytes).
    pub fn output_id(&self) -> [u8; 38] {
        let mut id = [0u8; 38];
        id.copy_from_slice(&self.as_bytes()[1..]);
        id
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UtxoInputJson {
    #[serde(rename = "type")]
    kind: u8,
    transaction_id: Fixed<'static, 36>,
    transaction_output_index: u16,
}

impl Serialize for UtxoInput {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        UtxoInputJson {
            kind: self.kind,
            transaction_id: Fixed::owned(self.transaction_id),
            transaction_output_index: self.transaction_output_index.get(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for UtxoInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let j = UtxoInputJson::deserialize(d)?;
        if j.kind != 0 {
            return Err(D::Error::custom(format!("unknown input type {}", j.kind)));
        }
        Ok(Self::new(
            j.transaction_id.to_array(),
            j.transaction_output_index,
        ))
    }
}

/// Commitment input (context input 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommitmentInput<'a> {
    /// Slot commitment id (36 bytes).
    pub commitment_id: Fixed<'a, 36>,
}

fields_codec!(CommitmentInput<'a> { commitment_id: "commitmentId" });

/// Block issuance credit input (context input 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BicInput<'a> {
    /// The account.
    pub account_id: Hash32<'a>,
}

fields_codec!(BicInput<'a> { account_id: "accountId" });

/// Reward input (context input 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardInput {
    /// Index of the input that claims rewards.
    pub index: u16,
}

fields_codec!(RewardInput { index: "index" });

/// A context input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextInput<'a> {
    /// Commitment (0).
    Commitment(CommitmentInput<'a>),
    /// Block issuance credit (1).
    BlockIssuanceCredit(BicInput<'a>),
    /// Reward (2).
    Reward(RewardInput),
}

type_bytes!(ContextInput<'_> {
    COMMITMENT = 0 => Commitment, BLOCK_ISSUANCE_CREDIT = 1 => BlockIssuanceCredit,
    REWARD = 2 => Reward,
});

impl ContextInput<'_> {
    /// Sort key: type, then account id / index.
    fn key(&self) -> (u8, &[u8], u16) {
        match self {
            Self::Commitment(_) => (Self::COMMITMENT, &[], 0),
            Self::BlockIssuanceCredit(b) => {
                (Self::BLOCK_ISSUANCE_CREDIT, b.account_id.as_array(), 0)
            }
            Self::Reward(r) => (Self::REWARD, &[], r.index),
        }
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> ContextInput<'static> {
        match self {
            Self::Commitment(c) => ContextInput::Commitment(CommitmentInput {
                commitment_id: c.commitment_id.into_owned(),
            }),
            Self::BlockIssuanceCredit(b) => ContextInput::BlockIssuanceCredit(BicInput {
                account_id: b.account_id.into_owned(),
            }),
            Self::Reward(r) => ContextInput::Reward(r),
        }
    }
}

impl<'a> Codec<'a> for ContextInput<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(match r.u8()? {
            Self::COMMITMENT => Self::Commitment(CommitmentInput::read(r)?),
            Self::BLOCK_ISSUANCE_CREDIT => Self::BlockIssuanceCredit(BicInput::read(r)?),
            Self::REWARD => Self::Reward(RewardInput::read(r)?),
            t => return Err(ErrorKind::UnknownType(t.into()).into()),
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.kind());
        match self {
            Self::Commitment(c) => c.encode(out)?,
            Self::BlockIssuanceCredit(b) => b.encode(out)?,
            Self::Reward(x) => x.encode(out)?,
        }
        Ok(())
    }
}

impl Serialize for ContextInput<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use crate::types::tagged::serialize as t;
        match self {
            Self::Commitment(c) => t(s, 0, c),
            Self::BlockIssuanceCredit(b) => t(s, 1, b),
            Self::Reward(x) => t(s, 2, x),
        }
    }
}

/// A context input's fields (after `split_value`) as `T`.
fn from_value<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned>(
    v: serde_json::Value,
) -> Result<T, D::Error> {
    serde_json::from_value(v).map_err(D::Error::custom)
}

impl<'de> Deserialize<'de> for ContextInput<'_> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use crate::types::tagged::split_value;
        let (ty, v) = split_value(d)?;
        Ok(match u8::try_from(ty).ok() {
            Some(Self::COMMITMENT) => Self::Commitment(from_value::<D, _>(v)?),
            // docs/decisions.md: our contract's `{"type":1,"commitmentId":…}` (no
            // accountId) is a commitment input too.
            Some(Self::BLOCK_ISSUANCE_CREDIT)
                if v.get("commitmentId").is_some() && v.get("accountId").is_none() =>
            {
                Self::Commitment(from_value::<D, _>(v)?)
            }
            Some(Self::BLOCK_ISSUANCE_CREDIT) => Self::BlockIssuanceCredit(from_value::<D, _>(v)?),
            Some(Self::REWARD) => Self::Reward(from_value::<D, _>(v)?),
            _ => return Err(D::Error::custom(format!("unknown context input type {ty}"))),
        })
    }
}

// ---------------------------------------------------------------- allotments

/// Mana allotment to an account: 40 bytes, read as a zerocopy view.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct Allotment {
    /// The account.
    pub account_id: [u8; 32],
    /// Mana allotted (> 0).
    pub mana: U64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AllotmentJson {
    account_id: Hash32<'static>,
    #[serde(with = "u64_str")]
    mana: u64,
}

impl Serialize for Allotment {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        AllotmentJson {
            account_id: Fixed::owned(self.account_id),
            mana: self.mana.get(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Allotment {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let j = AllotmentJson::deserialize(d)?;
        Ok(Self {
            account_id: j.account_id.to_array(),
            mana: j.mana.into(),
        })
    }
}

// ---------------------------------------------------------------- signatures and unlocks

/// Ed25519 signature: public key and signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Ed25519Signature<'a> {
    /// Public key.
    pub public_key: Hash32<'a>,
    /// Signature (R || S).
    pub signature: Fixed<'a, 64>,
}

fields_codec!(Ed25519Signature<'a> { public_key: "publicKey", signature: "signature" });

impl Ed25519Signature<'_> {
    /// ZIP-215 verification of `msg`.
    pub fn verify(&self, msg: &[u8]) -> bool {
        crate::ed25519::verify(self.public_key.as_array(), msg, self.signature.as_array())
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Ed25519Signature<'static> {
        Ed25519Signature {
            public_key: self.public_key.into_owned(),
            signature: self.signature.into_owned(),
        }
    }
}

/// A signature (only Ed25519, type 0, exists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signature<'a> {
    /// Ed25519 (0).
    Ed25519(Ed25519Signature<'a>),
}

tagged_enum!(Signature, "signature", { 0 => Ed25519 });

impl Signature<'_> {
    /// Serialized length (type byte included).
    pub const LEN: usize = 97;

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Signature<'static> {
        let Self::Ed25519(s) = self;
        Signature::Ed25519(s.into_owned())
    }
}

/// Signature unlock (0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignatureUnlock<'a> {
    /// The signature.
    pub signature: Signature<'a>,
}

fields_codec!(SignatureUnlock<'a> { signature: "signature" });

/// Reference, Account, Anchor and NFT unlocks (1..4): an earlier unlock index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceUnlock {
    /// Index of the referenced unlock.
    pub reference: u16,
}

fields_codec!(ReferenceUnlock {
    reference: "reference"
});

/// Multi unlock (5): one unlock per member of a multi address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiUnlock<'a> {
    /// 2..10 unlocks (no nested multi unlocks).
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub unlocks: Vec<Unlock<'a>>,
}

impl<'a> Codec<'a> for MultiUnlock<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let n = r.len(&MULTI_UNLOCKS).at("unlocks")?;
        let mut unlocks = Vec::with_capacity(n);
        for i in 0..n {
            let u = Unlock::read(r).at_index("unlocks", i)?;
            if matches!(u, Unlock::Multi(_)) {
                return Err(Error::invalid("multi unlocks cannot be nested").at_index("unlocks", i));
            }
            unlocks.push(u);
        }
        Ok(Self { unlocks })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        MULTI_UNLOCKS.put(self.unlocks.len(), out).at("unlocks")?;
        for u in &self.unlocks {
            u.encode(out)?;
        }
        Ok(())
    }
}

/// Empty unlock (6), only inside a multi unlock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmptyUnlock {}

fields_codec!(EmptyUnlock {});

/// An unlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unlock<'a> {
    /// Signature (0).
    Signature(SignatureUnlock<'a>),
    /// Reference (1).
    Reference(ReferenceUnlock),
    /// Account (2).
    Account(ReferenceUnlock),
    /// Anchor (3).
    Anchor(ReferenceUnlock),
    /// NFT (4).
    Nft(ReferenceUnlock),
    /// Multi (5).
    Multi(MultiUnlock<'a>),
    /// Empty (6).
    Empty(EmptyUnlock),
}

tagged_enum!(Unlock, "unlock", {
    0 => Signature,
    1 => Reference,
    2 => Account,
    3 => Anchor,
    4 => Nft,
    5 => Multi,
    6 => Empty,
});

impl Unlock<'_> {
    /// Number of signatures, counting those inside a multi unlock.
    pub fn signature_count(&self) -> usize {
        match self {
            Self::Signature(_) => 1,
            Self::Multi(m) => m.unlocks.iter().map(Unlock::signature_count).sum(),
            _ => 0,
        }
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Unlock<'static> {
        match self {
            Self::Signature(s) => Unlock::Signature(SignatureUnlock {
                signature: s.signature.into_owned(),
            }),
            Self::Reference(x) => Unlock::Reference(x),
            Self::Account(x) => Unlock::Account(x),
            Self::Anchor(x) => Unlock::Anchor(x),
            Self::Nft(x) => Unlock::Nft(x),
            Self::Multi(m) => Unlock::Multi(MultiUnlock {
                unlocks: owned_list(m.unlocks, Unlock::into_owned),
            }),
            Self::Empty(e) => Unlock::Empty(e),
        }
    }
}

/// Checks the unlock rules: no top-level empty unlock, signature unlocks
/// unique by public key, references point to earlier unlocks of the right kind.
fn check_unlocks(unlocks: &[Unlock<'_>]) -> Result<()> {
    let mut keys: Vec<(&[u8; 32], usize)> = Vec::new();
    for (i, u) in unlocks.iter().enumerate() {
        let sigs: &[Unlock<'_>] = match u {
            Unlock::Multi(m) => &m.unlocks,
            other => std::slice::from_ref(other),
        };
        for s in sigs {
            if let Unlock::Signature(SignatureUnlock {
                signature: Signature::Ed25519(e),
            }) = s
            {
                keys.push((e.public_key.as_array(), i));
            }
        }
    }
    for (n, (k, i)) in keys.iter().enumerate() {
        if keys[..n].iter().any(|(p, _)| p == k) {
            return Err(
                Error::new(ErrorKind::Duplicate("signature unlock (same public key)"))
                    .at_index("unlocks", *i),
            );
        }
    }
    for (i, u) in unlocks.iter().enumerate() {
        match u {
            Unlock::Empty(_) => {
                return Err(
                    Error::invalid("empty unlock outside a multi unlock").at_index("unlocks", i)
                )
            }
            Unlock::Reference(x) => {
                let ok = (x.reference as usize) < i
                    && matches!(
                        unlocks.get(x.reference as usize),
                        Some(Unlock::Signature(_) | Unlock::Multi(_))
                    );
                if !ok {
                    return Err(Error::invalid(
                        "reference unlock must point to an earlier signature or multi unlock",
                    )
                    .at_index("unlocks", i));
                }
            }
            Unlock::Account(x) | Unlock::Anchor(x) | Unlock::Nft(x) => {
                if x.reference as usize >= i {
                    return Err(
                        Error::invalid("chain unlock must point to an earlier unlock")
                            .at_index("unlocks", i),
                    );
                }
            }
            Unlock::Multi(m) => {
                for (j, s) in m.unlocks.iter().enumerate() {
                    if let Unlock::Reference(x)
                    | Unlock::Account(x)
                    | Unlock::Anchor(x)
                    | Unlock::Nft(x) = s
                    {
                        if x.reference as usize >= i {
                            return Err(Error::invalid(
                                "unlock inside a multi unlock must point to an earlier unlock",
                            )
                            .at_index("unlocks", j)
                            .at_index("unlocks", i));
                        }
                    }
                }
            }
            Unlock::Signature(_) => {}
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- transaction

/// A transaction (no type byte of its own).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Transaction<'a> {
    /// Network id (must match the protocol parameters).
    #[serde(with = "u64_str")]
    pub network_id: u64,
    /// Creation slot.
    pub creation_slot: u32,
    /// Context inputs, sorted by type then id/index.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 65535>",
        skip_serializing_if = "json::is_empty"
    )]
    pub context_inputs: Vec<ContextInput<'a>>,
    /// UTXO inputs (zerocopy), pairwise distinct.
    #[serde(deserialize_with = "json::bounded_cow::<_, _, 65535>")]
    pub inputs: Cow<'a, [UtxoInput]>,
    /// Mana allotments (zerocopy), sorted by account id.
    #[serde(
        default,
        deserialize_with = "json::bounded_cow::<_, _, 65535>",
        skip_serializing_if = "json::is_empty"
    )]
    pub allotments: Cow<'a, [Allotment]>,
    /// Capabilities bitmask.
    #[serde(
        default,
        deserialize_with = "json::bounded_bytes::<_, 255>",
        skip_serializing_if = "Bytes::is_empty"
    )]
    pub capabilities: Bytes<'a>,
    /// Optional payload (only Tagged Data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload<'a>>,
    /// Outputs.
    #[serde(deserialize_with = "json::bounded::<_, _, 65535>")]
    pub outputs: Vec<Output<'a>>,
}

impl<'a> Transaction<'a> {
    /// Reads everything up to and including the payload (the "essence");
    /// the outputs are left empty.
    fn read_essence(r: &mut Reader<'a>) -> Result<Self> {
        let network_id = r.u64()?;
        let creation_slot = r.u32()?;

        let n = r.len(&CONTEXT_INPUTS).at("contextInputs")?;
        let mut context_inputs: Vec<ContextInput<'a>> = Vec::with_capacity(n);
        for i in 0..n {
            let c = ContextInput::read(r).at_index("contextInputs", i)?;
            if let Some(prev) = context_inputs.last() {
                match prev.key().cmp(&c.key()) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => {
                        return Err(Error::new(ErrorKind::Duplicate("context input"))
                            .at_index("contextInputs", i))
                    }
                    std::cmp::Ordering::Greater => {
                        return Err(Error::new(ErrorKind::NotSorted(
                            "context inputs by type, then account id / index",
                        ))
                        .at_index("contextInputs", i))
                    }
                }
            }
            context_inputs.push(c);
        }
        let has_commitment = matches!(context_inputs.first(), Some(ContextInput::Commitment(_)));
        if !has_commitment && !context_inputs.is_empty() {
            return Err(Error::invalid(
                "block issuance credit and reward inputs require a commitment input",
            )
            .at("contextInputs"));
        }

        let n = r.len(&INPUTS).at("inputs")?;
        let inputs = r.slice_of::<UtxoInput>(n).at("inputs")?;
        for (i, inp) in inputs.iter().enumerate() {
            if inp.kind != 0 {
                return Err(
                    Error::new(ErrorKind::UnknownType(inp.kind.into())).at_index("inputs", i)
                );
            }
            if usize::from(inp.transaction_output_index.get()) >= MAX_IO {
                return Err(Error::invalid("output index must be < 128").at_index("inputs", i));
            }
            if inputs[..i].iter().any(|p| {
                p.transaction_id == inp.transaction_id
                    && p.transaction_output_index == inp.transaction_output_index
            }) {
                return Err(Error::new(ErrorKind::Duplicate("input (same output id)"))
                    .at_index("inputs", i));
            }
        }
        for (i, c) in context_inputs.iter().enumerate() {
            if let ContextInput::Reward(x) = c {
                if usize::from(x.index) >= n {
                    return Err(
                        Error::invalid("reward input index must be < number of inputs")
                            .at_index("contextInputs", i),
                    );
                }
            }
        }

        let n = r.len(&ALLOTMENTS).at("allotments")?;
        let allotments = r.slice_of::<Allotment>(n).at("allotments")?;
        crate::wire::check_strictly_ascending(
            allotments.iter().map(|a| &a.account_id),
            "allotments",
            "allotments by account id",
        )?;
        if let Some(i) = allotments.iter().position(|a| a.mana.get() == 0) {
            return Err(Error::invalid("allotted mana must be > 0").at_index("allotments", i));
        }

        let capabilities = read_capabilities(r).at("capabilities")?;
        let payload = crate::nova::block::read_payload_slot(r, |r| {
            let p = Payload::read(r)?;
            if !matches!(p, Payload::TaggedData(_)) {
                return Err(Error::new(ErrorKind::UnknownType(p.kind().into())));
            }
            Ok(p)
        })
        .at("payload")?;
        Ok(Self {
            network_id,
            creation_slot,
            context_inputs,
            inputs: Cow::Borrowed(inputs),
            allotments: Cow::Borrowed(allotments),
            capabilities,
            payload,
            outputs: Vec::new(),
        })
    }

    /// Appends the essence bytes (everything but the outputs).
    pub fn encode_essence(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.network_id.to_le_bytes());
        out.extend_from_slice(&self.creation_slot.to_le_bytes());
        CONTEXT_INPUTS
            .put(self.context_inputs.len(), out)
            .at("contextInputs")?;
        for c in &self.context_inputs {
            c.encode(out)?;
        }
        INPUTS.put(self.inputs.len(), out).at("inputs")?;
        out.extend_from_slice(self.inputs.as_bytes());
        ALLOTMENTS
            .put(self.allotments.len(), out)
            .at("allotments")?;
        out.extend_from_slice(self.allotments.as_bytes());
        write_capabilities(&self.capabilities, out)?;
        write_optional(self.payload.as_ref(), out, |p, out| p.encode(out)).at("payload")?;
        Ok(())
    }

    /// The id of the commitment input, if any.
    pub fn commitment_input(&self) -> Option<&[u8; 36]> {
        match self.context_inputs.first() {
            Some(ContextInput::Commitment(c)) => Some(c.commitment_id.as_array()),
            _ => None,
        }
    }

    /// BLAKE2b-256 of the essence bytes.
    ///
    /// # Errors
    /// As [`Codec::encode`].
    pub fn transaction_commitment(&self) -> Result<[u8; 32]> {
        let mut v = Vec::with_capacity(256);
        self.encode_essence(&mut v)?;
        Ok(blake2b256(&v))
    }

    /// Merkle root over the serialized outputs.
    ///
    /// # Errors
    /// As [`Codec::encode`], located at the output.
    pub fn output_commitment(&self) -> Result<[u8; 32]> {
        let mut buf = Vec::with_capacity(128);
        let mut leaves = Vec::with_capacity(self.outputs.len());
        for (i, o) in self.outputs.iter().enumerate() {
            buf.clear();
            buf.push(0u8);
            o.encode(&mut buf).at_index("outputs", i)?;
            leaves.push(blake2b256(&buf));
        }
        Ok(crate::merkle::root_of_leaf_hashes(&leaves))
    }

    /// Transaction id: `H(transactionCommitment || outputCommitment) || creationSlot`.
    ///
    /// # Errors
    /// As [`Codec::encode`].
    pub fn id(&self) -> Result<[u8; 36]> {
        let h = blake2b256_parts(&[&self.transaction_commitment()?, &self.output_commitment()?]);
        Ok(with_slot(h, self.creation_slot))
    }

    /// The message unlock signatures sign: BLAKE2b-256 of the transaction bytes.
    ///
    /// # Errors
    /// As [`Codec::encode`].
    pub fn signing_message(&self) -> Result<[u8; 32]> {
        Ok(blake2b256(&self.to_bytes()?))
    }

    /// Output id of output `index`.
    pub fn output_id(tx_id: &[u8; 36], index: u16) -> [u8; 38] {
        let mut id = [0u8; 38];
        id[..36].copy_from_slice(tx_id);
        id[36..].copy_from_slice(&index.to_le_bytes());
        id
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Transaction<'static> {
        Transaction {
            network_id: self.network_id,
            creation_slot: self.creation_slot,
            context_inputs: owned_list(self.context_inputs, ContextInput::into_owned),
            inputs: Cow::Owned(self.inputs.into_owned()),
            allotments: Cow::Owned(self.allotments.into_owned()),
            capabilities: self.capabilities.into_owned(),
            payload: self.payload.map(Payload::into_owned),
            outputs: owned_list(self.outputs, Output::into_owned),
        }
    }
}

impl<'a> Codec<'a> for Transaction<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let mut tx = Self::read_essence(r)?;
        let n = r.len(&OUTPUTS).at("outputs")?;
        let mut outputs = Vec::with_capacity(n);
        let mut total: u64 = 0;
        let mut mana: u64 = 0;
        for i in 0..n {
            let o = Output::read(r).at_index("outputs", i)?;
            if o.amount() == 0 {
                return Err(Error::invalid("output amount must be > 0").at_index("outputs", i));
            }
            total = total
                .checked_add(o.amount())
                .ok_or_else(|| Error::invalid("sum of output amounts overflows").at("outputs"))?;
            mana = mana
                .checked_add(o.mana())
                .ok_or_else(|| Error::invalid("sum of output mana overflows").at("outputs"))?;
            outputs.push(o);
        }
        tx.outputs = outputs;
        // Staking / block issuer features and delegation outputs need a commitment input.
        if tx.commitment_input().is_none() {
            for (i, o) in tx.outputs.iter().enumerate() {
                let needs = matches!(o, Output::Delegation(_))
                    || o.features().iter().any(|f| {
                        matches!(
                            f,
                            crate::nova::output::Feature::Staking(_)
                                | crate::nova::output::Feature::BlockIssuer(_)
                        )
                    });
                if needs {
                    return Err(Error::invalid("staking/block issuer features and delegation outputs require a commitment input")
                        .at_index("outputs", i));
                }
            }
        }
        Ok(tx)
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        self.encode_essence(out)?;
        OUTPUTS.put(self.outputs.len(), out).at("outputs")?;
        for o in &self.outputs {
            o.encode(out)?;
        }
        Ok(())
    }
}

/// Signed Transaction payload (type 1): a transaction and its unlocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedTransaction<'a> {
    /// The transaction.
    pub transaction: Transaction<'a>,
    /// One unlock per input.
    #[serde(deserialize_with = "json::bounded::<_, _, 65535>")]
    pub unlocks: Vec<Unlock<'a>>,
}

impl<'a> Codec<'a> for SignedTransaction<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let transaction = Transaction::read(r).at("transaction")?;
        let n = r.len(&UNLOCKS).at("unlocks")?;
        if n != transaction.inputs.len() {
            return Err(Error::invalid(format!(
                "unlock count {n} does not equal input count {}",
                transaction.inputs.len()
            ))
            .at("unlocks"));
        }
        let mut unlocks = Vec::with_capacity(n);
        for i in 0..n {
            unlocks.push(Unlock::read(r).at_index("unlocks", i)?);
        }
        check_unlocks(&unlocks)?;
        Ok(Self {
            transaction,
            unlocks,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        self.transaction.encode(out)?;
        self.encode_unlocks(out)?;
        Ok(())
    }
}

impl SignedTransaction<'_> {
    fn encode_unlocks(&self, out: &mut Vec<u8>) -> Result<()> {
        UNLOCKS.put(self.unlocks.len(), out).at("unlocks")?;
        for u in &self.unlocks {
            u.encode(out)?;
        }
        Ok(())
    }

    /// Signed transaction id: `H(transaction bytes || unlocks bytes) || creationSlot`.
    ///
    /// # Errors
    /// As [`Codec::encode`].
    pub fn id(&self) -> Result<[u8; 36]> {
        let mut v = Vec::with_capacity(512);
        self.encode(&mut v)?;
        Ok(with_slot(blake2b256(&v), self.transaction.creation_slot))
    }

    /// Checks every signature unlock against the transaction signing message;
    /// one flag per signature, in order (multi unlocks included).
    ///
    /// # Errors
    /// As [`Transaction::signing_message`].
    pub fn verify_signatures(&self) -> Result<Vec<bool>> {
        let msg = self.transaction.signing_message()?;
        let mut out = Vec::new();
        fn walk(u: &Unlock<'_>, msg: &[u8], out: &mut Vec<bool>) {
            match u {
                Unlock::Signature(s) => {
                    let Signature::Ed25519(e) = &s.signature;
                    out.push(e.verify(msg));
                }
                Unlock::Multi(m) => m.unlocks.iter().for_each(|u| walk(u, msg, out)),
                _ => {}
            }
        }
        self.unlocks.iter().for_each(|u| walk(u, &msg, &mut out));
        Ok(out)
    }

    /// Work score (TIP-45) without the block part: payload bytes are counted by the caller.
    pub fn work_score_parts(&self, w: &crate::nova::params::WorkScoreParameters) -> u64 {
        let t = &self.transaction;
        let mut s = u64::from(w.context_input) * t.context_inputs.len() as u64
            + u64::from(w.input) * t.inputs.len() as u64
            + u64::from(w.allotment) * t.allotments.len() as u64;
        for o in &t.outputs {
            s += o.work_score(w);
        }
        let sigs: usize = self.unlocks.iter().map(Unlock::signature_count).sum();
        s + u64::from(w.signature_ed25519) * sigs as u64
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> SignedTransaction<'static> {
        SignedTransaction {
            transaction: self.transaction.into_owned(),
            unlocks: owned_list(self.unlocks, Unlock::into_owned),
        }
    }
}

/// Appends a slot index to a 32-byte hash.
pub fn with_slot(h: [u8; 32], slot: u32) -> [u8; 36] {
    let mut id = [0u8; 36];
    id[..32].copy_from_slice(&h);
    id[32..].copy_from_slice(&slot.to_le_bytes());
    id
}

/// Merkle root (TIP-45 / iota.go merklehasher) over raw leaves.
pub fn merkle_root(leaves: &[&[u8]]) -> [u8; 32] {
    crate::merkle::root(leaves)
}

/// Account/NFT/anchor/delegation id of a chain output created at `output_id`.
pub fn chain_id(output_id: &[u8; 38]) -> [u8; 32] {
    blake2b256(output_id)
}
