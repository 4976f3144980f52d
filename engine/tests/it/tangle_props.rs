//! Cone root indexes over long runs: random DAGs grow over hundreds of
//! milestones while a coordinator references every tip, as the built-in
//! coordinator does. Checked after every milestone: each solid, unreferenced
//! block's OCRI/YCRI equal the definition (a full walk of its past cone),
//! OCRI ≤ YCRI ≤ CMI, tip selection returns only healthy tips and never
//! nothing, and the parents it returns are attachable.

use std::collections::HashSet;

use ledger_engine::internals::tangle::{
    AttachError, BlockId, Inclusion, Tangle, TipScore, TipScoring, REFERENCED_WINDOW,
};
use proptest::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};

const SEP: BlockId = [0; 32];

fn block_id(n: u64) -> BlockId {
    let mut id = [0xff; 32];
    id[..8].copy_from_slice(&n.to_le_bytes());
    id
}

/// OCRI/YCRI by definition: min/max over the referenced blocks and entry
/// points where a walk of the unreferenced past cone stops.
fn oracle(t: &Tangle, id: &BlockId) -> (u32, u32) {
    let mut seen = HashSet::new();
    let mut stack = t.get(id).map(|m| m.parents.clone()).unwrap_or_default();
    let (mut ocri, mut ycri) = (u32::MAX, 0);
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        let index = if t.is_entry_point(&p) {
            Some(0)
        } else {
            let m = t.get(&p).expect("parent present");
            if m.view.referenced_by.is_none() {
                stack.extend(m.parents.iter().copied());
            }
            m.view.referenced_by
        };
        if let Some(i) = index {
            ocri = ocri.min(i);
            ycri = ycri.max(i);
        }
    }
    (ocri, ycri)
}

/// How a simulated client picks the parents of a new block.
#[derive(Debug, Clone, Copy)]
enum Client {
    /// The node fills them (non-lazy tip selection).
    NodeFilled,
    /// Taken from the tip list an API client reads (`/tips`), possibly stale.
    FromTips,
    /// An old block that a slow client still holds.
    Old,
}

fn client() -> impl Strategy<Value = Client> {
    prop_oneof![
        4 => Just(Client::NodeFilled),
        3 => Just(Client::FromTips),
        1 => Just(Client::Old),
    ]
}

