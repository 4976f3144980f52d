//! Outputs (TIP-18): Treasury (2), Basic (3), Alias (4), Foundry (5), NFT (6),
//! with their native tokens, token scheme, unlock conditions and features.
//!
//! Reading is split in two: [`Output::read_layout`] checks only the byte
//! layout (known types, declared lengths), [`Output::check_syntax`] the
//! per-type rules (allowed and mandatory unlock conditions and features,
//! order, uniqueness, token scheme, chain ids). [`Codec::read`] does both.

use serde::{Deserialize, Serialize, Serializer};

use super::address::Address;
use super::check_types_ascending;
use super::protocol::RentStructure;
use crate::error::{Context, Error, ErrorKind, Result};
use crate::types::{
    into_owned_variants, owned_list, tagged, u64_str, variant_field, Bytes, Fixed, Hash32, U256,
};
use crate::wire::{fields_codec, type_bytes, Codec, Len, Prefix, Reader};

/// Native tokens per output: at most 64.
pub const NATIVE_TOKENS: Len = Len::new(Prefix::U8, 0, 64);
/// Metadata feature data: 1..=8192 bytes.
pub const METADATA: Len = Len::new(Prefix::U16, 1, 8192);
/// Tag feature: 1..=64 bytes.
pub const TAG: Len = Len::new(Prefix::U8, 1, 64);
/// Alias state metadata: 0..=8192 bytes.
pub const STATE_METADATA: Len = Len::new(Prefix::U16, 0, 8192);

/// A native token: 38-byte token (foundry) id and a non-zero uint256 amount.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeToken<'a> {
    /// Token id (= foundry id).
    pub id: Fixed<'a, 38>,
    /// Amount (uint256).
    pub amount: U256,
}

impl NativeToken<'_> {
    /// Serialized length: 38-byte id and 32-byte amount.
    pub const LEN: usize = 38 + 32;

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> NativeToken<'static> {
        NativeToken {
            id: self.id.into_owned(),
            amount: self.amount,
        }
    }
}

fields_codec!(NativeToken<'a> { id: "id", amount: "amount" });

/// Reads a native token list (layout only).
fn read_native_tokens<'a>(r: &mut Reader<'a>) -> Result<Vec<NativeToken<'a>>> {
    crate::wire::read_list(r, &NATIVE_TOKENS, "nativeTokens")
}

pub(crate) use crate::wire::write_list;

/// Native tokens: non-zero amounts, ascending by id, unique.
fn check_native_tokens(nts: &[NativeToken<'_>]) -> Result<()> {
    for (i, nt) in nts.iter().enumerate() {
        if nt.amount.is_zero() {
            return Err(Error::invalid("native token amount is zero").at_index("nativeTokens", i));
        }
    }
    crate::wire::check_strictly_ascending(
        nts.iter().map(|n| n.id.as_array()),
        "nativeTokens",
        "token id",
    )
}

/// The Simple Token Scheme (type 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SimpleTokenScheme {
    /// Tokens minted so far.
    pub minted_tokens: U256,
    /// Tokens melted so far.
    pub melted_tokens: U256,
    /// Maximum supply.
    pub maximum_supply: U256,
}

/// A foundry's token scheme; only the Simple Token Scheme exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenScheme {
    /// Type 0.
    Simple(SimpleTokenScheme),
}

impl SimpleTokenScheme {
    /// Serialized length as a token scheme: type byte and three uint256.
    pub const LEN: usize = 1 + 3 * 32;
}

type_bytes!(TokenScheme { SIMPLE = 0 => Simple });

impl TokenScheme {
    /// Syntactic rules: maximum > 0, melted ≤ minted, minted − melted ≤ maximum.
    ///
    /// # Errors
    /// The broken rule.
    pub fn check(&self) -> Result<()> {
        let Self::Simple(s) = self;
        if s.maximum_supply.is_zero() {
            return Err(Error::invalid("maximum supply is zero"));
        }
        if s.melted_tokens > s.minted_tokens {
            return Err(Error::invalid("melted tokens exceed minted tokens"));
        }
        if s.minted_tokens.0 - s.melted_tokens.0 > s.maximum_supply.0 {
            return Err(Error::invalid("circulating supply exceeds maximum supply"));
        }
        Ok(())
    }
}

impl<'a> Codec<'a> for TokenScheme {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        match r.u8()? {
            Self::SIMPLE => Ok(Self::Simple(SimpleTokenScheme {
                minted_tokens: U256::from_le(r.array()?),
                melted_tokens: U256::from_le(r.array()?),
                maximum_supply: U256::from_le(r.array()?),
            })),
            t => Err(ErrorKind::UnknownType(t.into()).into()),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        let Self::Simple(s) = self;
        out.push(Self::SIMPLE);
        out.extend_from_slice(&s.minted_tokens.to_le());
        out.extend_from_slice(&s.melted_tokens.to_le());
        out.extend_from_slice(&s.maximum_supply.to_le());
        Ok(())
    }
}

