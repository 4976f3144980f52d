//! `ledger-node tools decode|encode|id` over the v2 vectors, run as the real binary.

use std::{
    io::Write,
    process::{Command, Stdio},
};

use ledger_codec::{stardust::Block, stardust::ProtocolParameters, Codec};
use ledger_test_support::process::Run;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ledger-node");

fn entries(file: &str) -> Vec<Value> {
    ledger_test_support::load_entries("stardust", file)
}

fn blocks() -> Vec<Value> {
    let v = entries("blocks.json");
    assert!(!v.is_empty());
    v
}

fn name(e: &Value) -> &str {
    e["name"].as_str().unwrap_or("?")
}

fn hex_field(e: &Value, field: &str) -> Vec<u8> {
    let s = e[field]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no {field}", name(e)));
    hex::decode(s.trim_start_matches("0x")).unwrap_or_else(|err| panic!("{}: {err}", name(e)))
}

fn tool(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(BIN)
        .arg("tools")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ledger-node");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The tool may stop reading early (e.g. oversized input); a broken pipe is fine.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    out.into()
}

fn ok(what: &str, r: &Run) {
    assert_eq!(r.code, Some(0), "{what}: stderr {}", r.stderr);
}

fn json_out(what: &str, r: &Run) -> Value {
    r.json(what)
}

fn rejected(what: &str, r: &Run) {
    assert_eq!(
        r.code,
        Some(1),
        "{what}: stdout {} stderr {}",
        r.stdout,
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{what}: printed {}", r.stdout);
    assert!(!r.stderr.trim().is_empty(), "{what}: no reason on stderr");
    assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
}

#[test]
fn decode_prints_the_vector_json_from_hex_in_any_form_and_raw_bytes() {
    for e in blocks() {
        let n = name(&e);
        let bytes = hex_field(&e, "bytes");
        let lower = format!("0x{}", hex::encode(&bytes));
        let upper = format!(" \n\t0X{}\r\n", hex::encode_upper(&bytes));
        for (how, input) in [
            ("lower hex", lower.into_bytes()),
            ("upper hex with whitespace", upper.into_bytes()),
            ("raw bytes", bytes.clone()),
        ] {
            let out = json_out(&format!("{n} ({how})"), &tool(&["decode"], &input));
            assert_eq!(out, e["json"], "vector {n} ({how}): decoded JSON differs");
        }
    }
}

#[test]
fn encode_gives_the_vector_bytes() {
    for e in blocks() {
        let n = name(&e);
        let r = tool(&["encode"], e["json"].to_string().as_bytes());
        ok(n, &r);
        assert_eq!(
            r.stdout.trim(),
            format!("0x{}", hex::encode(hex_field(&e, "bytes"))),
            "vector {n}: encoded bytes differ"
        );
    }
}

#[test]
fn id_gives_the_vector_ids_from_hex_json_and_raw_bytes() {
    for e in blocks() {
        let n = name(&e);
        let bytes = hex_field(&e, "bytes");
        for (how, input) in [
            ("hex", format!("0x{}", hex::encode(&bytes)).into_bytes()),
            ("JSON", serde_json::to_vec_pretty(&e["json"]).expect("json")),
            ("raw bytes", bytes.clone()),
        ] {
            let what = format!("vector {n} (from {how})");
            let out = json_out(&what, &tool(&["id"], &input));
            assert_eq!(out["blockId"], e["block_id"], "{what}: blockId");
            for (key, field) in [
                ("transactionId", "transaction_id"),
                ("milestoneId", "milestone_id"),
                ("outputIds", "output_ids"),
            ] {
                assert_eq!(
                    out.get(key),
                    e.get(field),
                    "{what}: {key} (absent in the vector means absent in the output)"
                );
            }
            assert_eq!(out["powScore"], e["pow_score"], "{what}: powScore");
        }
    }
}

/// The words each invalid vector's reason must contain (lower case).
fn expected_reason(name: &str) -> &'static [&'static str] {
    if name.contains("trailing") {
        &["trailing bytes"]
    } else if name.contains("payload length") {
        // The declared length ends the payload one byte early: the data runs out.
        &["payload.data", "unexpected end"]
    } else {
        &["invalid block"]
    }
}

#[test]
fn invalid_vector_blocks_exit_1_with_their_reason() {
    let invalid: Vec<Value> = entries("invalid.json")
        .into_iter()
        .filter(|e| e["kind"] == "block")
        .collect();
    assert!(!invalid.is_empty(), "invalid.json has no block");
    for e in invalid {
        let n = name(&e);
        let bytes = hex_field(&e, "bytes");
        let err = Block::decode(&bytes).expect_err(n).to_string();
        for (tool_name, input) in [
            ("decode", format!("0x{}", hex::encode(&bytes)).into_bytes()),
            ("decode", bytes.clone()),
            ("id", format!("0x{}", hex::encode(&bytes)).into_bytes()),
        ] {
            let r = tool(&[tool_name], &input);
            let what = format!("vector {n} ({tool_name})");
            rejected(&what, &r);
            // The reason is the codec's error text, with its location.
            assert!(
                r.stderr.contains(&err),
                "{what}: {} lacks {err:?}",
                r.stderr
            );
            let lower = r.stderr.to_lowercase();
            for w in expected_reason(n) {
                assert!(
                    lower.contains(w),
                    "{what}: {lower:?} does not mention {w:?}"
                );
            }
        }
    }
}

