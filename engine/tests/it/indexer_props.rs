//! The indexer against a brute-force model: random milestones create and consume outputs with
//! random kinds, addresses and conditions; every random query (kinds, filter, page size),
//! walked page by page with its cursors, returns exactly the model's matching unspent outputs
//! in (booking time, output id) order.

use ledger_engine::internals::indexer::{ChainId, Filter, IndexEntry, Indexer, OutputKind, Query};
use proptest::prelude::*;

type Id = [u8; 34];

fn addr(n: u8) -> [u8; 33] {
    let mut a = [0u8; 33];
    a[0] = if n.is_multiple_of(3) { 8 } else { 0 };
    a[1] = n;
    a
}

fn entry(seed: u64, id: Id) -> IndexEntry {
    let pick = |shift: u32, m: u64| (seed >> shift) % m;
    let kind = OutputKind::ALL[pick(0, 4) as usize];
    let a = |shift| Some(addr(pick(shift, 4) as u8));
    let maybe = |shift: u32| pick(shift, 2) == 0;
    let holder = matches!(kind, OutputKind::Basic | OutputKind::Nft);
    IndexEntry {
        output_id: id,
        kind,
        native_tokens: pick(2, 3) as u8,
        address: if holder { a(4) } else { None },
        storage_deposit_return: (holder && maybe(6)).then(|| (addr(pick(7, 4) as u8), 5)),
        timelock: (holder && maybe(9)).then(|| 100 + pick(10, 3) as u32),
        expiration: (holder && maybe(12))
            .then(|| (addr(pick(13, 4) as u8), 100 + pick(15, 3) as u32)),
        state_controller: (kind == OutputKind::Alias).then(|| addr(pick(17, 4) as u8)),
        governor: (kind == OutputKind::Alias).then(|| addr(pick(19, 4) as u8)),
        alias_address: (kind == OutputKind::Foundry).then(|| addr(3 * pick(21, 2) as u8)),
        sender: maybe(23).then(|| addr(pick(24, 4) as u8)),
        issuer: (kind != OutputKind::Basic && maybe(26)).then(|| addr(pick(27, 4) as u8)),
        tag: (holder && maybe(29)).then(|| vec![pick(30, 2) as u8].into_boxed_slice()),
        chain_id: match kind {
            OutputKind::Alias => Some(ChainId::Alias([id[0]; 32])),
            OutputKind::Nft => Some(ChainId::Nft([id[0]; 32])),
            _ => None,
        },
    }
}

fn filter(seed: u64) -> Filter {
    let pick = |shift: u32, m: u64| (seed >> shift) % m;
    let on = |shift: u32| pick(shift, 5) == 0;
    let a = |shift: u32| on(shift).then(|| addr(pick(shift + 3, 4) as u8));
    Filter {
        has_native_tokens: on(0).then(|| pick(3, 2) == 0),
        min_native_token_count: on(4).then(|| pick(6, 3) as u32),
        max_native_token_count: on(7).then(|| pick(9, 3) as u32),
        unlockable_by_address: a(10),
        address: a(15),
        has_storage_deposit_return: on(20).then(|| pick(22, 2) == 0),
        storage_deposit_return_address: a(23),
        has_expiration: on(28).then(|| pick(30, 2) == 0),
        expires_before: on(31).then(|| 100 + pick(33, 4) as u32),
        expires_after: on(35).then(|| 99 + pick(37, 4) as u32),
        expiration_return_address: a(39),
        has_timelock: on(44).then(|| pick(46, 2) == 0),
        timelocked_before: on(47).then(|| 100 + pick(49, 4) as u32),
        timelocked_after: on(51).then(|| 99 + pick(53, 4) as u32),
        sender: a(55),
        tag: on(59).then(|| vec![pick(61, 2) as u8]),
        issuer: a(1),
        state_controller: a(5),
        governor: a(12),
        alias_address: a(17),
        created_before: on(25).then(|| pick(40, 12) as u32),
        created_after: on(42).then(|| pick(45, 12) as u32),
    }
}

