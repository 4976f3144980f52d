//! The decode/encode boundary: [`Reader`], [`Codec`] and declared length prefixes.
//!
//! Every wire type implements [`Codec`] once: `read` borrows from the input
//! (no byte is copied; fixed-size parts are zerocopy views) and `encode`
//! appends the exact bytes, or refuses a value that has none (a list or byte
//! string longer than its prefix can count): nothing is ever truncated. nom does the primitive parsing inside the reader;
//! its error type never leaves this module.

use std::borrow::Cow;

use nom::number::complete::{le_i64, le_u16, le_u32, le_u64, le_u8};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

use crate::error::{Context, Error, ErrorKind, Result};

/// Width of a length or count prefix on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefix {
    /// One byte.
    U8,
    /// Two bytes, little endian.
    U16,
    /// Four bytes, little endian.
    U32,
}

/// A length- or count-prefixed field: prefix width and the allowed range.
///
/// The limits are data, so the decoder checks them before it takes or
/// allocates anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Len {
    /// Prefix width.
    pub prefix: Prefix,
    /// Smallest allowed value.
    pub min: usize,
    /// Largest allowed value.
    pub max: usize,
}

impl Len {
    /// A prefix with the given range.
    pub const fn new(prefix: Prefix, min: usize, max: usize) -> Self {
        Self { prefix, min, max }
    }

    /// Checks `n` against the range.
    #[inline]
    pub fn check(&self, n: usize) -> Result<()> {
        if n < self.min || n > self.max {
            return Err(ErrorKind::CountOutOfRange {
                min: self.min,
                max: self.max,
                got: n,
            }
            .into());
        }
        Ok(())
    }

    /// Writes `bytes` with this prefix: the encode side of [`Reader::prefixed`].
    ///
    /// # Errors
    /// As [`Len::put`].
    #[inline]
    pub fn put_bytes(&self, bytes: &[u8], out: &mut Vec<u8>) -> Result<()> {
        self.put(bytes.len(), out)?;
        out.extend_from_slice(bytes);
        Ok(())
    }

    /// Writes `n` as this prefix.
    ///
    /// The range is the decoder's rule and is not checked here (an out-of-range count still
    /// has bytes, which the decoder then refuses); a count the prefix cannot hold has none.
    ///
    /// # Errors
    /// [`ErrorKind::TooLongToEncode`] when `n` does not fit the prefix: it is never truncated.
    #[inline]
    pub fn put(&self, n: usize, out: &mut Vec<u8>) -> Result<()> {
        let too_long = |max: usize| ErrorKind::TooLongToEncode { max, got: n };
        match self.prefix {
            Prefix::U8 => out.push(u8::try_from(n).map_err(|_| too_long(u8::MAX.into()))?),
            Prefix::U16 => out.extend_from_slice(
                &u16::try_from(n)
                    .map_err(|_| too_long(u16::MAX.into()))?
                    .to_le_bytes(),
            ),
            Prefix::U32 => out.extend_from_slice(
                &u32::try_from(n)
                    .map_err(|_| too_long(u32::MAX as usize))?
                    .to_le_bytes(),
            ),
        }
        Ok(())
    }

    /// Bytes the prefix itself takes.
    pub const fn width(&self) -> usize {
        match self.prefix {
            Prefix::U8 => 1,
            Prefix::U16 => 2,
            Prefix::U32 => 4,
        }
    }
}

/// One step of the order rule of type-keyed lists (types strictly ascending, so each at most
/// once): the broken rule for type `k` after `prev`, if any. The callers say where.
pub(crate) fn type_order_error(prev: Option<u8>, k: u8) -> Option<ErrorKind> {
    match prev {
        Some(p) if p == k => Some(ErrorKind::Duplicate("type")),
        Some(p) if p > k => Some(ErrorKind::NotSorted("by type")),
        _ => None,
    }
}

