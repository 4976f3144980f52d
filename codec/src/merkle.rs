//! The Merkle tree hash both generations use (TIP-4 for milestone roots, TIP-45 / iota.go
//! `merklehasher` for v3): a leaf hashes as BLAKE2b-256(0x00 ‖ leaf), an inner node as
//! BLAKE2b-256(0x01 ‖ left ‖ right) with the left subtree holding the largest power of two
//! strictly below the number of leaves, and the empty tree as BLAKE2b-256 of nothing.

use crate::hash::{blake2b256, blake2b256_parts};

/// Merkle root over `leaves`.
pub fn root<L: AsRef<[u8]>>(leaves: &[L]) -> [u8; 32] {
    let hashes: Vec<[u8; 32]> = leaves
        .iter()
        .map(|l| blake2b256_parts(&[&[0u8], l.as_ref()]))
        .collect();
    root_of_leaf_hashes(&hashes)
}

/// Merkle root given the leaf hashes BLAKE2b-256(0x00 ‖ leaf).
pub fn root_of_leaf_hashes(h: &[[u8; 32]]) -> [u8; 32] {
    match h {
        [] => blake2b256(&[]),
        [one] => *one,
        _ => {
            let (l, r) = h.split_at(split_point(h.len()));
            blake2b256_parts(&[&[1u8], &root_of_leaf_hashes(l), &root_of_leaf_hashes(r)])
        }
    }
}

/// Leaves in the left subtree of a node over `n` ≥ 2 leaves: the largest power of two strictly
/// below `n`.
pub fn split_point(n: usize) -> usize {
    let p = n.next_power_of_two();
    if p == n {
        n / 2
    } else {
        p / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_largest_power_of_two_split() {
        let leaf = |i: u8| [i; 32];
        let h = |x: &[u8; 32]| blake2b256_parts(&[&[0u8], x]);
        let node = |a: [u8; 32], b: [u8; 32]| blake2b256_parts(&[&[1u8], &a, &b]);
        assert_eq!(root::<[u8; 32]>(&[]), blake2b256(&[]));
        assert_eq!(root(&[leaf(1)]), h(&leaf(1)));
        let three = root(&[leaf(1), leaf(2), leaf(3)]);
        assert_eq!(three, node(node(h(&leaf(1)), h(&leaf(2))), h(&leaf(3))));
        let borrowed: Vec<&[u8]> = vec![&[1; 32], &[2; 32], &[3; 32]];
        assert_eq!(root(&borrowed), three, "raw and array leaves hash alike");
    }
}
