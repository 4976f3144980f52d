//! v3 (IOTA 2.0 "Nova") wire format: TIP-45/46.
