//! The libp2p protocol id of the gossip stream.

use crate::stardust::network_id;

/// `/iota-gossip/<networkId>/1.0.0` for a network name, with the decimal
/// network id of [`network_id`] (`shimmer` →
/// `/iota-gossip/14364762045254553490/1.0.0`).
pub fn protocol_id(network_name: &str) -> String {
    protocol_id_for_network_id(network_id(network_name))
}

/// `/iota-gossip/<networkId>/1.0.0` for a network id.
pub fn protocol_id_for_network_id(network_id: u64) -> String {
    format!("/iota-gossip/{network_id}/1.0.0")
}
