//! v3 outputs (TIP-40..44, 54), their unlock conditions and features.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Context, Error, ErrorKind, Result};
use crate::nova::address::Address;
use crate::nova::json::{self, tagged_enum, u64_str};
use crate::types::{owned_list, variant_field, Bytes, Fixed, Hash32, U256};
use crate::wire::{fields_codec, type_bytes, Codec, Len, Prefix, Reader};

// ---------------------------------------------------------------- unlock conditions

/// Unlock conditions that carry only an address (Address 0, State Controller 4,
/// Governor 5, Immutable Account 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddressCondition<'a> {
    /// The address.
    pub address: Address<'a>,
}

fields_codec!(AddressCondition<'a> { address: "address" });

/// Storage Deposit Return unlock condition (1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StorageDepositReturn<'a> {
    /// Where the deposit goes back to.
    pub return_address: Address<'a>,
    /// The amount to return.
    #[serde(with = "u64_str")]
    pub amount: u64,
}

fields_codec!(StorageDepositReturn<'a> { return_address: "returnAddress", amount: "amount" });

/// Timelock unlock condition (2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timelock {
    /// Slot before which the output is locked (≠ 0).
    pub slot: u32,
}

impl<'a> Codec<'a> for Timelock {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let slot = r.u32()?;
        if slot == 0 {
            return Err(Error::invalid("timelock slot must not be 0").at("slot"));
        }
        Ok(Self { slot })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.slot.to_le_bytes());
        Ok(())
    }
}

/// Expiration unlock condition (3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expiration<'a> {
    /// Who may unlock after expiry.
    pub return_address: Address<'a>,
    /// Expiry slot (≠ 0).
    pub slot: u32,
}

impl<'a> Codec<'a> for Expiration<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let return_address = Address::read(r).at("returnAddress")?;
        let slot = r.u32()?;
        if slot == 0 {
            return Err(Error::invalid("expiration slot must not be 0").at("slot"));
        }
        Ok(Self {
            return_address,
            slot,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        self.return_address.encode(out)?;
        out.extend_from_slice(&self.slot.to_le_bytes());
        Ok(())
    }
}

/// An unlock condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnlockCondition<'a> {
    /// Address (0).
    Address(AddressCondition<'a>),
    /// Storage deposit return (1).
    StorageDepositReturn(StorageDepositReturn<'a>),
    /// Timelock (2).
    Timelock(Timelock),
    /// Expiration (3).
    Expiration(Expiration<'a>),
    /// State controller address (4).
    StateController(AddressCondition<'a>),
    /// Governor address (5).
    Governor(AddressCondition<'a>),
    /// Immutable account address (6).
    ImmutableAccount(AddressCondition<'a>),
}

tagged_enum!(UnlockCondition, "unlockCondition", {
    0 => Address,
    1 => StorageDepositReturn,
    2 => Timelock,
    3 => Expiration,
    4 => StateController,
    5 => Governor,
    6 => ImmutableAccount,
});

impl UnlockCondition<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> UnlockCondition<'static> {
        let a = |c: AddressCondition<'_>| AddressCondition {
            address: c.address.into_owned(),
        };
        match self {
            Self::Address(c) => UnlockCondition::Address(a(c)),
            Self::StorageDepositReturn(c) => {
                UnlockCondition::StorageDepositReturn(StorageDepositReturn {
                    return_address: c.return_address.into_owned(),
                    amount: c.amount,
                })
            }
            Self::Timelock(t) => UnlockCondition::Timelock(t),
            Self::Expiration(e) => UnlockCondition::Expiration(Expiration {
                return_address: e.return_address.into_owned(),
                slot: e.slot,
            }),
            Self::StateController(c) => UnlockCondition::StateController(a(c)),
            Self::Governor(c) => UnlockCondition::Governor(a(c)),
            Self::ImmutableAccount(c) => UnlockCondition::ImmutableAccount(a(c)),
        }
    }
}

// ---------------------------------------------------------------- features

/// Sender (0) and Issuer (1) features.
pub type AddressFeature<'a> = AddressCondition<'a>;

const META_ENTRIES: Len = Len::new(Prefix::U8, 1, 255);
const META_KEY: Len = Len::new(Prefix::U8, 1, 64);
const META_VALUE: Len = Len::new(Prefix::U16, 0, 8192);
const META_MAX_SIZE: usize = 8192;

/// Metadata (2) and State Metadata (3) features: key/value entries. On the
/// wire they are sorted by their encoded bytes (key length first, then key),
/// as iota.go does; in JSON they form an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata<'a> {
    /// `(key, value)` in wire order.
    pub entries: Vec<(Bytes<'a>, Bytes<'a>)>,
}

fn meta_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    (a.len(), a).cmp(&(b.len(), b))
}

