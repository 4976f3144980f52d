//! Block rates for `info.metrics`, sampled once a second from the engine's counters.

use std::{
    sync::{Arc, Weak},
    time::{Duration, Instant},
};

use ledger_engine::Engine;
use parking_lot::Mutex;

/// Block rates over the last sample period.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rates {
    /// New blocks per second.
    pub blocks_per_second: f64,
    /// Blocks referenced per second.
    pub referenced_blocks_per_second: f64,
    /// Referenced ÷ new × 100.
    pub referenced_rate: f64,
}

/// How often the counters are sampled; the rates are over the last period.
pub const SAMPLE_PERIOD: Duration = Duration::from_secs(1);

/// The engine's counters at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// When it was taken.
    pub at: Instant,
    /// Blocks known.
    pub blocks: u64,
    /// Blocks referenced by confirmed milestones.
    pub referenced: u64,
}

impl Sample {
    /// The engine's counters now.
    pub fn of(engine: &Engine) -> Self {
        Self {
            at: Instant::now(),
            blocks: u64::try_from(engine.block_count()).unwrap_or(u64::MAX),
            referenced: engine.referenced_block_count(),
        }
    }
}

/// Rates between two samples: new and referenced blocks per second, and referenced ÷ new
/// × 100 (Hornet's `referencedRate`; 0 when no block arrived).
pub fn rates(before: Sample, after: Sample) -> Rates {
    let secs = after.at.saturating_duration_since(before.at).as_secs_f64();
    if secs <= 0.0 {
        return Rates::default();
    }
    // Counts stay far below 2^52, so the conversions are exact.
    let (new, referenced) = (
        after.blocks.saturating_sub(before.blocks) as f64,
        after.referenced.saturating_sub(before.referenced) as f64,
    );
    Rates {
        blocks_per_second: new / secs,
        referenced_blocks_per_second: referenced / secs,
        referenced_rate: if new > 0.0 {
            referenced / new * 100.0
        } else {
            0.0
        },
    }
}

/// The latest rates, updated by [`BlockRates::spawn`]'s task.
#[derive(Debug, Default)]
pub struct BlockRates {
    current: Mutex<Rates>,
}

impl BlockRates {
    /// The rates over the last sample period (all 0 before the first period ends).
    pub fn get(&self) -> Rates {
        *self.current.lock()
    }

    fn set(&self, m: Rates) {
        *self.current.lock() = m;
    }

    /// Starts sampling `engine` every [`SAMPLE_PERIOD`] on the current tokio runtime; the task
    /// ends when the engine is dropped.
    pub fn spawn(engine: &Arc<Engine>) -> Arc<Self> {
        let shared = Arc::new(Self::default());
        let weak: Weak<Engine> = Arc::downgrade(engine);
        let out = Arc::clone(&shared);
        let mut last = Sample::of(engine);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(SAMPLE_PERIOD);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(engine) = weak.upgrade() else { break };
                let now = Sample::of(&engine);
                out.set(rates(last, now));
                last = now;
            }
        });
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ms: u64, blocks: u64, referenced: u64, base: Instant) -> Sample {
        Sample {
            at: base + Duration::from_millis(ms),
            blocks,
            referenced,
        }
    }

    #[test]
    fn rates_are_per_second_over_the_interval() {
        let t = Instant::now();
        let m = rates(sample(0, 10, 4, t), sample(2000, 110, 54, t));
        assert!((m.blocks_per_second - 50.0).abs() < 1e-9);
        assert!((m.referenced_blocks_per_second - 25.0).abs() < 1e-9);
        assert!((m.referenced_rate - 50.0).abs() < 1e-9);
    }

    #[test]
    fn no_new_blocks_or_no_time_gives_zero_rates() {
        let t = Instant::now();
        let idle = rates(sample(0, 10, 4, t), sample(1000, 10, 6, t));
        assert!(idle.blocks_per_second.abs() < 1e-12);
        assert!((idle.referenced_blocks_per_second - 2.0).abs() < 1e-9);
        assert!(idle.referenced_rate.abs() < 1e-12);
        let same = rates(sample(5, 10, 4, t), sample(5, 20, 8, t));
        assert_eq!(same, Rates::default());
    }
}
