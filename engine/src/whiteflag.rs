//! White-flag confirmation (TIP-2): the milestone's not-yet-referenced past
//! cone in post-order, each transaction checked against the ledger as it
//! stands after the transactions before it, conflicts recorded, Merkle
//! roots (TIP-4) over the referenced and the applied blocks.
//!
//! Computing a confirmation changes nothing; the caller applies the result
//! atomically (ledger, rich list, tangle metadata) once it is accepted.

// foldhash-backed: output ids are hashed for every input and output of the cone.
use hashbrown::{HashMap as FastMap, HashSet as FastSet};

use rayon::prelude::*;

use ledger_codec::ed25519::{verify_batch_chunked, Item};
use ledger_codec::stardust::{
    inputs_commitment_of_bytes, merkle_root, output_spans, Block, Output, Payload,
    ProtocolParameters, Transaction, Unlock,
};
use ledger_codec::Codec;

use crate::error::EngineError;
use crate::indexer::IndexEntry;
use crate::log::{Location, Log, Reader};
use crate::semantic::{self, ConflictReason};
use crate::tangle::{BlockId, Inclusion, Tangle};
use crate::utxo::{BytesLoc, Ledger, NewOutput, OutputId};

/// The outcome of white-flag over one milestone's cone.
#[derive(Debug, Clone, Default)]
pub struct Confirmation {
    /// Newly referenced blocks in white-flag order with their inclusion state.
    pub referenced: Vec<(BlockId, Inclusion)>,
    /// Merkle root of all referenced block ids.
    pub inclusion_root: [u8; 32],
    /// Merkle root of the blocks whose transaction was applied.
    pub applied_root: [u8; 32],
    /// Outputs created by applied transactions.
    pub created: Vec<NewOutput>,
    /// Outputs consumed, with the spending transaction.
    pub consumed: Vec<(OutputId, [u8; 32])>,
    /// Rich-list balance changes (owner, signed amount).
    pub balance_changes: Vec<([u8; 33], i128)>,
    /// Indexer entries of the created outputs (treasury outputs have none).
    pub indexed: Vec<IndexEntry>,
}

/// The address that owns an output for the rich list: Basic/NFT the
/// address unlock condition, Alias the state controller, Foundry the
/// immutable alias address; none for treasury outputs.
pub fn owning_address(o: &Output<'_>) -> Option<[u8; 33]> {
    use ledger_codec::stardust::UnlockCondition as Uc;
    let want: fn(&Uc<'_>) -> bool = match o {
        Output::Basic(_) | Output::Nft(_) => |u| matches!(u, Uc::Address(_)),
        Output::Alias(_) => |u| matches!(u, Uc::StateControllerAddress(_)),
        Output::Foundry(_) => |u| matches!(u, Uc::ImmutableAliasAddress(_)),
        Output::Treasury(_) => return None,
    };
    o.unlock_conditions()
        .iter()
        .find(|u| want(u))
        .and_then(|u| match u {
            Uc::Address(a) | Uc::StateControllerAddress(a) | Uc::ImmutableAliasAddress(a) => {
                Some(a.to_array())
            }
            _ => None,
        })
}

struct TxBlock<'a> {
    block_id: BlockId,
    record: u64,
    block: Block<'a>,
    // Id of the transaction it carries.
    tx_id: [u8; 32],
}

/// Reads the output bytes at `loc` (a block record in the log, or genesis).
pub fn output_bytes<'a>(
    log: &'a Reader<'_>,
    genesis_blob: &'a [u8],
    loc: BytesLoc,
) -> Option<&'a [u8]> {
    let base = if loc.record == BytesLoc::GENESIS {
        genesis_blob
    } else {
        log.read(Location::from_u64(loc.record))?.bytes()
    };
    base.get(loc.offset as usize..(loc.offset as usize).checked_add(loc.len as usize)?)
}

/// Transaction blocks gathered on arrival before their signatures are
/// verified together (one parallel batch; the submit that fills it waits).
pub const ARRIVAL_BATCH: usize = 512;

/// Largest batch equation on the confirmation path. Larger chunks are
/// cheaper per signature (Pippenger), but a chunk holding an invalid
/// signature is re-checked one signature at a time.
const CONE_CHUNK_MAX: usize = 512;

/// Chunk length for `n` signatures of a cone: a few chunks per thread,
/// between the library's default and [`CONE_CHUNK_MAX`].
fn cone_chunk(n: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    n.div_ceil(4 * threads)
        .clamp(ledger_codec::ed25519::CHUNK_SIZE, CONE_CHUNK_MAX)
}

