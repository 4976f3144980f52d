//! Shared primitives of both block generations: byte strings and fixed
//! arrays that borrow or own, hex and number JSON conventions, uint256.

use std::borrow::Cow;
use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Result;
use crate::wire::{Codec, Reader};

pub use crate::hexstr::{parse_config_hex, parse_hex, parse_hex_array, to_hex};

/// A variable-length byte string: borrowed from the wire, or owned.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Bytes<'a>(pub Cow<'a, [u8]>);

impl<'a> Bytes<'a> {
    /// Borrows `b`.
    pub fn borrowed(b: &'a [u8]) -> Self {
        Self(Cow::Borrowed(b))
    }
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Bytes<'static> {
        Bytes(Cow::Owned(self.0.into_owned()))
    }
}

impl From<Vec<u8>> for Bytes<'static> {
    fn from(v: Vec<u8>) -> Self {
        Self(Cow::Owned(v))
    }
}

impl fmt::Debug for Bytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_hex(&self.0))
    }
}

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&to_hex(&self.0))
    }
}

impl<'de> Deserialize<'de> for Bytes<'_> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(d)?;
        parse_hex(&s)
            .map(|v| Bytes(Cow::Owned(v)))
            .map_err(D::Error::custom)
    }
}

/// A fixed-size byte array (ids, keys, hashes): a view into the wire, or owned.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fixed<'a, const N: usize>(pub Cow<'a, [u8; N]>);

/// 32-byte ids and hashes.
pub type Hash32<'a> = Fixed<'a, 32>;

impl<'a, const N: usize> Fixed<'a, N> {
    /// Borrows `b`.
    pub fn borrowed(b: &'a [u8; N]) -> Self {
        Self(Cow::Borrowed(b))
    }
    /// Owns `b`.
    pub fn owned(b: [u8; N]) -> Fixed<'static, N> {
        Fixed(Cow::Owned(b))
    }
    /// All zero.
    pub fn zero() -> Fixed<'static, N> {
        Fixed(Cow::Owned([0; N]))
    }
    /// True when all bytes are zero.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|b| *b == 0)
    }
    /// The bytes.
    pub fn as_array(&self) -> &[u8; N] {
        &self.0
    }
    /// A copy of the bytes.
    pub fn to_array(&self) -> [u8; N] {
        *self.0
    }
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Fixed<'static, N> {
        Fixed(Cow::Owned(self.0.into_owned()))
    }
}

impl<'a, const N: usize> Codec<'a> for Fixed<'a, N> {
    #[inline]
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self::borrowed(r.array()?))
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(self.as_array());
        Ok(())
    }
}

impl<const N: usize> From<[u8; N]> for Fixed<'static, N> {
    fn from(v: [u8; N]) -> Self {
        Self(Cow::Owned(v))
    }
}

impl<const N: usize> fmt::Debug for Fixed<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_hex(&self.0[..]))
    }
}

impl<const N: usize> fmt::Display for Fixed<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_hex(&self.0[..]))
    }
}

impl<const N: usize> Serialize for Fixed<'_, N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&to_hex(&self.0[..]))
    }
}

impl<'de, const N: usize> Deserialize<'de> for Fixed<'_, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(d)?;
        parse_hex_array::<N>(&s)
            .map(|a| Fixed(Cow::Owned(a)))
            .map_err(D::Error::custom)
    }
}

/// A list of fixed-size arrays (e.g. parents): one zerocopy slice of the wire.
pub type FixedList<'a, const N: usize> = Cow<'a, [[u8; N]]>;

/// Serde for `FixedList` as a JSON array of hex strings.
pub mod fixed_list {
    use super::*;
    use serde::ser::SerializeSeq;

    /// Serializes as `["0x…", …]`.
    pub fn serialize<S: Serializer, const N: usize>(
        v: &[[u8; N]],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for a in v {
            seq.serialize_element(&to_hex(a))?;
        }
        seq.end()
    }

    /// Deserializes from `["0x…", …]`.
    pub fn deserialize<'de, 'a, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<Cow<'a, [[u8; N]]>, D::Error> {
        let v = Vec::<Cow<'de, str>>::deserialize(d)?;
        v.iter()
            .map(|s| parse_hex_array::<N>(s).map_err(D::Error::custom))
            .collect::<Result<Vec<_>, _>>()
            .map(Cow::Owned)
    }
}

