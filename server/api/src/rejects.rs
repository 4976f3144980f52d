//! Refused block submissions, counted by reason and logged as one summary line per period
//! (an operator sees what is being refused without a log line per request); the counts since
//! the start are kept too, for the dashboard's stats.

use std::{
    collections::BTreeMap,
    sync::{Arc, Weak},
    time::Duration,
};

use parking_lot::Mutex;

use crate::error::ApiError;

/// How often a non-empty summary is logged.
pub const SUMMARY_PERIOD: Duration = Duration::from_secs(10);
/// Longest reason text kept as a key (the rest of a message names ids and indexes).
const MAX_REASON: usize = 80;
/// Most distinct reasons kept per period; further ones count as "other".
const MAX_REASONS: usize = 32;

/// Counts of refused submits per (status, reason) since the last summary, and since the start.
#[derive(Debug, Default)]
pub struct RejectTally {
    counts: Mutex<BTreeMap<(u16, String), u64>>,
    totals: Mutex<BTreeMap<(u16, String), u64>>,
}

/// Adds one to `key` in `counts`; beyond [`MAX_REASONS`] distinct reasons, a new one counts as
/// "other".
fn count(counts: &mut BTreeMap<(u16, String), u64>, key: (u16, String)) {
    let key = if counts.len() >= MAX_REASONS && !counts.contains_key(&key) {
        (key.0, "other".to_owned())
    } else {
        key
    };
    *counts.entry(key).or_default() += 1;
}

impl RejectTally {
    /// Counts one refused submit.
    pub fn record(&self, error: &ApiError) {
        let key = (error.status().as_u16(), reason_class(&error.to_string()));
        count(&mut self.totals.lock(), key.clone());
        count(&mut self.counts.lock(), key);
    }

    /// Every refusal since the start as `((status, reason), count)`, by status and reason.
    pub fn totals(&self) -> Vec<((u16, String), u64)> {
        self.totals
            .lock()
            .iter()
            .map(|(k, n)| (k.clone(), *n))
            .collect()
    }

    /// The counts since the last call, emptied; `None` when nothing was refused.
    pub fn take_summary(&self) -> Option<String> {
        let counts = std::mem::take(&mut *self.counts.lock());
        if counts.is_empty() {
            return None;
        }
        let parts: Vec<String> = counts
            .iter()
            .map(|((status, reason), n)| format!("{n} × {status} {reason}"))
            .collect();
        Some(parts.join("; "))
    }

    /// Logs the summary every [`SUMMARY_PERIOD`] while the tally is alive (a Tokio task).
    pub fn spawn_logger(self: &Arc<Self>) {
        let weak: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(SUMMARY_PERIOD);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(tally) = weak.upgrade() else { return };
                if let Some(summary) = tally.take_summary() {
                    tracing::info!(
                        period_s = SUMMARY_PERIOD.as_secs(),
                        "refused block submissions: {summary}"
                    );
                }
            }
        });
    }
}

/// The reason of an error message without its particulars: the text before the first
/// `: ` after the generic `invalid block: ` prefix (ids, indexes and offsets come after it).
fn reason_class(message: &str) -> String {
    let rest = message.strip_prefix("invalid block: ").unwrap_or(message);
    let reason = rest.split(": ").next().unwrap_or(rest);
    reason.chars().take(MAX_REASON).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_by_reason_and_the_summary_empties_the_tally() {
        let tally = RejectTally::default();
        assert_eq!(tally.take_summary(), None);
        let deep = |p: &str| {
            ApiError::bad_request(format!(
                "invalid block: block is below max depth: parent {p} has oldest cone root index 1"
            ))
        };
        tally.record(&deep("0x01"));
        tally.record(&deep("0x02"));
        tally.record(&ApiError::unavailable("storage full"));
        assert_eq!(
            tally.take_summary().as_deref(),
            Some("2 × 400 block is below max depth; 1 × 503 storage full")
        );
        assert_eq!(tally.take_summary(), None);
        // The totals outlive the summaries.
        tally.record(&ApiError::unavailable("storage full"));
        assert_eq!(
            tally.totals(),
            vec![
                ((400, "block is below max depth".to_owned()), 2),
                ((503, "storage full".to_owned()), 2),
            ]
        );
    }

    #[test]
    fn distinct_reasons_are_bounded() {
        let tally = RejectTally::default();
        for i in 0..100 {
            tally.record(&ApiError::bad_request(format!("reason {i}")));
        }
        let summary = tally.take_summary().unwrap_or_default();
        assert_eq!(
            summary.matches(" × 400 ").count(),
            MAX_REASONS + 1,
            "{summary}"
        );
        assert!(summary.contains("× 400 other"), "{summary}");
        let totals = tally.totals();
        assert_eq!(totals.len(), MAX_REASONS + 1);
        assert!(totals.contains(&((400, "other".to_owned()), 100 - MAX_REASONS as u64)));
    }
}
