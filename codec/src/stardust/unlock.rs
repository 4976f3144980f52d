//! Ed25519 signatures (97 bytes, a zerocopy view) and unlocks (TIP-20).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::error::{Error, ErrorKind, Result};
use crate::types::{tagged, Fixed, Hash32};
use crate::wire::{type_bytes, Codec, Reader};

/// An Ed25519 signature exactly as on the wire: `0 ‖ public key ‖ signature`.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, PartialEq, Eq, Hash, Debug,
)]
#[repr(C)]
pub struct Ed25519Signature {
    kind: u8,
    /// Ed25519 public key.
    pub public_key: [u8; 32],
    /// The 64-byte signature.
    pub signature: [u8; 64],
}

impl Ed25519Signature {
    /// Wire type.
    pub const KIND: u8 = 0;

    /// A signature.
    pub fn new(public_key: [u8; 32], signature: [u8; 64]) -> Self {
        Self {
            kind: Self::KIND,
            public_key,
            signature,
        }
    }

    /// The type byte as read (0 once validated).
    pub fn kind(&self) -> u8 {
        self.kind
    }

    /// The 97 wire bytes.
    pub fn as_bytes(&self) -> &[u8] {
        IntoBytes::as_bytes(self)
    }

    /// Verifies the signature over `message` (ZIP-215).
    pub fn verify(&self, message: &[u8]) -> bool {
        crate::ed25519::verify(&self.public_key, message, &self.signature)
    }

    /// Reads a borrowed view; the type byte must be 0.
    ///
    /// # Errors
    /// Short input or an unknown signature type.
    pub fn read_view<'a>(r: &mut Reader<'a>) -> Result<&'a Self> {
        let s = r.view::<Self>()?;
        if s.kind != Self::KIND {
            return Err(ErrorKind::UnknownType(s.kind.into()).into());
        }
        Ok(s)
    }

    /// Checks the type byte of every element of a zerocopy slice.
    ///
    /// # Errors
    /// An unknown signature type, located at `list[i]`.
    pub fn check_kinds(list: &[Self], name: &'static str) -> Result<()> {
        for (i, s) in list.iter().enumerate() {
            if s.kind != Self::KIND {
                return Err(Error::new(ErrorKind::UnknownType(s.kind.into())).at_index(name, i));
            }
        }
        Ok(())
    }
}

impl<'a> Codec<'a> for Cow<'a, Ed25519Signature> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ed25519Signature::read_view(r).map(Cow::Borrowed)
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(self.as_bytes());
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SigJson<'a> {
    public_key: Hash32<'a>,
    signature: Fixed<'a, 64>,
}

impl Serialize for Ed25519Signature {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        tagged::serialize(
            s,
            0,
            &SigJson {
                public_key: Fixed::borrowed(&self.public_key),
                signature: Fixed::borrowed(&self.signature),
            },
        )
    }
}

crate::types::tagged::deserialize_tagged!(Ed25519Signature, |ty, rest| {
    tagged::require_type::<D::Error>(ty, 0, "an Ed25519 signature")?;
    let j = tagged::rest::<D, SigJson<'static>>(rest)?;
    Ok(Self::new(j.public_key.to_array(), j.signature.to_array()))
});

/// Serde for `Cow<[Ed25519Signature]>` as a JSON array.
pub(crate) mod sig_list {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        v: &[Ed25519Signature],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }

    pub(crate) fn deserialize<'de, 'a, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Cow<'a, [Ed25519Signature]>, D::Error> {
        Vec::<Ed25519Signature>::deserialize(d).map(Cow::Owned)
    }
}

/// An unlock (TIP-20).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Unlock<'a> {
    /// 0: a signature.
    Signature(Cow<'a, Ed25519Signature>),
    /// 1: same signature as unlock `n`.
    Reference(u16),
    /// 2: unlocked by the alias at unlock `n`.
    Alias(u16),
    /// 3: unlocked by the NFT at unlock `n`.
    Nft(u16),
}