/// Serde for `u64` as a decimal string (amounts, nonce, network id).
pub mod u64_str {
    use super::*;

    /// Serializes as `"123"`.
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// Deserializes from `"123"` (a JSON number is accepted too).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(DecimalU64 { numbers: true })
    }
}

/// Reads a `u64` written as a decimal string, borrowed (no allocation); a JSON
/// number too when `numbers` (v2 accepts one, v3 does not).
pub(crate) struct DecimalU64 {
    pub(crate) numbers: bool,
}

impl serde::de::Visitor<'_> for DecimalU64 {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a u64 as a decimal string")
    }
    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<u64, E> {
        if self.numbers {
            Ok(n)
        } else {
            Err(E::custom("u64 values must be decimal strings"))
        }
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<u64, E> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(E::custom(format!("{s:?} is not a decimal u64")));
        }
        s.parse::<u64>()
            .map_err(|_| E::custom(format!("{s:?} does not fit in u64")))
    }
}

/// A 256-bit unsigned integer: 32 bytes little endian on the wire,
/// `0x` + big-endian hex without leading zeros in JSON.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct U256(pub primitive_types::U256);

impl U256 {
    /// Zero.
    pub const ZERO: Self = Self(primitive_types::U256::zero());

    /// From the 32-byte little-endian wire form.
    pub fn from_le(b: &[u8; 32]) -> Self {
        Self(primitive_types::U256::from_little_endian(b))
    }

    /// The 32-byte little-endian wire form.
    pub fn to_le(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        self.0.to_little_endian(&mut b);
        b
    }

    /// True when zero.
    pub fn is_zero(&self) -> bool {
        self.0.is_zero()
    }
}

impl<'a> Codec<'a> for U256 {
    #[inline]
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self::from_le(r.array()?))
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(&self.to_le());
        Ok(())
    }
}

impl From<u64> for U256 {
    fn from(v: u64) -> Self {
        Self(v.into())
    }
}

impl fmt::Debug for U256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl Serialize for U256 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:#x}", self.0))
    }
}

impl<'de> Deserialize<'de> for U256 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(d)?;
        let digits = crate::hexstr::strip_0x(&s)
            .ok_or_else(|| D::Error::custom(format!("uint256 {s:?} does not start with 0x")))?;
        if digits.is_empty() || digits.len() > 64 || !digits.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(D::Error::custom(format!("invalid uint256 hex {s:?}")));
        }
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(D::Error::custom(format!("uint256 {s:?} has leading zeros")));
        }
        primitive_types::U256::from_str_radix(digits, 16)
            .map(Self)
            .map_err(|_| D::Error::custom(format!("invalid uint256 hex {s:?}")))
    }
}

/// Serde helpers for enums tagged by a numeric `"type"` field.
pub mod tagged {
    use super::*;

