//! The two histograms the engine feeds through its [`TimingObserver`] hook: milestone
//! confirmation time and block-log commit (fsync) time.

use std::time::Duration;

use ledger_engine::TimingObserver;
use prometheus_client::{
    metrics::histogram::{exponential_buckets, Histogram},
    registry::{Registry, Unit},
};

/// Confirmation buckets: 1 ms doubling to about 16 s (a milestone over a wide cone on a slow
/// disk still lands in a finite bucket).
fn confirmation_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.001, 2.0, 15)
}

/// Commit buckets: 50 µs (page cache, tmpfs) doubling to about 1.6 s (a stalled disk).
fn commit_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.000_05, 2.0, 16)
}

/// `ledger_confirmation_duration_seconds` and `ledger_commit_duration_seconds`.
#[derive(Debug, Clone)]
pub struct EngineTimings {
    confirmation: Histogram,
    commit: Histogram,
}

impl Default for EngineTimings {
    fn default() -> Self {
        Self {
            confirmation: Histogram::new(confirmation_buckets()),
            commit: Histogram::new(commit_buckets()),
        }
    }
}

impl EngineTimings {
    /// Adds both histograms to `registry` (the `_seconds` suffix comes from their unit).
    pub fn register(&self, registry: &mut Registry) {
        registry.register_with_unit(
            "ledger_confirmation_duration",
            "Time to confirm a milestone: white flag and ledger update",
            Unit::Seconds,
            self.confirmation.clone(),
        );
        registry.register_with_unit(
            "ledger_commit_duration",
            "Time of a block-log commit: one fsync covering every append before it",
            Unit::Seconds,
            self.commit.clone(),
        );
    }
}

impl TimingObserver for EngineTimings {
    fn milestone_confirmed(&self, took: Duration) {
        self.confirmation.observe(took.as_secs_f64());
    }

    fn log_committed(&self, took: Duration) {
        self.commit.observe(took.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_seconds_histograms() {
        let timings = EngineTimings::default();
        timings.milestone_confirmed(Duration::from_millis(3));
        timings.log_committed(Duration::from_micros(70));
        timings.log_committed(Duration::from_secs(30));
        let mut registry = Registry::default();
        timings.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        assert!(
            text.contains("# TYPE ledger_confirmation_duration_seconds histogram"),
            "{text}"
        );
        assert!(
            text.contains("ledger_confirmation_duration_seconds_count 1"),
            "{text}"
        );
        assert!(
            text.contains("ledger_commit_duration_seconds_count 2"),
            "{text}"
        );
        assert!(
            text.contains(r#"ledger_commit_duration_seconds_bucket{le="+Inf"} 2"#),
            "{text}"
        );
    }
}
