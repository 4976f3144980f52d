//! What peering tells about its peers: plain values, read by the REST layer (which turns them
//! into its JSON shapes) and by the gossip metrics.

use ledger_codec::gossip::Heartbeat;

/// One peer as the registry knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    /// libp2p peer id, base58.
    pub id: String,
    /// Transport addresses, without the `/p2p/<id>` part.
    pub multi_addresses: Vec<String>,
    /// Alias, if one was given.
    pub alias: Option<String>,
    /// How the peer is known.
    pub relation: Relation,
    /// Whether it has a connection.
    pub connected: bool,
    /// Its last heartbeat (zeros before the first one) and traffic counters.
    pub gossip: GossipInfo,
}

/// How a peer is known; its JSON name is Hornet's (`known`, `unknown`, `autopeered`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// Configured (static).
    Known,
    /// Inbound, not configured.
    Unknown,
    /// Found by autopeering.
    Autopeered,
}

/// A peer's gossip state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GossipInfo {
    /// The last heartbeat; zeros before the first one arrives.
    pub heartbeat: Heartbeat,
    /// Traffic counters, kept across reconnects.
    pub stats: PeerStats,
}

/// Gossip traffic counters of a peer, kept across reconnects. Their JSON names are Hornet's
/// (`PeerGossipMetrics`: `newBlocks`, `sentHeartbeats`, …; u64, as iota-sdk reads them), so the
/// API's peer answers carry them as they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerStats {
    /// New blocks received.
    pub new_blocks: u64,
    /// Already known blocks received.
    pub known_blocks: u64,
    /// All blocks received.
    pub received_blocks: u64,
    /// Block requests received.
    pub received_block_requests: u64,
    /// Milestone requests received.
    pub received_milestone_requests: u64,
    /// Heartbeats received.
    pub received_heartbeats: u64,
    /// Blocks sent.
    pub sent_blocks: u64,
    /// Block requests sent.
    pub sent_block_requests: u64,
    /// Milestone requests sent.
    pub sent_milestone_requests: u64,
    /// Heartbeats sent.
    pub sent_heartbeats: u64,
    /// Packets dropped.
    pub dropped_packets: u64,
}
