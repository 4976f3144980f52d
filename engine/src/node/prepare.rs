//! Completing a client's v2 block before it is stored: the rules of `docs/decisions.md` that come
//! before the proof of work, in their order (protocol version, the parentless rules, parents
//! the node fills in, network id), then whether the node has to search a nonce. Syntax,
//! signatures and milestone rules follow in [`Engine::submit_v2_nowait`]; gossip hands
//! complete blocks straight to that.

use ledger_codec::pow;
use ledger_codec::stardust::{layout, Transaction};
use ledger_codec::types::FixedList;

use super::*;

/// A v2 block as a client sent it.
#[derive(Debug, Clone)]
pub enum V2Draft {
    /// Wire bytes. Zero parents asks the node to fill them in (the nonce must then be 0).
    Bytes(Vec<u8>),
    /// The fields of the JSON form.
    Fields(Box<V2Fields>),
}

/// The fields of a v2 block's JSON form. No parents (or an empty list) asks the node to fill
/// them in (the nonce must then be 0); a nonce of 0 asks for PoW where the network needs it.
#[derive(Debug, Clone)]
pub struct V2Fields {
    /// `protocolVersion` as given.
    pub protocol_version: u64,
    /// `parents`, if given.
    pub parents: Option<FixedList<'static, 32>>,
    /// The payload.
    pub payload: Option<Payload<'static>>,
    /// `nonce` (0 when missing).
    pub nonce: u64,
}

/// What the proof-of-work step has to do with a prepared block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowStep {
    /// The block is done: its score suffices, or it is exempt, or it fails syntax next.
    Done,
    /// The nonce is 0 and the score too low: search a nonce for the first `body_len` bytes
    /// ([`Engine::mine`]) and write it at the end.
    Search {
        /// Bytes before the nonce.
        body_len: usize,
    },
}

/// A block that passed the rules before PoW.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// Its wire bytes (parents filled in where asked).
    pub bytes: Vec<u8>,
    /// Whether the node chose the parents.
    pub parents_filled: bool,
    /// The proof-of-work step still to do.
    pub pow: PowStep,
}

impl Engine {
    /// Runs the rules before PoW on a client's block and fills in its parents where asked.
    ///
    /// # Errors
    /// [`SubmitError::Invalid`] for a broken rule (the message names it);
    /// [`SubmitError::Unavailable`] when parents are asked for and there is no tip.
    pub fn prepare_v2(&self, draft: V2Draft) -> Result<Prepared, SubmitError> {
        let (bytes, parents_filled) = match draft {
            V2Draft::Bytes(bytes) => self.prepare_bytes(bytes)?,
            V2Draft::Fields(f) => {
                let V2Fields {
                    protocol_version,
                    parents,
                    payload,
                    nonce,
                } = *f;
                self.prepare_fields(protocol_version, parents, payload, nonce)?
            }
        };
        let pow = self.pow_step(&bytes)?;
        Ok(Prepared {
            bytes,
            parents_filled,
            pow,
        })
    }

    fn check_version(&self, version: u64) -> Result<u8, SubmitError> {
        let want = self.params().version;
        u8::try_from(version)
            .ok()
            .filter(|v| *v == want)
            .ok_or_else(|| {
                InvalidBlock::DraftProtocolVersion {
                    version,
                    expected: want,
                }
                .into()
            })
    }

    /// Parents for a block that came without: up to 4 tips.
    fn fill_parents(&self) -> Result<Vec<BlockId>, SubmitError> {
        let parents = self.select_parents();
        if parents.is_empty() {
            return Err(Unavailable::NoTips.into());
        }
        Ok(parents)
    }

    /// Network id rule (before PoW, as Hornet): a transaction must name this network.
    fn check_network(&self, block: &Block<'_>) -> Result<(), SubmitError> {
        if let Some(Payload::Transaction(tx)) = &block.payload {
            let want = self.params().network_id();
            if tx.essence.network_id != want {
                return Err(InvalidBlock::NetworkId {
                    network_id: tx.essence.network_id,
                    expected: want,
                }
                .into());
            }
        }
        Ok(())
    }

    /// Wire bytes: version byte first; zero parents get them filled in (nonce 0 required).
    fn prepare_bytes(&self, body: Vec<u8>) -> Result<(Vec<u8>, bool), SubmitError> {
        let Some(version) = layout::protocol_version(&body) else {
            return Err(InvalidBlock::EmptyBody.into());
        };
        self.check_version(u64::from(version))?;
        let no_parents = layout::parent_count(&body) == Some(0);
        let bytes = if no_parents {
            let nonce = layout::nonce(&body).ok_or(InvalidBlock::TooShort)?;
            if nonce != 0 {
                return Err(InvalidBlock::ParentlessWithNonce.into());
            }
            let parents = self.fill_parents()?;
            layout::fill_parents(&body, &parents).map_err(InternalError::FillParents)?
        } else {
            body
        };
        // The network id needs a transaction's essence; a block that does not decode fails
        // syntax after PoW.
        if layout::payload_kind(&bytes) == Some(Transaction::KIND) {
            if let Ok(block) = Block::decode(&bytes) {
                self.check_network(&block)?;
            }
        }
        Ok((bytes, no_parents))
    }

    /// The JSON form's fields: version, parentless rules, parents, network; then the bytes.
    fn prepare_fields(
        &self,
        version: u64,
        parents: Option<FixedList<'static, 32>>,
        payload: Option<Payload<'static>>,
        nonce: u64,
    ) -> Result<(Vec<u8>, bool), SubmitError> {
        let protocol_version = self.check_version(version)?;
        let no_parents = parents.as_ref().is_none_or(|p| p.is_empty());
        let parents = match parents {
            Some(p) if !no_parents => p,
            _ => {
                if nonce != 0 {
                    return Err(InvalidBlock::ParentlessWithNonce.into());
                }
                self.fill_parents()?.into()
            }
        };
        let block = Block {
            protocol_version,
            parents,
            payload,
            nonce,
        };
        self.check_network(&block)?;
        // Encoding refuses a list or byte string longer than its prefix can count (it has no
        // wire form); every other syntax rule is the decoder's, checked on these bytes after
        // the PoW step, as Hornet orders them.
        let bytes = block.to_bytes().map_err(InvalidBlock::Encode)?;
        Ok((bytes, no_parents))
    }

    /// The PoW rule: enough score, or nonce 0 (the node searches one), else refused;
    /// milestones are exempt.
    fn pow_step(&self, bytes: &[u8]) -> Result<PowStep, SubmitError> {
        let min_score = self.params().min_pow_score;
        if min_score == 0 || pow::meets_score(bytes, min_score) {
            return Ok(PowStep::Done);
        }
        let Some(body) = pow::pow_body(bytes) else {
            return Err(InvalidBlock::TooShort.into());
        };
        let body_len = body.len();
        if pow::block_nonce(bytes) != Some(0) {
            return Err(InvalidBlock::PowScore {
                score: pow::pow_score(bytes),
                min_score,
            }
            .into());
        }
        // Milestone payloads are exempt; a block that does not decode fails syntax next.
        match Block::decode(bytes) {
            Ok(b) if matches!(b.payload, Some(Payload::Milestone(_))) => Ok(PowStep::Done),
            Err(_) => Ok(PowStep::Done),
            Ok(_) => Ok(PowStep::Search { body_len }),
        }
    }
}
