//! v3 addresses (TIP-38 §address): Ed25519 (0), Account (8), NFT (16),
//! Anchor (24), Implicit Account Creation (32), Multi (40), Restricted (48).

use serde::{Deserialize, Serialize};

use crate::error::{Context, Error, ErrorKind, Result};
use crate::nova::json::{self, tagged_enum};
use crate::types::{owned_list, Bytes, Hash32};
use crate::wire::{check_strictly_ascending, Codec, Len, Prefix, Reader};

/// Address capabilities / transaction capabilities: a `u8`-prefixed bitmask.
pub const CAPABILITIES: Len = Len::new(Prefix::U8, 0, 1);

/// Checks a capabilities bitmask: no trailing zero byte, at most `CAPABILITIES.max` bytes.
///
/// # Errors
/// A trailing zero byte, or too many bytes.
pub fn check_capabilities(bits: &[u8]) -> Result<()> {
    if bits.last() == Some(&0) {
        return Err(Error::invalid(
            "capabilities bitmask has a trailing zero byte",
        ));
    }
    CAPABILITIES.check(bits.len())
}

/// Reads a capabilities bitmask (lenient prefix, then the strict check).
pub(crate) fn read_capabilities<'a>(r: &mut Reader<'a>) -> Result<Bytes<'a>> {
    let b = r.prefixed(&Len::new(Prefix::U8, 0, 255))?;
    check_capabilities(b)?;
    Ok(Bytes::borrowed(b))
}

/// Writes a capabilities bitmask.
pub(crate) fn write_capabilities(b: &Bytes<'_>, out: &mut Vec<u8>) -> Result<()> {
    CAPABILITIES.put_bytes(b.as_slice(), out)?;
    Ok(())
}

/// Declares an address body that is one 32-byte id, named `$field` in JSON (camelCase):
/// the struct, its codec (the 32 bytes) and `into_owned`.
macro_rules! id_address {
    ($t:ident, $field:ident, $doc:literal, $field_doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub struct $t<'a> {
            #[doc = $field_doc]
            pub $field: Hash32<'a>,
        }

        impl<'a> Codec<'a> for $t<'a> {
            fn read(r: &mut Reader<'a>) -> Result<Self> {
                Ok(Self {
                    $field: Hash32::borrowed(r.array()?),
                })
            }
            fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
                out.extend_from_slice(self.$field.as_array());
                Ok(())
            }
        }

        impl $t<'_> {
            /// Detaches from the input buffer.
            pub fn into_owned(self) -> $t<'static> {
                $t {
                    $field: self.$field.into_owned(),
                }
            }
        }
    };
}

id_address!(
    PubKeyHash,
    pub_key_hash,
    "Ed25519 address: BLAKE2b-256 of the public key.",
    "The hash."
);
id_address!(AccountId, account_id, "Account address.", "The account id.");
id_address!(NftId, nft_id, "NFT address.", "The NFT id.");
id_address!(AnchorId, anchor_id, "Anchor address.", "The anchor id.");

/// One member of a multi address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightedAddress<'a> {
    /// The member (not multi, restricted or implicit-account-creation).
    pub address: Address<'a>,
    /// Its weight (≥ 1).
    pub weight: u8,
}

/// Multi address: 2..10 weighted members sorted by their bytes, and a threshold.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiAddress<'a> {
    /// The members.
    #[serde(deserialize_with = "json::bounded::<_, _, 255>")]
    pub addresses: Vec<WeightedAddress<'a>>,
    /// Sum of weights needed to unlock.
    pub threshold: u16,
}

const MULTI_MEMBERS: Len = Len::new(Prefix::U8, 2, 10);

impl<'a> Codec<'a> for MultiAddress<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let n = r.len(&MULTI_MEMBERS).at("addresses")?;
        let mut addresses = Vec::with_capacity(n);
        let mut sum = 0u32;
        for i in 0..n {
            let address = Address::read(r).at_index("addresses", i)?;
            if matches!(
                address,
                Address::Multi(_) | Address::Restricted(_) | Address::ImplicitAccountCreation(_)
            ) {
                return Err(Error::new(ErrorKind::UnknownType(address.kind().into()))
                    .at_index("addresses", i));
            }
            let weight = r.u8()?;
            if weight == 0 {
                return Err(Error::invalid("weight must be at least 1").at_index("addresses", i));
            }
            sum += u32::from(weight);
            addresses.push(WeightedAddress { address, weight });
        }
        let keys = addresses
            .iter()
            .map(|a| a.address.to_bytes())
            .collect::<Result<Vec<_>>>()?;
        check_strictly_ascending(keys, "addresses", "addresses")?;
        let threshold = r.u16()?;
        if threshold == 0 || u32::from(threshold) > sum {
            return Err(Error::invalid("threshold must be in 1..=sum of weights").at("threshold"));
        }
        Ok(Self {
            addresses,
            threshold,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        MULTI_MEMBERS
            .put(self.addresses.len(), out)
            .at("addresses")?;
        for a in &self.addresses {
            a.address.encode(out)?;
            out.push(a.weight);
        }
        out.extend_from_slice(&self.threshold.to_le_bytes());
        Ok(())
    }
}