impl<'a> Codec<'a> for Metadata<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let start = r.position();
        let n = r.len(&META_ENTRIES).at("entries")?;
        let mut entries: Vec<(Bytes<'a>, Bytes<'a>)> = Vec::with_capacity(n);
        for i in 0..n {
            let key = r.prefixed(&META_KEY).at_index("entries", i)?;
            if !key.iter().all(|b| (0x20..=0x7e).contains(b)) {
                return Err(
                    Error::invalid("metadata key must be printable ASCII").at_index("entries", i)
                );
            }
            let value = r.prefixed(&META_VALUE).at_index("entries", i)?;
            if let Some((prev, _)) = entries.last() {
                match meta_order(prev.as_slice(), key) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => {
                        return Err(
                            Error::new(ErrorKind::Duplicate("metadata key")).at_index("entries", i)
                        )
                    }
                    std::cmp::Ordering::Greater => {
                        return Err(Error::new(ErrorKind::NotSorted("metadata keys"))
                            .at_index("entries", i))
                    }
                }
            }
            entries.push((Bytes::borrowed(key), Bytes::borrowed(value)));
        }
        if r.position() - start > META_MAX_SIZE {
            return Err(Error::invalid("metadata larger than 8192 bytes").at("entries"));
        }
        Ok(Self { entries })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        META_ENTRIES.put(self.entries.len(), out).at("entries")?;
        for (k, v) in &self.entries {
            META_KEY.put_bytes(k.as_slice(), out)?;
            META_VALUE.put_bytes(v.as_slice(), out)?;
        }
        Ok(())
    }
}

impl Serialize for Metadata<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeStruct};
        struct Entries<'e, 'a>(&'e [(Bytes<'a>, Bytes<'a>)]);
        impl Serialize for Entries<'_, '_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for (k, v) in self.0 {
                    m.serialize_entry(&String::from_utf8_lossy(k.as_slice()), v)?;
                }
                m.end()
            }
        }
        let mut st = s.serialize_struct("Metadata", 1)?;
        st.serialize_field("entries", &Entries(&self.entries))?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for Metadata<'_> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            entries: BTreeMap<String, Bytes<'static>>,
        }
        let raw = Raw::deserialize(d)?;
        if raw.entries.len() > META_ENTRIES.max {
            return Err(D::Error::custom("too many metadata entries"));
        }
        let mut entries: Vec<(Bytes<'static>, Bytes<'static>)> = raw
            .entries
            .into_iter()
            .map(|(k, v)| (Bytes::from(k.into_bytes()), v))
            .collect();
        if entries
            .iter()
            .any(|(k, v)| k.len() > META_KEY.max || v.len() > META_VALUE.max)
        {
            return Err(D::Error::custom("metadata key or value too long"));
        }
        entries.sort_by(|a, b| meta_order(a.0.as_slice(), b.0.as_slice()));
        Ok(Self { entries })
    }
}

const TAG: Len = Len::new(Prefix::U8, 1, 64);

/// Tag feature (4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagFeature<'a> {
    /// 1..64 bytes.
    #[serde(deserialize_with = "json::bounded_bytes::<_, 255>")]
    pub tag: Bytes<'a>,
}

fields_codec!(TagFeature<'a> { tag: "tag" with TAG });

/// Native Token feature (5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeToken<'a> {
    /// Token id (the foundry id, 38 bytes).
    pub id: Fixed<'a, 38>,
    /// Amount (≠ 0).
    pub amount: U256,
}

