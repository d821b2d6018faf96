//! tcpnc tunnel envelope: what makes a tunnel datagram safe to act on.
//!
//! Every UDP datagram between two gateways is one *envelope* around one wire frame
//! (`tcpnc-wire`), specified in `docs/wire.md` §10:
//!
//! * **Integrity mode** ([`integrity`], config `insecure = true`): `[0x11] ++ frame ++ CRC-32C`;
//!   corrupted or truncated frames are dropped before parsing. No protection against an attacker.
//! * **Keys** ([`Tunnel`]): a Noise `IKpsk2` handshake ([`handshake`], via `snow`) between static
//!   Curve25519 keys ([`keys`]), then ChaCha20-Poly1305 or AES-256-GCM ([`cipher`]) transport
//!   datagrams with an explicit 64-bit counter ([`session`], [`transport_keys`]) and an
//!   RFC 6479 replay window ([`replay`]); WireGuard's rekey and retry timers; a handshake rate limit ([`limiter`]). Unauthenticated datagrams are
//!   dropped (counted by reason, [`Drop`]) and never answered.
//!
//! Sans-IO like the protocol core: time is passed in; only key generation and Noise ephemeral
//! keys use the operating system's random source (through `snow`). No cryptography is
//! implemented here: Curve25519, ChaCha20-Poly1305, AES-256-GCM and BLAKE2s come from `snow`
//! (with `ring`) and `blake2`; the transport datagrams are sealed and opened in place with
//! `ring`'s AEAD under the handshake's keys ([`transport_keys`]).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cipher;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod handshake;
pub mod integrity;
pub mod keys;
pub mod limiter;
pub mod outer;
mod peer;
pub mod replay;
pub mod session;
mod stats;
pub mod transport_keys;
mod tunnel;

pub use cipher::Cipher;
pub use error::{Drop, DropCounters, KeyError};
pub use keys::Key;
pub use limiter::Limits;
pub use peer::PeerKeys;
pub use session::Timers;
pub use stats::TunnelStats;
pub use tunnel::{Arrival, Received, Transmit, Tunnel, TunnelConfig, TunnelEvent};
