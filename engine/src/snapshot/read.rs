//! Strict streaming readers of full and delta snapshot files (docs/snapshots-pruning.md §1,
//! reader rules §1.10): the header, then one output, diff or solid entry point at a time, with
//! every length capped before allocating, exact reads, and the framing checked (a diff ends at
//! its start plus its length, a delta's SEP offset is where its last diff ends, the file ends
//! after its last SEP, the counts agree with the content).

use std::io::Read;

use ledger_codec::{
    stardust::{Milestone, Output, ProtocolParameters},
    Codec,
};

use super::{
    format::{
        DeltaHeader, FullHeader, MilestoneDiff, ProtocolParametersOption, SnapshotOutput,
        SnapshotSpent, Treasury, DELTA_HEADER_LEN, FORMAT_VERSION, MAX_OBJECT_LEN,
        OUTPUT_RECORD_FIXED_LEN, SPENT_RECORD_FIXED_LEN, TYPE_DELTA, TYPE_FULL,
    },
    source::Source,
    SnapshotError,
};

/// What kind of file a reader reads, for its messages.
const FULL: &str = "full snapshot";
const DELTA: &str = "delta snapshot";

/// Reads the version and type bytes, refusing anything but version 2 and `kind`.
fn read_kind<R: Read>(src: &mut Source<R>, kind: u8) -> Result<(), SnapshotError> {
    let version = src.u8("the version byte")?;
    if version != FORMAT_VERSION {
        return Err(src.error_at(
            0,
            format!("unsupported snapshot version {version} (only version {FORMAT_VERSION})"),
        ));
    }
    let found = src.u8("the type byte")?;
    if found != kind {
        let name = |t: u8| match t {
            TYPE_FULL => "full (0)".to_owned(),
            TYPE_DELTA => "delta (1)".to_owned(),
            t => format!("unknown ({t})"),
        };
        return Err(src.error_at(
            1,
            format!("snapshot type is {}, expected {}", name(found), name(kind)),
        ));
    }
    Ok(())
}

/// One output record; the output must decode under the syntactic rules and not be a treasury
/// output. `what` names the list for the message.
fn read_output<R: Read>(src: &mut Source<R>, what: &str) -> Result<SnapshotOutput, SnapshotError> {
    let start = src.pos();
    let output_id = src.array::<34>("an output id")?;
    let block_id = src.array::<32>("a block id")?;
    let booked_index = src.u32("a booked milestone index")?;
    let booked_timestamp = src.u32("a booked milestone timestamp")?;
    let len = src.u32("an output length")?;
    let output = src.bytes(len, MAX_OBJECT_LEN, "output")?;
    let record = SnapshotOutput {
        output_id,
        block_id,
        booked_index,
        booked_timestamp,
        output,
    };
    let problem = match record.decode() {
        Ok(Output::Treasury(_)) => Some("a treasury output (type 2) is not a ledger output".into()),
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    };
    match problem {
        Some(p) => Err(src.error_at(
            start,
            format!("{what} output 0x{}: {p}", hex::encode(output_id)),
        )),
        None => Ok(record),
    }
}

/// The count of a record list inside a diff, refused if that many records of at least
/// `min_len` bytes cannot fit before the diff's `end`.
fn read_count<R: Read>(
    src: &mut Source<R>,
    end: u64,
    min_len: u64,
    what: &str,
) -> Result<u32, SnapshotError> {
    let at = src.pos();
    let n = src.u32(what)?;
    let room = end.saturating_sub(src.pos());
    if u64::from(n).saturating_mul(min_len) > room {
        return Err(src.error_at(
            at,
            format!(
                "{what} {n} does not fit the {room} bytes left of the milestone diff (each at \
                 least {min_len})"
            ),
        ));
    }
    Ok(n)
}

