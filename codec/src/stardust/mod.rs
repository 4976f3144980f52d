//! v2 (Stardust) wire format: TIP-18..24, 29.

pub mod address;

pub use address::Address;
