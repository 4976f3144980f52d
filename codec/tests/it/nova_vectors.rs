//! Data-driven tests over `vectors/nova`: decode, byte-exact JSON round
//! trips both ways, every id, signatures and work scores.

use ledger_test_support as common;

use ledger_codec::nova::block::{check_block_syntax, Block, Payload};
use ledger_codec::nova::commitment::Commitment;
use ledger_codec::nova::output::Output;
use ledger_codec::nova::params::{network_id, ProtocolParameters};
use ledger_codec::nova::transaction::{chain_id, merkle_root, SignedTransaction, Transaction};
use ledger_codec::types::to_hex;
use ledger_codec::Codec;
use serde_json::Value;

fn check_params_ref(name: &str, v: &Value) {
    let r = v["protocolParameters"]["ref"].as_str();
    assert_eq!(
        r,
        Some("protocol_parameters.json#tip49-testnet"),
        "vector {name}: unexpected parameters"
    );
}

/// A JSON number or decimal string.
fn num(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

fn str_of<'v>(v: &'v Value, k: &str) -> &'v str {
    v[k].as_str()
        .unwrap_or_else(|| panic!("field {k} missing in {v}"))
}

#[test]
fn protocol_parameters_json_binary_hash() {
    for v in common::load_entries("nova", "protocol_parameters.json") {
        let name = str_of(&v, "name");
        let p = ProtocolParameters::from_json(&v["json"].to_string()).unwrap();
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            v["json"],
            "vector {name}: JSON round trip"
        );
        let bytes = common::hex_bytes(name, str_of(&v, "bytes"));
        assert_eq!(p.to_bytes().unwrap(), bytes, "vector {name}: binary form");
        assert_eq!(
            ProtocolParameters::decode(&bytes).unwrap(),
            p,
            "vector {name}: binary decode"
        );
        assert_eq!(
            to_hex(&p.hash().unwrap()),
            str_of(&v, "hash"),
            "vector {name}: hash"
        );
        assert_eq!(
            p.network_id().to_string(),
            v["derived"]["networkId"].as_str().unwrap(),
            "vector {name}"
        );
    }
}

#[test]
fn misc_network_ids_slots_output_id_merkle() {
    let m = common::load("nova", "misc.json");
    for v in m["networkIds"]["vectors"].as_array().unwrap() {
        let name = str_of(v, "networkName");
        assert_eq!(
            network_id(name).to_string(),
            str_of(v, "networkId"),
            "network {name}"
        );
    }
    let p = common::nova_protocol_parameters();
    for c in m["slotFromIssuingTime"]["cases"].as_array().unwrap() {
        let t: u64 = str_of(c, "issuingTimeNs").parse().unwrap();
        assert_eq!(
            u64::from(p.slot_of(t)),
            c["slot"].as_u64().unwrap(),
            "slot of {t}"
        );
    }
    let o = &m["outputIdExample"];
    let tx: [u8; 36] = common::hex_bytes("outputIdExample", str_of(o, "transactionId"))
        .try_into()
        .unwrap();
    let id = Transaction::output_id(&tx, o["outputIndex"].as_u64().unwrap() as u16);
    assert_eq!(to_hex(&id), str_of(o, "outputId"));
    let mr = &m["merkleRootExample"];
    let leaves: Vec<Vec<u8>> = mr["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| common::hex_bytes("merkle", l.as_str().unwrap()))
        .collect();
    let refs: Vec<&[u8]> = leaves.iter().map(|l| l.as_slice()).collect();
    assert_eq!(to_hex(&merkle_root(&refs)), str_of(mr, "root"));
}

#[test]
fn commitments() {
    for v in common::load_entries("nova", "commitments.json") {
        let name = str_of(&v, "name");
        let bytes = common::hex_bytes(name, str_of(&v, "bytes"));
        let c = Commitment::decode(&bytes).unwrap();
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            v["json"],
            "vector {name}: to JSON"
        );
        let from: Commitment<'static> = serde_json::from_value(v["json"].clone()).unwrap();
        assert_eq!(
            from.to_bytes().unwrap(),
            bytes,
            "vector {name}: JSON to bytes"
        );
        assert_eq!(
            to_hex(&c.id().unwrap()),
            str_of(&v, "id"),
            "vector {name}: id"
        );
    }
}