/// Restricted address: an address plus the capabilities it allows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RestrictedAddress<'a> {
    /// The underlying address (not restricted or implicit-account-creation).
    pub address: Address<'a>,
    /// Allowed capabilities bitmask.
    #[serde(
        default,
        deserialize_with = "json::bounded_bytes::<_, 255>",
        skip_serializing_if = "Bytes::is_empty"
    )]
    pub allowed_capabilities: Bytes<'a>,
}

impl<'a> Codec<'a> for RestrictedAddress<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let address = Address::read(r).at("address")?;
        if matches!(
            address,
            Address::Restricted(_) | Address::ImplicitAccountCreation(_)
        ) {
            return Err(Error::new(ErrorKind::UnknownType(address.kind().into())).at("address"));
        }
        let allowed_capabilities = read_capabilities(r).at("allowedCapabilities")?;
        Ok(Self {
            address,
            allowed_capabilities,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        self.address.encode(out)?;
        write_capabilities(&self.allowed_capabilities, out)?;
        Ok(())
    }
}

/// A v3 address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Address<'a> {
    /// Ed25519 public-key hash.
    Ed25519(PubKeyHash<'a>),
    /// Account id.
    Account(AccountId<'a>),
    /// NFT id.
    Nft(NftId<'a>),
    /// Anchor id.
    Anchor(AnchorId<'a>),
    /// Implicit account creation (Ed25519 public-key hash).
    ImplicitAccountCreation(PubKeyHash<'a>),
    /// Multi address.
    Multi(Box<MultiAddress<'a>>),
    /// Restricted address.
    Restricted(Box<RestrictedAddress<'a>>),
}

tagged_enum!(Address, "address", {
    0 => Ed25519,
    8 => Account,
    16 => Nft,
    24 => Anchor,
    32 => ImplicitAccountCreation,
    40 => Multi,
    48 => Restricted,
});

impl<'a> Address<'a> {
    /// An Ed25519 address from its public-key hash.
    pub fn ed25519(hash: [u8; 32]) -> Address<'static> {
        Address::Ed25519(PubKeyHash {
            pub_key_hash: hash.into(),
        })
    }

    /// An account address.
    pub fn account(id: [u8; 32]) -> Address<'static> {
        Address::Account(AccountId {
            account_id: id.into(),
        })
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Address<'static> {
        match self {
            Self::Ed25519(a) => Address::Ed25519(a.into_owned()),
            Self::Account(a) => Address::Account(a.into_owned()),
            Self::Nft(a) => Address::Nft(a.into_owned()),
            Self::Anchor(a) => Address::Anchor(a.into_owned()),
            Self::ImplicitAccountCreation(a) => Address::ImplicitAccountCreation(a.into_owned()),
            Self::Multi(m) => Address::Multi(Box::new(MultiAddress {
                addresses: owned_list(m.addresses, |w| WeightedAddress {
                    address: w.address.into_owned(),
                    weight: w.weight,
                }),
                threshold: m.threshold,
            })),
            Self::Restricted(r) => {
                let r = *r;
                Address::Restricted(Box::new(RestrictedAddress {
                    address: r.address.into_owned(),
                    allowed_capabilities: r.allowed_capabilities.into_owned(),
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_address_json_and_bytes() {
        let mut b = vec![8u8];
        b.extend_from_slice(&[7; 32]);
        let json = format!("{{\"type\":8,\"accountId\":\"0x{}\"}}", "07".repeat(32));
        crate::wire::assert_bytes_and_json::<Address<'_>, Address<'static>>(&b, &json);
    }

    #[test]
    fn rejects_unknown_type_and_nested_restricted() {
        let mut b = vec![1u8];
        b.extend_from_slice(&[0; 32]);
        assert!(matches!(
            Address::decode(&b).unwrap_err().kind(),
            ErrorKind::UnknownType(1)
        ));
        let mut b = vec![48u8, 48, 0];
        b.extend_from_slice(&[0; 33]);
        assert!(Address::decode(&b).is_err());
    }
}