impl<'a> Codec<'a> for NativeToken<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let id = Fixed::borrowed(r.array()?);
        let amount = U256::from_le(r.array()?);
        if amount.is_zero() {
            return Err(Error::invalid("native token amount must not be 0").at("amount"));
        }
        Ok(Self { id, amount })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(self.id.as_array());
        out.extend_from_slice(&self.amount.to_le());
        Ok(())
    }
}

/// A block issuer key (only Ed25519 public-key hashes, type 0).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum BlockIssuerKey<'a> {
    /// Ed25519 public-key hash.
    Ed25519(crate::nova::address::PubKeyHash<'a>),
}

tagged_enum!(BlockIssuerKey, "blockIssuerKey", { 0 => Ed25519 });

const ISSUER_KEYS: Len = Len::new(Prefix::U8, 1, 128);

/// Block Issuer feature (6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BlockIssuer<'a> {
    /// Slot at which the feature expires.
    pub expiry_slot: u32,
    /// 1..128 keys, sorted and unique.
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub block_issuer_keys: Vec<BlockIssuerKey<'a>>,
}

impl<'a> Codec<'a> for BlockIssuer<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let expiry_slot = r.u32()?;
        let keys: Vec<BlockIssuerKey<'a>> =
            crate::wire::read_list(r, &ISSUER_KEYS, "blockIssuerKeys")?;
        crate::wire::check_strictly_ascending(keys.iter(), "blockIssuerKeys", "block issuer keys")?;
        Ok(Self {
            expiry_slot,
            block_issuer_keys: keys,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.expiry_slot.to_le_bytes());
        ISSUER_KEYS
            .put(self.block_issuer_keys.len(), out)
            .at("blockIssuerKeys")?;
        for k in &self.block_issuer_keys {
            k.encode(out)?;
        }
        Ok(())
    }
}

/// Staking feature (7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Staking {
    /// Staked amount.
    #[serde(with = "u64_str")]
    pub staked_amount: u64,
    /// Fixed cost.
    #[serde(with = "u64_str")]
    pub fixed_cost: u64,
    /// First epoch.
    pub start_epoch: u32,
    /// Last epoch.
    pub end_epoch: u32,
}

fields_codec!(Staking {
    staked_amount: "stakedAmount",
    fixed_cost: "fixedCost",
    start_epoch: "startEpoch",
    end_epoch: "endEpoch"
});

