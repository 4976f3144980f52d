//! The arrival signature cache: transaction signatures verified in batches as blocks arrive.

use super::*;

impl Engine {
    /// Verifies the signatures of arrived transaction blocks (outside the
    /// state lock) and caches the verdicts for white-flag.
    pub(super) fn verify_arrived(&self, arrived: &[(BlockId, u64)]) {
        // Blocks a milestone referenced meanwhile were verified by white-flag.
        let arrived: Vec<(BlockId, u64)> = {
            let st = self.read();
            arrived
                .iter()
                .filter(|(id, _)| {
                    st.tangle
                        .get(id)
                        .is_some_and(|m| m.view.referenced_by.is_none())
                })
                .copied()
                .collect()
        };
        let verdicts = whiteflag::verify_arrived(&self.log, &arrived);
        let mut st = self.write();
        for (id, mask) in verdicts {
            st.tangle.set_signature_verdicts(&id, mask);
        }
    }

    /// Verifies the signatures of the transaction blocks submitted since the
    /// last arrival batch now, instead of when the batch fills or at confirmation.
    pub fn flush_signature_checks(&self) {
        let arrived = std::mem::take(&mut self.write().unverified);
        self.verify_arrived(&arrived);
    }

    /// The signature verdicts cached for the unreferenced block `id` (bit i:
    /// unlock i holds a valid signature), if it was verified on arrival.
    pub fn cached_signature_verdicts(&self, id: &BlockId) -> Option<u128> {
        self.read().tangle.signature_verdicts(id)
    }

    /// Forgets every signature verdict checked on arrival, so the next
    /// confirmation verifies every signature of its cone (benchmarks, tests).
    pub fn forget_signature_verdicts(&self) {
        let mut st = self.write();
        st.unverified.clear();
        st.tangle.clear_signature_verdicts();
    }
}
