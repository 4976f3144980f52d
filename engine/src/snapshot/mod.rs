//! TIP-35 version 2 snapshot files, byte-compatible with Hornet (docs/snapshots-pruning.md
//! §1, §3.2-3.3, §6; layout as read and written here: engine/FORMAT-snapshot.md).
//!
//! Pure: this module reads and writes files and knows nothing of the engine's state.
//! - `format`: the records and their encodings;
//! - `read`: strict streaming readers ([`FullReader`], [`DeltaReader`]);
//! - `write`: streaming writers ([`FullWriter`], [`DeltaWriter`]) over `atomic`, the
//!   temporary file that is fsynced and renamed into place;
//! - `load`: the import rules, from files to a [`LoadedSnapshot`];
//! - `hash`: Hornet's ledger hashes ([`SnapHash`]);
//! - `fuzzing`: the oracle of the `snapshot_file` fuzz target (hidden).

mod atomic;
mod error;
mod format;
#[doc(hidden)]
pub mod fuzzing;
mod hash;
mod load;
mod read;
mod source;
mod write;

pub use atomic::temporary_path;
pub(crate) use atomic::AtomicFile;
pub use error::SnapshotError;
pub use format::{
    DeltaHeader, FullHeader, MilestoneDiff, ProtocolParametersOption, SnapshotOutput,
    SnapshotSpent, Treasury, DELTA_HEADER_LEN, FORMAT_VERSION, FULL_HEADER_FIXED_LEN,
    MAX_OBJECT_LEN, MAX_PARAMS_LEN, OUTPUT_RECORD_FIXED_LEN, SPENT_RECORD_FIXED_LEN, TYPE_DELTA,
    TYPE_FULL,
};
pub use hash::{
    ledger_state_hashes, protocol_parameters_hash, rfc3339_utc, SnapHash, TreasuryJson,
    MAX_ACTIVATION_RANGE,
};
pub use load::{load, load_from, LoadedSnapshot};
pub use read::{DeltaReader, FullReader};
pub use write::{DeltaWriter, FullWriter};