/// An output feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feature<'a> {
    /// Sender (0).
    Sender(AddressFeature<'a>),
    /// Issuer (1).
    Issuer(AddressFeature<'a>),
    /// Metadata (2).
    Metadata(Metadata<'a>),
    /// State metadata (3).
    StateMetadata(Metadata<'a>),
    /// Tag (4).
    Tag(TagFeature<'a>),
    /// Native token (5).
    NativeToken(NativeToken<'a>),
    /// Block issuer (6).
    BlockIssuer(BlockIssuer<'a>),
    /// Staking (7).
    Staking(Staking),
}

tagged_enum!(Feature, "feature", {
    0 => Sender,
    1 => Issuer,
    2 => Metadata,
    3 => StateMetadata,
    4 => Tag,
    5 => NativeToken,
    6 => BlockIssuer,
    7 => Staking,
});

impl Feature<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Feature<'static> {
        let meta = |m: Metadata<'_>| Metadata {
            entries: m
                .entries
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        };
        match self {
            Self::Sender(a) => Feature::Sender(AddressCondition {
                address: a.address.into_owned(),
            }),
            Self::Issuer(a) => Feature::Issuer(AddressCondition {
                address: a.address.into_owned(),
            }),
            Self::Metadata(m) => Feature::Metadata(meta(m)),
            Self::StateMetadata(m) => Feature::StateMetadata(meta(m)),
            Self::Tag(t) => Feature::Tag(TagFeature {
                tag: t.tag.into_owned(),
            }),
            Self::NativeToken(n) => Feature::NativeToken(NativeToken {
                id: n.id.into_owned(),
                amount: n.amount,
            }),
            Self::BlockIssuer(b) => Feature::BlockIssuer(BlockIssuer {
                expiry_slot: b.expiry_slot,
                block_issuer_keys: b
                    .block_issuer_keys
                    .into_iter()
                    .map(|BlockIssuerKey::Ed25519(k)| BlockIssuerKey::Ed25519(k.into_owned()))
                    .collect(),
            }),
            Self::Staking(s) => Feature::Staking(s),
        }
    }
}

// ---------------------------------------------------------------- lists with allowed type sets

/// Reads a `u8`-counted list of tagged elements, each type in the `allowed`
/// bitmask, sorted strictly ascending by type.
fn read_typed_list<'a, T: Codec<'a>>(
    r: &mut Reader<'a>,
    name: &'static str,
    min: usize,
    allowed: u16,
    kind: impl Fn(&T) -> u8,
) -> Result<Vec<T>> {
    let max = allowed.count_ones() as usize;
    let n = r.len(&Len::new(Prefix::U8, min, max)).at(name)?;
    let mut v: Vec<T> = Vec::with_capacity(n);
    let mut prev: Option<u8> = None;
    for i in 0..n {
        let x = T::read(r).at_index(name, i)?;
        let k = kind(&x);
        if allowed & (1 << k) == 0 {
            return Err(Error::new(ErrorKind::UnknownType(k.into())).at_index(name, i));
        }
        if let Some(e) = crate::wire::type_order_error(prev, k) {
            return Err(Error::new(e).at_index(name, i));
        }
        prev = Some(k);
        v.push(x);
    }
    Ok(v)
}

fn write_list<'a, T: Codec<'a>>(v: &[T], name: &'static str, out: &mut Vec<u8>) -> Result<()> {
    crate::wire::write_list(&Len::new(Prefix::U8, 0, 255), v, name, out)
}

fn require(ucs: &[UnlockCondition<'_>], kind: u8, what: &'static str) -> Result<()> {
    if ucs.iter().any(|u| u.kind() == kind) {
        Ok(())
    } else {
        Err(Error::invalid(format!("missing {what} unlock condition")).at("unlockConditions"))
    }
}

const fn bits(list: &[u8]) -> u16 {
    let mut b = 0u16;
    let mut i = 0;
    while i < list.len() {
        b |= 1 << list[i];
        i += 1;
    }
    b
}

// ---------------------------------------------------------------- outputs

/// Basic output (0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BasicOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Stored mana.
    #[serde(with = "u64_str")]
    pub mana: u64,
    /// Unlock conditions (Address mandatory).
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub features: Vec<Feature<'a>>,
}

const BASIC_UCS: u16 = bits(&[0, 1, 2, 3]);
const BASIC_FEATS: u16 = bits(&[0, 2, 4, 5]);

impl<'a> Codec<'a> for BasicOutput<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let amount = r.u64()?;
        let mana = r.u64()?;
        let unlock_conditions =
            read_typed_list(r, "unlockConditions", 1, BASIC_UCS, UnlockCondition::kind)?;
        require(&unlock_conditions, 0, "address")?;
        let features = read_typed_list(r, "features", 0, BASIC_FEATS, Feature::kind)?;
        Ok(Self {
            amount,
            mana,
            unlock_conditions,
            features,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.amount.to_le_bytes());
        out.extend_from_slice(&self.mana.to_le_bytes());
        write_list(&self.unlock_conditions, "unlockConditions", out)?;
        write_list(&self.features, "features", out)?;
        Ok(())
    }
}

/// Account output (1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AccountOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Stored mana.
    #[serde(with = "u64_str")]
    pub mana: u64,
    /// Account id (zero when created).
    pub account_id: Hash32<'a>,
    /// Foundries created so far.
    pub foundry_counter: u32,
    /// Unlock conditions.
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub features: Vec<Feature<'a>>,
    /// Immutable features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub immutable_features: Vec<Feature<'a>>,
}

const ACCOUNT_FEATS: u16 = bits(&[0, 2, 6, 7]);
const IMMUTABLE_FEATS: u16 = bits(&[1, 2]);

impl<'a> Codec<'a> for AccountOutput<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let amount = r.u64()?;
        let mana = r.u64()?;
        let account_id = Hash32::borrowed(r.array()?);
        let foundry_counter = r.u32()?;
        let unlock_conditions =
            read_typed_list(r, "unlockConditions", 1, bits(&[0]), UnlockCondition::kind)?;
        let features = read_typed_list(r, "features", 0, ACCOUNT_FEATS, Feature::kind)?;
        let immutable_features =
            read_typed_list(r, "immutableFeatures", 0, IMMUTABLE_FEATS, Feature::kind)?;
        Ok(Self {
            amount,
            mana,
            account_id,
            foundry_counter,
            unlock_conditions,
            features,
            immutable_features,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.amount.to_le_bytes());
        out.extend_from_slice(&self.mana.to_le_bytes());
        out.extend_from_slice(self.account_id.as_array());
        out.extend_from_slice(&self.foundry_counter.to_le_bytes());
        write_list(&self.unlock_conditions, "unlockConditions", out)?;
        write_list(&self.features, "features", out)?;
        write_list(&self.immutable_features, "immutableFeatures", out)?;
        Ok(())
    }
}