/// The model's answer: a plain scan with the documented semantics.
fn model_matches(e: &IndexEntry, f: &Filter) -> bool {
    let holder = matches!(e.kind, OutputKind::Basic | OutputKind::Nft);
    let n = u32::from(e.native_tokens);
    let unlockers: Vec<[u8; 33]> = match e.kind {
        OutputKind::Basic | OutputKind::Nft => [
            e.address,
            e.expiration.map(|x| x.0),
            e.storage_deposit_return.map(|x| x.0),
        ]
        .into_iter()
        .flatten()
        .collect(),
        OutputKind::Alias => [e.state_controller, e.governor]
            .into_iter()
            .flatten()
            .collect(),
        OutputKind::Foundry => e.alias_address.into_iter().collect(),
    };
    let exp = e.expiration.map(|x| x.1);
    f.has_native_tokens.is_none_or(|w| w == (n > 0))
        && f.min_native_token_count.is_none_or(|m| n >= m)
        && f.max_native_token_count.is_none_or(|m| n <= m)
        && f.unlockable_by_address
            .is_none_or(|a| unlockers.contains(&a))
        && f.address.is_none_or(|a| holder && e.address == Some(a))
        && f.has_storage_deposit_return
            .is_none_or(|w| w == e.storage_deposit_return.is_some())
        && f.storage_deposit_return_address
            .is_none_or(|a| e.storage_deposit_return.map(|x| x.0) == Some(a))
        && f.has_expiration.is_none_or(|w| w == exp.is_some())
        && f.expires_before.is_none_or(|b| exp.is_some_and(|t| t < b))
        && f.expires_after.is_none_or(|b| exp.is_some_and(|t| t > b))
        && f.expiration_return_address
            .is_none_or(|a| e.expiration.map(|x| x.0) == Some(a))
        && f.has_timelock.is_none_or(|w| w == e.timelock.is_some())
        && f.timelocked_before
            .is_none_or(|b| e.timelock.is_some_and(|t| t < b))
        && f.timelocked_after
            .is_none_or(|b| e.timelock.is_some_and(|t| t > b))
        && f.sender.is_none_or(|a| e.sender == Some(a))
        && f.tag.as_deref().is_none_or(|t| e.tag.as_deref() == Some(t))
        && f.issuer.is_none_or(|a| e.issuer == Some(a))
        && f.state_controller
            .is_none_or(|a| e.state_controller == Some(a))
        && f.governor.is_none_or(|a| e.governor == Some(a))
        && f.alias_address.is_none_or(|a| e.alias_address == Some(a))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pages_equal_a_brute_force_scan(
        milestones in prop::collection::vec(
            (prop::collection::vec(any::<u64>(), 0..12), prop::collection::vec(any::<u16>(), 0..6)),
            1..12),
        queries in prop::collection::vec((any::<u64>(), 0u8..5, 1usize..5), 1..20),
    ) {
        let mut ix = Indexer::new(0);
        // (booking time, entry) of every unspent output.
        let mut model: Vec<(u32, IndexEntry)> = Vec::new();
        let mut next = 0u16;
        for (i, (created, consumed)) in milestones.iter().enumerate() {
            let index = u32::try_from(i).unwrap() + 1;
            let ts = index; // one timestamp per milestone, increasing
            let entries: Vec<IndexEntry> = created.iter().map(|seed| {
                next += 1;
                // Ids not in creation order, so ordering by id within a milestone matters.
                let mut id = [0u8; 34];
                id[0] = (next % 251) as u8;
                id[32..].copy_from_slice(&next.to_le_bytes());
                entry(*seed, id)
            }).collect();
            let mut spent = Vec::new();
            for pick in consumed {
                if model.is_empty() { break; }
                let (_, e) = model.remove(usize::from(*pick) % model.len());
                spent.push(e.output_id);
            }
            ix.apply(index, ts, &entries, &spent);
            model.extend(entries.into_iter().map(|e| (ts, e)));
        }
        prop_assert_eq!(ix.len(), model.len());
        for (seed, kinds, page_size) in queries {
            let kinds: Vec<OutputKind> = match kinds {
                4 => OutputKind::ALL.to_vec(),
                k => vec![OutputKind::ALL[usize::from(k)]],
            };
            let f = filter(seed);
            let mut want: Vec<(u32, Id)> = model.iter()
                .filter(|(ts, e)| kinds.contains(&e.kind) && model_matches(e, &f)
                    && f.created_before.is_none_or(|b| *ts < b)
                    && f.created_after.is_none_or(|b| *ts > b))
                .map(|(ts, e)| (*ts, e.output_id))
                .collect();
            want.sort_unstable();
            let mut got = Vec::new();
            let mut cursor = None;
            for _ in 0..=want.len() {
                let page = ix.query(&Query { kinds: kinds.clone(), filter: f.clone(), page_size, cursor });
                prop_assert!(page.items.len() <= page_size);
                got.extend(page.items);
                cursor = page.next;
                if cursor.is_none() { break; }
            }
            prop_assert!(cursor.is_none(), "paging did not end");
            let want_ids: Vec<Id> = want.iter().map(|(_, id)| *id).collect();
            prop_assert_eq!(got, want_ids);
        }
        for (_, e) in &model {
            if let Some(c) = e.chain_id {
                prop_assert_eq!(ix.chain_output(&c), Some(e.output_id));
            }
        }
    }
}