type_bytes!(Unlock<'_> {
    SIGNATURE = 0 => Signature, REFERENCE = 1 => Reference, ALIAS = 2 => Alias, NFT = 3 => Nft,
});

impl Unlock<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Unlock<'static> {
        match self {
            Self::Signature(s) => Unlock::Signature(Cow::Owned(s.into_owned())),
            Self::Reference(n) => Unlock::Reference(n),
            Self::Alias(n) => Unlock::Alias(n),
            Self::Nft(n) => Unlock::Nft(n),
        }
    }

    /// Checks a transaction's unlock list: references 0..=127 and below their
    /// own index, Reference Unlocks point at Signature Unlocks, no two
    /// Signature Unlocks are identical.
    ///
    /// # Errors
    /// The broken rule, located at `unlocks[i]`.
    pub fn check_list(unlocks: &[Unlock<'_>]) -> Result<()> {
        for (i, u) in unlocks.iter().enumerate() {
            match u {
                Unlock::Signature(s) => {
                    let dup = unlocks
                        .get(..i)
                        .unwrap_or_default()
                        .iter()
                        .any(|p| match p {
                            Unlock::Signature(q) => q.as_ref() == s.as_ref(),
                            _ => false,
                        });
                    if dup {
                        return Err(Error::new(ErrorKind::Duplicate("signature unlock"))
                            .at_index("unlocks", i));
                    }
                }
                Unlock::Reference(n) | Unlock::Alias(n) | Unlock::Nft(n) => {
                    let n = usize::from(*n);
                    if n > 127 || n >= i {
                        return Err(Error::invalid(format!(
                            "unlock references index {n}, which is not an earlier unlock"
                        ))
                        .at_index("unlocks", i));
                    }
                    if let Unlock::Reference(_) = u {
                        if !matches!(unlocks.get(n), Some(Unlock::Signature(_))) {
                            return Err(Error::invalid(
                                "reference unlock does not point at a signature unlock",
                            )
                            .at_index("unlocks", i));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

impl<'a> Codec<'a> for Unlock<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(match r.u8()? {
            Self::SIGNATURE => Self::Signature(Cow::Borrowed(
                Ed25519Signature::read_view(r).map_err(|e| e.at("signature"))?,
            )),
            Self::REFERENCE => Self::Reference(r.u16()?),
            Self::ALIAS => Self::Alias(r.u16()?),
            Self::NFT => Self::Nft(r.u16()?),
            t => return Err(ErrorKind::UnknownType(t.into()).into()),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.kind());
        match self {
            Self::Signature(s) => out.extend_from_slice(s.as_bytes()),
            Self::Reference(n) | Self::Alias(n) | Self::Nft(n) => {
                out.extend_from_slice(&n.to_le_bytes())
            }
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SigUnlockJson {
    signature: Ed25519Signature,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RefJson {
    reference: u16,
}

impl Serialize for Unlock<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let k = self.kind().into();
        match self {
            Self::Signature(sig) => tagged::serialize(s, k, &SigUnlockJson { signature: **sig }),
            Self::Reference(n) | Self::Alias(n) | Self::Nft(n) => {
                tagged::serialize(s, k, &RefJson { reference: *n })
            }
        }
    }
}

crate::types::tagged::deserialize_tagged!(Unlock<'_>, |ty, rest| {
    Ok(match u8::try_from(ty).ok() {
        Some(Self::SIGNATURE) => Self::Signature(Cow::Owned(
            tagged::rest::<D, SigUnlockJson>(rest)?.signature,
        )),
        Some(Self::REFERENCE) => Self::Reference(tagged::rest::<D, RefJson>(rest)?.reference),
        Some(Self::ALIAS) => Self::Alias(tagged::rest::<D, RefJson>(rest)?.reference),
        Some(Self::NFT) => Self::Nft(tagged::rest::<D, RefJson>(rest)?.reference),
        _ => {
            return Err(serde::de::Error::custom(format!(
                "unknown unlock type {ty}"
            )))
        }
    })
});
