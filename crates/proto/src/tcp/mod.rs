//! Real TCP/IP bytes: parsing, flow keys, the TCP subheader of §III-A, trimming, SYN option
//! rewriting (§V-E), ACK synthesis, checksums and sequence arithmetic.
//!
//! Everything here is pure and never panics on input: malformed packets give a [`TcpError`].
//! See `docs/tcp-handling.md` for the rules and their reasons.
//!
//! * [`seq`]: wrapping sequence comparisons; all TCP seq/ack comparisons use them.
//! * [`checksum`]: RFC 1071 sum, pseudo-header, RFC 1624 incremental update.
//! * [`ip`] / [`segment`]: [`TcpPacket::parse`] over IPv4/IPv6.
//! * [`flow_key`]: [`FlowKey`] (directed) and [`ConnKey`] + [`Direction`] (normalised).
//! * [`subheader`]: [`Subheader`], [`rebuild_packet`], [`trim`].
//! * [`options`]: [`rewrite_syn`], [`scan_options`], [`effective_window_shift`].
//! * [`build`]: [`build_ack`] ([`build_ack_into`]), [`build_segment`].

pub mod build;
pub mod checksum;
pub mod flow_key;
pub mod ip;
pub mod options;
pub mod segment;
pub mod seq;
pub mod subheader;

pub use build::{SegmentFields, build_ack, build_ack_into, build_segment, build_segment_into};
pub use checksum::{
    IPPROTO_TCP, Sum, checksum_update_block, checksum_update_u16, checksum_update_u32,
    internet_checksum, pseudo_header_sum, tcp_checksum, verify_tcp_checksum,
};
pub use flow_key::{ConnKey, Direction, Endpoint, FlowKey};
pub use ip::{DEFAULT_TTL, IpMeta, IpParams, ip_header_len, packet_facts, read_ip_header};
pub use options::{
    OptionSummary, SynPolicy, SynRewrite, effective_window_shift, rewrite_syn, scan_options,
};
pub use segment::{TCP_HEADER_MAX, TCP_HEADER_MIN, TcpFlags, TcpHeader, TcpPacket};
pub use seq::{
    seq_add, seq_diff, seq_ge, seq_gt, seq_in_inclusive, seq_le, seq_lt, seq_max, seq_min,
};
pub use subheader::{
    SUBHEADER_MIN, Subheader, rebuild_packet, rebuild_packet_into, split, subheader_checksum, trim,
    trim_into,
};

/// Why a packet or subheader could not be handled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TcpError {
    /// Fewer bytes than a header or declared length needs.
    #[error("truncated {what}: need {need} bytes, have {have}")]
    Truncated {
        /// The part being read.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        have: usize,
    },
    /// IP version nibble neither 4 nor 6.
    #[error("unsupported IP version {0}")]
    UnsupportedVersion(u8),
    /// IPv4 IHL below 5.
    #[error("invalid IPv4 header length {0} (32-bit words)")]
    BadIhl(u8),
    /// IPv4 total length or IPv6 payload length inconsistent with the bytes (or a jumbogram).
    #[error("IP length field {0} inconsistent with the packet")]
    BadIpLength(usize),
    /// An IP fragment: never a whole TCP segment.
    #[error("IP fragment (offset {offset}, more fragments: {more})")]
    Fragment {
        /// Fragment offset (8-byte units).
        offset: u16,
        /// More-fragments flag.
        more: bool,
    },
    /// Not TCP: the IPv4 protocol or final IPv6 next header.
    #[error("not TCP: protocol {0}")]
    NotTcp(u8),
    /// TCP data offset below 5.
    #[error("invalid TCP data offset {0} (32-bit words)")]
    BadDataOffset(u8),
    /// TCP option with length < 2 or running past the header.
    #[error("malformed TCP options")]
    MalformedOptions,
    /// Options to synthesise not a multiple of 4 or over 40 bytes.
    #[error("invalid TCP options length {0}")]
    BadOptionsLength(usize),
    /// IPv4 and IPv6 addresses mixed in one flow.
    #[error("source and destination address families differ")]
    AddressFamilyMismatch,
    /// A sequence range not within the segment's occupied sequence numbers.
    #[error("sequence range {first}..={last} not within the segment")]
    RangeOutsideSegment {
        /// First requested sequence number.
        first: u32,
        /// Last requested sequence number.
        last: u32,
    },
    /// A decoded subheader that does not match its Start/End.
    #[error("subheader seq {seq} does not match Start {start} / End {end}")]
    SubheaderMismatch {
        /// Seq in the subheader.
        seq: u32,
        /// Start from the NC header.
        start: u32,
        /// End from the NC header.
        end: u32,
    },
    /// The packet would exceed 65535 bytes of IP length.
    #[error("packet too long ({0} bytes)")]
    TooLong(usize),
    /// [`rewrite_syn`] on a segment without SYN.
    #[error("not a SYN segment")]
    NotSyn,
}
