//! TEMP stub (replaced by wip/sem).
use ledger_codec::stardust::{Output, OutputId, ProtocolParameters, Transaction};
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ConflictReason {
    InputAlreadySpent = 1,
    InputSpentInThisMilestone = 2,
    InputNotFound = 3,
    AmountMismatch = 4,
}
impl ConflictReason {
    pub fn code(self) -> u8 {
        self as u8
    }
}
pub struct Context<'p> {
    pub milestone_timestamp: u32,
    pub params: &'p ProtocolParameters,
}
pub fn validate_transaction(
    tx: &Transaction<'_>,
    _tx_id: &[u8; 32],
    inputs: &[(OutputId, Output<'_>)],
    _ctx: &Context<'_>,
    _signature_ok: &dyn Fn(usize) -> bool,
) -> Result<(), ConflictReason> {
    let a: u64 = inputs.iter().map(|(_, o)| o.amount()).sum();
    let b: u64 = tx.essence.outputs.iter().map(|o| o.amount()).sum();
    if a == b {
        Ok(())
    } else {
        Err(ConflictReason::AmountMismatch)
    }
}