/// Reads a list of `len`'s count prefix and elements (layout only), locating errors at
/// `name[i]`.
///
/// # Errors
/// A count out of range, or the first element that does not read.
pub(crate) fn read_list<'a, T: Codec<'a>>(
    r: &mut Reader<'a>,
    len: &Len,
    name: &'static str,
) -> Result<Vec<T>> {
    let n = r.len(len).at(name)?;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        v.push(T::read(r).at_index(name, i)?);
    }
    Ok(v)
}

/// Writes `items` with `len`'s count prefix, locating errors at `name[i]`.
///
/// # Errors
/// A count the prefix cannot hold, or the first element that does not encode.
pub(crate) fn write_list<'a, T: Codec<'a>>(
    len: &Len,
    items: &[T],
    name: &'static str,
    out: &mut Vec<u8>,
) -> Result<()> {
    len.put(items.len(), out).at(name)?;
    for (i, item) in items.iter().enumerate() {
        item.encode(out).at_index(name, i)?;
    }
    Ok(())
}

/// The reader's integer methods: each is [`Reader::number`] with its nom parser and width.
macro_rules! le_readers {
    ($($(#[$doc:meta])* $t:ident = $parse:ident, $width:literal;)+) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $t(&mut self) -> Result<$t> {
            self.number($parse, $width)
        }
    )+};
}

/// A cursor over borrowed input.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

#[inline]
fn end<E>(_: nom::Err<E>, needed: usize) -> Error {
    ErrorKind::UnexpectedEnd { needed }.into()
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes not yet read.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Number of bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Position from the start of this reader's buffer.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes consumed since position `from`.
    #[inline]
    pub fn since(&self, from: usize) -> &'a [u8] {
        self.buf.get(from..self.pos).unwrap_or_default()
    }

    #[inline]
    fn advance_to(&mut self, rest: &'a [u8]) {
        self.pos = self.buf.len() - rest.len();
    }

    /// Fails unless every byte was read.
    #[inline]
    pub fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(ErrorKind::TrailingBytes(n).into()),
        }
    }

    /// Reads one `width`-byte number with nom's `parse`.
    #[inline]
    fn number<T>(
        &mut self,
        parse: impl Fn(&'a [u8]) -> nom::IResult<&'a [u8], T>,
        width: usize,
    ) -> Result<T> {
        let (rest, v) =
            parse(self.rest()).map_err(|e| end(e, width - self.remaining().min(width)))?;
        self.advance_to(rest);
        Ok(v)
    }

    le_readers! {
        /// Reads a `u8`.
        u8 = le_u8, 1;
        /// Reads a little-endian `u16`.
        u16 = le_u16, 2;
        /// Reads a little-endian `u32`.
        u32 = le_u32, 4;
        /// Reads a little-endian `u64`.
        u64 = le_u64, 8;
        /// Reads a little-endian `i64`.
        i64 = le_i64, 8;
    }

    /// Takes `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let (rest, v) =
            nom::bytes::complete::take::<_, _, nom::error::Error<&[u8]>>(n)(self.rest())
                .map_err(|e| end(e, n - self.remaining().min(n)))?;
        self.advance_to(rest);
        Ok(v)
    }

    /// Takes `N` bytes as an array reference.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<&'a [u8; N]> {
        self.view::<[u8; N]>()
    }

    /// Takes a fixed-layout wire struct as a zerocopy view.
    #[inline]
    pub fn view<T: FromBytes + KnownLayout + Immutable + Unaligned>(&mut self) -> Result<&'a T> {
        let size = core::mem::size_of::<T>();
        let bytes = self.take(size)?;
        T::ref_from_bytes(bytes).map_err(|_| ErrorKind::UnexpectedEnd { needed: size }.into())
    }

    /// Takes `count` fixed-layout elements as one zerocopy slice.
    #[inline]
    pub fn slice_of<T: FromBytes + KnownLayout + Immutable + Unaligned>(
        &mut self,
        count: usize,
    ) -> Result<&'a [T]> {
        let size = core::mem::size_of::<T>().saturating_mul(count);
        let bytes = self.take(size)?;
        <[T]>::ref_from_bytes(bytes).map_err(|_| ErrorKind::UnexpectedEnd { needed: size }.into())
    }

    /// Reads a prefix and checks it against `len`'s range.
    #[inline]
    pub fn len(&mut self, len: &Len) -> Result<usize> {
        let n = match len.prefix {
            Prefix::U8 => self.u8()? as usize,
            Prefix::U16 => self.u16()? as usize,
            Prefix::U32 => self.u32()? as usize,
        };
        len.check(n)?;
        Ok(n)
    }

    /// Reads a length-prefixed byte string.
    #[inline]
    pub fn prefixed(&mut self, len: &Len) -> Result<&'a [u8]> {
        let n = self.len(len)?;
        self.take(n)
    }

    /// A sub-reader over the next `n` bytes; this reader moves past them.
    #[inline]
    pub fn sub(&mut self, n: usize) -> Result<Reader<'a>> {
        Ok(Reader::new(self.take(n)?))
    }
}