/// Anchor output (2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnchorOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Stored mana.
    #[serde(with = "u64_str")]
    pub mana: u64,
    /// Anchor id (zero when created).
    pub anchor_id: Hash32<'a>,
    /// State index.
    pub state_index: u32,
    /// Unlock conditions (state controller and governor).
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub features: Vec<Feature<'a>>,
    /// Immutable features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub immutable_features: Vec<Feature<'a>>,
}

impl<'a> Codec<'a> for AnchorOutput<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let amount = r.u64()?;
        let mana = r.u64()?;
        let anchor_id = Hash32::borrowed(r.array()?);
        let state_index = r.u32()?;
        let unlock_conditions = read_typed_list(
            r,
            "unlockConditions",
            2,
            bits(&[4, 5]),
            UnlockCondition::kind,
        )?;
        let features = read_typed_list(r, "features", 0, bits(&[0, 2, 3]), Feature::kind)?;
        let immutable_features =
            read_typed_list(r, "immutableFeatures", 0, IMMUTABLE_FEATS, Feature::kind)?;
        Ok(Self {
            amount,
            mana,
            anchor_id,
            state_index,
            unlock_conditions,
            features,
            immutable_features,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.amount.to_le_bytes());
        out.extend_from_slice(&self.mana.to_le_bytes());
        out.extend_from_slice(self.anchor_id.as_array());
        out.extend_from_slice(&self.state_index.to_le_bytes());
        write_list(&self.unlock_conditions, "unlockConditions", out)?;
        write_list(&self.features, "features", out)?;
        write_list(&self.immutable_features, "immutableFeatures", out)?;
        Ok(())
    }
}

/// Simple token scheme (0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SimpleTokenScheme {
    /// Minted so far.
    pub minted_tokens: U256,
    /// Melted so far.
    pub melted_tokens: U256,
    /// Maximum supply.
    pub maximum_supply: U256,
}

impl<'a> Codec<'a> for SimpleTokenScheme {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let minted_tokens = U256::from_le(r.array()?);
        let melted_tokens = U256::from_le(r.array()?);
        let maximum_supply = U256::from_le(r.array()?);
        if maximum_supply.is_zero()
            || melted_tokens > minted_tokens
            || minted_tokens.0 - melted_tokens.0 > maximum_supply.0
        {
            return Err(Error::invalid("invalid simple token scheme supply"));
        }
        Ok(Self {
            minted_tokens,
            melted_tokens,
            maximum_supply,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.minted_tokens.to_le());
        out.extend_from_slice(&self.melted_tokens.to_le());
        out.extend_from_slice(&self.maximum_supply.to_le());
        Ok(())
    }
}

/// A foundry token scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenScheme {
    /// Simple token scheme (0).
    Simple(SimpleTokenScheme),
}

type_bytes!(TokenScheme { SIMPLE = 0 => Simple });

impl<'a> Codec<'a> for TokenScheme {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        match r.u8()? {
            Self::SIMPLE => Ok(Self::Simple(SimpleTokenScheme::read(r).at("tokenScheme")?)),
            t => Err(Error::new(ErrorKind::UnknownType(t.into())).at("tokenScheme")),
        }
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(Self::SIMPLE);
        let Self::Simple(s) = self;
        s.encode(out)?;
        Ok(())
    }
}