/// One milestone diff record (§1.6), checked to end exactly at its start plus its length.
fn read_diff<R: Read>(src: &mut Source<R>) -> Result<MilestoneDiff, SnapshotError> {
    let start = src.pos();
    let total = src.u32("a milestone diff length")?;
    let end = start + u64::from(total);
    let payload_len = src.u32("a milestone payload length")?;
    let payload_at = src.pos();
    let milestone_payload = src.bytes(payload_len, MAX_OBJECT_LEN, "milestone payload")?;
    let has_receipt = {
        let milestone = Milestone::decode(&milestone_payload)
            .map_err(|e| src.error_at(payload_at, format!("milestone payload: {e}")))?;
        milestone.receipt().is_some()
    };
    if src.pos() > end {
        return Err(src.error_at(
            start,
            format!("milestone diff length {total} is shorter than its milestone payload"),
        ));
    }
    let treasury_input = if has_receipt {
        Some(Treasury {
            milestone_id: src.array("the receipt's treasury input milestone id")?,
            amount: src.u64("the receipt's treasury input amount")?,
        })
    } else {
        None
    };
    let n = read_count(src, end, OUTPUT_RECORD_FIXED_LEN, "created count")?;
    let mut created = Vec::with_capacity(n as usize);
    for _ in 0..n {
        created.push(read_output(src, "created")?);
    }
    let n = read_count(src, end, SPENT_RECORD_FIXED_LEN, "consumed count")?;
    let mut consumed = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let output = read_output(src, "consumed")?;
        let spent_by = src.array("a spending transaction id")?;
        consumed.push(SnapshotSpent { output, spent_by });
    }
    if src.pos() != end {
        return Err(src.error_at(
            start,
            format!(
                "milestone diff length says {total} bytes, its content has {}",
                src.pos() - start
            ),
        ));
    }
    Ok(MilestoneDiff {
        milestone_payload,
        treasury_input,
        created,
        consumed,
    })
}

/// Reads a diff and checks its index against the previous one's: strictly descending in a
/// full file (Hornet's reader stops at the first index ≤ target), strictly ascending in a
/// delta.
fn read_ordered_diff<R: Read>(
    src: &mut Source<R>,
    last: &mut Option<u32>,
    descending: bool,
) -> Result<MilestoneDiff, SnapshotError> {
    let start = src.pos();
    let diff = read_diff(src)?;
    let index = diff
        .index()
        .map_err(|e| src.error_at(start, format!("milestone payload: {e}")))?;
    if let Some(prev) = *last {
        let in_order = if descending {
            index < prev
        } else {
            index > prev
        };
        if !in_order {
            let order = if descending {
                "descending"
            } else {
                "ascending"
            };
            return Err(src.error_at(
                start,
                format!(
                    "milestone diff {index} follows diff {prev}: diffs must be strictly {order}"
                ),
            ));
        }
    }
    *last = Some(index);
    Ok(diff)
}

/// A streaming reader of a full snapshot file: [`FullReader::new`] reads the header, then
/// [`FullReader::next_output`], [`FullReader::next_diff`] and [`FullReader::next_sep`] return
/// the records in file order (a call skips, after reading and checking them, whatever the
/// earlier calls left), and [`FullReader::finish`] checks that the file ends after its last
/// solid entry point.
pub struct FullReader<R> {
    src: Source<R>,
    header: FullHeader,
    parameters: ProtocolParameters,
    /// The header parameters with a zero byte cost: outputs in the UTXO section are not
    /// checked for storage deposits (Hornet `StreamFullSnapshotDataFrom`).
    ledger_check: ProtocolParameters,
    outputs_left: u64,
    diffs_left: u32,
    seps_left: u16,
    last_diff: Option<u32>,
}