/// Chunk length for an arrival batch of `n` signatures: one chunk per
/// thread (the batch is small), within the same bounds.
fn arrival_chunk(n: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    n.div_ceil(threads)
        .clamp(ledger_codec::ed25519::CHUNK_SIZE, CONE_CHUNK_MAX)
}

/// Whether `mask` (a signature verdict mask) holds a valid signature for unlock `i`.
fn mask_ok(mask: u128, i: usize) -> bool {
    u32::try_from(i)
        .ok()
        .and_then(|i| mask.checked_shr(i))
        .is_some_and(|m| m & 1 == 1)
}

/// Verifies every Signature Unlock of `txs` over its essence signing hash
/// (ZIP-215; batched and parallel, a failed batch re-checked one by one):
/// one mask per transaction, bit i set when unlock i holds a valid signature.
/// An essence with no wire form has no signing hash, so none of its signatures is valid.
fn signature_masks(txs: &[&Transaction<'_>], chunk: fn(usize) -> usize) -> Vec<u128> {
    let hashes: Vec<Option<[u8; 32]>> = txs
        .par_iter()
        .map(|tx| tx.essence.signing_hash().ok())
        .collect();
    let mut items = Vec::new();
    let mut owners = Vec::new();
    for (ti, (tx, h)) in txs.iter().zip(&hashes).enumerate() {
        let Some(h) = h else { continue };
        for (ui, u) in tx.unlocks.iter().enumerate() {
            if let Unlock::Signature(s) = u {
                items.push(Item::new(&s.public_key, h, &s.signature));
                owners.push((ti, ui));
            }
        }
    }
    let verdicts = verify_batch_chunked(&items, chunk(items.len()));
    let mut masks = vec![0u128; txs.len()];
    for ((ti, ui), ok) in owners.into_iter().zip(verdicts) {
        let bit = u32::try_from(ui).ok().and_then(|u| 1u128.checked_shl(u));
        if let (true, Some(bit), Some(m)) = (ok, bit, masks.get_mut(ti)) {
            *m |= bit;
        }
    }
    masks
}

/// Verifies the signatures of transaction blocks that just arrived (`(block
/// id, log record)`), for [`Tangle::set_signature_verdicts`]. Blocks that
/// cannot be read or carry no transaction are left out; white-flag verifies
/// whatever has no cached verdict.
pub fn verify_arrived(log: &Log, arrived: &[(BlockId, u64)]) -> Vec<(BlockId, u128)> {
    let log = log.reader();
    let blocks: Vec<(BlockId, Block<'_>)> = arrived
        .iter()
        .filter_map(|(id, record)| {
            let rec = log.read(Location::from_u64(*record))?;
            Some((*id, Block::decode(rec.bytes()).ok()?))
        })
        .collect();
    let (ids, txs): (Vec<BlockId>, Vec<&Transaction<'_>>) = blocks
        .iter()
        .filter_map(|(id, b)| match &b.payload {
            Some(Payload::Transaction(tx)) => Some((*id, tx)),
            _ => None,
        })
        .unzip();
    ids.into_iter()
        .zip(signature_masks(&txs, arrival_chunk))
        .collect()
}

/// True when `block` carries a transaction with a Signature Unlock (worth
/// verifying on arrival).
pub fn has_signatures(block: &Block<'_>) -> bool {
    matches!(&block.payload, Some(Payload::Transaction(tx))
        if tx.unlocks.iter().any(|u| matches!(u, Unlock::Signature(_))))
}

/// What white-flag reads: block metadata, the ledger, block bytes and genesis output bytes.
#[derive(Clone, Copy)]
pub struct Store<'a> {
    /// Block metadata and the cone walk.
    pub tangle: &'a Tangle,
    /// The ledger before the milestone.
    pub ledger: &'a Ledger,
    /// Whether an output the ledger no longer holds was spent (its row stored on disk):
    /// such an input is "already spent", not "not found".
    pub spent: Option<&'a (dyn Fn(&OutputId) -> bool + Sync)>,
    /// The block log.
    pub log: &'a Log,
    /// Serialized genesis outputs.
    pub genesis_blob: &'a [u8],
}

impl Confirmation {
    /// Computes the two Merkle roots from the referenced blocks (in white-flag order) and
    /// the applied ones. Needs nothing but the confirmation: callers holding the node's
    /// state lock for [`walk`] compute them after letting it go.
    pub fn set_roots(&mut self) {
        let ids: Vec<BlockId> = self.referenced.iter().map(|(id, _)| *id).collect();
        let applied: Vec<BlockId> = self
            .referenced
            .iter()
            .filter(|(_, inclusion)| *inclusion == Inclusion::Included)
            .map(|(id, _)| *id)
            .collect();
        (self.inclusion_root, self.applied_root) =
            rayon::join(|| merkle_root(&ids), || merkle_root(&applied));
    }
}

/// Runs white-flag over the unreferenced past cone of `parents`; `index_outputs` also reads
/// the indexer entries of the created outputs. The Merkle roots are zero until
/// [`Confirmation::set_roots`].
///
/// # Errors
/// [`EngineError::Inconsistent`] when a block of the cone is missing from
/// the tangle or the log, or a stored block does not decode.
pub fn walk(
    store: Store<'_>,
    parents: &[BlockId],
    timestamp: u32,
    params: &ProtocolParameters,
    index_outputs: bool,
) -> Result<Confirmation, EngineError> {
    let Store {
        tangle,
        ledger,
        spent,
        log,
        genesis_blob,
    } = store;
    // Keeps the segments it reads mapped until the confirmation is computed.
    let reader = log.reader();
    let log = &reader;
    let cone = tangle.unreferenced_cone(parents).map_err(|id| {
        EngineError::Inconsistent(format!(
            "block 0x{} of the cone is unknown",
            hex::encode(id)
        ))
    })?;

    // Which blocks of the cone carry a transaction: the tangle hashed each transaction's id
    // when its block arrived, so only those blocks need reading and decoding. Both vectors
    // are collected in place (rayon's collect of `Result`s gathers pieces and copies them
    // together, which at tens of thousands of blocks a milestone faults in fresh pages).
    let mut classified = Vec::with_capacity(cone.len());
    cone.par_iter()
        .map(|id| {
            let meta = tangle
                .get(id)
                .ok_or_else(|| EngineError::Inconsistent("cone block without metadata".into()))?;
            Ok(meta.transaction_id.map(|tx_id| (*id, meta.record, tx_id)))
        })
        .collect_into_vec(&mut classified);
    let carries_tx: Vec<Option<(BlockId, u64, [u8; 32])>> =
        classified.into_iter().collect::<Result<_, EngineError>>()?;
    let tx_cone: Vec<(BlockId, u64, [u8; 32])> = carries_tx.iter().flatten().copied().collect();

    // Decode the transaction blocks (zero-copy views into the log), in parallel.
    let mut decoded = Vec::with_capacity(tx_cone.len());
    tx_cone
        .par_iter()
        .map(|&(block_id, record, tx_id)| {
            let rec = log.read(Location::from_u64(record)).ok_or_else(|| {
                EngineError::Inconsistent(format!(
                    "block 0x{} missing from the log",
                    hex::encode(block_id)
                ))
            })?;
            let block = Block::decode(rec.bytes()).map_err(|e| {
                EngineError::Inconsistent(format!("stored block 0x{}: {e}", hex::encode(block_id)))
            })?;
            Ok(TxBlock {
                block_id,
                record,
                tx_id,
                block,
            })
        })
        .collect_into_vec(&mut decoded);
    let blocks: Vec<TxBlock<'_>> = decoded.into_iter().collect::<Result<_, EngineError>>()?;

    // Signature verdicts: cached on arrival where present, the rest
    // verified here in parallel batches.
    let mut sig_masks: Vec<u128> = vec![0; blocks.len()];
    let mut cold_at = Vec::new();
    let mut cold_txs: Vec<&Transaction<'_>> = Vec::new();
    for (bi, (b, mask)) in blocks.iter().zip(sig_masks.iter_mut()).enumerate() {
        if let Some(Payload::Transaction(tx)) = &b.block.payload {
            match tangle.signature_verdicts(&b.block_id) {
                Some(m) => *mask = m,
                None => {
                    cold_at.push(bi);
                    cold_txs.push(tx);
                }
            }
        }
    }
    for (bi, m) in cold_at
        .into_iter()
        .zip(signature_masks(&cold_txs, cone_chunk))
    {
        if let Some(mask) = sig_masks.get_mut(bi) {
            *mask = m;
        }
    }

    let mut out = Confirmation::default();
    // Outputs created earlier in this milestone, borrowed from their blocks.
    let mut created: FastMap<OutputId, &Output<'_>> = FastMap::new();
    let mut consumed_here: FastSet<OutputId> = FastSet::new();
    let ctx = semantic::Context {
        milestone_timestamp: timestamp,
        params,
    };

    let mut tx_blocks = blocks.iter().enumerate();
    for (block_id, carries) in cone.iter().zip(&carries_tx) {
        if carries.is_none() {
            out.referenced.push((*block_id, Inclusion::NoTransaction));
            continue;
        }
        let transaction = tx_blocks.next().and_then(|(bi, b)| match &b.block.payload {
            Some(Payload::Transaction(tx)) => Some((bi, b, tx)),
            _ => None,
        });
        let Some((bi, b, tx)) = transaction else {
            return Err(EngineError::Inconsistent(format!(
                "block 0x{} has a transaction id but carries no transaction",
                hex::encode(block_id)
            )));
        };
        let tx_id = b.tx_id;
        debug_assert_eq!(*block_id, b.block_id);
        debug_assert_eq!(Ok(tx_id), tx.id());
        let mut inputs: Vec<(ledger_codec::stardust::OutputId, Output<'_>)> =
            Vec::with_capacity(tx.essence.inputs.len());
        let mut conflict = None;
        // The consumed outputs' stored bytes, while every input comes from the ledger.
        let mut stored: Option<Vec<&[u8]>> = Some(Vec::with_capacity(tx.essence.inputs.len()));
        for input in tx.essence.inputs.iter() {
            let Ok(oid) = input.output_id() else {
                conflict = Some(ConflictReason::InputNotFound);
                break;
            };
            let key = oid.to_array();
            if consumed_here.contains(&key) {
                conflict = Some(ConflictReason::InputSpentInThisMilestone);
                break;
            }
            if let Some(o) = created.get(&key) {
                inputs.push((oid, (*o).clone()));
                stored = None;
                continue;
            }
            match ledger.get(&key) {
                None if spent.is_some_and(|was_spent| was_spent(&key)) => {
                    conflict = Some(ConflictReason::InputAlreadySpent);
                    break;
                }
                None => {
                    conflict = Some(ConflictReason::InputNotFound);
                    break;
                }
                Some(row) if row.spent.is_some() => {
                    conflict = Some(ConflictReason::InputAlreadySpent);
                    break;
                }
                Some(row) => {
                    let bytes = output_bytes(log, genesis_blob, row.loc).ok_or_else(|| {
                        EngineError::Inconsistent(format!("bytes of output {oid} are missing"))
                    })?;
                    let o = Output::decode(bytes).map_err(|e| {
                        EngineError::Inconsistent(format!("stored output {oid}: {e}"))
                    })?;
                    inputs.push((oid, o));
                    if let Some(s) = &mut stored {
                        s.push(bytes);
                    }
                }
            }
        }
        let verdict = match conflict {
            Some(c) => Err(c),
            None => {
                let mask = sig_masks.get(bi).copied().unwrap_or(0);
                let ok = |ui: usize| mask_ok(mask, ui);
                // Inputs all read from the ledger: their commitment from the stored bytes.
                let commitment = stored.map(inputs_commitment_of_bytes);
                semantic::validate_transaction_committed(tx, &tx_id, &inputs, commitment, &ctx, &ok)
            }
        };
        if let Err(reason) = verdict {
            out.referenced
                .push((b.block_id, Inclusion::Conflicting(reason.code())));
            continue;
        }
        for (oid, o) in &inputs {
            let key = oid.to_array();
            consumed_here.insert(key);
            out.consumed.push((key, tx_id));
            if let Some(owner) = owning_address(o) {
                out.balance_changes.push((owner, -i128::from(o.amount())));
            }
        }
        let spans = output_spans(&b.block).unwrap_or_default();
        for ((index, o), span) in (0u16..).zip(&tx.essence.outputs).zip(spans) {
            let key = ledger_codec::stardust::OutputId {
                transaction_id: tx_id,
                index,
            }
            .to_array();
            let offset = u32::try_from(span.start).unwrap_or(u32::MAX);
            let len = u32::try_from(span.len()).unwrap_or(u32::MAX);
            let owner = owning_address(o);
            if let Some(a) = owner {
                out.balance_changes.push((a, i128::from(o.amount())));
            }
            if index_outputs {
                out.indexed.extend(IndexEntry::of(&key, o));
            }
            out.created.push(NewOutput {
                output_id: key,
                block_id: b.block_id,
                amount: o.amount(),
                owner,
                loc: BytesLoc {
                    record: b.record,
                    offset,
                    len,
                },
            });
            created.insert(key, o);
        }
        out.referenced.push((b.block_id, Inclusion::Included));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_masks_answer_per_unlock() {
        assert!(mask_ok(0b101, 0));
        assert!(!mask_ok(0b101, 1));
        assert!(mask_ok(0b101, 2));
        assert!(mask_ok(1 << 127, 127));
        assert!(!mask_ok(u128::MAX, 128), "no unlock beyond the mask");
        assert!(!mask_ok(u128::MAX, usize::MAX));
    }

    #[test]
    fn cone_chunks_stay_between_the_default_and_the_cap() {
        assert_eq!(cone_chunk(0), ledger_codec::ed25519::CHUNK_SIZE);
        assert_eq!(cone_chunk(100), ledger_codec::ed25519::CHUNK_SIZE);
        assert_eq!(cone_chunk(1_000_000), CONE_CHUNK_MAX);
    }
}
