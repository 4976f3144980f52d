//! Damaged snapshot files are refused with a message naming the file, section and byte, and
//! `load` never returns a state for them (docs/snapshots-pruning.md §1.10): Hornet's fixtures
//! cut at every length, and with every length, count and offset field changed.

use std::fs;

use ledger_engine::snapshot::{load_from, DeltaReader, FullReader, MilestoneDiff};

fn fixture(name: &str) -> Vec<u8> {
    fs::read(
        ledger_test_support::vectors_dir()
            .join("hornet-snapshots")
            .join(name),
    )
    .unwrap()
}

const FULLS: [&str; 3] = [
    "full_snapshot.bin",
    "migration_full_snapshot.bin",
    "snapshot_full_snapshot.bin",
];
const DELTA: &str = "snapshot_delta_snapshot.bin";

/// A length, count or offset field: where, and how wide.
#[derive(Debug, Clone, Copy)]
struct Field {
    at: usize,
    width: usize,
    name: &'static str,
}

/// The fields of the diffs starting at `at`, walked with the records the reader returned.
fn diff_fields(mut at: usize, diffs: &[MilestoneDiff], out: &mut Vec<Field>) {
    for d in diffs {
        let start = at;
        out.push(Field {
            at,
            width: 4,
            name: "diff length",
        });
        out.push(Field {
            at: at + 4,
            width: 4,
            name: "payload length",
        });
        at += 8 + d.milestone_payload.len() + if d.treasury_input.is_some() { 40 } else { 0 };
        let created: Vec<u64> = d.created.iter().map(|o| o.record_len()).collect();
        let consumed: Vec<u64> = d.consumed.iter().map(|s| s.record_len()).collect();
        for (count, length, records) in [
            ("created count", "created output length", created),
            ("consumed count", "consumed output length", consumed),
        ] {
            out.push(Field {
                at,
                width: 4,
                name: count,
            });
            at += 4;
            for len in records {
                out.push(Field {
                    at: at + 74,
                    width: 4,
                    name: length,
                });
                at += len as usize;
            }
        }
        assert_eq!(at - start, d.record_len() as usize);
    }
}

fn full_fields(data: &[u8]) -> Vec<Field> {
    let mut r = FullReader::new(data).unwrap();
    let header_len = r.header().encoded_len() as usize;
    let mut out = vec![
        Field {
            at: 90,
            width: 2,
            name: "parameters option length",
        },
        Field {
            at: 98,
            width: 2,
            name: "parameters length",
        },
        Field {
            at: header_len - 14,
            width: 8,
            name: "outputs count",
        },
        Field {
            at: header_len - 6,
            width: 4,
            name: "diffs count",
        },
        Field {
            at: header_len - 2,
            width: 2,
            name: "SEPs count",
        },
    ];
    let mut at = header_len;
    while let Some(o) = r.next_output().unwrap() {
        out.push(Field {
            at: at + 74,
            width: 4,
            name: "output length",
        });
        at += o.record_len() as usize;
    }
    let mut diffs = Vec::new();
    while let Some(d) = r.next_diff().unwrap() {
        diffs.push(d);
    }
    diff_fields(at, &diffs, &mut out);
    out
}

fn delta_fields(data: &[u8]) -> Vec<Field> {
    let mut r = DeltaReader::new(data).unwrap();
    let mut out = vec![
        Field {
            at: 42,
            width: 8,
            name: "SEP file offset",
        },
        Field {
            at: 50,
            width: 4,
            name: "diffs count",
        },
        Field {
            at: 54,
            width: 2,
            name: "SEPs count",
        },
    ];
    let mut diffs = Vec::new();
    while let Some(d) = r.next_diff().unwrap() {
        diffs.push(d);
    }
    diff_fields(56, &diffs, &mut out);
    out
}

/// The field's value changed by +1, −1 and its top bit.
fn variants(data: &[u8], f: Field) -> Vec<Vec<u8>> {
    let mut le = [0u8; 8];
    le[..f.width].copy_from_slice(&data[f.at..f.at + f.width]);
    let value = u64::from_le_bytes(le);
    let mask = if f.width == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * f.width)) - 1
    };
    let top = 1u64 << (8 * f.width - 1);
    [
        value.wrapping_add(1) & mask,
        value.wrapping_sub(1) & mask,
        value ^ top,
    ]
    .into_iter()
    .map(|v| {
        let mut d = data.to_vec();
        d[f.at..f.at + f.width].copy_from_slice(&v.to_le_bytes()[..f.width]);
        d
    })
    .collect()
}

