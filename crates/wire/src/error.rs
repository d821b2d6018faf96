//! The one error type of the wire layer.

use thiserror::Error;

/// Everything that can be wrong with a frame on parse, or with a representation on emit.
///
/// Parsing returns these for malformed input and never panics; emitting returns them for a
/// representation that cannot be encoded (or a buffer that is too small) and never panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum WireError {
    /// The buffer ends before the fields its own header says it contains.
    #[error("frame truncated: {needed} bytes needed, {got} present")]
    Truncated {
        /// Bytes the header requires (as far as it could be read).
        needed: usize,
        /// Bytes present.
        got: usize,
    },
    /// The preamble's version byte is not [`crate::VERSION`].
    #[error("unsupported wire version {0}")]
    BadVersion(u8),
    /// The preamble's frame-type byte is not a known [`crate::FrameType`].
    #[error("unknown frame type {0:#04x}")]
    UnknownType(u8),
    /// A view or representation of one frame type was applied to a frame of another type.
    #[error("frame type {found:#04x} where {expected:#04x} was expected")]
    WrongType {
        /// The type the caller asked for.
        expected: u8,
        /// The type found in the preamble.
        found: u8,
    },
    /// A fixed-size frame (ACK, KEEPALIVE) has bytes after its last field.
    #[error("fixed-size frame has wrong length: {expected} bytes expected, {got} present")]
    BadLength {
        /// The exact length of this frame.
        expected: usize,
        /// Bytes present.
        got: usize,
    },
    /// A reserved flag bit or reserved byte is not zero.
    #[error("reserved bits set: {0:#06x}")]
    ReservedBits(u16),
    /// The DATA packet count `n` is outside `1..=255`.
    #[error("bad packet count {0} (must be 1..=255)")]
    BadCount(usize),
    /// The DATA flags contradict each other or the count (SEEDED with SYSTEMATIC, or SYSTEMATIC
    /// with `n != 1`).
    #[error("inconsistent DATA flags {flags:#04x} for n = {count}")]
    BadFlags {
        /// The flags byte.
        flags: u8,
        /// The packet count.
        count: usize,
    },
    /// The number of explicit coefficients differs from the number of packet ranges.
    #[error("{got} coefficients for {expected} packets")]
    CoefficientCount {
        /// Number of packet ranges (`n`).
        expected: usize,
        /// Number of coefficients given.
        got: usize,
    },
    /// Packet range `index` (0-based) cannot be delta-coded: its length exceeds 65 536 bytes, or it
    /// does not start 1 to 65 536 sequence numbers after the end of the previous range.
    #[error("packet range {index} is not encodable as 16-bit deltas")]
    RangeNotEncodable {
        /// 0-based index of the offending range.
        index: usize,
    },
    /// A DATA header uses a longer range encoding than the canonical one for its ranges (e.g.
    /// the gapped form for contiguous ranges, or CONTIGUOUS where UNIFORM applies): every header
    /// has exactly one encoding.
    #[error("DATA ranges not in their canonical (most compact) encoding")]
    NonCanonical,
    /// A field that is only meaningful with a flag is not zero while the flag is clear
    /// (the ACK's `dependent_seq` without DEPENDENT).
    #[error("unused field is not zero")]
    UnusedFieldNotZero,
    /// A BYPASS frame's packet does not start with IP version nibble 4 or 6.
    #[error("bypassed packet has IP version nibble {0}")]
    BadIpVersion(u8),
    /// The output buffer given to `emit` is smaller than `buffer_len()`.
    #[error("output buffer too small: {needed} bytes needed, {got} available")]
    BufferTooSmall {
        /// Bytes `emit` writes.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
}

/// Shorthand used throughout the crate.
pub type Result<T> = core::result::Result<T, WireError>;
