//! Verifying the sealed segments' index files after the open: the open checks each in O(1)
//! (header, lengths, seal), and their sections (16 bytes per record) are read here, by the
//! background scrub (`log-idx-scrub`, newest segment first) or by the first lookup that needs
//! a segment, whichever comes first (a segment's check runs once; see
//! [`Segment::checked_index`]). No lookup ever uses an unverified index. A damaged index file
//! is logged, rebuilt from a scan of its segment (frames verified, as the open would) and
//! replaced crash-safely; if the segment's scan fails too, none of its records is served.

use super::idx_file::IdxState;
use super::open::{scan_segment, Tail};
use super::*;

/// Index files rebuilt and segments left unindexed since the open began.
#[derive(Debug, Default)]
pub(super) struct IdxReport {
    pub(super) rebuilt: Vec<(u32, String)>,
    pub(super) unusable: Vec<(u32, String)>,
}

impl Log {
    /// The state of the sealed segments' index files: how many were verified since the open,
    /// how many are still unverified, which were rebuilt (at open or since) and which
    /// segments could not be indexed.
    pub fn index_health(&self) -> IndexHealth {
        let inner = &*self.inner;
        let active = inner
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .segment();
        let segs = inner.segments.load();
        let unverified = (0..active)
            .filter_map(|n| segs.get(n))
            .filter(|seg| seg.is_unverified())
            .count();
        let report = lock(&inner.idx_report);
        IndexHealth {
            verified: inner.idx_verified.load(Ordering::Acquire),
            unverified: u32::try_from(unverified).unwrap_or(u32::MAX),
            rebuilt: report.rebuilt.clone(),
            unusable: report.unusable.clone(),
            scrub_done: inner.scrub_done.load(Ordering::Acquire),
        }
    }
}

impl Inner {
    /// The verified (or rebuilt) index of the sealed segment `seg`, verifying it first if
    /// nobody has yet; `None` if the segment is not sealed or could not be indexed.
    pub(super) fn sealed_index<'s>(&self, seg: &'s Segment) -> Option<&'s SealedIndex> {
        seg.checked_index(|installed| self.verify_index(seg, installed))
    }

    /// Verifies the sections of `installed`, the index file of `seg` found at open; rebuilds
    /// it if they are damaged.
    fn verify_index(&self, seg: &Segment, installed: &SealedIndex) -> IdxState {
        let checked = installed.verify_sections();
        self.idx_verified.fetch_add(1, Ordering::AcqRel);
        let Err(why) = checked else {
            return IdxState::Verified;
        };
        let path = self.dir.join(SealedIndex::file_name(seg.number));
        tracing::error!(
            file = %path.display(),
            reason = why,
            "damaged index file of a sealed segment: not used, rebuilding it from the segment"
        );
        self.rebuild_index(seg, installed.segment_size(), why)
    }

    /// Scans the sealed segment `seg` (every frame verified, ending in a matching seal) and
    /// writes its index file anew (`.idx.tmp`, fsync, rename, directory fsync); if the file
    /// cannot be written the rebuilt index is kept in memory. A segment whose scan fails is
    /// reported unusable: none of its records is served.
    fn rebuild_index(&self, seg: &Segment, size: u32, why: &str) -> IdxState {
        let n = seg.number;
        let mut offsets = Vec::new();
        let scanned = scan_segment(seg, &mut offsets);
        let problem = match scanned {
            Ok((Tail::Sealed(seal_at), _)) => {
                let rebuilt =
                    SealedIndex::write(&self.dir, seg, &offsets, seal_at, size).or_else(|e| {
                        tracing::error!(
                            segment = %seg.path.display(),
                            error = %e,
                            "cannot write the rebuilt index file: kept in memory"
                        );
                        SealedIndex::in_memory(seg, &offsets, seal_at, size)
                    });
                match rebuilt {
                    Ok(rebuilt) => {
                        tracing::warn!(
                            segment = %seg.path.display(),
                            reason = why,
                            "index file rebuilt from its segment"
                        );
                        lock(&self.idx_report).rebuilt.push((n, why.to_owned()));
                        return IdxState::Rebuilt(rebuilt);
                    }
                    Err(e) => e.to_string(),
                }
            }
            Ok((Tail::End(at), _)) => corrupted(n, at, "segment is not sealed").to_string(),
            Ok((Tail::Torn(at, torn), _)) => corrupted(n, at, torn).to_string(),
            Err(e) => e.to_string(),
        };
        tracing::error!(
            segment = %seg.path.display(),
            index_damage = why,
            error = %problem,
            "sealed segment cannot be re-indexed: its records are not served \
             (`ledger-node tools salvage` copies what is intact, see engine/FORMAT.md)"
        );
        lock(&self.idx_report)
            .unusable
            .push((n, format!("{why}; {problem}")));
        IdxState::Unusable
    }

    /// The background scrub: verifies the index of each sealed segment below `active`, newest
    /// first, at the lowest CPU priority, until done or told to stop.
    pub(super) fn run_scrub(&self, active: u32) {
        // Per thread on Linux: the scrub yields to everything else. Best effort.
        let _ = rustix::process::nice(19);
        for n in (self.first.load(Ordering::Acquire)..active).rev() {
            if self.scrub_stop.load(Ordering::Acquire) {
                return;
            }
            if let Some(seg) = self.segments.load().get_arc(n) {
                let _ = self.sealed_index(seg);
            }
        }
        self.scrub_done.store(true, Ordering::Release);
        self.build_sealed_keys();
    }
}