#[test]
fn outputs_round_trip_and_storage_score() {
    let p = common::nova_protocol_parameters();
    for v in common::load_entries("nova", "outputs.json") {
        let name = str_of(&v, "name");
        check_params_ref(name, &v);
        let bytes = common::hex_bytes(name, str_of(&v, "bytes"));
        let o: Output<'_> = round_trip(name, &bytes, &v["json"], |j| {
            Output::from_json(j)?.to_bytes()
        });
        assert_eq!(
            o.storage_score(&p.storage_score_parameters).unwrap(),
            num(&v["storageScore"]),
            "vector {name}: storage score"
        );
        assert_eq!(
            o.min_deposit(&p.storage_score_parameters).unwrap(),
            num(&v["minStorageDeposit"]),
            "vector {name}: min deposit"
        );
    }
}

/// Decodes vector `name`'s `bytes`, and checks that the value re-encodes to them, serializes
/// to `json`, and that `json` read back by `from_json_to_bytes` encodes to them too.
fn round_trip<'a, T: Codec<'a> + serde::Serialize>(
    name: &str,
    bytes: &'a [u8],
    json: &Value,
    from_json_to_bytes: impl Fn(&str) -> ledger_codec::Result<Vec<u8>>,
) -> T {
    let value = T::decode(bytes).unwrap_or_else(|e| panic!("vector {name}: decode: {e}"));
    assert_eq!(value.to_bytes().unwrap(), bytes, "vector {name}: re-encode");
    assert_eq!(
        &serde_json::to_value(&value).unwrap(),
        json,
        "vector {name}: to JSON"
    );
    let from = from_json_to_bytes(&json.to_string())
        .unwrap_or_else(|e| panic!("vector {name}: from JSON: {e}"));
    assert_eq!(from, bytes, "vector {name}: JSON to bytes");
    value
}

/// Reads `json` with serde as `T` and encodes it.
fn json_to_bytes<T: Codec<'static> + serde::de::DeserializeOwned>(
    json: &str,
) -> ledger_codec::Result<Vec<u8>> {
    serde_json::from_str::<T>(json)
        .unwrap_or_else(|e| panic!("JSON: {e}"))
        .to_bytes()
}

