//! The seam between the REST layer and the node behind it.
//!
//! Handlers only see [`NodeApi`] (through [`crate::state::AppState::node`]): the ledger engine
//! and peering behind it ([`EngineNode`]), or [`StubNode`] where no ledger is needed. The
//! engine is reached through this seam only ([`crate::state::AppState::engine`]).

use std::sync::Arc;

use ledger_engine::Engine;

use ledger_p2p::{P2p, PeerInfo};

/// The node's name in `/info` and in the metrics' `iota_node_app_info`.
pub const NODE_NAME: &str = "ledger-node";

/// An error the node reports to the REST layer that is not the client's fault.
pub type NodeError = Box<dyn std::error::Error + Send + Sync>;

/// What the REST layer asks of the node. Calls are cheap and synchronous; a handler that
/// triggers heavy work (PoW, waiting for a milestone) runs it with
/// `tokio::task::spawn_blocking` on a clone of the `Arc`.
pub trait NodeApi: Send + Sync + 'static {
    /// Whether the node is healthy (`GET /health`, `info.status.isHealthy`). A dev node that
    /// runs its own coordinator is healthy without peers.
    fn is_healthy(&self) -> bool;

    /// The ledger engine, unless this is a node without a ledger (tests of the HTTP layer
    /// alone, whose ledger routes answer 503).
    fn engine(&self) -> Option<&Arc<Engine>> {
        None
    }

    /// The peering service, unless peering is off.
    fn p2p(&self) -> Option<&P2p> {
        None
    }

    /// The node's peers (`GET /api/core/v2/peers`); empty without peering.
    fn peers(&self) -> Vec<PeerInfo> {
        self.p2p().map(P2p::peers).unwrap_or_default()
    }

    /// Called once when the server has stopped accepting requests: flush everything to disk.
    fn shutdown(&self) -> Result<(), NodeError> {
        Ok(())
    }
}

/// A node without a ledger: healthy when it runs its own coordinator, no peers, nothing to
/// flush. Used by the binary until the engine is attached, and by tests of the HTTP layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StubNode {
    /// Whether the node runs its own coordinator (the dev default).
    pub coordinator: bool,
}

impl NodeApi for StubNode {
    fn is_healthy(&self) -> bool {
        self.coordinator
    }
}

/// The real node: the ledger engine behind the API, and its peering.
#[derive(Debug, Clone)]
pub struct EngineNode {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Peering (`None` with `--no-p2p`).
    pub p2p: Option<P2p>,
}

impl NodeApi for EngineNode {
    fn is_healthy(&self) -> bool {
        // A node with its own coordinator is synced by construction and healthy alone.
        // Otherwise Hornet's rule: synced, the latest milestone recent (5 minutes), and,
        // when peering, at least one connected peer.
        if self.engine.has_coordinator() {
            return true;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let recent = self
            .engine
            .latest_milestone()
            .is_some_and(|m| now.saturating_sub(u64::from(m.timestamp)) < 300);
        let peered = self.p2p.as_ref().is_none_or(|p| p.connected_peers() > 0);
        recent && peered && self.engine.sync_state().is_synced()
    }

    fn engine(&self) -> Option<&Arc<Engine>> {
        Some(&self.engine)
    }

    fn p2p(&self) -> Option<&P2p> {
        self.p2p.as_ref()
    }

    fn shutdown(&self) -> Result<(), NodeError> {
        self.engine.shutdown().map_err(|e| Box::new(e) as NodeError)
    }
}