#[test]
fn garbage_empty_and_bad_json_exit_1_without_panic() {
    let mut big = b"0x".to_vec();
    big.resize(5 * 1024 * 1024, b'f');
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("blank", b" \n\t ".to_vec()),
        ("text", b"garbage".to_vec()),
        ("bad hex", b"0xzz".to_vec()),
        ("odd hex", b"0x020".to_vec()),
        ("one byte", vec![2]),
        ("binary noise", (0u8..=255).cycle().take(3000).collect()),
        ("broken JSON", b"{\"protocolVersion\":".to_vec()),
        ("JSON missing fields", b"{\"protocolVersion\":2}".to_vec()),
        ("JSON array", b"[1,2,3]".to_vec()),
        ("JSON unknown field", br#"{"protocolVersion":2,"parents":["0x0000000000000000000000000000000000000000000000000000000000000000"],"nonce":"0","extra":1}"#.to_vec()),
        ("not UTF-8", vec![0xff, 0xfe, 0x00]),
        ("oversized", big),
    ];
    for t in ["decode", "encode", "id"] {
        for (how, input) in &inputs {
            rejected(&format!("tools {t} on {how}"), &tool(&[t], input));
        }
    }
}

#[test]
fn encode_rejects_unsorted_parents_with_location() {
    let e = blocks().into_iter().find(|e| {
        e["json"]["parents"]
            .as_array()
            .is_some_and(|p| p.len() >= 2)
            && e["json"]["payload"]["type"] == 5
    });
    let e = e.expect("a tagged-data vector with two parents");
    let mut json = e["json"].clone();
    let parents = json["parents"].as_array_mut().expect("parents");
    parents.reverse();
    let r = tool(&["encode"], json.to_string().as_bytes());
    rejected(name(&e), &r);
    assert!(r.stderr.contains("parents"), "{}", r.stderr);
}

fn params_file(dir: &tempfile::TempDir, file: &str, v: &Value) -> String {
    let path = dir.path().join(file);
    std::fs::write(&path, v.to_string()).expect("write params");
    path.to_string_lossy().into_owned()
}

fn shimmer() -> Value {
    entries("protocol_parameters.json")
        .into_iter()
        .find(|e| e["name"].as_str().is_some_and(|n| n.starts_with("Shimmer")))
        .expect("Shimmer parameters vector")["json"]
        .clone()
}

#[test]
fn protocol_parameters_apply_the_same_checks_as_validate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let params_json = shimmer();
    let params: ProtocolParameters =
        serde_json::from_value(params_json.clone()).expect("Shimmer parameters");
    let bare = params_file(&dir, "params.json", &params_json);
    let info = params_file(
        &dir,
        "info.json",
        &serde_json::json!({"name": "x", "protocol": params_json}),
    );
    let mut rejected_count = 0;
    for e in blocks() {
        let n = name(&e);
        let bytes = hex_field(&e, "bytes");
        let expected = Block::decode(&bytes)
            .expect("valid vector")
            .validate(&params)
            .err()
            .map(|err| err.to_string());
        let hex = format!("0x{}", hex::encode(&bytes));
        for file in [&bare, &info] {
            for (t, input) in [
                ("decode", hex.as_bytes()),
                ("id", hex.as_bytes()),
                ("encode", &e["json"].to_string().into_bytes()[..]),
            ] {
                let what = format!("vector {n} (tools {t} with {file})");
                let r = tool(&[t, "--protocol-parameters", file], input);
                match &expected {
                    None => ok(&what, &r),
                    Some(err) => {
                        rejected(&what, &r);
                        assert!(r.stderr.contains(err), "{what}: {} lacks {err:?}", r.stderr);
                    }
                }
            }
        }
        rejected_count += usize::from(expected.is_some());
    }
    // The vectors include protocol-version-1 blocks, so the parameters must reject some.
    assert!(
        rejected_count > 0,
        "no vector was rejected under the Shimmer parameters"
    );
}

#[test]
fn bad_protocol_parameters_file_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = params_file(&dir, "bad.json", &serde_json::json!({"version": 2}));
    let missing = dir
        .path()
        .join("missing.json")
        .to_string_lossy()
        .into_owned();
    let hex = format!("0x{}", hex::encode(hex_field(&blocks()[0], "bytes")));
    for t in ["decode", "encode", "id"] {
        for file in [&bad, &missing] {
            let r = tool(&[t, "--protocol-parameters", file], hex.as_bytes());
            assert_eq!(r.code, Some(2), "tools {t} {file}: {}", r.stderr);
            assert!(r.stderr.contains(file.as_str()), "{}", r.stderr);
        }
    }
}

#[test]
fn hex_looking_input_with_bad_digits_is_a_hex_error() {
    for bad in ["0xzz\n", "0xabc", "abc\n"] {
        let r = tool(&["decode"], bad.as_bytes());
        rejected(bad, &r);
        assert!(r.stderr.contains("not valid hex"), "{bad:?}: {}", r.stderr);
    }
    // Bare hex digits are hex too.
    let first = &blocks()[0];
    let bare = hex::encode(hex_field(first, "bytes"));
    json_out("bare hex", &tool(&["decode"], bare.as_bytes()));
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let first = &blocks()[0];
    let input = format!("0x{}", hex::encode(hex_field(first, "bytes")));
    let mut child = Command::new(BIN)
        .args(["tools", "decode"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ledger-node");
    // Close the read end of stdout before the tool writes (it reads all of stdin first).
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write stdin");
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
