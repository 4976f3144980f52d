//! Property tests of the MQTT packet codec, topic matching and a connection's protocol.

mod packets;
mod topics;
