//! The peer routes in Hornet's shape (`GET`/`POST /api/core/v2/peers`,
//! `GET`/`DELETE /api/core/v2/peers/{peerId}`), with both heartbeat key spellings.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use serde::{Deserialize, Serialize};

use ledger_p2p::{P2p, P2pError, PeerInfo, PeerStats, Relation};

use crate::{error::ApiError, state::AppState};

/// One peer, as in Hornet's `PeerResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Peer {
    /// libp2p peer id.
    pub id: String,
    /// Transport addresses, without the `/p2p/<id>` part.
    pub multi_addresses: Vec<String>,
    /// Alias; omitted when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// How the peer is known.
    pub relation: Relation,
    /// Whether it is connected.
    pub connected: bool,
    /// Gossip state; omitted when no gossip stream exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gossip: Option<Gossip>,
}

/// Gossip state of a peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gossip {
    /// The last heartbeat; zeros before the first one arrives (never null).
    pub heartbeat: Heartbeat,
    /// Traffic counters.
    pub metrics: PeerStats,
}

/// A peer's last heartbeat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "HeartbeatJson")]
pub struct Heartbeat {
    /// Its solid milestone index.
    pub solid_milestone_index: u32,
    /// Its pruned milestone index.
    pub pruned_milestone_index: u32,
    /// Its latest milestone index.
    pub latest_milestone_index: u32,
    /// Its connected peers.
    pub connected_peers: u32,
    /// Its synced peers.
    pub synced_peers: u32,
}

/// A heartbeat as read from JSON: either spelling of the peer counts (or both).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeartbeatJson {
    solid_milestone_index: u32,
    pruned_milestone_index: u32,
    latest_milestone_index: u32,
    connected_neighbors: Option<u32>,
    synced_neighbors: Option<u32>,
    connected_peers: Option<u32>,
    synced_peers: Option<u32>,
}

impl From<HeartbeatJson> for Heartbeat {
    fn from(j: HeartbeatJson) -> Self {
        Self {
            solid_milestone_index: j.solid_milestone_index,
            pruned_milestone_index: j.pruned_milestone_index,
            latest_milestone_index: j.latest_milestone_index,
            connected_peers: j.connected_neighbors.or(j.connected_peers).unwrap_or(0),
            synced_peers: j.synced_neighbors.or(j.synced_peers).unwrap_or(0),
        }
    }
}

/// Emits both spellings of the peer counts: our contract's `connectedNeighbors` /
/// `syncedNeighbors` first, then Hornet's and iota-sdk's `connectedPeers` / `syncedPeers`.
impl Serialize for Heartbeat {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Heartbeat", 7)?;
        s.serialize_field("solidMilestoneIndex", &self.solid_milestone_index)?;
        s.serialize_field("prunedMilestoneIndex", &self.pruned_milestone_index)?;
        s.serialize_field("latestMilestoneIndex", &self.latest_milestone_index)?;
        s.serialize_field("connectedNeighbors", &self.connected_peers)?;
        s.serialize_field("syncedNeighbors", &self.synced_peers)?;
        s.serialize_field("connectedPeers", &self.connected_peers)?;
        s.serialize_field("syncedPeers", &self.synced_peers)?;
        s.end()
    }
}

impl From<PeerInfo> for Peer {
    fn from(p: PeerInfo) -> Self {
        let hb = p.gossip.heartbeat;
        Self {
            id: p.id,
            multi_addresses: p.multi_addresses,
            alias: p.alias,
            relation: p.relation,
            connected: p.connected,
            gossip: Some(Gossip {
                heartbeat: Heartbeat {
                    solid_milestone_index: hb.solid_milestone_index,
                    pruned_milestone_index: hb.pruned_milestone_index,
                    latest_milestone_index: hb.latest_milestone_index,
                    connected_peers: u32::from(hb.connected_peers),
                    synced_peers: u32::from(hb.synced_peers),
                },
                metrics: p.gossip.stats,
            }),
        }
    }
}

/// `GET /api/core/v2/peers`: the node's peers (a JSON array; empty without peering).
pub async fn list(State(state): State<AppState>) -> Json<Vec<Peer>> {
    Json(state.node.peers().into_iter().map(Peer::from).collect())
}

/// `GET /api/core/v2/peers/{peerId}`: one peer; 404 when it is not listed.
pub async fn get_one(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Peer>, ApiError> {
    state
        .node
        .p2p()
        .and_then(|p| p.peer(&id))
        .map(|p| Json(Peer::from(p)))
        .ok_or_else(|| ApiError::not_found(format!("peer {id} not found")))
}

/// The body of `POST /api/core/v2/peers`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddPeer {
    /// Full multiaddr ending in `/p2p/<peerId>`.
    pub multi_address: String,
    /// Optional alias.
    #[serde(default)]
    pub alias: Option<String>,
}

fn p2p(state: &AppState) -> Result<&P2p, ApiError> {
    state
        .node
        .p2p()
        .ok_or_else(|| ApiError::unavailable("peering is off on this node (--no-p2p)"))
}

/// `POST /api/core/v2/peers`: adds a known peer, persists it in `peering.json` and dials it
/// (201 with the peer); 400 for a bad multiaddr or the node's own id.
pub async fn add(
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<Peer>), ApiError> {
    let req: AddPeer = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("invalid peer request: {e}")))?;
    let alias = req.alias.filter(|a| !a.is_empty());
    match p2p(&state)?.add_peer(&req.multi_address, alias).await {
        Ok(peer) => Ok((StatusCode::CREATED, Json(Peer::from(peer)))),
        Err(P2pError::BadPeer(why)) => Err(ApiError::bad_request(why.to_string())),
        Err(e) => Err(ApiError::unavailable(e.to_string())),
    }
}

/// `DELETE /api/core/v2/peers/{peerId}`: removes the peer and disconnects it (204); 404 when
/// it is not listed.
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    match p2p(&state)?.remove_peer(&id).await {
        Ok(true) => Ok(StatusCode::NO_CONTENT),
        Ok(false) => Err(ApiError::not_found(format!("peer {id} not found"))),
        Err(e) => Err(ApiError::unavailable(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_json_has_hornet_shape_and_both_heartbeat_spellings() {
        let peer = Peer {
            id: "12D3KooWMajsSUxSUFb3CRgmJvygYCGd27uMDdppVYNGud7xuKG5".into(),
            multi_addresses: vec!["/dns/abc.com/tcp/15602".into()],
            alias: None,
            relation: Relation::Known,
            connected: true,
            gossip: Some(Gossip {
                heartbeat: Heartbeat {
                    connected_peers: 5,
                    synced_peers: 7,
                    ..Heartbeat::default()
                },
                metrics: PeerStats::default(),
            }),
        };
        let json = serde_json::to_string(&peer).expect("serialize");
        assert!(!json.contains("alias"), "{json}");
        assert!(json.contains(r#""relation":"known""#), "{json}");
        assert!(
            json.contains(r#""multiAddresses":["/dns/abc.com/tcp/15602"]"#),
            "{json}"
        );
        let neighbors = json.find(r#""connectedNeighbors":5,"syncedNeighbors":7"#);
        let peers = json.find(r#""connectedPeers":5,"syncedPeers":7"#);
        assert!(
            neighbors.is_some() && peers.is_some() && neighbors < peers,
            "{json}"
        );
        assert!(json.contains(r#""droppedPackets":0"#), "{json}");
        let back: Peer = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, peer);
    }
}