    #[derive(Serialize)]
    struct WithType<'t, T: Serialize> {
        #[serde(rename = "type")]
        ty: u32,
        #[serde(flatten)]
        inner: &'t T,
    }

    /// Serializes `inner` as an object with `"type": ty` first.
    pub fn serialize<S: Serializer, T: Serialize>(
        s: S,
        ty: u32,
        inner: &T,
    ) -> Result<S::Ok, S::Error> {
        WithType { ty, inner }.serialize(s)
    }

    /// A type whose JSON is an object with a numeric `"type"` that selects how the other
    /// fields are read. Implement [`Tagged::from_rest`] and derive `Deserialize` with
    /// [`deserialize_tagged!`](crate::types::tagged::deserialize_tagged).
    pub trait Tagged<'de>: Sized {
        /// Reads the object's other fields (`rest`, without `"type"`) for type `ty`.
        ///
        /// # Errors
        /// The deserializer's error for a bad field or an unknown type.
        fn from_rest<D: Deserializer<'de>>(ty: u32, rest: D)
            -> std::result::Result<Self, D::Error>;
    }

    /// Deserializes a [`Tagged`] type. When `"type"` is the object's first key (as every
    /// serializer of these formats writes it) the other fields stream straight into the
    /// variant; otherwise the object is buffered once to find the type. Duplicate keys are
    /// refused either way.
    pub fn deserialize<'de, D: Deserializer<'de>, T: Tagged<'de>>(
        d: D,
    ) -> std::result::Result<T, D::Error> {
        d.deserialize_map(TaggedVisitor(std::marker::PhantomData))
    }

    /// `impl Deserialize for $t` through [`deserialize`], with `$t`'s [`Tagged::from_rest`]
    /// given as a closure-like body over the type and the rest of the object:
    /// `deserialize_tagged!(Feature<'_>, |ty, rest| { … })`.
    macro_rules! deserialize_tagged {
        ($t:ty, |$ty:ident, $rest:ident| $body:block) => {
            impl<'de> serde::Deserialize<'de> for $t {
                fn deserialize<D: serde::Deserializer<'de>>(
                    d: D,
                ) -> ::std::result::Result<Self, D::Error> {
                    $crate::types::tagged::deserialize(d)
                }
            }

            impl<'de> $crate::types::tagged::Tagged<'de> for $t {
                fn from_rest<D: serde::Deserializer<'de>>(
                    $ty: u32,
                    $rest: D,
                ) -> ::std::result::Result<Self, D::Error> $body
            }
        };
    }
    pub(crate) use deserialize_tagged;

    /// The rest of a tagged object read as `T` (inside [`Tagged::from_rest`]).
    ///
    /// # Errors
    /// The deserializer's error.
    pub fn rest<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        rest: D,
    ) -> std::result::Result<T, D::Error> {
        T::deserialize(rest)
    }

    /// Reads an object into a tree and splits off its numeric `"type"`, for the rare type
    /// that must look at its other fields to choose (otherwise use [`Tagged`]).
    ///
    /// # Errors
    /// Not an object, or no numeric `type`.
    pub fn split_value<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<(u32, serde_json::Value), D::Error> {
        let mut v = serde_json::Value::deserialize(d)?;
        let obj = v
            .as_object_mut()
            .ok_or_else(|| D::Error::custom("expected a JSON object"))?;
        let ty = type_number(
            &obj.remove("type")
                .ok_or_else(|| D::Error::custom("missing field `type`"))?,
        )?;
        Ok((ty, v))
    }

    /// `Ok` when a tagged object's `ty` is `want`, the only type `what` (e.g. "a UTXO
    /// input") can have.
    ///
    /// # Errors
    /// Any other type, named with `what`.
    pub fn require_type<E: serde::de::Error>(ty: u32, want: u32, what: &str) -> Result<(), E> {
        if ty == want {
            Ok(())
        } else {
            Err(E::custom(format!(
                "type {ty} where {what} (type {want}) is required"
            )))
        }
    }

    /// A `T` whose JSON must carry `"type": N`.
    struct Fixed<T, const N: u32>(T);

    impl<'de, T: Deserialize<'de>, const N: u32> Tagged<'de> for Fixed<T, N> {
        fn from_rest<D: Deserializer<'de>>(
            ty: u32,
            rest: D,
        ) -> std::result::Result<Self, D::Error> {
            require_type::<D::Error>(ty, N, "this object")?;
            T::deserialize(rest).map(Fixed)
        }
    }

    /// Deserializes a `T` whose JSON carries the fixed type `N`.
    ///
    /// # Errors
    /// Another type, or the deserializer's error.
    pub fn deserialize_fixed<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: u32>(
        d: D,
    ) -> std::result::Result<T, D::Error> {
        deserialize::<D, Fixed<T, N>>(d).map(|f| f.0)
    }

    impl<'de, T: Deserialize<'de>, const N: u32> Deserialize<'de> for Fixed<T, N> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
            deserialize::<D, Self>(d)
        }
    }

    /// [`deserialize_fixed`] for an optional field (`null` or absent is `None`),
    /// streamed like the required form.
    ///
    /// # Errors
    /// As [`deserialize_fixed`].
    pub fn deserialize_fixed_opt<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: u32>(
        d: D,
    ) -> std::result::Result<Option<T>, D::Error> {
        Option::<Fixed<T, N>>::deserialize(d).map(|o| o.map(|f| f.0))
    }

    /// A key of a tagged object: `"type"` or another.
    enum Key {
        Type,
        Other(String),
    }

    impl<'de> Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
            struct V;
            impl serde::de::Visitor<'_> for V {
                type Value = Key;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a field name")
                }
                fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Key, E> {
                    Ok(if v == "type" {
                        Key::Type
                    } else {
                        Key::Other(v.to_owned())
                    })
                }
            }
            d.deserialize_str(V)
        }
    }

    fn type_number<E: serde::de::Error>(v: &serde_json::Value) -> std::result::Result<u32, E> {
        v.as_u64()
            .and_then(|t| u32::try_from(t).ok())
            .ok_or_else(|| E::custom("field `type` is not a number"))
    }

    struct TaggedVisitor<T>(std::marker::PhantomData<T>);

    impl<'de, T: Tagged<'de>> serde::de::Visitor<'de> for TaggedVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object with a numeric `type`")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<T, A::Error> {
            match map.next_key::<Key>()? {
                None => Err(A::Error::custom("missing field `type`")),
                Some(Key::Type) => {
                    let ty = type_number(&map.next_value::<serde_json::Value>()?)?;
                    T::from_rest(ty, serde::de::value::MapAccessDeserializer::new(map))
                }
                Some(Key::Other(first)) => {
                    let mut obj = serde_json::Map::new();
                    let mut ty = None;
                    let mut key = Some(Key::Other(first));
                    while let Some(k) = key {
                        match k {
                            Key::Type if ty.is_some() => {
                                return Err(A::Error::custom("duplicate field `type`"))
                            }
                            Key::Type => {
                                ty = Some(type_number(&map.next_value::<serde_json::Value>()?)?)
                            }
                            Key::Other(name) => {
                                let v: serde_json::Value = map.next_value()?;
                                if obj.contains_key(&name) {
                                    return Err(A::Error::custom(format!(
                                        "duplicate field `{name}`"
                                    )));
                                }
                                obj.insert(name, v);
                            }
                        }
                        key = map.next_key::<Key>()?;
                    }
                    let ty = ty.ok_or_else(|| A::Error::custom("missing field `type`"))?;
                    T::from_rest(ty, serde_json::Value::Object(obj)).map_err(A::Error::custom)
                }
            }
        }
    }
}

