//! `GET /api/dashboard/v1/stats`: what the dashboard charts, read in one answer from the
//! figures the node keeps anyway: the engine's counters, milestones, tip pool and recent
//! confirmations, the block rates of `/info` ([`crate::rates`]), the refusals the log
//! summarises ([`crate::rejects`]), the resident set of `process_resident_memory_bytes`
//! ([`crate::process`]) and the data directory's size on disk.

use std::path::Path;

use ledger_engine::{Engine, RecentConfirmation};
use serde::Serialize;

use crate::{rates::Rates, rejects::RejectTally};

/// Body of `GET /api/dashboard/v1/stats`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// When the figures were read, Unix milliseconds.
    pub time_ms: u64,
    /// Blocks stored and referenced, and their rates.
    pub blocks: Blocks,
    /// Milestone indexes and the latest confirmations.
    pub milestones: Milestones,
    /// The tip pool.
    pub tips: Tips,
    /// Memory and disk.
    pub resources: Resources,
    /// Refused submissions since the node started, by status and reason.
    pub refusals: Vec<Refusal>,
}

/// `stats.blocks`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocks {
    /// Blocks stored (v2 and v3).
    pub received: u64,
    /// Blocks referenced by milestones confirmed since the node started.
    pub referenced: u64,
    /// New blocks per second over the last second (as `info.metrics.blocksPerSecond`).
    pub per_second: f64,
    /// Referenced blocks per second over the last second.
    pub referenced_per_second: f64,
}

/// `stats.milestones`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Milestones {
    /// The highest milestone index known (LMI).
    pub latest: u32,
    /// The confirmed milestone index (CMI, the ledger index).
    pub confirmed: u32,
    /// The latest confirmations this node made, oldest first.
    pub recent: Vec<Confirmation>,
}

/// One confirmation in `stats.milestones.recent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Confirmation {
    /// Milestone index.
    pub index: u32,
    /// Milestone timestamp, Unix seconds.
    pub timestamp: u32,
    /// Blocks it referenced.
    pub referenced: u32,
    /// Time its confirmation took, in microseconds.
    pub confirmation_us: u64,
}

impl From<RecentConfirmation> for Confirmation {
    fn from(c: RecentConfirmation) -> Self {
        Self {
            index: c.index,
            timestamp: c.timestamp,
            referenced: c.referenced,
            confirmation_us: u64::try_from(c.took.as_micros()).unwrap_or(u64::MAX),
        }
    }
}

/// `stats.tips`: the tip pool by Hornet's tip-selection classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tips {
    /// Non-lazy tips.
    pub healthy: u64,
    /// Semi-lazy tips.
    pub semi_lazy: u64,
    /// Lazy tips.
    pub lazy: u64,
}

/// `stats.resources`; a figure that cannot be read is `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resources {
    /// Resident set of the node process, bytes.
    pub resident_memory_bytes: Option<u64>,
    /// Bytes the data directory takes on disk (allocated blocks, as `du`).
    pub data_dir_bytes: Option<u64>,
}

/// One entry of `stats.refusals`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// HTTP status the submitter got.
    pub status: u16,
    /// The reason, without ids and indexes.
    pub reason: String,
    /// How many.
    pub count: u64,
}

impl Stats {
    /// Reads every figure now. Walks the data directory: call off the async runtime.
    pub fn read(
        engine: &Engine,
        rates: Rates,
        refusals: &RejectTally,
        data_dir: Option<&Path>,
    ) -> Self {
        let sync = engine.sync_state();
        let (healthy, semi_lazy, lazy) = engine.tip_pool_sizes();
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let time_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Self {
            time_ms,
            blocks: Blocks {
                received: count(engine.block_count()),
                referenced: engine.referenced_block_count(),
                per_second: rates.blocks_per_second,
                referenced_per_second: rates.referenced_blocks_per_second,
            },
            // As `iota_node_milestones`: the latest is never below the confirmed.
            milestones: Milestones {
                latest: sync.latest.max(sync.confirmed),
                confirmed: sync.confirmed,
                recent: engine
                    .recent_confirmations()
                    .into_iter()
                    .map(Confirmation::from)
                    .collect(),
            },
            tips: Tips {
                healthy: count(healthy),
                semi_lazy: count(semi_lazy),
                lazy: count(lazy),
            },
            resources: Resources {
                resident_memory_bytes: crate::process::ProcStat::of_self()
                    .map(|s| s.resident_bytes()),
                data_dir_bytes: data_dir.and_then(|d| ledger_engine::disk_usage(d).ok()),
            },
            refusals: refusals
                .totals()
                .into_iter()
                .map(|((status, reason), count)| Refusal {
                    status,
                    reason,
                    count,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confirmation_is_reported_in_microseconds() {
        let c = Confirmation::from(RecentConfirmation {
            index: 7,
            timestamp: 1_700_000_000,
            referenced: 12,
            took: std::time::Duration::from_micros(1_234_567),
        });
        assert_eq!(
            serde_json::to_value(c).expect("json"),
            serde_json::json!({"index":7,"timestamp":1_700_000_000u32,"referenced":12,"confirmationUs":1_234_567})
        );
    }
}
