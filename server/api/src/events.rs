//! The seam between the event API's WebSocket route (`routes::mqtt`) and what feeds it (the
//! engine-fed `publisher`): the broker, and the current value of a topic for a new
//! subscriber (docs/events.md §1.1 "snapshot").

use std::sync::Arc;

use ledger_events::Broker;

/// What the `/api/mqtt/v1` route serves.
pub trait EventService: Send + Sync + 'static {
    /// The broker the connections join.
    fn broker(&self) -> &Arc<Broker>;

    /// The payload to send now to a client that just subscribed to exact topic `topic`, for
    /// topics with a current value; `None` otherwise.
    fn snapshot(&self, topic: &str) -> Option<Vec<u8>>;
}
