//! A map that keeps at most `cap` entries, evicting the oldest insertion: the bounded
//! tables of gossip (senders awaiting broadcast, rejected ids, requested ids).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// A bounded insertion-ordered map.
#[derive(Debug)]
pub struct Fifo<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
    cap: usize,
}

impl<K: Eq + Hash + Copy, V> Fifo<K, V> {
    // (An evicted key may be one removed earlier and inserted again: a cache may lose an
    // entry early, never hold more than `cap`.)
    /// An empty map holding at most `cap` entries.
    pub fn new(cap: usize) -> Self {
        Self {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    /// The value under `k`, created with `f` if absent (evicting the oldest entry when full).
    pub fn entry(&mut self, k: K, f: impl FnOnce() -> V) -> &mut V {
        if !self.map.contains_key(&k) {
            while self.map.len() >= self.cap {
                match self.order.pop_front() {
                    Some(old) => {
                        self.map.remove(&old);
                    }
                    None => break,
                }
            }
            self.order.push_back(k);
        }
        self.map.entry(k).or_insert_with(f)
    }

    /// Inserts or replaces.
    pub fn insert(&mut self, k: K, v: V) {
        if let Some(slot) = self.map.get_mut(&k) {
            *slot = v;
        } else {
            self.entry(k, || v);
        }
    }

    /// Removes and returns `k`'s value. (Its slot in the order is dropped lazily.)
    pub fn remove(&mut self, k: &K) -> Option<V> {
        let v = self.map.remove(k);
        if v.is_some() && self.order.len() > 2 * self.cap {
            let map = &self.map;
            self.order.retain(|o| map.contains_key(o));
        }
        v
    }

    /// Whether `k` is present.
    pub fn contains(&self, k: &K) -> bool {
        self.map.contains_key(k)
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_at_most_cap_and_evicts_the_oldest() {
        let mut f = Fifo::new(3);
        for i in 0..5u32 {
            f.insert(i, i * 10);
        }
        assert_eq!(f.len(), 3);
        assert!(!f.contains(&0) && !f.contains(&1));
        assert_eq!(f.remove(&4), Some(40));
        f.insert(2, 7);
        assert_eq!(f.remove(&2), Some(7));
        for i in 10..1000u32 {
            f.insert(i, i);
            let _ = f.remove(&(i - 1));
        }
        assert!(f.len() <= 3);
    }
}