impl<R: Read> FullReader<R> {
    /// Reads and checks the header: version 2, type full, a parameters option whose lengths
    /// agree and whose parameters decode.
    ///
    /// # Errors
    /// A short or malformed header.
    pub fn new(inner: R) -> Result<Self, SnapshotError> {
        let mut src = Source::new(inner, FULL);
        read_kind(&mut src, TYPE_FULL)?;
        let genesis_milestone_index = src.u32("the genesis milestone index")?;
        let target_milestone_index = src.u32("the target milestone index")?;
        let target_milestone_timestamp = src.u32("the target milestone timestamp")?;
        let target_milestone_id = src.array("the target milestone id")?;
        let ledger_milestone_index = src.u32("the ledger milestone index")?;
        let treasury = Treasury {
            milestone_id: src.array("the treasury milestone id")?,
            amount: src.u64("the treasury amount")?,
        };
        let protocol_parameters = read_parameters_option(&mut src)?;
        let output_count = src.u64("the outputs count")?;
        let diff_count = src.u32("the milestone diffs count")?;
        let sep_count = src.u16("the solid entry points count")?;
        if ledger_milestone_index < target_milestone_index {
            return Err(src.error_at(
                46,
                format!(
                    "ledger milestone index {ledger_milestone_index} is below the target \
                     milestone index {target_milestone_index}"
                ),
            ));
        }
        let parameters = protocol_parameters
            .parameters()
            .map_err(|e| src.error_at(101, format!("protocol parameters: {e}")))?;
        let mut ledger_check = parameters.clone();
        ledger_check.rent_structure.v_byte_cost = 0;
        src.set_section("outputs");
        Ok(Self {
            src,
            header: FullHeader {
                genesis_milestone_index,
                target_milestone_index,
                target_milestone_timestamp,
                target_milestone_id,
                ledger_milestone_index,
                treasury,
                protocol_parameters,
                output_count,
                diff_count,
                sep_count,
            },
            parameters,
            ledger_check,
            outputs_left: output_count,
            diffs_left: diff_count,
            seps_left: sep_count,
            last_diff: None,
        })
    }

    /// The header.
    pub fn header(&self) -> &FullHeader {
        &self.header
    }

    /// The header's protocol parameters, decoded.
    pub fn parameters(&self) -> &ProtocolParameters {
        &self.parameters
    }

    /// Bytes read so far.
    pub fn position(&self) -> u64 {
        self.src.pos()
    }

    /// The next output of the UTXO section, checked against the header's parameters without
    /// the storage deposit (docs/snapshots-pruning.md §1.4); `None` after the last.
    ///
    /// # Errors
    /// A short or invalid record.
    pub fn next_output(&mut self) -> Result<Option<SnapshotOutput>, SnapshotError> {
        if self.outputs_left == 0 {
            return Ok(None);
        }
        let at = self.src.pos();
        let record = read_output(&mut self.src, "ledger")?;
        if let Err(e) = record.validated(&self.ledger_check) {
            return Err(self.src.error_at(
                at,
                format!("ledger output 0x{}: {e}", hex::encode(record.output_id)),
            ));
        }
        self.outputs_left -= 1;
        Ok(Some(record))
    }

    /// The next milestone diff (strictly descending indexes); `None` after the last.
    ///
    /// # Errors
    /// A short or invalid record, or one out of order.
    pub fn next_diff(&mut self) -> Result<Option<MilestoneDiff>, SnapshotError> {
        while self.next_output()?.is_some() {}
        if self.diffs_left == 0 {
            return Ok(None);
        }
        self.src.set_section("milestone diffs");
        let diff = read_ordered_diff(&mut self.src, &mut self.last_diff, true)?;
        self.diffs_left -= 1;
        Ok(Some(diff))
    }

    /// The next solid entry point; `None` after the last.
    ///
    /// # Errors
    /// A short file, or an invalid diff before the SEPs.
    pub fn next_sep(&mut self) -> Result<Option<[u8; 32]>, SnapshotError> {
        while self.next_diff()?.is_some() {}
        read_sep(&mut self.src, &mut self.seps_left)
    }

    /// Reads what is left and checks that the file ends after its last solid entry point.
    ///
    /// # Errors
    /// Any error of the records left, or bytes after the last SEP.
    pub fn finish(&mut self) -> Result<(), SnapshotError> {
        while self.next_sep()?.is_some() {}
        self.src.expect_end()
    }
}

/// The full header's protocol parameters option: u16 length L ‖ type 1 ‖ u32 activation ‖ u8
/// version ‖ u16 P ‖ P bytes, with L = 8 + P.
fn read_parameters_option<R: Read>(
    src: &mut Source<R>,
) -> Result<ProtocolParametersOption, SnapshotError> {
    let at = src.pos();
    let len = src.u16("the protocol parameters option length")?;
    let kind = src.u8("the protocol parameters option type")?;
    if kind != 1 {
        return Err(src.error_at(
            at + 2,
            format!("protocol parameters option has type {kind}, expected 1"),
        ));
    }
    let activation_index = src.u32("the protocol parameters activation index")?;
    let protocol_version = src.u8("the protocol version")?;
    let params_len = src.u16("the protocol parameters length")?;
    if u32::from(len) != u32::from(params_len) + 8 {
        return Err(src.error_at(
            at,
            format!(
                "protocol parameters option length {len} does not match its {params_len} bytes \
                 of parameters (expected {})",
                u32::from(params_len) + 8
            ),
        ));
    }
    let params = src.bytes(
        u32::from(params_len),
        u32::from(u16::MAX),
        "protocol parameters",
    )?;
    Ok(ProtocolParametersOption {
        activation_index,
        protocol_version,
        params,
    })
}

