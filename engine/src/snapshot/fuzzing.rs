//! The oracle of the `snapshot_file` fuzz target (kept in the library so it refactors with
//! the readers). It returns for any input the readers handle correctly, accepted or refused,
//! and panics on a bug.

use super::{
    load::load_from,
    read::{DeltaReader, FullReader},
    SnapHash,
};

/// The first byte picks the input's form: even, the rest is a full snapshot file; odd, the
/// rest is a u16 LE length n, a full file of n bytes, and a delta file after it. Oracles:
/// - a file the strict reader reads whole re-encodes to exactly its bytes;
/// - whatever `load_from` accepts, the readers accept too, and the loaded state is at its
///   target with the supply accounted for; [`SnapHash`] is computed without a panic.
pub fn fuzz_snapshot_file(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (full, delta) = if mode % 2 == 0 {
        (rest, None)
    } else {
        let Some((len, rest)) = rest.split_first_chunk::<2>() else {
            return;
        };
        let n = usize::from(u16::from_le_bytes(*len)).min(rest.len());
        let (full, delta) = rest.split_at(n);
        (full, Some(delta))
    };
    let full_ok = full_reencodes(full);
    let delta_ok = delta.map(delta_reencodes);
    let Ok(loaded) = load_from(full, delta, None) else {
        return;
    };
    assert!(full_ok, "load accepted a full file the reader refuses");
    assert!(
        delta_ok != Some(false),
        "load accepted a delta file the reader refuses"
    );
    assert_eq!(loaded.ledger_index, loaded.target_index);
    assert!(
        loaded
            .unspent
            .windows(2)
            .all(|w| w[0].output_id < w[1].output_id),
        "unspent outputs not sorted and unique"
    );
    let hash = SnapHash::of(&loaded);
    assert_eq!(hash.ledger_token_supply, loaded.token_supply);
}

/// Calls `next` until it gives `None`, handing each item to `put`; false when `next` fails.
fn each<T, E>(mut next: impl FnMut() -> Result<Option<T>, E>, mut put: impl FnMut(T)) -> bool {
    loop {
        match next() {
            Ok(Some(item)) => put(item),
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
}

/// The bytes of a diff that was read (one that does not encode again is a bug).
fn diff_bytes<E: std::fmt::Display>(encoded: Result<Vec<u8>, E>) -> Vec<u8> {
    encoded.unwrap_or_else(|e| panic!("a diff that was read does not encode: {e}"))
}

/// `whole` (the file was read to its end), after checking that what was read then
/// re-encodes to the file's bytes `data`.
fn reencoded(whole: bool, out: &[u8], data: &[u8], kind: &str) -> bool {
    if whole {
        assert_eq!(
            out, data,
            "a {kind} file read whole re-encodes to other bytes"
        );
    }
    whole
}

/// Reads a full file whole; if it reads, checks that its records re-encode to its bytes.
fn full_reencodes(data: &[u8]) -> bool {
    let Ok(mut r) = FullReader::new(data) else {
        return false;
    };
    let Ok(mut out) = r.header().to_bytes() else {
        return false;
    };
    let whole = each(|| r.next_output(), |o| o.encode(&mut out))
        && each(|| r.next_diff(), |d| out.extend(diff_bytes(d.to_bytes())))
        && each(|| r.next_sep(), |s| out.extend_from_slice(&s))
        && r.finish().is_ok();
    reencoded(whole, &out, data, "full")
}

/// As [`full_reencodes`], for a delta file.
fn delta_reencodes(data: &[u8]) -> bool {
    let Ok(mut r) = DeltaReader::new(data) else {
        return false;
    };
    let mut out = r.header().to_bytes();
    let whole = each(|| r.next_diff(), |d| out.extend(diff_bytes(d.to_bytes())))
        && each(|| r.next_sep(), |s| out.extend_from_slice(&s))
        && r.finish().is_ok();
    reencoded(whole, &out, data, "delta")
}