/// A wire type: read borrows from the input, encode appends the exact bytes.
pub trait Codec<'a>: Sized {
    /// Reads and syntactically validates one value.
    ///
    /// # Errors
    /// The broken rule, with its location inside the value.
    fn read(r: &mut Reader<'a>) -> Result<Self>;

    /// Appends the wire bytes.
    ///
    /// # Errors
    /// A list or byte string longer than its prefix can count
    /// ([`ErrorKind::TooLongToEncode`]), located like a decoding error. `out` may then hold
    /// part of the value.
    fn encode(&self, out: &mut Vec<u8>) -> Result<()>;

    /// The wire bytes as a new vector.
    ///
    /// # Errors
    /// As [`Codec::encode`].
    fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.encode(&mut v)?;
        Ok(v)
    }

    /// Decodes a value that must span all of `bytes` (no trailing bytes).
    ///
    /// # Errors
    /// Any decode error, or [`ErrorKind::TrailingBytes`].
    fn decode(bytes: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(bytes);
        // Returned in place (no move out of the result and back).
        let v = Self::read(&mut r);
        if v.is_ok() {
            r.finish()?;
        }
        v
    }
}

/// A boxed wire type is its content (recursive types box their recursion).
impl<'a, T: Codec<'a>> Codec<'a> for Box<T> {
    #[inline]
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        T::read(r).map(Box::new)
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        (**self).encode(out)
    }
}

/// Checks, in a unit test, that `bytes` decode as a `T` whose JSON is `json`, and that `json`
/// reads back (as the owned `U`) to the same bytes.
#[cfg(test)]
pub(crate) fn assert_bytes_and_json<'a, T, U>(bytes: &'a [u8], json: &str)
where
    T: Codec<'a> + serde::Serialize,
    U: Codec<'static> + serde::de::DeserializeOwned,
{
    let value = T::decode(bytes).unwrap(); // ok: test code
    assert_eq!(serde_json::to_string(&value).unwrap(), json); // ok: test code
    let back: U = serde_json::from_str(json).unwrap(); // ok: test code
    assert_eq!(back.to_bytes().unwrap(), bytes); // ok: test code
}

/// Little-endian integers are wire types of their own, so a struct of them can be declared with
/// [`fields_codec!`].
macro_rules! le_integer_codec {
    ($($t:ident),+) => {$(
        impl<'a> Codec<'a> for $t {
            #[inline]
            fn read(r: &mut Reader<'a>) -> Result<Self> {
                r.$t()
            }
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
                out.extend_from_slice(&self.to_le_bytes());
                Ok(())
            }
        }
    )+};
}

le_integer_codec!(u8, u16, u32, u64, i64);

