//! JSON conventions of the v3 types (TIP-46/48, serix map encoding), stricter
//! than the reference nodes: u64 only as decimal strings, lists bounded by
//! the capacity of their wire prefix so that encoding never wraps a count
//! (the exact limits are then checked, with their location, by decoding).

use std::borrow::Cow;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};

/// `u64` as a decimal string; a JSON number is rejected (TIP-48: u64 → string).
pub mod u64_str {
    use super::*;

    /// Serializes as `"123"`.
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// Deserializes from `"123"` only (borrowed: no allocation per value).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(crate::types::DecimalU64 { numbers: false })
    }
}

/// `i64` as a decimal string (e.g. `genesisUnixTimestamp`).
pub mod i64_str {
    use super::*;

    /// Serializes as `"-123"`.
    pub fn serialize<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// Deserializes from a decimal string only.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let s = Cow::<'de, str>::deserialize(d)
            .map_err(|_| D::Error::custom("i64 values must be decimal strings"))?;
        let digits = s.strip_prefix('-').unwrap_or(&s);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(D::Error::custom(format!(
                "{s:?} is not a decimal i64 string"
            )));
        }
        s.parse::<i64>()
            .map_err(|_| D::Error::custom(format!("{s:?} does not fit in i64")))
    }
}

fn too_many<E: serde::de::Error>(got: usize, max: usize) -> E {
    E::custom(format!("list of {got} elements, at most {max} allowed"))
}

/// A JSON list of at most `MAX` elements.
pub fn bounded<'de, D, T, const MAX: usize>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let v = Vec::<T>::deserialize(d)?;
    if v.len() > MAX {
        return Err(too_many(v.len(), MAX));
    }
    Ok(v)
}

/// A JSON list of at most `MAX` elements into a `Cow` slice.
pub fn bounded_cow<'de, 'a, D, T, const MAX: usize>(d: D) -> Result<Cow<'a, [T]>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Clone,
{
    bounded::<D, T, MAX>(d).map(Cow::Owned)
}

/// A JSON list of at most `MAX` hex ids.
pub fn bounded_ids<'de, 'a, D, const N: usize, const MAX: usize>(
    d: D,
) -> Result<Cow<'a, [[u8; N]]>, D::Error>
where
    D: Deserializer<'de>,
{
    let v = crate::types::fixed_list::deserialize::<D, N>(d)?;
    if v.len() > MAX {
        return Err(too_many(v.len(), MAX));
    }
    Ok(v)
}

/// Hex bytes of at most `MAX` bytes.
pub fn bounded_bytes<'de, 'a, D, const MAX: usize>(
    d: D,
) -> Result<crate::types::Bytes<'a>, D::Error>
where
    D: Deserializer<'de>,
{
    let b = crate::types::Bytes::deserialize(d)?;
    if b.len() > MAX {
        return Err(D::Error::custom(format!(
            "{} bytes, at most {MAX} allowed",
            b.len()
        )));
    }
    Ok(b)
}

/// True for an empty slice (for `skip_serializing_if`).
pub fn is_empty<T>(v: &[T]) -> bool {
    v.is_empty()
}

/// Defines, for an enum whose variants each wrap one type, the wire type
/// byte (`kind`), the [`Codec`](crate::wire::Codec) impl (type byte then the
/// variant) and serde JSON tagged by a numeric `"type"`.
macro_rules! tagged_enum {
    ($name:ident, $what:literal, { $($ty:literal => $var:ident),+ $(,)? }) => {
        impl $name<'_> {
            /// The wire type byte.
            pub fn kind(&self) -> u8 {
                match self {
                    $(Self::$var(..) => $ty,)+
                }
            }
        }

        impl<'a> $crate::wire::Codec<'a> for $name<'a> {
            fn read(r: &mut $crate::wire::Reader<'a>) -> $crate::error::Result<Self> {
                let t = r.u8()?;
                Ok(match t {
                    $($ty => Self::$var($crate::wire::Codec::read(r)?),)+
                    t => {
                        return Err($crate::error::Error::new(
                            $crate::error::ErrorKind::UnknownType(t.into()),
                        )
                        .at($what))
                    }
                })
            }

            fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
                out.push(self.kind());
                match self {
                    $(Self::$var(x) => $crate::wire::Codec::encode(x, out),)+
                }
            }
        }

        impl serde::Serialize for $name<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Self::$var(x) => $crate::types::tagged::serialize(s, $ty, x),)+
                }
            }
        }

        $crate::types::tagged::deserialize_tagged!($name<'_>, |ty, rest| {
            Ok(match ty {
                $($ty => Self::$var($crate::types::tagged::rest::<D, _>(rest)?),)+
                t => {
                    return Err(<D::Error as serde::de::Error>::custom(format!(
                        concat!("unknown ", $what, " type {}"),
                        t
                    )))
                }
            })
        });
    };
}

pub(crate) use tagged_enum;
