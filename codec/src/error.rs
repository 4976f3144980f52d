//! The codec's one error type: a rule that was broken, and where.
//!
//! Locations are built while an error travels up the decoder: every
//! composite type wraps the errors of its parts with [`Error::at`] /
//! [`Error::at_index`], so the final message reads like
//! `payload.essence.outputs[3].unlockConditions: not sorted by type`.
//! Nothing is allocated on the success path.

use std::borrow::Cow;
use std::fmt;

/// What rule a value broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before the value was complete.
    #[error("unexpected end of input (needed {needed} more bytes)")]
    UnexpectedEnd {
        /// Bytes missing.
        needed: usize,
    },
    /// Bytes were left after the top-level value.
    #[error("{0} trailing bytes after the end")]
    TrailingBytes(usize),
    /// A type prefix that is not known or not allowed here.
    #[error("unknown or disallowed type {0}")]
    UnknownType(u32),
    /// A count or length outside its allowed range.
    #[error("count {got} out of range {min}..={max}")]
    CountOutOfRange {
        /// Smallest allowed.
        min: usize,
        /// Largest allowed.
        max: usize,
        /// What the input said.
        got: usize,
    },
    /// A list or byte string longer than its length prefix can count: it has no wire form.
    #[error("too long to encode: length {got}, its prefix counts at most {max}")]
    TooLongToEncode {
        /// The most the prefix can count.
        max: usize,
        /// The value's length.
        got: usize,
    },
    /// A list that must be in ascending order is not.
    #[error("not sorted {0}")]
    NotSorted(&'static str),
    /// A list that must hold unique elements has a duplicate.
    #[error("duplicate {0}")]
    Duplicate(&'static str),
    /// A length prefix disagrees with the bytes it covers.
    #[error("length prefix says {declared} bytes but the content is {actual}")]
    LengthMismatch {
        /// The prefix value.
        declared: usize,
        /// The bytes actually used.
        actual: usize,
    },
    /// A JSON document that does not describe a valid value.
    #[error("invalid JSON: {0}")]
    Json(String),
    /// Any other broken rule, in plain words.
    #[error("{0}")]
    Invalid(Cow<'static, str>),
}

/// One step of a location path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Field(&'static str),
    Index(&'static str, usize),
}

/// A decoding, encoding or validation failure with its location.
///
/// One pointer wide (the details are boxed), so `Result<T, Error>` costs the success path
/// next to nothing: every decode and encode step returns one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    // Innermost segment first; reversed when displayed.
    path: Vec<Segment>,
    kind: ErrorKind,
}

impl Error {
    /// An error at the current location.
    pub fn new(kind: ErrorKind) -> Self {
        Self(Box::new(Inner {
            path: Vec::new(),
            kind,
        }))
    }

    /// A rule broken, in plain words.
    pub fn invalid(msg: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::Invalid(msg.into()))
    }

    /// Places this error inside field `name` of the enclosing value.
    #[must_use]
    pub fn at(mut self, name: &'static str) -> Self {
        self.0.path.push(Segment::Field(name));
        self
    }

    /// Places this error inside element `index` of list `name`.
    #[must_use]
    pub fn at_index(mut self, name: &'static str, index: usize) -> Self {
        self.0.path.push(Segment::Index(name, index));
        self
    }

    /// The rule that was broken.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The location, e.g. `payload.essence.outputs[3]` (empty at the top).
    pub fn location(&self) -> String {
        let mut s = String::new();
        for seg in self.0.path.iter().rev() {
            if !s.is_empty() {
                s.push('.');
            }
            match seg {
                Segment::Field(f) => s.push_str(f),
                Segment::Index(f, i) => {
                    s.push_str(f);
                    s.push('[');
                    s.push_str(&i.to_string());
                    s.push(']');
                }
            }
        }
        s
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.path.is_empty() {
            write!(f, "{}", self.0.kind)
        } else {
            write!(f, "{}: {}", self.location(), self.0.kind)
        }
    }
}

impl std::error::Error for Error {}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Self::new(kind)
    }
}

/// Codec result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds location context to results.
pub trait Context<T> {
    /// See [`Error::at`].
    fn at(self, name: &'static str) -> Result<T>;
    /// See [`Error::at_index`].
    fn at_index(self, name: &'static str, index: usize) -> Result<T>;
}

impl<T> Context<T> for Result<T> {
    #[inline]
    fn at(self, name: &'static str) -> Result<T> {
        self.map_err(|e| e.at(name))
    }
    #[inline]
    fn at_index(self, name: &'static str, index: usize) -> Result<T> {
        self.map_err(|e| e.at_index(name, index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_reads_outermost_first() {
        let e = Error::new(ErrorKind::NotSorted("by type"))
            .at("unlockConditions")
            .at_index("outputs", 3)
            .at("essence")
            .at("payload");
        assert_eq!(
            e.to_string(),
            "payload.essence.outputs[3].unlockConditions: not sorted by type"
        );
    }
}
