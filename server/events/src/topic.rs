//! Topic filters: which are acceptable, and which topic names they match (MQTT 3.1.1 §4.7).
//!
//! A topic name the broker publishes is never checked: inx-mqtt publishes names with a
//! literal `+` (`outputs/unlock/+/{bech32}`, docs/events.md §1.3), which a filter holding
//! that exact name (where `+` is a wildcard) also matches.

/// Longest filter accepted (docs/events.md §5.2: the longest real topic is about 110 bytes).
pub const MAX_FILTER_LEN: usize = 256;

/// Why a filter is refused (SUBACK 0x80).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// Zero bytes.
    #[error("empty filter")]
    Empty,
    /// Longer than [`MAX_FILTER_LEN`].
    #[error("filter longer than {MAX_FILTER_LEN} bytes")]
    TooLong,
    /// Not UTF-8, or holding U+0000.
    #[error("filter is not UTF-8 without NUL")]
    Encoding,
    /// `+` or `#` sharing a level with other characters, or `#` before the last level.
    #[error("misplaced wildcard")]
    Wildcard,
}

/// A valid topic filter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Filter(String);

impl Filter {
    /// Checks `bytes` as a filter.
    ///
    /// # Errors
    /// [`FilterError`] naming the broken rule.
    pub fn parse(bytes: &[u8]) -> Result<Self, FilterError> {
        if bytes.is_empty() {
            return Err(FilterError::Empty);
        }
        if bytes.len() > MAX_FILTER_LEN {
            return Err(FilterError::TooLong);
        }
        let text = std::str::from_utf8(bytes).map_err(|_| FilterError::Encoding)?;
        if text.contains('\0') {
            return Err(FilterError::Encoding);
        }
        let levels: Vec<&str> = text.split('/').collect();
        let last = levels.len() - 1;
        for (i, level) in levels.iter().enumerate() {
            let wild = |c| level.contains(c);
            if (wild('+') && *level != "+") || (wild('#') && (*level != "#" || i != last)) {
                return Err(FilterError::Wildcard);
            }
        }
        Ok(Self(text.to_owned()))
    }

    /// The filter's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when the filter holds `+` or `#`.
    pub fn is_wildcard(&self) -> bool {
        self.0.contains(['+', '#'])
    }

    /// Whether the filter matches topic name `topic`: `+` matches one level (an empty one
    /// too), a trailing `#` the parent level and everything below it; a wildcard in the first
    /// level does not match a name starting with `$` (§4.7.2).
    pub fn matches(&self, topic: &str) -> bool {
        matches(&self.0, topic)
    }
}

/// A topic name's or filter's first level (`blocks`, `outputs`, `+`…).
pub fn first_level(topic: &str) -> &str {
    topic.split('/').next().unwrap_or_default()
}

/// [`Filter::matches`] over text (the filter assumed valid).
pub fn matches(filter: &str, topic: &str) -> bool {
    if topic.starts_with('$') && (filter.starts_with('+') || filter.starts_with('#')) {
        return false;
    }
    let mut f = filter.split('/');
    let mut t = topic.split('/');
    loop {
        match (f.next(), t.next()) {
            (Some("#"), _) => return true,
            (Some("+"), Some(_)) => {}
            (Some(a), Some(b)) if a == b => {}
            (None, None) => return true,
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_accepted_and_refused() {
        let cases: &[(&[u8], Result<(), FilterError>)] = &[
            (b"blocks", Ok(())),
            (b"#", Ok(())),
            (b"+", Ok(())),
            (b"blocks/#", Ok(())),
            (b"outputs/unlock/+/rms1abc", Ok(())),
            (b"+/+/#", Ok(())),
            (b"/", Ok(())),
            (b"a//b", Ok(())),
            (b"", Err(FilterError::Empty)),
            (b"blocks#", Err(FilterError::Wildcard)),
            (b"blocks/#/x", Err(FilterError::Wildcard)),
            (b"a+/b", Err(FilterError::Wildcard)),
            (b"a/+b", Err(FilterError::Wildcard)),
            (b"##", Err(FilterError::Wildcard)),
            (b"a\0b", Err(FilterError::Encoding)),
            (&[0xff], Err(FilterError::Encoding)),
        ];
        for (bytes, want) in cases {
            assert_eq!(Filter::parse(bytes).map(|_| ()), *want, "{bytes:?}");
        }
        assert_eq!(Filter::parse(&[b'a'; 256]).map(|_| ()), Ok(()));
        assert_eq!(Filter::parse(&[b'a'; 257]), Err(FilterError::TooLong));
    }

    #[test]
    fn matching_follows_mqtt() {
        let cases: &[(&str, &str, bool)] = &[
            ("blocks", "blocks", true),
            ("blocks", "blocks/transaction", false),
            ("blocks/#", "blocks", true),
            ("blocks/#", "blocks/transaction/tagged-data/0x01", true),
            ("blocks/+", "blocks", false),
            ("blocks/+", "blocks/transaction", true),
            ("blocks/+", "blocks/transaction/tagged-data", false),
            ("#", "milestone-info/latest", true),
            ("+/latest", "milestone-info/latest", true),
            ("+/+", "milestones", false),
            ("+", "milestones", true),
            ("+", "/x", false),
            ("+/x", "/x", true),
            ("#", "$SYS/x", false),
            ("+/x", "$SYS/x", false),
            ("$SYS/#", "$SYS/x", true),
            ("outputs/unlock/+/rms1a", "outputs/unlock/+/rms1a", true),
            (
                "outputs/unlock/+/rms1a",
                "outputs/unlock/address/rms1a",
                true,
            ),
            (
                "outputs/unlock/+/rms1a",
                "outputs/unlock/address/rms1a/spent",
                false,
            ),
            (
                "outputs/unlock/+/rms1a/#",
                "outputs/unlock/address/rms1a/spent",
                true,
            ),
            ("Blocks", "blocks", false),
        ];
        for (filter, topic, want) in cases {
            let f = Filter::parse(filter.as_bytes()).expect("valid");
            assert_eq!(f.matches(topic), *want, "{filter} ~ {topic}");
        }
    }
}