/// A method of an enum that reads one field of the variants that have it and gives `$default`
/// for the others:
/// `variant_field!(/** Features. */ features -> &[Feature<'a>] = |o| &o.features, Basic Nft; else &[])`;
/// without `; else …` every variant must be listed (the match is then exhaustive as written).
macro_rules! variant_field {
    (
        $(#[$doc:meta])*
        $name:ident -> $ret:ty = |$o:ident| $get:expr, $($var:ident)+
    ) => {
        $(#[$doc])*
        pub fn $name(&self) -> $ret {
            match self {
                $(Self::$var($o) => $get,)+
            }
        }
    };
    (
        $(#[$doc:meta])*
        $name:ident -> $ret:ty = |$o:ident| $get:expr, $($var:ident)+; else $default:expr
    ) => {
        $(#[$doc])*
        pub fn $name(&self) -> $ret {
            match self {
                $(Self::$var($o) => $get,)+
                _ => $default,
            }
        }
    };
}

pub(crate) use variant_field;

/// Detaches every element of a list: `owned_list(outputs, Output::into_owned)`.
pub(crate) fn owned_list<T, U>(items: Vec<T>, detach: impl FnMut(T) -> U) -> Vec<U> {
    items.into_iter().map(detach).collect()
}

/// `into_owned` for an enum whose every variant wraps one value that has its own
/// `into_owned`: `into_owned_variants!(Feature: Sender, Issuer, Metadata, Tag)`.
macro_rules! into_owned_variants {
    ($t:ident: $($var:ident),+ $(,)?) => {
        impl $t<'_> {
            /// Detaches from the input buffer.
            pub fn into_owned(self) -> $t<'static> {
                match self {
                    $(Self::$var(x) => $t::$var(x.into_owned()),)+
                }
            }
        }
    };
}

pub(crate) use into_owned_variants;

#[cfg(test)]
mod tests {
    use crate::stardust::{Block, Output};

    #[test]
    fn config_hex_takes_optional_prefix_whitespace_and_either_case() {
        use super::parse_config_hex;
        let want = [0xab_u8; 4];
        for text in ["abababab", "0xabababab", "0XABABABAB", "  0xAbAbAbAb\n"] {
            assert_eq!(parse_config_hex::<4>(text), Some(want), "{text:?}");
        }
        for text in [
            "",
            "0x",
            "ababab",
            "ababababab",
            "0xzzzzzzzz",
            "0x 0xabababab",
        ] {
            assert_eq!(parse_config_hex::<4>(text), None, "{text:?}");
        }
    }

    const OUTPUT: &str = r#"{"type":3,"amount":"1000","unlockConditions":[{"type":0,"address":{"type":0,"pubKeyHash":"0x1111111111111111111111111111111111111111111111111111111111111111"}}]}"#;

    #[test]
    fn type_anywhere_in_the_object_gives_the_same_value() -> Result<(), serde_json::Error> {
        let first: Output<'static> = serde_json::from_str(OUTPUT)?;
        let moved = r#"{"amount":"1000","unlockConditions":[{"address":{"pubKeyHash":"0x1111111111111111111111111111111111111111111111111111111111111111","type":0},"type":0}],"type":3}"#;
        let last: Output<'static> = serde_json::from_str(moved)?;
        assert_eq!(first, last);
        // Through a Value (buffered path all the way down) too.
        let value: serde_json::Value = serde_json::from_str(moved)?;
        assert_eq!(serde_json::from_value::<Output<'static>>(value)?, first);
        Ok(())
    }

    #[test]
    fn duplicate_missing_and_bad_types_are_refused() {
        let cases = [
            (r#"{"type":3,"type":3,"amount":"1"}"#, "type"),
            (
                r#"{"amount":"1","type":3,"type":3}"#,
                "duplicate field `type`",
            ),
            (
                r#"{"amount":"1","amount":"2","type":3}"#,
                "duplicate field `amount`",
            ),
            (
                r#"{"type":3,"amount":"1","amount":"2","unlockConditions":[]}"#,
                "duplicate field",
            ),
            (r#"{"amount":"1"}"#, "missing field `type`"),
            (r#"{}"#, "missing field `type`"),
            (r#"{"type":"3","amount":"1"}"#, "not a number"),
            (r#"{"type":99,"amount":"1"}"#, "unknown output type 99"),
            (r#"[3]"#, "expected a JSON object"),
        ];
        for (json, needle) in cases {
            let err = serde_json::from_str::<Output<'static>>(json)
                .expect_err(json) // ok: test code
                .to_string();
            assert!(err.contains(needle), "{json}: {err}");
        }
        // An unknown field after the type is still refused.
        let extra = OUTPUT.replacen("\"amount\"", "\"bogus\":1,\"amount\"", 1);
        let err = serde_json::from_str::<Output<'static>>(&extra).unwrap_err(); // ok: test code
        assert!(err.to_string().contains("bogus"), "{err}");
        // Blocks decode through the streaming path from a string.
        let block = format!(
            r#"{{"protocolVersion":2,"parents":["0x{}"],"payload":{{"type":5,"tag":"0x01"}},"nonce":"0"}}"#,
            "00".repeat(32)
        );
        assert!(Block::from_json(&block).is_ok());
    }

    #[test]
    fn a_fixed_type_object_of_another_type_names_what_was_required() {
        use crate::stardust::{input::UtxoInput, unlock::Ed25519Signature};
        let zeros = format!("0x{}", "00".repeat(32));
        let input = format!(r#"{{"type":1,"transactionId":"{zeros}","transactionOutputIndex":0}}"#);
        let err = serde_json::from_str::<UtxoInput>(&input)
            .map_or_else(|e| e.to_string(), |_| String::new());
        assert!(
            err.contains("type 1 where a UTXO input (type 0) is required"),
            "{err}"
        );
        let input = input.replace(r#""type":1"#, r#""type":0"#);
        assert!(serde_json::from_str::<UtxoInput>(&input).is_ok());
        let sig = format!(
            r#"{{"type":2,"publicKey":"{zeros}","signature":"0x{}"}}"#,
            "00".repeat(64)
        );
        let err = serde_json::from_str::<Ed25519Signature>(&sig)
            .map_or_else(|e| e.to_string(), |_| String::new());
        assert!(
            err.contains("type 2 where an Ed25519 signature (type 0) is required"),
            "{err}"
        );
    }
}
