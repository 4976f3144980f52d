//! The timing hook: an observer set on the engine hears each milestone confirmation and each
//! block-log commit, and only the first observer is kept.

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};
use std::time::Duration;

use ledger_engine::{Engine, EngineConfig, TimingObserver};

#[derive(Debug, Default)]
struct Counting {
    confirmations: AtomicUsize,
    commits: AtomicUsize,
}

impl TimingObserver for Counting {
    fn milestone_confirmed(&self, took: Duration) {
        assert!(took < Duration::from_secs(60));
        self.confirmations.fetch_add(1, Ordering::Relaxed);
    }

    fn log_committed(&self, _took: Duration) {
        self.commits.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn an_observer_hears_confirmations_and_commits_but_not_replays() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(EngineConfig::dev(dir.path())).unwrap();
    let observer = Arc::new(Counting::default());
    assert!(engine.observe_timings(Arc::clone(&observer) as Arc<dyn TimingObserver>));
    assert!(!engine.observe_timings(Arc::new(Counting::default())));
    engine.issue_milestone().unwrap();
    engine.issue_milestone().unwrap();
    assert_eq!(observer.confirmations.load(Ordering::Relaxed), 2);
    assert!(observer.commits.load(Ordering::Relaxed) >= 1);
    engine.shutdown().unwrap();
    drop(engine);

    // Reopened, the two milestones are replayed: no confirmation is reported for them.
    let reopened = Engine::open(EngineConfig::dev(dir.path())).unwrap();
    let again = Arc::new(Counting::default());
    assert!(reopened.observe_timings(Arc::clone(&again) as Arc<dyn TimingObserver>));
    assert_eq!(
        reopened.ledger_index(),
        reopened.genesis().milestone_index + 2
    );
    assert_eq!(again.confirmations.load(Ordering::Relaxed), 0);
}
