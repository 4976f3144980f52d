//! The last confirmations the node made itself (not replayed at start), with the time each
//! took: the same `took` as the "milestone confirmed" log line and the
//! `ledger_confirmation_duration_seconds` histogram, kept per milestone for the dashboard's
//! milestone list (`server/api/dashboard/`).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

/// Confirmations kept: the dashboard lists the latest few; 15 minutes of 1 s milestones
/// would be 900, more than a list shows.
pub const RECENT_CONFIRMATIONS: usize = 64;

/// One milestone this node confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecentConfirmation {
    /// Milestone index.
    pub index: u32,
    /// Milestone timestamp (Unix seconds).
    pub timestamp: u32,
    /// Blocks its white flag referenced.
    pub referenced: u32,
    /// Time from the start of its confirmation to the ledger update.
    pub took: Duration,
}

/// The newest [`RECENT_CONFIRMATIONS`] confirmations, oldest first.
#[derive(Debug, Default)]
pub(crate) struct RecentConfirmations {
    ring: Mutex<VecDeque<RecentConfirmation>>,
}

impl RecentConfirmations {
    /// Records `c`, dropping the oldest beyond the bound.
    pub(crate) fn push(&self, c: RecentConfirmation) {
        let mut ring = self
            .ring
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ring.len() == RECENT_CONFIRMATIONS {
            ring.pop_front();
        }
        ring.push_back(c);
    }

    /// The kept confirmations, oldest first.
    pub(crate) fn list(&self) -> Vec<RecentConfirmation> {
        self.ring
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_in_order_up_to_the_bound() {
        let recent = RecentConfirmations::default();
        assert!(recent.list().is_empty());
        for index in 1..=u32::try_from(RECENT_CONFIRMATIONS + 5).expect("small") {
            recent.push(RecentConfirmation {
                index,
                timestamp: index * 10,
                referenced: index % 3,
                took: Duration::from_millis(u64::from(index)),
            });
        }
        let list = recent.list();
        assert_eq!(list.len(), RECENT_CONFIRMATIONS);
        assert_eq!(list.first().map(|c| c.index), Some(6));
        assert_eq!(
            list.last().map(|c| c.index),
            Some(u32::try_from(RECENT_CONFIRMATIONS + 5).expect("small"))
        );
        assert!(list.windows(2).all(|w| w[0].index + 1 == w[1].index));
    }
}
