//! The repository carries its own copy of the public test vectors: every file the
//! data-driven tests read is present, parses as JSON and holds vectors.

/// Every vector file of the public set (a byte-identical copy of it).
const FILES: &[&str] = &[
    "nova/blocks.json",
    "nova/commitments.json",
    "nova/ed25519_zip215.json",
    "nova/misc.json",
    "nova/negative_blocks.json",
    "nova/output_id_proofs.json",
    "nova/outputs.json",
    "nova/protocol_parameters.json",
    "nova/signed_transactions.json",
    "stardust/addresses.json",
    "stardust/b1t6.json",
    "stardust/blocks.json",
    "stardust/curl_p81.json",
    "stardust/ed25519_signatures_zip215.json",
    "stardust/features.json",
    "stardust/ids.json",
    "stardust/inputs.json",
    "stardust/inputs_commitment.json",
    "stardust/invalid.json",
    "stardust/merkle.json",
    "stardust/milestone_options.json",
    "stardust/milestone_payloads.json",
    "stardust/native_tokens.json",
    "stardust/outputs.json",
    "stardust/pow.json",
    "stardust/protocol_parameters.json",
    "stardust/signatures.json",
    "stardust/storage_deposit.json",
    "stardust/tagged_data_payloads.json",
    "stardust/token_schemes.json",
    "stardust/transaction_essences.json",
    "stardust/transaction_payloads.json",
    "stardust/treasury.json",
    "stardust/unlock_conditions.json",
    "stardust/unlocks.json",
];

#[test]
fn every_vector_file_is_vendored_and_non_empty() {
    let root = ledger_test_support::vectors_dir();
    assert!(root.is_dir(), "{} is missing", root.display());
    for file in FILES {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{} missing from the repository: {e}", path.display()));
        let value: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        let count = match &value {
            serde_json::Value::Array(a) => a.len(),
            serde_json::Value::Object(o) => o
                .get("vectors")
                .and_then(serde_json::Value::as_array)
                .map_or(o.len(), Vec::len),
            _ => 0,
        };
        assert!(count > 0, "{} holds no vectors", path.display());
    }
}
