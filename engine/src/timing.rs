//! A hook for durations the engine measures, so that an exporter (the server's Prometheus
//! endpoint) can record them without the engine depending on it.
//!
//! One observer per engine, set once with [`crate::Engine::observe_timings`]; without one the
//! engine measures nothing extra.

use std::time::Duration;

/// Receives durations measured inside the engine. Calls come from the engine's own threads
/// (the one confirming a milestone, the block log's fsync thread or an appender), so an
/// implementation must be quick and must not call back into the engine.
pub trait TimingObserver: Send + Sync + 'static {
    /// A milestone was confirmed (white flag, ledger update), `took` since work on it began;
    /// the same time as the `took_ms` of the "milestone confirmed" log line. Milestones
    /// replayed while opening the store are not reported.
    fn milestone_confirmed(&self, took: Duration);

    /// An fsync of the block log finished: a group commit of the fsync thread, the fsync of
    /// an append in every-append mode, or an explicit [`crate::log::Log::sync`].
    fn log_committed(&self, took: Duration);
}