/// The next of `left` solid entry points (in the "solid entry points" section).
fn read_sep<R: Read>(
    src: &mut Source<R>,
    left: &mut u16,
) -> Result<Option<[u8; 32]>, SnapshotError> {
    if *left == 0 {
        return Ok(None);
    }
    src.set_section("solid entry points");
    let sep = src.array("a solid entry point")?;
    *left -= 1;
    Ok(Some(sep))
}

/// A streaming reader of a delta snapshot file, used like [`FullReader`] without outputs.
pub struct DeltaReader<R> {
    src: Source<R>,
    header: DeltaHeader,
    diffs_left: u32,
    seps_left: u16,
    seps_started: bool,
    last_diff: Option<u32>,
}

impl<R: Read> DeltaReader<R> {
    /// Reads and checks the 56-byte header.
    ///
    /// # Errors
    /// A short or malformed header.
    pub fn new(inner: R) -> Result<Self, SnapshotError> {
        let mut src = Source::new(inner, DELTA);
        read_kind(&mut src, TYPE_DELTA)?;
        let header = DeltaHeader {
            target_milestone_index: src.u32("the target milestone index")?,
            target_milestone_timestamp: src.u32("the target milestone timestamp")?,
            full_snapshot_target_milestone_id: src
                .array("the full snapshot target milestone id")?,
            sep_file_offset: src.i64("the SEP file offset")?,
            diff_count: src.u32("the milestone diffs count")?,
            sep_count: src.u16("the solid entry points count")?,
        };
        if header.sep_file_offset < DELTA_HEADER_LEN as i64 {
            return Err(src.error_at(
                42,
                format!(
                    "SEP file offset {} is inside the {DELTA_HEADER_LEN}-byte header",
                    header.sep_file_offset
                ),
            ));
        }
        src.set_section("milestone diffs");
        Ok(Self {
            src,
            diffs_left: header.diff_count,
            seps_left: header.sep_count,
            header,
            seps_started: false,
            last_diff: None,
        })
    }

    /// The header.
    pub fn header(&self) -> &DeltaHeader {
        &self.header
    }

    /// Bytes read so far.
    pub fn position(&self) -> u64 {
        self.src.pos()
    }

    /// The next milestone diff (strictly ascending indexes); `None` after the last.
    ///
    /// # Errors
    /// A short or invalid record, or one out of order.
    pub fn next_diff(&mut self) -> Result<Option<MilestoneDiff>, SnapshotError> {
        if self.diffs_left == 0 {
            return Ok(None);
        }
        let diff = read_ordered_diff(&mut self.src, &mut self.last_diff, false)?;
        self.diffs_left -= 1;
        Ok(Some(diff))
    }

    /// The next solid entry point; `None` after the last. The first call checks that the
    /// diffs ended exactly at the header's SEP file offset.
    ///
    /// # Errors
    /// A short file, an invalid diff, or SEPs not at the SEP file offset.
    pub fn next_sep(&mut self) -> Result<Option<[u8; 32]>, SnapshotError> {
        while self.next_diff()?.is_some() {}
        if !self.seps_started {
            self.seps_started = true;
            let at = self.src.pos();
            if i64::try_from(at).ok() != Some(self.header.sep_file_offset) {
                return Err(self.src.error_at(
                    at,
                    format!(
                        "the milestone diffs end at byte {at}, but the header's SEP file offset \
                         is {}",
                        self.header.sep_file_offset
                    ),
                ));
            }
        }
        read_sep(&mut self.src, &mut self.seps_left)
    }

    /// Reads what is left and checks that the file ends after its last solid entry point.
    ///
    /// # Errors
    /// Any error of the records left, or bytes after the last SEP.
    pub fn finish(&mut self) -> Result<(), SnapshotError> {
        while self.next_sep()?.is_some() {}
        self.src.expect_end()
    }
}
