//! What each case of `vectors/nova/negative_blocks.json` must be rejected for: the words its
//! error message must mention (lower case), read by the codec's negative test and by the API's
//! (a 400 must give the same reason as the codec).

/// The words the error of negative case `name` must contain; panics for a case without an
/// expectation (a new vector needs one here).
pub fn expected(name: &str) -> &'static [&'static str] {
    match name {
        "trailing-byte" => &["trailing"],
        "truncated" => &["unexpected end"],
        "payload-length-too-large" | "payload-length-too-small" => &["payload", "length"],
        "unknown-body-type" => &["body", "unknown"],
        "unknown-payload-type" => &["payload", "unknown"],
        "unknown-signature-type" => &["signature", "unknown"],
        "zero-strong-parents" | "nine-strong-parents" => &["strongparents", "out of range"],
        "strong-parents-unsorted" => &["strongparents", "not sorted"],
        "strong-parents-duplicate" => &["duplicate parent"],
        "weak-parent-overlaps-strong" => &["weak parents must be disjoint"],
        "wrong-network-id" => &["network id mismatch"],
        "wrong-protocol-version" => &["protocol version"],
        "tag-too-long" => &["tag"],
        "commitment-too-old" => &["commitment too old"],
        "commitment-too-recent" => &["commitment too recent"],
        "block-signature-bitflip" => &["invalid block signature"],
        "unlock-count-mismatch" => &["unlock count"],
        "capabilities-trailing-zero" => &["capabilities"],
        "context-inputs-unsorted" => &["contextinputs", "not sorted"],
        "duplicate-input" => &["duplicate input"],
        "tx-wrong-network-id" => &["transaction network id mismatch"],
        "tx-creation-slot-after-block-slot" => &["creation slot"],
        "zero-amount-output" => &["amount must be > 0"],
        "allotments-unsorted" => &["allotments", "not sorted"],
        "json-u64-as-json-number" => &["decimal string"],
        "json-u32-as-json-string" => &["invalid type: string"],
        "json-hex-without-0x" => &["0x"],
        "json-fixed-array-wrong-length" => &["expected 32 bytes"],
        "json-missing-required-field" => &["missing field `issuingtime`"],
        "json-body-type-mismatch" => &["unknown field", "highestsupportedversion"],
        other => panic!("negative case {other:?} has no expectation in the shared table"),
    }
}
