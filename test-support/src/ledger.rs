//! Ledger fixtures shared by the engine's tests and the benches: the testnet protocol
//! parameters of the TIP vectors, basic outputs, and a genesis holding given outputs.

use ledger_codec::stardust::{Address, Output, ProtocolParameters, RentStructure};
use ledger_codec::types::Hash32;
use serde_json::Value;

/// The v2 protocol parameters the TIP-20 vectors were made with (network `testnet`).
pub fn testnet_params() -> ProtocolParameters {
    ProtocolParameters {
        version: 2,
        network_name: "testnet".into(),
        bech32_hrp: "rms".into(),
        min_pow_score: 1500,
        below_max_depth: 15,
        rent_structure: RentStructure {
            v_byte_cost: 100,
            v_byte_factor_data: 1,
            v_byte_factor_key: 10,
        },
        token_supply: 1_813_620_509_061_365,
    }
}

/// A basic output of `amount` to the Ed25519 address `to`.
pub fn basic_to(amount: u64, to: [u8; 32]) -> Output<'static> {
    Output::basic(amount, Address::Ed25519(Hash32::from(to)))
}

/// The genesis JSON `base` (e.g. the engine's dev genesis) with its outputs replaced by
/// `outputs` (output id, output).
///
/// # Panics
/// When `base` is not a JSON object or an output does not serialize (test fixtures only).
pub fn genesis_with_outputs(
    base: &str,
    outputs: impl IntoIterator<Item = ([u8; 34], Output<'static>)>,
) -> String {
    let outputs: Vec<Value> = outputs
        .into_iter()
        .map(|(id, output)| {
            serde_json::json!({
                "outputId": format!("0x{}", hex::encode(id)),
                "output": serde_json::to_value(output).expect("a fixture output serializes"),
            })
        })
        .collect();
    let mut g: Value = serde_json::from_str(base).expect("genesis JSON");
    g["outputs"] = Value::Array(outputs);
    g.to_string()
}