fn refused(full: &[u8], delta: Option<&[u8]>, what: &str) {
    match load_from(full, delta, None) {
        Ok(s) => panic!("{what}: loaded to ledger index {}", s.ledger_index),
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains("snapshot"),
                "{what}: message {text:?} names no file"
            );
        }
    }
}

#[test]
fn the_fixtures_load_whole() {
    for f in FULLS {
        load_from(&fixture(f)[..], None::<&[u8]>, None).unwrap();
    }
    load_from(&fixture(FULLS[2])[..], Some(&fixture(DELTA)[..]), None).unwrap();
}

#[test]
fn a_full_file_cut_at_any_length_is_refused() {
    for f in FULLS {
        let data = fixture(f);
        for len in 0..data.len() {
            refused(&data[..len], None, &format!("{f} cut at {len}"));
        }
    }
}

#[test]
fn a_delta_cut_at_any_length_is_refused() {
    let full = fixture(FULLS[2]);
    let delta = fixture(DELTA);
    for len in 0..delta.len() {
        refused(&full, Some(&delta[..len]), &format!("delta cut at {len}"));
    }
}

#[test]
fn a_cut_message_names_the_section_and_byte() {
    let data = fixture(FULLS[2]);
    let err = load_from(&data[..200], None::<&[u8]>, None).unwrap_err();
    // Byte 149 is the first output record; its block id starts 34 bytes later.
    assert_eq!(
        err.to_string(),
        "full snapshot, outputs at byte 183: file ends inside a block id: 17 of 32 bytes present"
    );
}

#[test]
fn a_changed_length_count_or_offset_in_a_full_file_is_refused() {
    for f in FULLS {
        let data = fixture(f);
        let fields = full_fields(&data);
        assert!(fields.len() >= 6, "{f}");
        for field in fields {
            for bad in variants(&data, field) {
                refused(&bad, None, &format!("{f}: {} at {}", field.name, field.at));
            }
        }
    }
}

#[test]
fn a_changed_length_count_or_offset_in_a_delta_is_refused() {
    let full = fixture(FULLS[2]);
    let data = fixture(DELTA);
    let fields = delta_fields(&data);
    assert!(fields.len() > 3 + 4 * 4);
    for field in fields {
        for bad in variants(&data, field) {
            refused(
                &full,
                Some(&bad),
                &format!("delta: {} at {}", field.name, field.at),
            );
        }
    }
}

#[test]
fn a_wrong_version_or_type_is_refused_by_name() {
    let mut data = fixture(FULLS[0]);
    data[0] = 1;
    let err = load_from(&data[..], None::<&[u8]>, None).unwrap_err();
    assert!(
        err.to_string().contains("unsupported snapshot version 1"),
        "{err}"
    );
    let data = fixture(DELTA);
    let err = load_from(&data[..], None::<&[u8]>, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("snapshot type is delta (1), expected full (0)"),
        "{err}"
    );
}

#[test]
fn a_changed_amount_breaks_the_supply_check() {
    let mut data = fixture(FULLS[1]);
    // The treasury amount (offset 82) of the migration genesis.
    data[82] ^= 1;
    let err = load_from(&data[..], None::<&[u8]>, None).unwrap_err();
    assert!(err.to_string().contains("token supply"), "{err}");
}

/// The fuzz oracle (fuzz/fuzz_targets/snapshot_file.rs) holds on the fixtures, every cut of
/// them, and the delta with each byte of its header changed.
#[test]
fn the_fuzz_oracle_holds_on_the_fixtures_and_their_cuts() {
    use ledger_engine::snapshot::fuzzing::fuzz_snapshot_file;
    let pair = |full: &[u8], delta: &[u8]| {
        let mut input = vec![1u8];
        input.extend_from_slice(&(full.len() as u16).to_le_bytes());
        input.extend_from_slice(full);
        input.extend_from_slice(delta);
        input
    };
    for f in FULLS {
        let data = fixture(f);
        for len in 0..=data.len() {
            let mut input = vec![0u8];
            input.extend_from_slice(&data[..len]);
            fuzz_snapshot_file(&input);
        }
    }
    let full = fixture(FULLS[2]);
    let delta = fixture(DELTA);
    for len in 0..=delta.len() {
        fuzz_snapshot_file(&pair(&full, &delta[..len]));
    }
    for at in 0..56 {
        let mut bad = delta.clone();
        bad[at] ^= 0x5a;
        fuzz_snapshot_file(&pair(&full, &bad));
    }
}