impl Serialize for TokenScheme {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Self::Simple(x) = self;
        crate::types::tagged::serialize(s, Self::SIMPLE.into(), x)
    }
}

crate::types::tagged::deserialize_tagged!(TokenScheme, |ty, rest| {
    match u8::try_from(ty).ok() {
        Some(Self::SIMPLE) => Ok(Self::Simple(crate::types::tagged::rest::<D, _>(rest)?)),
        _ => Err(D::Error::custom(format!("unknown token scheme type {ty}"))),
    }
});

/// Foundry output (3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FoundryOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Serial number within the controlling account.
    pub serial_number: u32,
    /// Token scheme.
    pub token_scheme: TokenScheme,
    /// Unlock conditions (immutable account address).
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub features: Vec<Feature<'a>>,
    /// Immutable features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub immutable_features: Vec<Feature<'a>>,
}

impl<'a> Codec<'a> for FoundryOutput<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let amount = r.u64()?;
        let serial_number = r.u32()?;
        let token_scheme = TokenScheme::read(r)?;
        let unlock_conditions =
            read_typed_list(r, "unlockConditions", 1, bits(&[6]), UnlockCondition::kind)?;
        if let Some(UnlockCondition::ImmutableAccount(c)) = unlock_conditions.first() {
            if !matches!(c.address, Address::Account(_)) {
                return Err(Error::invalid(
                    "immutable account unlock condition needs an account address",
                )
                .at("unlockConditions"));
            }
        }
        let features = read_typed_list(r, "features", 0, bits(&[2, 5]), Feature::kind)?;
        let immutable_features =
            read_typed_list(r, "immutableFeatures", 0, bits(&[2]), Feature::kind)?;
        Ok(Self {
            amount,
            serial_number,
            token_scheme,
            unlock_conditions,
            features,
            immutable_features,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.amount.to_le_bytes());
        out.extend_from_slice(&self.serial_number.to_le_bytes());
        self.token_scheme.encode(out)?;
        write_list(&self.unlock_conditions, "unlockConditions", out)?;
        write_list(&self.features, "features", out)?;
        write_list(&self.immutable_features, "immutableFeatures", out)?;
        Ok(())
    }
}

/// NFT output (4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NftOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Stored mana.
    #[serde(with = "u64_str")]
    pub mana: u64,
    /// NFT id (zero when created).
    pub nft_id: Hash32<'a>,
    /// Unlock conditions (Address mandatory).
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
    /// Features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub features: Vec<Feature<'a>>,
    /// Immutable features.
    #[serde(
        default,
        deserialize_with = "json::bounded::<_, _, 255>",
        skip_serializing_if = "json::is_empty"
    )]
    pub immutable_features: Vec<Feature<'a>>,
}

impl<'a> Codec<'a> for NftOutput<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let amount = r.u64()?;
        let mana = r.u64()?;
        let nft_id = Hash32::borrowed(r.array()?);
        let unlock_conditions =
            read_typed_list(r, "unlockConditions", 1, BASIC_UCS, UnlockCondition::kind)?;
        require(&unlock_conditions, 0, "address")?;
        let features = read_typed_list(r, "features", 0, bits(&[0, 2, 4]), Feature::kind)?;
        let immutable_features =
            read_typed_list(r, "immutableFeatures", 0, IMMUTABLE_FEATS, Feature::kind)?;
        Ok(Self {
            amount,
            mana,
            nft_id,
            unlock_conditions,
            features,
            immutable_features,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.amount.to_le_bytes());
        out.extend_from_slice(&self.mana.to_le_bytes());
        out.extend_from_slice(self.nft_id.as_array());
        write_list(&self.unlock_conditions, "unlockConditions", out)?;
        write_list(&self.features, "features", out)?;
        write_list(&self.immutable_features, "immutableFeatures", out)?;
        Ok(())
    }
}

