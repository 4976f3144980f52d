//! Output ID proofs (TIP-45 §output id proof): a Merkle audit path from one
//! output to the transaction's output commitment.

use serde::{Deserialize, Serialize};

use crate::error::{Context, Error, Result};
use crate::hash::{blake2b256, blake2b256_parts};
use crate::nova::json::tagged_enum;
use crate::nova::transaction::{with_slot, Transaction};
use crate::types::{Bytes, Hash32};
use crate::wire::{fields_codec, Codec, Len, Prefix, Reader};

const HASH: Len = Len::new(Prefix::U8, 32, 32);
/// Deepest proof accepted (128 outputs need 7 levels; keeps recursion bounded).
const MAX_DEPTH: usize = 16;

/// An inner node: left and right subtrees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofNode<'a> {
    /// Left subtree.
    pub l: Box<ProofTree<'a>>,
    /// Right subtree.
    pub r: Box<ProofTree<'a>>,
}

/// A subtree given only by its hash (1) or the proven leaf's hash (2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofHash<'a> {
    /// `u8`-prefixed 32-byte hash.
    pub hash: Bytes<'a>,
}

fields_codec!(ProofHash<'a> { hash: "hash" with HASH });

/// A proof tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProofTree<'a> {
    /// Inner node (0).
    Node(ProofNode<'a>),
    /// Hash of a subtree not on the path (1).
    Leaf(ProofHash<'a>),
    /// Hash of the proven output leaf (2).
    Value(ProofHash<'a>),
}

tagged_enum!(ProofTree, "proof node", { 0 => Node, 1 => Leaf, 2 => Value });

thread_local! {
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl<'a> Codec<'a> for ProofNode<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let depth = DEPTH.with(|d| d.get());
        if depth >= MAX_DEPTH {
            return Err(Error::invalid("output id proof too deep"));
        }
        DEPTH.with(|d| d.set(depth + 1));
        let res = (|| {
            let l = Box::new(ProofTree::read(r).at("l")?);
            let r_ = Box::new(ProofTree::read(r).at("r")?);
            Ok(Self { l, r: r_ })
        })();
        DEPTH.with(|d| d.set(depth));
        res
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        self.l.encode(out)?;
        self.r.encode(out)?;
        Ok(())
    }
}

fn arr(b: &Bytes<'_>) -> [u8; 32] {
    let mut a = [0u8; 32];
    if b.len() == 32 {
        a.copy_from_slice(b.as_slice());
    }
    a
}

impl ProofTree<'_> {
    /// The root hash this tree stands for.
    pub fn root(&self) -> [u8; 32] {
        match self {
            Self::Node(n) => blake2b256_parts(&[&[1u8], &n.l.root(), &n.r.root()]),
            Self::Leaf(h) | Self::Value(h) => arr(&h.hash),
        }
    }

    /// The proven leaf hash, if the tree holds exactly one value node.
    pub fn value(&self) -> Option<[u8; 32]> {
        match self {
            Self::Node(n) => match (n.l.value(), n.r.value()) {
                (Some(v), None) | (None, Some(v)) => Some(v),
                _ => None,
            },
            Self::Leaf(_) => None,
            Self::Value(h) => Some(arr(&h.hash)),
        }
    }
}

fn leaf_hash(out: &crate::nova::Output<'_>) -> Result<[u8; 32]> {
    let mut b = vec![0u8];
    out.encode(&mut b)?;
    Ok(blake2b256(&b))
}

fn build(leaves: &[[u8; 32]], index: usize) -> ProofTree<'static> {
    if leaves.len() <= 1 {
        return ProofTree::Value(ProofHash {
            hash: leaves.first().copied().unwrap_or_default().to_vec().into(),
        });
    }
    let k = crate::merkle::split_point(leaves.len());
    let leaf = |h: [u8; 32]| {
        Box::new(ProofTree::Leaf(ProofHash {
            hash: h.to_vec().into(),
        }))
    };
    let (l, r) = if index < k {
        (
            Box::new(build(&leaves[..k], index)),
            leaf(crate::merkle::root_of_leaf_hashes(&leaves[k..])),
        )
    } else {
        (
            leaf(crate::merkle::root_of_leaf_hashes(&leaves[..k])),
            Box::new(build(&leaves[k..], index - k)),
        )
    };
    ProofTree::Node(ProofNode { l, r })
}

/// An output id proof: slot, output index, transaction commitment and the
/// audit path to the output commitment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputIdProof<'a> {
    /// Transaction creation slot.
    pub slot: u32,
    /// Index of the proven output.
    pub output_index: u16,
    /// Transaction commitment.
    pub transaction_commitment: Hash32<'a>,
    /// Audit path.
    pub output_commitment_proof: ProofTree<'a>,
}

fields_codec!(OutputIdProof<'a> { slot: "slot", output_index: "outputIndex", transaction_commitment: "transactionCommitment", output_commitment_proof: "outputCommitmentProof" });

impl OutputIdProof<'_> {
    /// Builds the proof for output `index` of `tx`; `None` when there is no such output.
    ///
    /// # Errors
    /// As [`Codec::encode`]: the transaction must have a wire form.
    pub fn new(tx: &Transaction<'_>, index: u16) -> Result<Option<OutputIdProof<'static>>> {
        let leaves = tx
            .outputs
            .iter()
            .map(leaf_hash)
            .collect::<Result<Vec<[u8; 32]>>>()?;
        if usize::from(index) >= leaves.len() {
            return Ok(None);
        }
        Ok(Some(OutputIdProof {
            slot: tx.creation_slot,
            output_index: index,
            transaction_commitment: tx.transaction_commitment()?.into(),
            output_commitment_proof: build(&leaves, usize::from(index)),
        }))
    }

    /// The output id the proof commits to: `H(tc || root) || slot || index`.
    pub fn output_id(&self) -> [u8; 38] {
        let root = self.output_commitment_proof.root();
        let tx_id = with_slot(
            blake2b256_parts(&[self.transaction_commitment.as_array(), &root]),
            self.slot,
        );
        Transaction::output_id(&tx_id, self.output_index)
    }

    /// True when the proof proves `output` under output id `output_id`.
    pub fn proves(&self, output: &crate::nova::Output<'_>, output_id: &[u8; 38]) -> bool {
        leaf_hash(output).is_ok_and(|h| self.output_commitment_proof.value() == Some(h))
            && &self.output_id() == output_id
    }
}
