//! A hash map split into shards by the first byte of its (uniformly distributed, hashed) key,
//! so that growing it never moves every entry at once.
//!
//! A single table of millions of block rows doubles in one step: every entry is moved and the
//! new table is page-faulted in while the caller (the engine's write lock) waits, which showed
//! as pauses of seconds at about 1 M and 2 M blocks. With [`SHARDS`] shards each growth moves
//! 1/[`SHARDS`] of the entries, and because keys are hashes the shards reach their thresholds
//! at slightly different sizes, so the growths are spread out rather than back to back.

use hashbrown::HashMap;

/// Number of shards (a power of two; the shard is the key's first byte modulo this).
pub const SHARDS: usize = 64;

/// A map from 32-byte hashes to `V`, in [`SHARDS`] shards.
#[derive(Debug, Clone)]
pub struct ShardedMap<V> {
    shards: Box<[HashMap<[u8; 32], V>]>,
    len: usize,
}

impl<V> Default for ShardedMap<V> {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| HashMap::new()).collect(),
            len: 0,
        }
    }
}

impl<V> ShardedMap<V> {
    fn shard(&self, k: &[u8; 32]) -> &HashMap<[u8; 32], V> {
        // `SHARDS` shards always exist: the index is below the slice length.
        &self.shards[usize::from(k[0]) % SHARDS]
    }

    fn shard_mut(&mut self, k: &[u8; 32]) -> &mut HashMap<[u8; 32], V> {
        &mut self.shards[usize::from(k[0]) % SHARDS]
    }

    /// The value of `k`.
    pub fn get(&self, k: &[u8; 32]) -> Option<&V> {
        self.shard(k).get(k)
    }

    /// The value of `k`, mutably.
    pub fn get_mut(&mut self, k: &[u8; 32]) -> Option<&mut V> {
        self.shard_mut(k).get_mut(k)
    }

    /// True when `k` is present.
    pub fn contains_key(&self, k: &[u8; 32]) -> bool {
        self.shard(k).contains_key(k)
    }

    /// Inserts `v` under `k`, returning the value it replaces.
    pub fn insert(&mut self, k: [u8; 32], v: V) -> Option<V> {
        let old = self.shard_mut(&k).insert(k, v);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Removes `k`, returning its value.
    pub fn remove(&mut self, k: &[u8; 32]) -> Option<V> {
        let old = self.shard_mut(k).remove(k);
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Gives memory back after many removals: a shard holding less than a quarter of its
    /// capacity is shrunk to twice its entries (the tiniest shards are left alone). The
    /// tangle calls this at every milestone: a burst of blocks in flight (a slow
    /// confirmation) grows the shards, and without shrinking them back that peak's
    /// capacity would stay for good, a step in the node's memory after each larger burst.
    pub fn shrink_sparse(&mut self) {
        for shard in self.shards.iter_mut() {
            if shard.capacity() > 64 && shard.len() * 4 < shard.capacity() {
                shard.shrink_to(shard.len() * 2);
            }
        }
    }

    /// Every entry, shard by shard.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8; 32], &V)> {
        self.shards.iter().flat_map(|s| s.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[..4].copy_from_slice(&i.wrapping_mul(2_654_435_761).to_le_bytes());
        k
    }

    fn capacity<V>(m: &ShardedMap<V>) -> usize {
        m.shards.iter().map(HashMap::capacity).sum()
    }

    #[test]
    fn capacity_grown_by_a_burst_is_given_back_once_it_passes() {
        // The tangle's rows at 2 000 blocks/s (a few thousand in flight), then a slow
        // confirmation holding ten times as many, then the steady size again.
        let mut m = ShardedMap::default();
        for i in 0..6_000 {
            m.insert(key(i), [0u8; 128]);
        }
        m.shrink_sparse();
        let steady = capacity(&m);
        for i in 6_000..60_000 {
            m.insert(key(i), [0u8; 128]);
        }
        let burst = capacity(&m);
        assert!(burst > 8 * steady, "burst {burst}, steady {steady}");
        for i in 6_000..60_000 {
            m.remove(&key(i));
        }
        m.shrink_sparse();
        let after = capacity(&m);
        assert!(
            after <= 2 * steady,
            "capacity after the burst {after}, before it {steady}"
        );
        assert_eq!(m.len(), 6_000);
        assert!((0..6_000).all(|i| m.contains_key(&key(i))));
    }

    #[test]
    fn behaves_like_one_map() {
        let mut m = ShardedMap::default();
        for i in 0..10_000 {
            assert_eq!(m.insert(key(i), i), None);
        }
        assert_eq!(m.insert(key(7), 70), Some(7));
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get(&key(7)), Some(&70));
        *m.get_mut(&key(8)).unwrap() = 80;
        assert_eq!(m.remove(&key(8)), Some(80));
        assert_eq!(m.remove(&key(8)), None);
        assert!(!m.contains_key(&key(8)) && m.contains_key(&key(9)));
        assert_eq!(m.len(), 9_999);
        assert_eq!(m.iter().count(), 9_999);
        assert!(
            m.shards.iter().all(|s| !s.is_empty()),
            "keys spread over every shard"
        );
    }
}