/// Delegation output (5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DelegationOutput<'a> {
    /// Base tokens.
    #[serde(with = "u64_str")]
    pub amount: u64,
    /// Delegated amount.
    #[serde(with = "u64_str")]
    pub delegated_amount: u64,
    /// Delegation id (zero when created).
    pub delegation_id: Hash32<'a>,
    /// Validator (an account address).
    pub validator_address: Address<'a>,
    /// First epoch.
    pub start_epoch: u32,
    /// Last epoch.
    pub end_epoch: u32,
    /// Unlock conditions (Address).
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub unlock_conditions: Vec<UnlockCondition<'a>>,
}

impl<'a> Codec<'a> for DelegationOutput<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let amount = r.u64()?;
        let delegated_amount = r.u64()?;
        let delegation_id = Hash32::borrowed(r.array()?);
        let validator_address = Address::read(r).at("validatorAddress")?;
        if !matches!(validator_address, Address::Account(_)) {
            return Err(
                Error::new(ErrorKind::UnknownType(validator_address.kind().into()))
                    .at("validatorAddress"),
            );
        }
        let start_epoch = r.u32()?;
        let end_epoch = r.u32()?;
        let unlock_conditions =
            read_typed_list(r, "unlockConditions", 1, bits(&[0]), UnlockCondition::kind)?;
        Ok(Self {
            amount,
            delegated_amount,
            delegation_id,
            validator_address,
            start_epoch,
            end_epoch,
            unlock_conditions,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.amount.to_le_bytes());
        out.extend_from_slice(&self.delegated_amount.to_le_bytes());
        out.extend_from_slice(self.delegation_id.as_array());
        self.validator_address.encode(out)?;
        out.extend_from_slice(&self.start_epoch.to_le_bytes());
        out.extend_from_slice(&self.end_epoch.to_le_bytes());
        write_list(&self.unlock_conditions, "unlockConditions", out)?;
        Ok(())
    }
}