/// Checks the `derived.transaction`-like fields of a signed transaction.
fn check_transaction(name: &str, stx: &SignedTransaction<'_>, d: &Value) {
    let tx = &stx.transaction;
    if let Some(b) = d["transactionBytes"].as_str() {
        assert_eq!(
            to_hex(&tx.to_bytes().unwrap()),
            b,
            "vector {name}: transaction bytes"
        );
    }
    if let Some(b) = d["transactionEssenceBytes"].as_str() {
        let mut e = Vec::new();
        tx.encode_essence(&mut e).unwrap();
        assert_eq!(to_hex(&e), b, "vector {name}: essence bytes");
    }
    let id = tx.id().unwrap();
    for (field, got) in [
        (
            "transactionCommitment",
            to_hex(&tx.transaction_commitment().unwrap()),
        ),
        ("outputCommitment", to_hex(&tx.output_commitment().unwrap())),
        ("transactionId", to_hex(&id)),
        (
            "transactionSigningMessage",
            to_hex(&tx.signing_message().unwrap()),
        ),
        ("signedTransactionId", to_hex(&stx.id().unwrap())),
    ] {
        assert_eq!(got, str_of(d, field), "vector {name}: {field}");
    }
    let ids: Vec<String> = (0..tx.outputs.len())
        .map(|i| to_hex(&Transaction::output_id(&id, i as u16)))
        .collect();
    let want: Vec<String> = d["outputIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, want, "vector {name}: output ids");
    let valid: Vec<bool> = d["unlockSignaturesValid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_bool().unwrap())
        .collect();
    assert_eq!(
        stx.verify_signatures().unwrap(),
        valid,
        "vector {name}: unlock signatures"
    );
    if let Some(m) = d["newAccountIdsByOutputIndex"].as_object() {
        for (idx, want) in m {
            let i: u16 = idx.parse().unwrap();
            let oid = Transaction::output_id(&id, i);
            assert_eq!(
                to_hex(&chain_id(&oid)),
                want.as_str().unwrap(),
                "vector {name}: account id"
            );
        }
    }
    if let Some(b) = d["outputBytes"].as_array() {
        for (o, want) in tx.outputs.iter().zip(b) {
            assert_eq!(
                to_hex(&o.to_bytes().unwrap()),
                want.as_str().unwrap(),
                "vector {name}: output bytes"
            );
        }
    }
    if let Some(b) = d["unlocksBytes"].as_str() {
        let all = stx.to_bytes().unwrap();
        let txlen = tx.to_bytes().unwrap().len();
        assert_eq!(to_hex(&all[txlen..]), b, "vector {name}: unlocks bytes");
    }
}

#[test]
fn blocks_decode_json_ids_signatures_work_score() {
    let p = common::nova_protocol_parameters();
    let entries = common::load_entries("nova", "blocks.json");
    assert_eq!(entries.len(), 12);
    for v in entries {
        let name = str_of(&v, "name");
        check_params_ref(name, &v);
        let bytes = common::hex_bytes(name, str_of(&v, "bytes"));
        let d = &v["derived"];
        let b: Block<'_> = round_trip(name, &bytes, &v["json"], |j| {
            Block::from_json(j)?.to_bytes()
        });
        assert_eq!(
            Block::json_to_bytes(&v["json"].to_string()).unwrap(),
            bytes,
            "vector {name}: json_to_bytes"
        );
        assert_eq!(
            to_hex(&b.id(&p).unwrap()),
            str_of(&v, "id"),
            "vector {name}: block id"
        );
        assert_eq!(
            to_hex(&Block::id_of(&bytes, &p).unwrap()),
            str_of(&v, "id"),
            "vector {name}"
        );
        let h = b.hashes().unwrap();
        assert_eq!(
            to_hex(&h.header_hash),
            str_of(d, "headerHash"),
            "vector {name}: header hash"
        );
        assert_eq!(
            to_hex(&h.body_hash),
            str_of(d, "bodyHash"),
            "vector {name}: body hash"
        );
        assert_eq!(
            to_hex(&b.signing_message().unwrap()),
            str_of(d, "signingMessage"),
            "vector {name}"
        );
        assert_eq!(
            u64::from(b.slot(&p)),
            d["blockSlot"].as_u64().unwrap(),
            "vector {name}: slot"
        );
        assert_eq!(
            u64::from(b.header.commitment_slot()),
            d["commitmentSlot"].as_u64().unwrap(),
            "vector {name}"
        );
        assert_eq!(
            b.verify_signature(),
            d["blockSignatureValid"].as_bool().unwrap(),
            "vector {name}: signature"
        );
        if let Some(ws) = d["workScore"].as_u64() {
            assert_eq!(b.work_score(&p).unwrap(), ws, "vector {name}: work score");
        }
        if let Some(pl) = d["payloadLength"].as_u64() {
            let len = match &b.body {
                ledger_codec::nova::Body::Basic(bb) => bb
                    .payload
                    .as_ref()
                    .map_or(0, |x| x.to_bytes().unwrap().len()),
                _ => 0,
            };
            assert_eq!(len as u64, pl, "vector {name}: payload length");
        }
        if let Some(t) = d.get("transaction") {
            let ledger_codec::nova::Body::Basic(bb) = &b.body else {
                panic!("vector {name}: no basic body")
            };
            let Some(Payload::SignedTransaction(stx)) = &bb.payload else {
                panic!("vector {name}: no tx")
            };
            check_transaction(name, stx, t);
        }
        let errs = d["syntacticErrorsUnderProtocolParameters"]
            .as_array()
            .unwrap();
        let res = check_block_syntax(&b, &p);
        if errs.is_empty() {
            res.unwrap_or_else(|e| panic!("vector {name}: unexpected syntax error {e}"));
            let full = b.validate(&p);
            assert_eq!(
                full.is_ok(),
                b.verify_signature(),
                "vector {name}: validate {full:?}"
            );
        } else {
            let e = res.expect_err(name).to_string();
            for want in errs {
                let w = want.as_str().unwrap();
                let w = w.split(" (").next().unwrap();
                assert!(
                    e.contains(w),
                    "vector {name}: error {e:?} does not mention {w:?}"
                );
            }
        }
    }
}

#[test]
fn signed_transactions() {
    for v in common::load_entries("nova", "signed_transactions.json") {
        let name = str_of(&v, "name");
        check_params_ref(name, &v);
        let bytes = common::hex_bytes(name, str_of(&v, "bytes"));
        let p: Payload<'_> = round_trip(name, &bytes, &v["json"], |j| {
            json_to_bytes::<Payload<'static>>(j)
        });
        let Payload::SignedTransaction(stx) = &p else {
            panic!("vector {name}: not a signed transaction")
        };
        let d = &v["derived"];
        assert_eq!(
            bytes.len() as u64,
            d["payloadLength"].as_u64().unwrap(),
            "vector {name}"
        );
        check_transaction(name, stx, d);
        if let Some(ci) = v.get("consumedInput") {
            let ob = common::hex_bytes(name, str_of(ci, "bytes"));
            let o = Output::decode(&ob).unwrap();
            assert_eq!(
                serde_json::to_value(&o).unwrap(),
                ci["output"],
                "vector {name}: consumed input"
            );
            let want = str_of(ci, "outputId");
            assert_eq!(
                to_hex(&stx.transaction.inputs[0].output_id()),
                want,
                "vector {name}: input id"
            );
        }
    }
}

