//! Why a datagram was dropped (each reason is a counter) and the crate's errors.

use thiserror::Error;

/// Why an incoming datagram was dropped. Every drop is silent on the wire (never answered)
/// and counted under [`Drop::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Drop {
    /// Too short, wrong length for its type, or reserved bytes set.
    Malformed,
    /// The outer type byte is not one of ours.
    UnknownType,
    /// A datagram of the other mode (integrity vs keys): the two gateways disagree.
    WrongMode,
    /// Integrity mode: the CRC-32C does not match.
    BadChecksum,
    /// Integrity mode: the source address is no peer's endpoint.
    UnknownSource,
    /// A handshake message whose mac1 is wrong (sender does not know our public key).
    BadMac,
    /// A handshake message over the rate limit (global or per source).
    RateLimited,
    /// A handshake message that fails Noise (wrong keys, tampered).
    HandshakeFailed,
    /// An initiation from a static key that is no peer's `public_key`.
    UnknownPeer,
    /// An initiation whose timestamp is not newer than the last one accepted (a replay).
    StaleInitiation,
    /// A response to no initiation in flight.
    UnexpectedResponse,
    /// A transport datagram for a session index we do not have.
    UnknownIndex,
    /// A counter already received (replay or duplicate).
    Replayed,
    /// A counter older than the replay window, or past the message limit.
    TooOld,
    /// The session is past REJECT_AFTER_TIME.
    Expired,
    /// The AEAD tag does not verify.
    BadTag,
}

impl Drop {
    /// Every reason, in counter order.
    pub const ALL: [Drop; 16] = [
        Drop::Malformed,
        Drop::UnknownType,
        Drop::WrongMode,
        Drop::BadChecksum,
        Drop::UnknownSource,
        Drop::BadMac,
        Drop::RateLimited,
        Drop::HandshakeFailed,
        Drop::UnknownPeer,
        Drop::StaleInitiation,
        Drop::UnexpectedResponse,
        Drop::UnknownIndex,
        Drop::Replayed,
        Drop::TooOld,
        Drop::Expired,
        Drop::BadTag,
    ];

    /// The counter name.
    pub const fn name(self) -> &'static str {
        match self {
            Drop::Malformed => "malformed",
            Drop::UnknownType => "unknown_type",
            Drop::WrongMode => "wrong_mode",
            Drop::BadChecksum => "bad_checksum",
            Drop::UnknownSource => "unknown_source",
            Drop::BadMac => "bad_mac",
            Drop::RateLimited => "rate_limited",
            Drop::HandshakeFailed => "handshake_failed",
            Drop::UnknownPeer => "unknown_peer",
            Drop::StaleInitiation => "stale_initiation",
            Drop::UnexpectedResponse => "unexpected_response",
            Drop::UnknownIndex => "unknown_index",
            Drop::Replayed => "replayed",
            Drop::TooOld => "too_old",
            Drop::Expired => "expired",
            Drop::BadTag => "bad_tag",
        }
    }

    /// The counter key in a stats file: `drops.<name>`.
    pub fn key(self) -> &'static str {
        const KEYS: [&str; 16] = [
            "drops.malformed",
            "drops.unknown_type",
            "drops.wrong_mode",
            "drops.bad_checksum",
            "drops.unknown_source",
            "drops.bad_mac",
            "drops.rate_limited",
            "drops.handshake_failed",
            "drops.unknown_peer",
            "drops.stale_initiation",
            "drops.unexpected_response",
            "drops.unknown_index",
            "drops.replayed",
            "drops.too_old",
            "drops.expired",
            "drops.bad_tag",
        ];
        KEYS[self.index()]
    }

    fn index(self) -> usize {
        Drop::ALL.iter().position(|d| *d == self).unwrap_or(0)
    }
}

/// Drop counters, one per [`Drop`] reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounters([u64; 16]);

impl DropCounters {
    /// Counts one drop.
    pub fn add(&mut self, d: Drop) {
        self.0[d.index()] += 1;
    }

    /// The count for `d`.
    pub fn get(&self, d: Drop) -> u64 {
        self.0[d.index()]
    }

    /// All drops.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// `(key, count)` pairs, keys as [`Drop::key`].
    pub fn pairs(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Drop::ALL.iter().map(|d| (d.key(), self.get(*d)))
    }
}

/// Errors of key handling and set-up.
#[derive(Debug, Error)]
pub enum KeyError {
    /// Not 44 characters of standard base64 encoding 32 bytes.
    #[error("not a key: expected 32 bytes in base64 (44 characters, as `tcpnc genkey` prints)")]
    Format,
    /// The Noise library refused (no random source, bad key).
    #[error("noise: {0}")]
    Noise(String),
}