/// One simulated run: `milestones` rounds of `per_round` client blocks then a milestone.
fn run(seed: u64, milestones: u32, rounds: &[Vec<Client>]) -> Result<(), TestCaseError> {
    let scoring = TipScoring::default();
    let mut t = Tangle::new([(SEP, 0)], 0, scoring);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut next = 1u64;
    let mut all: Vec<BlockId> = Vec::new();
    let mut last_milestone = SEP;
    // What a client read from `/tips` during the previous round.
    let mut read_tips: Vec<BlockId> = Vec::new();
    for index in 1..=milestones {
        let stale_tips = std::mem::take(&mut read_tips);
        let clients = &rounds[index as usize % rounds.len()];
        for c in clients {
            let mut parents = match c {
                Client::NodeFilled => t.select_tips(4, &mut rng),
                Client::FromTips if !stale_tips.is_empty() => {
                    let at = rng.gen_range(0..stale_tips.len());
                    stale_tips
                        .iter()
                        .cycle()
                        .skip(at)
                        .take(2)
                        .copied()
                        .collect()
                }
                Client::FromTips => t.tips(),
                Client::Old if !all.is_empty() => {
                    let back = rng.gen_range(0..all.len().min(400));
                    vec![all[all.len() - 1 - back]]
                }
                Client::Old => vec![SEP],
            };
            if parents.is_empty() {
                parents.push(last_milestone);
            }
            parents.sort_unstable();
            parents.dedup();
            match t.check_attachable(&parents) {
                Ok(()) => {}
                Err(AttachError::BelowMaxDepth { ocri, cmi, .. }) => {
                    prop_assert!(matches!(c, Client::Old), "{c:?} refused");
                    prop_assert!(cmi - ocri > scoring.below_max_depth);
                    continue;
                }
                Err(e) => return Err(TestCaseError::fail(format!("{c:?}: {e}"))),
            }
            let id = block_id(next);
            next += 1;
            prop_assert!(t.insert(id, parents, None, None, all.len() as u64, None));
            all.push(id);
            read_tips = t.tips();
        }
        // The coordinator: every tip, gathered by checkpoints of at most 8.
        let mut parents = t.tips();
        while parents.len() > 8 {
            let mut gathered = Vec::new();
            for chunk in parents.chunks(8) {
                let id = block_id(next);
                next += 1;
                t.insert(id, chunk.to_vec(), None, None, all.len() as u64, None);
                all.push(id);
                gathered.push(id);
            }
            parents = gathered;
        }
        if parents.is_empty() {
            parents.push(last_milestone);
        }
        parents.sort_unstable();
        prop_assert_eq!(t.check_attachable(&parents), Ok(()), "coordinator parents");
        let cone = t.unreferenced_cone(&parents).expect("cone present");
        let milestone = block_id(next);
        next += 1;
        t.insert(
            milestone,
            parents,
            None,
            Some(index),
            all.len() as u64,
            None,
        );
        all.push(milestone);
        let referenced: Vec<_> = cone
            .into_iter()
            .map(|id| (id, Inclusion::NoTransaction))
            .collect();
        t.confirm(index, &referenced);
        last_milestone = milestone;

        prop_assert_eq!(t.cmi(), index);
        for id in &all {
            let Some(m) = t.get(id) else {
                // Referenced before the window of rows kept in memory: the row left memory,
                // its metadata is archived.
                let (archived, _) = t.archived(id).expect("stored or archived");
                prop_assert!(archived.referenced_by + REFERENCED_WINDOW < index);
                continue;
            };
            if m.view.referenced_by.is_some() {
                // History keeps no child lists: they were walked at its confirmation.
                prop_assert!(m.children.is_empty(), "children kept on a referenced block");
                continue;
            }
            if !m.view.solid {
                continue;
            }
            prop_assert_eq!((m.ocri, m.ycri), oracle(&t, id), "milestone {}", index);
            prop_assert!(m.ocri <= m.ycri && m.ycri <= index, "{} {}", m.ocri, m.ycri);
        }
        let picked = t.select_tips(4, &mut rng);
        prop_assert!(
            !picked.is_empty(),
            "no attachable tip at milestone {}",
            index
        );
        for p in &picked {
            prop_assert_eq!(t.tip_score(p), Some(TipScore::Healthy));
        }
        prop_assert_eq!(t.check_attachable(&picked), Ok(()));
        prop_assert_eq!(t.tip_score(&milestone), Some(TipScore::Healthy));
        prop_assert_eq!(
            t.tips(),
            vec![milestone],
            "tip pool after milestone {}",
            index
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn cone_root_indexes_stay_current_over_hundreds_of_milestones(
        seed in any::<u64>(),
        milestones in 150u32..300,
        rounds in prop::collection::vec(prop::collection::vec(client(), 0..12), 1..8),
    ) {
        run(seed, milestones, &rounds)?;
    }
}

/// A block that referenced only unreferenced parents when it arrived gets
/// fresh indexes once they are referenced (the bug that stopped every node
/// at its 16th milestone).
#[test]
fn the_milestone_chain_never_falls_below_max_depth() {
    let mut t = Tangle::new([(SEP, 0)], 0, TipScoring::default());
    let mut last = SEP;
    for index in 1..=100u32 {
        let client = block_id(u64::from(index) * 2);
        t.insert(client, vec![last], None, None, u64::from(index) * 2, None);
        let milestone = block_id(u64::from(index) * 2 + 1);
        t.insert(
            milestone,
            vec![client],
            None,
            Some(index),
            u64::from(index) * 2 + 1,
            None,
        );
        let cone = t.unreferenced_cone(&[client]).expect("cone");
        let refs: Vec<_> = cone
            .into_iter()
            .map(|id| (id, Inclusion::NoTransaction))
            .collect();
        t.confirm(index, &refs);
        let m = t.get(&milestone).expect("milestone block");
        assert_eq!((m.ocri, m.ycri), (index, index), "milestone {index}");
        assert_eq!(t.check_attachable(&[milestone]), Ok(()));
        last = milestone;
    }
}