impl Serialize for TokenScheme {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Self::Simple(v) = self;
        tagged::serialize(s, Self::SIMPLE.into(), v)
    }
}

crate::types::tagged::deserialize_tagged!(TokenScheme, |ty, rest| {
    match u8::try_from(ty).ok() {
        Some(Self::SIMPLE) => Ok(Self::Simple(tagged::rest::<D, SimpleTokenScheme>(rest)?)),
        _ => Err(serde::de::Error::custom(format!(
            "unknown token scheme type {ty}"
        ))),
    }
});

/// An unlock condition (TIP-18), types 0–6.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum UnlockCondition<'a> {
    /// 0: the owning address.
    Address(Address<'a>),
    /// 1: storage deposit return.
    StorageDepositReturn {
        /// Where the deposit goes back to.
        return_address: Address<'a>,
        /// How much must go back.
        amount: u64,
    },
    /// 2: timelock (unix seconds, non-zero).
    Timelock(u32),
    /// 3: expiration.
    Expiration {
        /// Owner after expiry.
        return_address: Address<'a>,
        /// Unix seconds, non-zero.
        unix_time: u32,
    },
    /// 4: alias state controller.
    StateControllerAddress(Address<'a>),
    /// 5: alias governor.
    GovernorAddress(Address<'a>),
    /// 6: the foundry's controlling alias (an alias address).
    ImmutableAliasAddress(Address<'a>),
}

type_bytes!(UnlockCondition<'_> {
    ADDRESS = 0 => Address, STORAGE_DEPOSIT_RETURN = 1 => StorageDepositReturn,
    TIMELOCK = 2 => Timelock, EXPIRATION = 3 => Expiration,
    STATE_CONTROLLER_ADDRESS = 4 => StateControllerAddress,
    GOVERNOR_ADDRESS = 5 => GovernorAddress, IMMUTABLE_ALIAS_ADDRESS = 6 => ImmutableAliasAddress,
});

impl UnlockCondition<'_> {
    /// Serialized length in bytes (type byte included), without encoding.
    pub fn encoded_len(&self) -> usize {
        match self {
            Self::Address(_)
            | Self::StateControllerAddress(_)
            | Self::GovernorAddress(_)
            | Self::ImmutableAliasAddress(_) => 1 + Address::LEN,
            Self::StorageDepositReturn { .. } => 1 + Address::LEN + 8,
            Self::Timelock(_) => 1 + 4,
            Self::Expiration { .. } => 1 + Address::LEN + 4,
        }
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> UnlockCondition<'static> {
        match self {
            Self::Address(a) => UnlockCondition::Address(a.into_owned()),
            Self::StorageDepositReturn {
                return_address,
                amount,
            } => UnlockCondition::StorageDepositReturn {
                return_address: return_address.into_owned(),
                amount,
            },
            Self::Timelock(t) => UnlockCondition::Timelock(t),
            Self::Expiration {
                return_address,
                unix_time,
            } => UnlockCondition::Expiration {
                return_address: return_address.into_owned(),
                unix_time,
            },
            Self::StateControllerAddress(a) => {
                UnlockCondition::StateControllerAddress(a.into_owned())
            }
            Self::GovernorAddress(a) => UnlockCondition::GovernorAddress(a.into_owned()),
            Self::ImmutableAliasAddress(a) => {
                UnlockCondition::ImmutableAliasAddress(a.into_owned())
            }
        }
    }
}

impl<'a> Codec<'a> for UnlockCondition<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(match r.u8()? {
            Self::ADDRESS => Self::Address(Address::read(r)?),
            Self::STORAGE_DEPOSIT_RETURN => Self::StorageDepositReturn {
                return_address: Address::read(r)?,
                amount: r.u64()?,
            },
            Self::TIMELOCK => {
                let t = r.u32()?;
                if t == 0 {
                    return Err(Error::invalid("timelock unix time is zero"));
                }
                Self::Timelock(t)
            }
            Self::EXPIRATION => {
                let return_address = Address::read(r)?;
                let unix_time = r.u32()?;
                if unix_time == 0 {
                    return Err(Error::invalid("expiration unix time is zero"));
                }
                Self::Expiration {
                    return_address,
                    unix_time,
                }
            }
            Self::STATE_CONTROLLER_ADDRESS => Self::StateControllerAddress(Address::read(r)?),
            Self::GOVERNOR_ADDRESS => Self::GovernorAddress(Address::read(r)?),
            Self::IMMUTABLE_ALIAS_ADDRESS => {
                let a = Address::read(r)?;
                if a.kind() != Address::ALIAS {
                    return Err(Error::new(ErrorKind::UnknownType(a.kind().into())).at("address"));
                }
                Self::ImmutableAliasAddress(a)
            }
            t => return Err(ErrorKind::UnknownType(t.into()).into()),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.kind());
        match self {
            Self::Address(a)
            | Self::StateControllerAddress(a)
            | Self::GovernorAddress(a)
            | Self::ImmutableAliasAddress(a) => a.encode(out)?,
            Self::StorageDepositReturn {
                return_address,
                amount,
            } => {
                return_address.encode(out)?;
                out.extend_from_slice(&amount.to_le_bytes());
            }
            Self::Timelock(t) => out.extend_from_slice(&t.to_le_bytes()),
            Self::Expiration {
                return_address,
                unix_time,
            } => {
                return_address.encode(out)?;
                out.extend_from_slice(&unix_time.to_le_bytes());
            }
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AddressJson<'a> {
    address: Address<'a>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SdrucJson<'a> {
    return_address: Address<'a>,
    #[serde(with = "u64_str")]
    amount: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TimeJson {
    unix_time: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpirationJson<'a> {
    return_address: Address<'a>,
    unix_time: u32,
}

impl Serialize for UnlockCondition<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let k = self.kind().into();
        match self {
            Self::Address(a)
            | Self::StateControllerAddress(a)
            | Self::GovernorAddress(a)
            | Self::ImmutableAliasAddress(a) => {
                tagged::serialize(s, k, &AddressJson { address: a.clone() })
            }
            Self::StorageDepositReturn {
                return_address,
                amount,
            } => tagged::serialize(
                s,
                k,
                &SdrucJson {
                    return_address: return_address.clone(),
                    amount: *amount,
                },
            ),
            Self::Timelock(t) => tagged::serialize(s, k, &TimeJson { unix_time: *t }),
            Self::Expiration {
                return_address,
                unix_time,
            } => tagged::serialize(
                s,
                k,
                &ExpirationJson {
                    return_address: return_address.clone(),
                    unix_time: *unix_time,
                },
            ),
        }
    }
}

crate::types::tagged::deserialize_tagged!(UnlockCondition<'_>, |ty, rest| {
    Ok(match u8::try_from(ty).ok() {
        Some(Self::ADDRESS) => {
            Self::Address(tagged::rest::<D, AddressJson<'static>>(rest)?.address)
        }
        Some(Self::STORAGE_DEPOSIT_RETURN) => {
            let j = tagged::rest::<D, SdrucJson<'static>>(rest)?;
            Self::StorageDepositReturn {
                return_address: j.return_address,
                amount: j.amount,
            }
        }
        Some(Self::TIMELOCK) => Self::Timelock(tagged::rest::<D, TimeJson>(rest)?.unix_time),
        Some(Self::EXPIRATION) => {
            let j = tagged::rest::<D, ExpirationJson<'static>>(rest)?;
            Self::Expiration {
                return_address: j.return_address,
                unix_time: j.unix_time,
            }
        }
        Some(Self::STATE_CONTROLLER_ADDRESS) => {
            Self::StateControllerAddress(tagged::rest::<D, AddressJson<'static>>(rest)?.address)
        }
        Some(Self::GOVERNOR_ADDRESS) => {
            Self::GovernorAddress(tagged::rest::<D, AddressJson<'static>>(rest)?.address)
        }
        Some(Self::IMMUTABLE_ALIAS_ADDRESS) => {
            Self::ImmutableAliasAddress(tagged::rest::<D, AddressJson<'static>>(rest)?.address)
        }
        _ => {
            return Err(serde::de::Error::custom(format!(
                "unknown unlock condition type {ty}"
            )))
        }
    })
});

/// A feature (TIP-18), types 0–3.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Feature<'a> {
    /// 0: sender.
    Sender(Address<'a>),
    /// 1: issuer (immutable lists only).
    Issuer(Address<'a>),
    /// 2: metadata, 1..=8192 bytes.
    Metadata(Bytes<'a>),
    /// 3: tag, 1..=64 bytes.
    Tag(Bytes<'a>),
}

type_bytes!(Feature<'_> {
    SENDER = 0 => Sender, ISSUER = 1 => Issuer, METADATA = 2 => Metadata, TAG = 3 => Tag,
});

into_owned_variants!(Feature: Sender, Issuer, Metadata, Tag);

impl Feature<'_> {
    /// Serialized length in bytes (type byte and length prefix included), without encoding.
    pub fn encoded_len(&self) -> usize {
        match self {
            Self::Sender(_) | Self::Issuer(_) => 1 + Address::LEN,
            Self::Metadata(b) => (1 + METADATA.width()).saturating_add(b.len()),
            Self::Tag(b) => (1 + TAG.width()).saturating_add(b.len()),
        }
    }
}

impl<'a> Codec<'a> for Feature<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(match r.u8()? {
            Self::SENDER => Self::Sender(Address::read(r)?),
            Self::ISSUER => Self::Issuer(Address::read(r)?),
            Self::METADATA => Self::Metadata(Bytes::borrowed(r.prefixed(&METADATA).at("data")?)),
            Self::TAG => Self::Tag(Bytes::borrowed(r.prefixed(&TAG).at("tag")?)),
            t => return Err(ErrorKind::UnknownType(t.into()).into()),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.kind());
        match self {
            Self::Sender(a) | Self::Issuer(a) => a.encode(out)?,
            Self::Metadata(b) => {
                METADATA.put_bytes(b.as_slice(), out).at("data")?;
            }
            Self::Tag(b) => {
                TAG.put_bytes(b.as_slice(), out).at("tag")?;
            }
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DataJson<'a> {
    data: Bytes<'a>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TagJson<'a> {
    tag: Bytes<'a>,
}

impl Serialize for Feature<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let k = self.kind().into();
        match self {
            Self::Sender(a) | Self::Issuer(a) => {
                tagged::serialize(s, k, &AddressJson { address: a.clone() })
            }
            Self::Metadata(b) => tagged::serialize(s, k, &DataJson { data: b.clone() }),
            Self::Tag(b) => tagged::serialize(s, k, &TagJson { tag: b.clone() }),
        }
    }
}

crate::types::tagged::deserialize_tagged!(Feature<'_>, |ty, rest| {
    Ok(match u8::try_from(ty).ok() {
        Some(Self::SENDER) => Self::Sender(tagged::rest::<D, AddressJson<'static>>(rest)?.address),
        Some(Self::ISSUER) => Self::Issuer(tagged::rest::<D, AddressJson<'static>>(rest)?.address),
        Some(Self::METADATA) => Self::Metadata(tagged::rest::<D, DataJson<'static>>(rest)?.data),
        Some(Self::TAG) => Self::Tag(tagged::rest::<D, TagJson<'static>>(rest)?.tag),
        _ => {
            return Err(serde::de::Error::custom(format!(
                "unknown feature type {ty}"
            )))
        }
    })
});

/// Reads `count u8 ‖ elements` with at most `max` elements (layout only).
fn read_list<'a, T: Codec<'a>>(
    r: &mut Reader<'a>,
    max: usize,
    name: &'static str,
) -> Result<Vec<T>> {
    crate::wire::read_list(r, &Len::new(Prefix::U8, 0, max), name)
}

fn put_u8_list<'a, T: Codec<'a>>(items: &[T], name: &'static str, out: &mut Vec<u8>) -> Result<()> {
    write_list(&Len::new(Prefix::U8, 0, 255), items, name, out)
}

/// Checks count, order and the allowed set of a type-keyed list.
fn check_kinds(
    kinds: &[u8],
    allowed: &[u8],
    min: usize,
    max: usize,
    name: &'static str,
) -> Result<()> {
    Len::new(Prefix::U8, min, max).check(kinds.len()).at(name)?;
    for (i, k) in kinds.iter().enumerate() {
        if !allowed.contains(k) {
            return Err(Error::new(ErrorKind::UnknownType((*k).into())).at_index(name, i));
        }
    }
    check_types_ascending(kinds.iter().copied(), name)
}

fn uc_kinds(ucs: &[UnlockCondition<'_>]) -> ([u8; 8], usize) {
    let mut k = [0u8; 8];
    for (slot, uc) in k.iter_mut().zip(ucs) {
        *slot = uc.kind();
    }
    (k, ucs.len().min(8))
}

fn check_ucs(ucs: &[UnlockCondition<'_>], allowed: &[u8], min: usize, max: usize) -> Result<()> {
    let (k, n) = uc_kinds(ucs);
    if ucs.len() > 8 {
        return Len::new(Prefix::U8, min, max)
            .check(ucs.len())
            .at("unlockConditions");
    }
    check_kinds(
        k.get(..n).unwrap_or_default(),
        allowed,
        min,
        max,
        "unlockConditions",
    )
}

fn check_features(fs: &[Feature<'_>], allowed: &[u8], name: &'static str) -> Result<()> {
    if fs.len() > 4 {
        return Len::new(Prefix::U8, 0, allowed.len())
            .check(fs.len())
            .at(name);
    }
    let mut k = [0u8; 4];
    for (slot, f) in k.iter_mut().zip(fs) {
        *slot = f.kind();
    }
    check_kinds(
        k.get(..fs.len()).unwrap_or_default(),
        allowed,
        0,
        allowed.len(),
        name,
    )
}

fn has_address_uc(ucs: &[UnlockCondition<'_>]) -> Result<()> {
    if ucs.iter().any(|u| matches!(u, UnlockCondition::Address(_))) {
        Ok(())
    } else {
        Err(Error::invalid("address unlock condition missing").at("unlockConditions"))
    }
}

fn check_sdruc(ucs: &[UnlockCondition<'_>], amount: u64) -> Result<()> {
    for (i, uc) in ucs.iter().enumerate() {
        if let UnlockCondition::StorageDepositReturn { amount: ret, .. } = uc {
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

/// The Treasury Output (type 2): only the amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreasuryOutput {
    /// Tokens in the treasury.
    #[serde(with = "u64_str")]
    pub amount: u64,
}

impl<'a> Codec<'a> for TreasuryOutput {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        match r.u8()? {
            Output::TREASURY => Ok(Self { amount: r.u64()? }),
            t => Err(ErrorKind::UnknownType(t.into()).into()),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(Output::TREASURY);
        out.extend_from_slice(&self.amount.to_le_bytes());
        Ok(())
    }
}

/// The Basic Output (type 3).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BasicOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Native tokens (sorted by id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub native_tokens: Vec<NativeToken<'a>>,
    /// Unlock conditions (sorted by type).
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Features (sorted by type).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<Feature<'a>>,
}

/// The Alias Output (type 4).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AliasOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Native tokens (sorted by id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub native_tokens: Vec<NativeToken<'a>>,
    /// Alias id (zero when created by this output).
    pub alias_id: Hash32<'a>,
    /// State index.
    pub state_index: u32,
    /// State metadata, up to 8192 bytes.
    #[serde(default, skip_serializing_if = "Bytes::is_empty")]
    pub state_metadata: Bytes<'a>,
    /// Foundries created so far.
    pub foundry_counter: u32,
    /// Exactly state controller (4) and governor (5).
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Sender / Metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<Feature<'a>>,
    /// Issuer / Metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub immutable_features: Vec<Feature<'a>>,
}

/// The Foundry Output (type 5).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FoundryOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Native tokens (sorted by id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub native_tokens: Vec<NativeToken<'a>>,
    /// Serial number within the alias.
    pub serial_number: u32,
    /// Token scheme.
    pub token_scheme: TokenScheme,
    /// Exactly one Immutable Alias Address (6).
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Metadata only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<Feature<'a>>,
    /// Metadata only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub immutable_features: Vec<Feature<'a>>,
}

/// The NFT Output (type 6).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NftOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Native tokens (sorted by id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub native_tokens: Vec<NativeToken<'a>>,
    /// NFT id (zero when minted by this output).
    pub nft_id: Hash32<'a>,
    /// As Basic: Address mandatory.
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Sender / Metadata / Tag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<Feature<'a>>,
    /// Issuer / Metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub immutable_features: Vec<Feature<'a>>,
}

/// An output.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Output<'a> {
    /// Type 2 (treasury transactions only).
    Treasury(TreasuryOutput),
    /// Type 3.
    Basic(BasicOutput<'a>),
    /// Type 4.
    Alias(AliasOutput<'a>),
    /// Type 5.
    Foundry(FoundryOutput<'a>),
    /// Type 6.
    Nft(NftOutput<'a>),
}

type_bytes!(Output<'_> {
    TREASURY = 2 => Treasury, BASIC = 3 => Basic, ALIAS = 4 => Alias, FOUNDRY = 5 => Foundry,
    NFT = 6 => Nft,
});

impl<'a> Output<'a> {
    /// A Basic output of `amount` owned by `address`, with nothing else (the common transfer).
    pub fn basic(amount: u64, address: Address<'a>) -> Self {
        Output::Basic(BasicOutput {
            amount,
            native_tokens: Vec::new(),
            unlock_conditions: vec![UnlockCondition::Address(address)],
            features: Vec::new(),
        })
    }

    variant_field!(
        /// Base token amount.
        amount -> u64 = |o| o.amount, Treasury Basic Alias Foundry Nft
    );
    variant_field!(
        /// Native tokens (empty for treasury outputs).
        native_tokens -> &[NativeToken<'a>] = |o| &o.native_tokens, Basic Alias Foundry Nft; else &[]
    );
    variant_field!(
        /// Unlock conditions (empty for treasury outputs).
        unlock_conditions -> &[UnlockCondition<'a>] = |o| &o.unlock_conditions,
            Basic Alias Foundry Nft; else &[]
    );
    variant_field!(
        /// Mutable features (empty for treasury outputs).
        features -> &[Feature<'a>] = |o| &o.features, Basic Alias Foundry Nft; else &[]
    );
    variant_field!(
        /// Immutable features (empty for treasury and basic outputs).
        immutable_features -> &[Feature<'a>] = |o| &o.immutable_features, Alias Foundry Nft; else &[]
    );

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Output<'static> {
        let nts = |v: Vec<NativeToken<'a>>| owned_list(v, NativeToken::into_owned);
        let ucs = |v: Vec<UnlockCondition<'a>>| owned_list(v, UnlockCondition::into_owned);
        let fs = |v: Vec<Feature<'a>>| owned_list(v, Feature::into_owned);
        match self {
            Self::Treasury(o) => Output::Treasury(o),
            Self::Basic(o) => Output::Basic(BasicOutput {
                amount: o.amount,
                native_tokens: nts(o.native_tokens),
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
            }),
            Self::Alias(o) => Output::Alias(AliasOutput {
                amount: o.amount,
                native_tokens: nts(o.native_tokens),
                alias_id: o.alias_id.into_owned(),
                state_index: o.state_index,
                state_metadata: o.state_metadata.into_owned(),
                foundry_counter: o.foundry_counter,
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
                immutable_features: fs(o.immutable_features),
            }),
            Self::Foundry(o) => Output::Foundry(FoundryOutput {
                amount: o.amount,
                native_tokens: nts(o.native_tokens),
                serial_number: o.serial_number,
                token_scheme: o.token_scheme,
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
                immutable_features: fs(o.immutable_features),
            }),
            Self::Nft(o) => Output::Nft(NftOutput {
                amount: o.amount,
                native_tokens: nts(o.native_tokens),
                nft_id: o.nft_id.into_owned(),
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
                immutable_features: fs(o.immutable_features),
            }),
        }
    }

    /// Reads an output checking only its byte layout (known types, length
    /// limits), not the per-type syntactic rules. For layout-only vectors and
    /// tools; nodes use [`Codec::read`].
    ///
    /// # Errors
    /// A layout error with its location.
    pub fn read_layout(r: &mut Reader<'a>) -> Result<Self> {
        let kind = r.u8()?;
        if kind == Self::TREASURY {
            return Ok(Self::Treasury(TreasuryOutput {
                amount: r.u64().at("amount")?,
            }));
        }
        let amount = r.u64().at("amount")?;
        let native_tokens = read_native_tokens(r)?;
        Ok(match kind {
            Self::BASIC => Self::Basic(BasicOutput {
                amount,
                native_tokens,
                unlock_conditions: read_list(r, 4, "unlockConditions")?,
                features: read_list(r, 3, "features")?,
            }),
            Self::ALIAS => Self::Alias(AliasOutput {
                amount,
                native_tokens,
                alias_id: Hash32::borrowed(r.array()?),
                state_index: r.u32()?,
                state_metadata: Bytes::borrowed(r.prefixed(&STATE_METADATA).at("stateMetadata")?),
                foundry_counter: r.u32()?,
                unlock_conditions: read_list(r, 2, "unlockConditions")?,
                features: read_list(r, 2, "features")?,
                immutable_features: read_list(r, 2, "immutableFeatures")?,
            }),
            Self::FOUNDRY => Self::Foundry(FoundryOutput {
                amount,
                native_tokens,
                serial_number: r.u32()?,
                token_scheme: TokenScheme::read(r).at("tokenScheme")?,
                unlock_conditions: read_list(r, 1, "unlockConditions")?,
                features: read_list(r, 1, "features")?,
                immutable_features: read_list(r, 1, "immutableFeatures")?,
            }),
            Self::NFT => Self::Nft(NftOutput {
                amount,
                native_tokens,
                nft_id: Hash32::borrowed(r.array()?),
                unlock_conditions: read_list(r, 4, "unlockConditions")?,
                features: read_list(r, 3, "features")?,
                immutable_features: read_list(r, 2, "immutableFeatures")?,
            }),
            t => return Err(ErrorKind::UnknownType(t.into()).into()),
        })
    }

    /// The per-type syntactic rules (TIP-18).
    ///
    /// # Errors
    /// The broken rule, located inside the output.
    pub fn check_syntax(&self) -> Result<()> {
        if let Self::Treasury(_) = self {
            return Ok(());
        }
        if self.amount() == 0 {
            return Err(Error::invalid("amount is zero").at("amount"));
        }
        check_native_tokens(self.native_tokens())?;
        match self {
            Self::Treasury(_) => {}
            Self::Basic(o) => {
                check_ucs(&o.unlock_conditions, &[0, 1, 2, 3], 1, 4)?;
                has_address_uc(&o.unlock_conditions)?;
                check_sdruc(&o.unlock_conditions, o.amount)?;
                check_features(&o.features, &[0, 2, 3], "features")?;
            }
            Self::Alias(o) => {
                check_ucs(&o.unlock_conditions, &[4, 5], 2, 2)?;
                check_features(&o.features, &[0, 2], "features")?;
                check_features(&o.immutable_features, &[1, 2], "immutableFeatures")?;
                if o.alias_id.is_zero() {
                    if o.state_index != 0 || o.foundry_counter != 0 {
                        return Err(Error::invalid(
                            "new alias (zero alias id) must have state index and foundry counter 0",
                        ));
                    }
                } else {
                    for (i, uc) in o.unlock_conditions.iter().enumerate() {
                        if let UnlockCondition::StateControllerAddress(Address::Alias(id))
                        | UnlockCondition::GovernorAddress(Address::Alias(id)) = uc
                        {
                            if id == &o.alias_id {
                                return Err(Error::invalid(
                                    "alias is controlled by its own address",
                                )
                                .at_index("unlockConditions", i));
                            }
                        }
                    }
                }
            }
            Self::Foundry(o) => {
                check_ucs(&o.unlock_conditions, &[6], 1, 1)?;
                check_features(&o.features, &[2], "features")?;
                check_features(&o.immutable_features, &[2], "immutableFeatures")?;
                o.token_scheme.check().at("tokenScheme")?;
            }
            Self::Nft(o) => {
                check_ucs(&o.unlock_conditions, &[0, 1, 2, 3], 1, 4)?;
                has_address_uc(&o.unlock_conditions)?;
                check_sdruc(&o.unlock_conditions, o.amount)?;
                check_features(&o.features, &[0, 2, 3], "features")?;
                check_features(&o.immutable_features, &[1, 2], "immutableFeatures")?;
                if !o.nft_id.is_zero() {
                    for (i, uc) in o.unlock_conditions.iter().enumerate() {
                        if let UnlockCondition::Address(Address::Nft(id)) = uc {
                            if id == &o.nft_id {
                                return Err(Error::invalid("NFT is owned by its own address")
                                    .at_index("unlockConditions", i));
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Serialized length in bytes, computed from the parts without encoding
    /// (the length of `self.to_bytes()`; no allocation).
    pub fn encoded_len(&self) -> usize {
        // Count prefix (u8) + elements, for the u8-counted lists.
        fn ucs(v: &[UnlockCondition<'_>]) -> usize {
            v.iter().fold(1, |n, u| n.saturating_add(u.encoded_len()))
        }
        fn fs(v: &[Feature<'_>]) -> usize {
            v.iter().fold(1, |n, f| n.saturating_add(f.encoded_len()))
        }
        // type + amount
        let head = 1 + 8;
        let rest = match self {
            Self::Treasury(_) => return head,
            Self::Basic(o) => ucs(&o.unlock_conditions).saturating_add(fs(&o.features)),
            Self::Alias(o) => (32 + 4 + STATE_METADATA.width() + 4)
                .saturating_add(o.state_metadata.len())
                .saturating_add(ucs(&o.unlock_conditions))
                .saturating_add(fs(&o.features))
                .saturating_add(fs(&o.immutable_features)),
            Self::Foundry(o) => (4 + SimpleTokenScheme::LEN)
                .saturating_add(ucs(&o.unlock_conditions))
                .saturating_add(fs(&o.features))
                .saturating_add(fs(&o.immutable_features)),
            Self::Nft(o) => 32usize
                .saturating_add(ucs(&o.unlock_conditions))
                .saturating_add(fs(&o.features))
                .saturating_add(fs(&o.immutable_features)),
        };
        let nts = self
            .native_tokens()
            .len()
            .saturating_mul(NativeToken::LEN)
            .saturating_add(NATIVE_TOKENS.width());
        rest.saturating_add(head).saturating_add(nts)
    }

    /// Minimum storage deposit of this output (TIP-19):
    /// `vByteCost × (factorKey·34 + factorData·(40 + serialized length))`.
    pub fn rent_cost(&self, rent: &RentStructure) -> u64 {
        rent.min_deposit(self.encoded_len())
    }

    /// The foundry id of a foundry output (alias address ‖ serial ‖ scheme type).
    pub fn foundry_id(&self) -> Option<[u8; 38]> {
        let Self::Foundry(f) = self else { return None };
        let alias = f.unlock_conditions.iter().find_map(|u| match u {
            UnlockCondition::ImmutableAliasAddress(Address::Alias(id)) => Some(id.as_array()),
            _ => None,
        })?;
        Some(super::ids::foundry_id(
            alias,
            f.serial_number,
            f.token_scheme.kind(),
        ))
    }
}

impl<'a> Codec<'a> for Output<'a> {
    #[inline]
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        // The result is checked in place and returned as is: moving the
        // ~200-byte output out of it and back would cost two memcpys.
        let o = Self::read_layout(r);
        if let Ok(v) = &o {
            v.check_syntax()?;
        }
        o
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.kind());
        if let Self::Treasury(o) = self {
            out.extend_from_slice(&o.amount.to_le_bytes());
            return Ok(());
        }
        out.extend_from_slice(&self.amount().to_le_bytes());
        write_list(&NATIVE_TOKENS, self.native_tokens(), "nativeTokens", out)?;
        match self {
            Self::Treasury(_) => {}
            Self::Basic(o) => {
                put_u8_list(&o.unlock_conditions, "unlockConditions", out)?;
                put_u8_list(&o.features, "features", out)?;
            }
            Self::Alias(o) => {
                out.extend_from_slice(o.alias_id.as_array());
                out.extend_from_slice(&o.state_index.to_le_bytes());
                STATE_METADATA
                    .put_bytes(o.state_metadata.as_slice(), out)
                    .at("stateMetadata")?;
                out.extend_from_slice(&o.foundry_counter.to_le_bytes());
                put_u8_list(&o.unlock_conditions, "unlockConditions", out)?;
                put_u8_list(&o.features, "features", out)?;
                put_u8_list(&o.immutable_features, "immutableFeatures", out)?;
            }
            Self::Foundry(o) => {
                out.extend_from_slice(&o.serial_number.to_le_bytes());
                o.token_scheme.encode(out)?;
                put_u8_list(&o.unlock_conditions, "unlockConditions", out)?;
                put_u8_list(&o.features, "features", out)?;
                put_u8_list(&o.immutable_features, "immutableFeatures", out)?;
            }
            Self::Nft(o) => {
                out.extend_from_slice(o.nft_id.as_array());
                put_u8_list(&o.unlock_conditions, "unlockConditions", out)?;
                put_u8_list(&o.features, "features", out)?;
                put_u8_list(&o.immutable_features, "immutableFeatures", out)?;
            }
        }
        Ok(())
    }
}

impl Serialize for Output<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let k = self.kind().into();
        match self {
            Self::Treasury(o) => tagged::serialize(s, k, o),
            Self::Basic(o) => tagged::serialize(s, k, o),
            Self::Alias(o) => tagged::serialize(s, k, o),
            Self::Foundry(o) => tagged::serialize(s, k, o),
            Self::Nft(o) => tagged::serialize(s, k, o),
        }
    }
}

crate::types::tagged::deserialize_tagged!(Output<'_>, |ty, rest| {
    Ok(match u8::try_from(ty).ok() {
        Some(Self::TREASURY) => Self::Treasury(tagged::rest::<D, TreasuryOutput>(rest)?),
        Some(Self::BASIC) => Self::Basic(tagged::rest::<D, BasicOutput<'static>>(rest)?),
        Some(Self::ALIAS) => Self::Alias(tagged::rest::<D, AliasOutput<'static>>(rest)?),
        Some(Self::FOUNDRY) => Self::Foundry(tagged::rest::<D, FoundryOutput<'static>>(rest)?),
        Some(Self::NFT) => Self::Nft(tagged::rest::<D, NftOutput<'static>>(rest)?),
        _ => {
            return Err(serde::de::Error::custom(format!(
                "unknown output type {ty}"
            )))
        }
    })
});

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(kind: u8, seed: u8) -> Address<'static> {
        let h = Hash32::owned([seed; 32]);
        match kind {
            Address::ALIAS => Address::Alias(h),
            Address::NFT => Address::Nft(h),
            _ => Address::Ed25519(h),
        }
    }

    fn nts(n: u8) -> Vec<NativeToken<'static>> {
        (0..n)
            .map(|i| NativeToken {
                id: Fixed::owned([i; 38]),
                amount: U256::from(u64::from(i) + 1),
            })
            .collect()
    }

    /// Every unlock condition, feature and output kind, with and without
    /// native tokens and variable-length data.
    fn samples() -> Vec<Output<'static>> {
        let mut v = vec![Output::Treasury(TreasuryOutput { amount: 5 })];
        for n in [0u8, 1, 3] {
            v.push(Output::Basic(BasicOutput {
                amount: 1,
                native_tokens: nts(n),
                unlock_conditions: vec![
                    UnlockCondition::Address(addr(0, 1)),
                    UnlockCondition::StorageDepositReturn {
                        return_address: addr(8, 2),
                        amount: 3,
                    },
                    UnlockCondition::Timelock(4),
                    UnlockCondition::Expiration {
                        return_address: addr(16, 5),
                        unix_time: 6,
                    },
                ],
                features: vec![
                    Feature::Sender(addr(0, 7)),
                    Feature::Metadata(Bytes::from(vec![1; 300 * usize::from(n) + 1])),
                    Feature::Tag(Bytes::from(vec![2; 5])),
                ],
            }));
            v.push(Output::Alias(AliasOutput {
                amount: 1,
                native_tokens: nts(n),
                alias_id: Hash32::owned([9; 32]),
                state_index: 1,
                state_metadata: Bytes::from(vec![3; 17 * usize::from(n)]),
                foundry_counter: 2,
                unlock_conditions: vec![
                    UnlockCondition::StateControllerAddress(addr(0, 1)),
                    UnlockCondition::GovernorAddress(addr(8, 2)),
                ],
                features: vec![Feature::Sender(addr(0, 3))],
                immutable_features: vec![
                    Feature::Issuer(addr(16, 4)),
                    Feature::Metadata(Bytes::from(vec![4; 9])),
                ],
            }));
            v.push(Output::Foundry(FoundryOutput {
                amount: 1,
                native_tokens: nts(n),
                serial_number: 7,
                token_scheme: TokenScheme::Simple(SimpleTokenScheme {
                    minted_tokens: U256::from(10),
                    melted_tokens: U256::from(1),
                    maximum_supply: U256::from(100),
                }),
                unlock_conditions: vec![UnlockCondition::ImmutableAliasAddress(addr(8, 1))],
                features: vec![],
                immutable_features: vec![Feature::Metadata(Bytes::from(vec![5; 2]))],
            }));
            v.push(Output::Nft(NftOutput {
                amount: 1,
                native_tokens: nts(n),
                nft_id: Hash32::owned([8; 32]),
                unlock_conditions: vec![UnlockCondition::Address(addr(0, 1))],
                features: vec![Feature::Tag(Bytes::from(vec![6; 64]))],
                immutable_features: vec![],
            }));
        }
        v
    }

    #[test]
    fn encoded_len_equals_the_encoding_length() {
        for o in samples() {
            assert_eq!(o.encoded_len(), o.to_bytes().unwrap().len(), "{o:?}"); // ok: test code
            for uc in o.unlock_conditions() {
                let len = uc.to_bytes().unwrap().len(); // ok: test code
                assert_eq!(uc.encoded_len(), len, "{uc:?}");
            }
        }
        let fs = [
            Feature::Sender(addr(0, 1)),
            Feature::Issuer(addr(8, 1)),
            Feature::Metadata(Bytes::from(vec![0; 8192])),
            Feature::Tag(Bytes::from(vec![0; 1])),
        ];
        for f in fs {
            assert_eq!(f.encoded_len(), f.to_bytes().unwrap().len(), "{f:?}"); // ok: test code
        }
    }
}
