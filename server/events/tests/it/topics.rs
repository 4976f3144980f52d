//! Invariants of filter matching.

use ledger_events::topic::Filter;
use proptest::prelude::*;

fn topic() -> impl Strategy<Value = String> {
    proptest::collection::vec("[a-z0-9-]{1,6}", 1..6).prop_map(|levels| levels.join("/"))
}

proptest! {
    #[test]
    fn a_name_matches_itself_and_the_wildcards_over_it(t in topic(), pick in any::<proptest::sample::Index>()) {
        let exact = Filter::parse(t.as_bytes()).expect("a name is a filter");
        prop_assert!(exact.matches(&t));
        prop_assert!(Filter::parse(b"#").expect("valid").matches(&t));
        let levels: Vec<&str> = t.split('/').collect();
        let i = pick.index(levels.len());
        // One level replaced by `+`.
        let mut plus = levels.clone();
        plus[i] = "+";
        prop_assert!(Filter::parse(plus.join("/").as_bytes()).expect("valid").matches(&t));
        // The first i levels then `#` (`a/#` matches `a`).
        let mut hash: Vec<&str> = levels[..i].to_vec();
        hash.push("#");
        prop_assert!(Filter::parse(hash.join("/").as_bytes()).expect("valid").matches(&t));
        // One more level never matches without a wildcard.
        let longer = format!("{t}/x");
        prop_assert!(!exact.matches(&longer));
    }

    #[test]
    fn refused_filters_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(f) = Filter::parse(&bytes) {
            prop_assert!(f.as_str().len() <= 256);
            let _ = f.matches("blocks");
        }
    }
}