/// A rule that reads and writes one field of type `T` where the type's own [`Codec`] does not
/// say enough: a [`Len`] gives prefixed byte strings, UTF-8 strings and lists their prefix and
/// bounds. `name` locates errors.
pub(crate) trait FieldRule<'a, T> {
    /// Reads the field.
    fn read_field(&self, r: &mut Reader<'a>, name: &'static str) -> Result<T>;
    /// Writes the field.
    fn write_field(&self, v: &T, name: &'static str, out: &mut Vec<u8>) -> Result<()>;
}

impl<'a> FieldRule<'a, crate::types::Bytes<'a>> for Len {
    fn read_field(
        &self,
        r: &mut Reader<'a>,
        name: &'static str,
    ) -> Result<crate::types::Bytes<'a>> {
        Ok(crate::types::Bytes::borrowed(r.prefixed(self).at(name)?))
    }
    fn write_field(
        &self,
        v: &crate::types::Bytes<'a>,
        name: &'static str,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        self.put_bytes(v.as_slice(), out).at(name)
    }
}

impl<'a> FieldRule<'a, String> for Len {
    fn read_field(&self, r: &mut Reader<'a>, name: &'static str) -> Result<String> {
        let b = r.prefixed(self).at(name)?;
        String::from_utf8(b.to_vec()).map_err(|_| Error::invalid("not UTF-8").at(name))
    }
    fn write_field(&self, v: &String, name: &'static str, out: &mut Vec<u8>) -> Result<()> {
        self.put_bytes(v.as_bytes(), out).at(name)
    }
}

impl<'a, T: Codec<'a>> FieldRule<'a, Vec<T>> for Len {
    fn read_field(&self, r: &mut Reader<'a>, name: &'static str) -> Result<Vec<T>> {
        read_list(r, self, name)
    }
    fn write_field(&self, v: &Vec<T>, name: &'static str, out: &mut Vec<u8>) -> Result<()> {
        write_list(self, v, name, out)
    }
}