/// A v3 output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output<'a> {
    /// Basic (0).
    Basic(BasicOutput<'a>),
    /// Account (1).
    Account(AccountOutput<'a>),
    /// Anchor (2).
    Anchor(AnchorOutput<'a>),
    /// Foundry (3).
    Foundry(FoundryOutput<'a>),
    /// NFT (4).
    Nft(NftOutput<'a>),
    /// Delegation (5).
    Delegation(DelegationOutput<'a>),
}

tagged_enum!(Output, "output", {
    0 => Basic,
    1 => Account,
    2 => Anchor,
    3 => Foundry,
    4 => Nft,
    5 => Delegation,
});

impl<'a> Output<'a> {
    variant_field!(
        /// Base token amount.
        amount -> u64 = |o| o.amount, Basic Account Anchor Foundry Nft Delegation
    );
    variant_field!(
        /// Stored mana (0 for foundry and delegation outputs).
        mana -> u64 = |o| o.mana, Basic Account Anchor Nft; else 0
    );
    variant_field!(
        /// Unlock conditions.
        unlock_conditions -> &[UnlockCondition<'a>] = |o| &o.unlock_conditions,
            Basic Account Anchor Foundry Nft Delegation
    );
    variant_field!(
        /// Mutable features (empty for delegation outputs).
        features -> &[Feature<'a>] = |o| &o.features, Basic Account Anchor Foundry Nft; else &[]
    );
    variant_field!(
        /// Immutable features (empty for basic and delegation outputs).
        immutable_features -> &[Feature<'a>] = |o| &o.immutable_features,
            Account Anchor Foundry Nft; else &[]
    );

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Output<'static> {
        let ucs = |v: Vec<UnlockCondition<'_>>| owned_list(v, UnlockCondition::into_owned);
        let fs = |v: Vec<Feature<'_>>| owned_list(v, Feature::into_owned);
        match self {
            Self::Basic(o) => Output::Basic(BasicOutput {
                amount: o.amount,
                mana: o.mana,
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
            }),
            Self::Account(o) => Output::Account(AccountOutput {
                amount: o.amount,
                mana: o.mana,
                account_id: o.account_id.into_owned(),
                foundry_counter: o.foundry_counter,
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
                immutable_features: fs(o.immutable_features),
            }),
            Self::Anchor(o) => Output::Anchor(AnchorOutput {
                amount: o.amount,
                mana: o.mana,
                anchor_id: o.anchor_id.into_owned(),
                state_index: o.state_index,
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
                immutable_features: fs(o.immutable_features),
            }),
            Self::Foundry(o) => Output::Foundry(FoundryOutput {
                amount: o.amount,
                serial_number: o.serial_number,
                token_scheme: o.token_scheme,
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
                immutable_features: fs(o.immutable_features),
            }),
            Self::Nft(o) => Output::Nft(NftOutput {
                amount: o.amount,
                mana: o.mana,
                nft_id: o.nft_id.into_owned(),
                unlock_conditions: ucs(o.unlock_conditions),
                features: fs(o.features),
                immutable_features: fs(o.immutable_features),
            }),
            Self::Delegation(o) => Output::Delegation(DelegationOutput {
                amount: o.amount,
                delegated_amount: o.delegated_amount,
                delegation_id: o.delegation_id.into_owned(),
                validator_address: o.validator_address.into_owned(),
                start_epoch: o.start_epoch,
                end_epoch: o.end_epoch,
                unlock_conditions: ucs(o.unlock_conditions),
            }),
        }
    }

    /// Parses an output from JSON and checks it by a binary round trip.
    ///
    /// # Errors
    /// Malformed JSON or any syntactic rule.
    pub fn from_json(s: &str) -> Result<Output<'static>> {
        let o: Output<'static> =
            serde_json::from_str(s).map_err(|e| Error::new(ErrorKind::Json(e.to_string())))?;
        Ok(Output::decode(&o.to_bytes()?)?.into_owned())
    }

    /// Storage score (TIP-47) under the given parameters.
    ///
    /// # Errors
    /// As [`Codec::encode`]: the output's size counts, so it needs a wire form.
    pub fn storage_score(&self, p: &crate::nova::params::StorageScoreParameters) -> Result<u64> {
        let size = self.to_bytes()?.len() as u64;
        // Output metadata the ledger stores beside it: output id, block id, slot.
        let mut score = p.offset_output_overhead.saturating_add(
            u64::from(p.factor_data).saturating_mul(size.saturating_add(38 + 36 + 4)),
        );
        let key_offset = |f: &Feature<'_>| match f {
            Feature::BlockIssuer(b) => p
                .offset_ed25519_block_issuer_key
                .saturating_mul(b.block_issuer_keys.len() as u64),
            Feature::Staking(_) => p.offset_staking_feature,
            _ => 0,
        };
        for f in self.features().iter().chain(self.immutable_features()) {
            score = score.saturating_add(key_offset(f));
        }
        if matches!(self, Self::Delegation(_)) {
            score = score.saturating_add(p.offset_delegation);
        }
        // Implicit account creation addresses are charged like a block issuer key.
        if self.unlock_conditions().iter().any(|u| {
            matches!(
                u,
                UnlockCondition::Address(AddressCondition {
                    address: Address::ImplicitAccountCreation(_)
                })
            )
        }) {
            score = score.saturating_add(p.offset_ed25519_block_issuer_key);
        }
        Ok(score)
    }

    /// Minimum storage deposit: storage score × storage cost.
    ///
    /// # Errors
    /// As [`Output::storage_score`].
    pub fn min_deposit(&self, p: &crate::nova::params::StorageScoreParameters) -> Result<u64> {
        Ok(self.storage_score(p)?.saturating_mul(p.storage_cost))
    }

    /// Work score contribution (TIP-45): output + native token / staking /
    /// block issuer features (+ native token for foundries).
    pub fn work_score(&self, w: &crate::nova::params::WorkScoreParameters) -> u64 {
        let mut s = u64::from(w.output);
        for f in self.features().iter().chain(self.immutable_features()) {
            s += match f {
                Feature::NativeToken(_) => u64::from(w.native_token),
                Feature::Staking(_) => u64::from(w.staking),
                Feature::BlockIssuer(_) => u64::from(w.block_issuer),
                _ => 0,
            };
        }
        if matches!(self, Self::Foundry(_)) {
            s += u64::from(w.native_token);
        }
        s
    }
}