#[test]
fn commitment_input_type_1_json_is_read_as_commitment() {
    let f = common::load("nova", "blocks.json");
    let v = &common::entries(&f)[1];
    let mut j = v["json"].clone();
    j["body"]["payload"]["transaction"]["contextInputs"][0]["type"] = Value::from(1);
    let b = Block::from_json(&j.to_string()).unwrap();
    let bytes = common::hex_bytes("tx", str_of(v, "bytes"));
    assert_eq!(b.to_bytes().unwrap(), bytes);
    // And it is written back with type 0.
    assert_eq!(serde_json::to_value(&b).unwrap(), v["json"]);
}

#[test]
fn output_id_proofs() {
    use ledger_codec::nova::proof::OutputIdProof;
    let entries = common::load_entries("nova", "output_id_proofs.json");
    assert_eq!(entries.len(), 4);
    for v in entries {
        let name = str_of(&v, "name");
        let bytes = common::hex_bytes(name, str_of(&v, "bytes"));
        let p: OutputIdProof<'_> = round_trip(name, &bytes, &v["json"], |j| {
            json_to_bytes::<OutputIdProof<'static>>(j)
        });
        let stx_bytes = common::hex_bytes(name, str_of(&v, "signedTransactionBytes"));
        let Payload::SignedTransaction(stx) = Payload::decode(&stx_bytes).unwrap() else {
            panic!("vector {name}: not a signed transaction")
        };
        let tx = &stx.transaction;
        let built = OutputIdProof::new(tx, p.output_index).unwrap().unwrap();
        assert_eq!(
            built.to_bytes().unwrap(),
            bytes,
            "vector {name}: proof built from the transaction"
        );
        let oid = Transaction::output_id(&tx.id().unwrap(), p.output_index);
        assert_eq!(p.output_id(), oid, "vector {name}: output id from proof");
        assert!(
            p.proves(&tx.outputs[usize::from(p.output_index)], &oid),
            "vector {name}: proves"
        );
        let other = (usize::from(p.output_index) + 1) % tx.outputs.len();
        if tx.outputs[other] != tx.outputs[usize::from(p.output_index)] {
            assert!(
                !p.proves(&tx.outputs[other], &oid),
                "vector {name}: must not prove another output"
            );
        }
    }
}

/// name, public key, signature, message, valid, address bytes (hex).
type Zip215 = (String, [u8; 32], [u8; 64], Vec<u8>, bool, String);

fn zip215_entries() -> Vec<Zip215> {
    let entries = common::load_entries("nova", "ed25519_zip215.json");
    assert_eq!(entries.len(), 12);
    entries
        .iter()
        .map(|v| {
            let name = str_of(v, "name").to_string();
            let pk = common::hex_bytes(&name, str_of(v, "publicKey"))
                .try_into()
                .unwrap();
            let sig = common::hex_bytes(&name, str_of(v, "signature"))
                .try_into()
                .unwrap();
            let msg = common::hex_bytes(&name, str_of(v, "message"));
            let addr = str_of(v, "addressBytes").to_string();
            (name, pk, sig, msg, v["valid"].as_bool().unwrap(), addr)
        })
        .collect()
}

/// `valid` (iota.go `Ed25519Signature.Valid(msg, addr)`) means: the address is
/// the hash of the received public key bytes AND the ZIP-215 check passes.
#[test]
fn ed25519_zip215_signature_against_address() {
    use ledger_codec::nova::address::Address;
    for (name, pk, sig, msg, want, addr) in zip215_entries() {
        let a = Address::ed25519(ledger_codec::hash::blake2b256(&pk));
        let matches = to_hex(&a.to_bytes().unwrap()) == addr;
        let ok = matches && ledger_codec::ed25519::verify(&pk, &msg, &sig);
        assert_eq!(
            ok, want,
            "vector {name}: validity (address matches: {matches})"
        );
    }
}

#[test]
fn json_to_bytes_encodes_without_the_binary_rules_that_from_json_applies() {
    let v = &common::load_entries("nova", "blocks.json")[0];
    let mut json = v["json"].clone();
    let parents = json["body"]["strongParents"].as_array_mut().unwrap();
    parents.swap(0, 1);
    let text = json.to_string();
    let err = Block::from_json(&text).unwrap_err().to_string();
    assert!(err.contains("not sorted"), "{err}");
    // Encoded once, as given; decoding those bytes applies the rule.
    let bytes = Block::json_to_bytes(&text).unwrap();
    let err = Block::decode(&bytes).unwrap_err().to_string();
    assert!(err.contains("not sorted"), "{err}");
    assert!(Block::json_to_bytes("{\"header\": 1}").is_err());
}
