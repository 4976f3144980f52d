//! Semantic validation against the real v2 transaction data in the shared vectors.
//!
//! The vectors carry one real signed transaction (iota-sdk `signedTransaction.json`)
//! without its consumed output, and one real prepared essence
//! (`sigUnlockPreparedTx.json`) with its consumed output but without a signature.

use ledger_test_support as common;

use std::borrow::Cow;

use ledger_codec::ed25519::{ed25519_address, SigningKey};
use ledger_codec::stardust::{
    inputs_commitment, Address, Ed25519Signature, Essence, Output, OutputId, ProtocolParameters,
    Transaction, Unlock,
};
use ledger_codec::types::Hash32;
use ledger_codec::Codec;
use ledger_engine::internals::semantic::{
    signature_checks, validate_transaction, verify_signatures_sequential, ConflictReason, Context,
};

fn params() -> ProtocolParameters {
    ledger_test_support::ledger::testnet_params()
}

fn validate(tx: &Transaction<'_>, inputs: &[(OutputId, Output<'_>)]) -> Result<(), ConflictReason> {
    let p = params();
    let ok = verify_signatures_sequential(tx);
    validate_transaction(
        tx,
        &tx.id().unwrap(),
        inputs,
        &Context {
            milestone_timestamp: 1_700_000_000,
            params: &p,
        },
        &ok,
    )
}

fn basic(amount: u64, pub_key_hash: [u8; 32]) -> Output<'static> {
    Output::basic(amount, Address::Ed25519(Hash32::owned(pub_key_hash)))
}

#[test]
fn real_signed_transaction() {
    let entries = common::load_entries("stardust", "transaction_payloads.json");
    assert!(!entries.is_empty());
    for e in entries {
        let name = e["name"].as_str().unwrap_or("?").to_string();
        let bytes = common::hex_bytes(&name, e["bytes"].as_str().expect("bytes"));
        let tx = Transaction::decode(&bytes).unwrap_or_else(|err| panic!("{name}: {err}"));
        let want_id = common::hex_bytes(&name, e["transaction_id"].as_str().expect("id"));
        assert_eq!(
            tx.id().unwrap().as_slice(),
            want_id.as_slice(),
            "{name}: transaction id"
        );

        // Every signature unlock is offered for checking and verifies.
        let checks = signature_checks(&tx);
        assert_eq!(
            checks.len(),
            tx.unlocks.len(),
            "{name}: one signature per input"
        );
        let ok = verify_signatures_sequential(&tx);
        for (i, _, _) in &checks {
            assert!(ok(*i), "{name}: signature {i} verifies");
        }
        assert!(!ok(tx.unlocks.len()), "{name}: out of range is not ok");

        // The consumed output is not in the vectors. The most plausible candidate
        // (a simple transfer of the whole amount to the signer) does not match the
        // commitment, which validation must notice before anything else.
        let (_, pk, _) = checks[0];
        let total: u64 = tx.essence.outputs.iter().map(Output::amount).sum();
        let input = tx.essence.inputs[0];
        let guess = vec![(
            OutputId::new(input.transaction_id, input.index()).expect("output id"),
            basic(total, ed25519_address(&pk)),
        )];
        assert_ne!(
            inputs_commitment(guess.iter().map(|(_, o)| o)).unwrap(),
            *tx.essence.inputs_commitment.as_array(),
            "{name}"
        );
        assert_eq!(
            validate(&tx, &guess),
            Err(ConflictReason::InvalidInputsCommitment),
            "{name}"
        );

        // Committing to the guess changes the signed essence: the real signature
        // no longer verifies, everything before the signature passes.
        let mut forged = tx.clone();
        forged.essence.inputs_commitment =
            Hash32::owned(inputs_commitment(guess.iter().map(|(_, o)| o)).unwrap());
        assert!(!verify_signatures_sequential(&forged)(0), "{name}");
        assert_eq!(
            validate(&forged, &guess),
            Err(ConflictReason::InvalidSignature),
            "{name}"
        );
    }
}

#[test]
fn real_prepared_essence_with_its_consumed_output() {
    let commitment_entries = common::load_entries("stardust", "inputs_commitment.json");
    let essences = common::load("stardust", "transaction_essences.json");
    for e in commitment_entries {
        let name = e["name"].as_str().unwrap_or("?").to_string();
        let outputs: Vec<Output<'static>> =
            serde_json::from_value(e["consumed_outputs_json"].clone())
                .unwrap_or_else(|err| panic!("{name}: {err}"));
        let ids: Vec<OutputId> = serde_json::from_value(e["consumed_output_ids"].clone())
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let want = common::hex_bytes(&name, e["inputs_commitment"].as_str().expect("commitment"));
        let inputs: Vec<(OutputId, Output<'static>)> = ids.into_iter().zip(outputs).collect();

        // The essence of the same fixture (matched by its inputs commitment).
        let essence_entry = common::entries(&essences)
            .into_iter()
            .find(|x| {
                x["bytes"]
                    .as_str()
                    .map(|b| common::hex_bytes(&name, b))
                    .and_then(|b| {
                        Essence::decode(&b)
                            .ok()
                            .map(|es| es.inputs_commitment.to_array())
                    })
                    .is_some_and(|c| c.as_slice() == want.as_slice())
            })
            .unwrap_or_else(|| panic!("{name}: no essence with this inputs commitment"));
        let bytes = common::hex_bytes(&name, essence_entry["bytes"].as_str().expect("bytes"));
        let essence = Essence::decode(&bytes).expect("essence").into_owned();
        assert_eq!(essence.inputs.len(), inputs.len(), "{name}");

        // The fixture has no signature: sign with a key that does not own the input.
        let key = SigningKey::from_seed(&[42; 32]);
        let sig = key.sign(&essence.signing_hash().unwrap());
        let tx = Transaction {
            unlocks: (0..inputs.len())
                .map(|i| {
                    if i == 0 {
                        Unlock::Signature(Cow::Owned(Ed25519Signature::new(key.public_key(), sig)))
                    } else {
                        Unlock::Reference(0)
                    }
                })
                .collect(),
            essence,
        };
        // Commitment (real consumed output) passes; the unlock is the first failure.
        assert_eq!(
            validate(&tx, &inputs),
            Err(ConflictReason::InvalidSignature),
            "{name}"
        );
        // With a different consumed output the commitment is the first failure.
        let mut other = inputs.clone();
        other[0].1 = basic(other[0].1.amount() + 1, [0; 32]);
        assert_eq!(
            validate(&tx, &other),
            Err(ConflictReason::InvalidInputsCommitment),
            "{name}"
        );
        // Amounts balance in the real data.
        let in_sum: u64 = inputs.iter().map(|(_, o)| o.amount()).sum();
        let out_sum: u64 = tx.essence.outputs.iter().map(Output::amount).sum();
        assert_eq!(in_sum, out_sum, "{name}: amounts balance");
    }
}