/// [`Codec`] for a struct that is nothing but its fields, in declaration order, so that its
/// layout is written once. Each field is read and written by its own `Codec`, or by the
/// [`FieldRule`] after `with`, and named in errors by its JSON name:
/// `fields_codec!(TaggedData<'a> { tag: "tag" with TAG, data: "data" with DATA })`.
macro_rules! fields_codec {
    ($t:ident {}) => {
        impl<'a> $crate::wire::Codec<'a> for $t {
            fn read(_: &mut $crate::wire::Reader<'a>) -> $crate::error::Result<Self> {
                Ok(Self {})
            }
            fn encode(&self, _: &mut Vec<u8>) -> $crate::error::Result<()> {
                Ok(())
            }
        }
    };
    ($t:ident<$a:lifetime> { $($f:ident: $json:literal $(with $rule:expr)?),* $(,)? }) => {
        impl<$a> $crate::wire::Codec<$a> for $t<$a> {
            $crate::wire::fields_codec!(@methods $a; $($f: $json $(with $rule)?),*);
        }
    };
    ($t:ident { $($f:ident: $json:literal $(with $rule:expr)?),* $(,)? }) => {
        impl<'a> $crate::wire::Codec<'a> for $t {
            $crate::wire::fields_codec!(@methods 'a; $($f: $json $(with $rule)?),*);
        }
    };
    (@methods $a:lifetime; $($f:ident: $json:literal $(with $rule:expr)?),*) => {
        fn read(r: &mut $crate::wire::Reader<$a>) -> $crate::error::Result<Self> {
            Ok(Self {
                $($f: $crate::wire::fields_codec!(@read r, $json $(, $rule)?)?,)*
            })
        }
        fn encode(&self, out: &mut Vec<u8>) -> $crate::error::Result<()> {
            $($crate::wire::fields_codec!(@write self.$f, out, $json $(, $rule)?)?;)*
            Ok(())
        }
    };
    (@read $r:ident, $json:literal) => {
        $crate::error::Context::at($crate::wire::Codec::read($r), $json)
    };
    (@read $r:ident, $json:literal, $rule:expr) => {
        $crate::wire::FieldRule::read_field(&$rule, $r, $json)
    };
    (@write $v:expr, $out:ident, $json:literal) => {
        $crate::error::Context::at($crate::wire::Codec::encode(&$v, $out), $json)
    };
    (@write $v:expr, $out:ident, $json:literal, $rule:expr) => {
        $crate::wire::FieldRule::write_field(&$rule, &$v, $json, $out)
    };
}

pub(crate) use fields_codec;

/// Reads an optional payload: a `u32` byte length (0 = none), then exactly
/// that many bytes, which `read` must consume completely.
///
/// # Errors
/// The inner error, or [`ErrorKind::LengthMismatch`] when `read` consumed
/// fewer bytes than declared.
pub fn read_optional<'a, T>(
    r: &mut Reader<'a>,
    read: impl FnOnce(&mut Reader<'a>) -> Result<T>,
) -> Result<Option<T>> {
    let n = r.u32()? as usize;
    if n == 0 {
        return Ok(None);
    }
    let mut sub = r.sub(n)?;
    let v = read(&mut sub)?;
    if sub.remaining() != 0 {
        return Err(ErrorKind::LengthMismatch {
            declared: n,
            actual: sub.position(),
        }
        .into());
    }
    Ok(Some(v))
}

/// Writes an optional payload with its `u32` byte length (0 when absent).
///
/// # Errors
/// The payload's own error, or [`ErrorKind::TooLongToEncode`] for a payload over 4 GiB.
pub fn write_optional<T>(
    v: Option<&T>,
    out: &mut Vec<u8>,
    encode: impl FnOnce(&T, &mut Vec<u8>) -> Result<()>,
) -> Result<()> {
    let Some(v) = v else {
        out.extend_from_slice(&0u32.to_le_bytes());
        return Ok(());
    };
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    encode(v, out)?;
    let n = out.len() - at - 4;
    let prefix = u32::try_from(n).map_err(|_| ErrorKind::TooLongToEncode {
        max: u32::MAX as usize,
        got: n,
    })?;
    if let Some(slot) = out.get_mut(at..at + 4) {
        slot.copy_from_slice(&prefix.to_le_bytes());
    }
    Ok(())
}

/// Checks that consecutive elements are strictly ascending (which also
/// rules out duplicates): `Err(NotSorted)` for a descent, `Err(Duplicate)`
/// for an equal pair.
///
/// # Errors
/// As above, located at the offending index of `list`.
pub fn check_strictly_ascending<T: Ord>(
    items: impl IntoIterator<Item = T>,
    list: &'static str,
    what: &'static str,
) -> Result<()> {
    let mut prev: Option<T> = None;
    for (i, item) in items.into_iter().enumerate() {
        if let Some(p) = &prev {
            match p.cmp(&item) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => {
                    return Err(Error::new(ErrorKind::Duplicate(what)).at_index(list, i))
                }
                std::cmp::Ordering::Greater => {
                    return Err(Error::new(ErrorKind::NotSorted(what)).at_index(list, i))
                }
            }
        }
        prev = Some(item);
    }
    Ok(())
}

/// Borrowed or owned bytes: decoding borrows, the owned model owns.
pub type CowBytes<'a> = Cow<'a, [u8]>;

/// Declares an enum's wire type bytes once: one associated constant per
/// variant, and `kind()`, a value's type byte, matched from them.
///
/// `type_bytes!(Unlock<'_> { SIGNATURE = 0 => Signature, REFERENCE = 1 => Reference })`
/// gives `Unlock::SIGNATURE`, `Unlock::REFERENCE` and `Unlock::kind`.
macro_rules! type_bytes {
    ($ty:ty { $($konst:ident = $byte:literal => $var:ident),+ $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Type byte of [`Self::", stringify!($var), "`].")]
                pub const $konst: u8 = $byte;
            )+

            /// The wire type byte.
            pub fn kind(&self) -> u8 {
                match self {
                    $(Self::$var { .. } => Self::$konst,)+
                }
            }
        }
    };
}

pub(crate) use type_bytes;
