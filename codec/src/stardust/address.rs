//! Addresses (TIP-18): Ed25519 (0), Alias (8), NFT (16); 33 bytes each.

use serde::{Deserialize, Serialize, Serializer};

use crate::error::{Error, ErrorKind, Result};
use crate::types::{into_owned_variants, tagged, Hash32};
use crate::wire::{type_bytes, Codec, Reader};

/// An address: a type byte and a 32-byte identifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Address<'a> {
    /// BLAKE2b-256 of an Ed25519 public key.
    Ed25519(Hash32<'a>),
    /// The id of an alias output.
    Alias(Hash32<'a>),
    /// The id of an NFT output.
    Nft(Hash32<'a>),
}

type_bytes!(Address<'_> { ED25519 = 0 => Ed25519, ALIAS = 8 => Alias, NFT = 16 => Nft });

into_owned_variants!(Address: Ed25519, Alias, Nft);

impl<'a> Address<'a> {
    /// Serialized length.
    pub const LEN: usize = 33;

    /// The 32 bytes after the type.
    pub fn id(&self) -> &[u8; 32] {
        match self {
            Self::Ed25519(h) | Self::Alias(h) | Self::Nft(h) => h.as_array(),
        }
    }

    /// The 33 wire bytes.
    pub fn to_array(&self) -> [u8; 33] {
        let mut a = [0u8; 33];
        a[0] = self.kind();
        a[1..].copy_from_slice(self.id());
        a
    }

    /// Bech32 (BIP-173) form with the given human-readable part.
    ///
    /// # Errors
    /// An invalid human-readable part.
    pub fn to_bech32(&self, hrp: &str) -> Result<String> {
        let hrp =
            bech32::Hrp::parse(hrp).map_err(|e| Error::invalid(format!("bech32 hrp: {e}")))?;
        bech32::encode::<bech32::Bech32>(hrp, &self.to_array())
            .map_err(|e| Error::invalid(format!("bech32: {e}")))
    }

    /// Parses a bech32 address; returns the human-readable part too.
    ///
    /// # Errors
    /// Bad bech32, or bytes that are not an address.
    pub fn from_bech32(s: &str) -> Result<(String, Address<'static>)> {
        let (hrp, data) = bech32::decode(s).map_err(|e| Error::invalid(format!("bech32: {e}")))?;
        let addr = Address::decode(&data)?.into_owned();
        Ok((hrp.to_string(), addr))
    }
}

impl<'a> Codec<'a> for Address<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let kind = r.u8()?;
        let id = Hash32::borrowed(r.array::<32>()?);
        Ok(match kind {
            Self::ED25519 => Self::Ed25519(id),
            Self::ALIAS => Self::Alias(id),
            Self::NFT => Self::Nft(id),
            t => return Err(Error::new(ErrorKind::UnknownType(t.into())).at("address")),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.kind());
        out.extend_from_slice(self.id());
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Ed25519Json<'a> {
    #[serde(rename = "pubKeyHash")]
    pub_key_hash: Hash32<'a>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AliasJson<'a> {
    #[serde(rename = "aliasId")]
    alias_id: Hash32<'a>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NftJson<'a> {
    #[serde(rename = "nftId")]
    nft_id: Hash32<'a>,
}

impl Serialize for Address<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Ed25519(h) => tagged::serialize(
                s,
                Self::ED25519.into(),
                &Ed25519Json {
                    pub_key_hash: h.clone(),
                },
            ),
            Self::Alias(h) => tagged::serialize(
                s,
                Self::ALIAS.into(),
                &AliasJson {
                    alias_id: h.clone(),
                },
            ),
            Self::Nft(h) => tagged::serialize(s, Self::NFT.into(), &NftJson { nft_id: h.clone() }),
        }
    }
}

crate::types::tagged::deserialize_tagged!(Address<'_>, |ty, rest| {
    Ok(match u8::try_from(ty).ok() {
        Some(Self::ED25519) => {
            Self::Ed25519(tagged::rest::<D, Ed25519Json<'static>>(rest)?.pub_key_hash)
        }
        Some(Self::ALIAS) => Self::Alias(tagged::rest::<D, AliasJson<'static>>(rest)?.alias_id),
        Some(Self::NFT) => Self::Nft(tagged::rest::<D, NftJson<'static>>(rest)?.nft_id),
        _ => {
            return Err(serde::de::Error::custom(format!(
                "unknown address type {ty}"
            )))
        }
    })
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_unknown_address_type() {
        let mut b = vec![1u8];
        b.extend_from_slice(&[0; 32]);
        assert!(matches!(
            Address::decode(&b).unwrap_err().kind(),
            ErrorKind::UnknownType(1)
        ));
    }

    #[test]
    fn round_trips_json_and_bytes() {
        let mut b = vec![8u8];
        b.extend_from_slice(&[7; 32]);
        let json = format!("{{\"type\":8,\"aliasId\":\"0x{}\"}}", "07".repeat(32));
        crate::wire::assert_bytes_and_json::<Address<'_>, Address<'static>>(&b, &json);
    }
}
