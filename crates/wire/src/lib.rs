//! tcpnc wire layer: every byte that crosses the tunnel between two tcpnc gateways.
//!
//! Each UDP datagram of the tunnel carries exactly one *frame*. A frame starts with a 2-byte
//! preamble (version, frame type) and is one of:
//!
//! * **DATA** ([`DataPacket`], [`DataRepr`]): one network-coded packet, a random linear
//!   combination of TCP subheaders+payloads (Sundararajan et al. §III-B), with the per-flow packet
//!   id Pid (Ha & Tsuru §3.1) and the redundant flag (Mitsuzumi et al. §III).
//! * **ACK** ([`AckPacket`], [`AckRepr`]): one NC-ACK, the seen-ACK of the decoder plus the
//!   feedback of the policies: Pid echo and 32-bit loss bitmap (Ha & Tsuru §3.1), lost-DoF count
//!   N_lp (Karafillis et al. §II), unordering length, Pause-ACK and dependence (Ha & Tsuru §3.2-3.3,
//!   Table 1).
//! * **BYPASS** ([`BypassRepr`]): one whole IP packet carried uncoded (TCP SYN/RST, non-TCP,
//!   everything when coding is off; Sundararajan et al. §III-A).
//! * **KEEPALIVE** ([`KeepalivePacket`], [`KeepaliveRepr`]): peer-liveness probe and reply.
//!
//! The crate follows smoltcp's `wire` module: a zero-copy *view* (`XxxPacket<T: AsRef<[u8]>>`)
//! with `new_checked`, field getters and (for `T: AsMut<[u8]>`) setters, and a validated
//! *representation* (`XxxRepr`) with `parse`, `buffer_len` and `emit`. [`FrameRepr`] dispatches
//! on the preamble. Parsing never panics, whatever the input; emitting never panics and returns an
//! error for a representation that cannot be encoded. The exact layout, with golden byte vectors
//! checked by the test suite, is `docs/wire.md`.
//!
//! All multi-byte integers are in network byte order (big-endian).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod ack;
mod bytes;
mod data;
mod data_repr;
mod error;
mod flow;
mod frame;
#[doc(hidden)]
pub mod fuzzing;
mod keepalive;
mod ranges;
pub mod spec_vectors;

pub use ack::{AckPacket, AckRepr};

/// Bytes of outer IPv4 (20) and UDP (8) header around every tunnel datagram: what a coded
/// packet costs on the path beyond its UDP payload.
pub const OUTER_HEADER_V4: usize = 28;
/// Bytes of outer IPv6 (40) and UDP (8) header around every tunnel datagram.
pub const OUTER_HEADER_V6: usize = 48;
pub use data::{Coefficients, DataPacket, RangeForm, SeqRange, SeqRanges};
pub use data_repr::DataRepr;
pub use error::{Result, WireError};
pub use flow::{FlowAddrs, FlowId};
pub use frame::{BypassRepr, Frame, FrameRepr, FrameType};
pub use keepalive::{KeepalivePacket, KeepaliveRepr};

/// Flag-bit constants of each frame type, as they appear in the views' raw `flags()`.
pub mod flags {
    pub use crate::ack::flags as ack;
    pub use crate::data::flags as data;
    pub use crate::keepalive::flags as keepalive;
}

/// The wire version this crate speaks (preamble byte 0). Version 2 added the PATCHED range
/// form of DATA headers (docs/wire.md section 3); a version-1 peer rejects every version-2
/// frame (`BadVersion`) rather than some of them.
pub const VERSION: u8 = 2;

/// Length of the common frame preamble (version, frame type).
pub const PREAMBLE_LEN: usize = 2;

/// Outer IPv4 (20 B, no options) + UDP (8 B) header bytes around every tunnel frame.
pub const OUTER_OVERHEAD_IPV4: usize = 28;

/// Outer IPv6 (40 B, no extension headers) + UDP (8 B) header bytes around every tunnel frame.
pub const OUTER_OVERHEAD_IPV6: usize = 48;

/// IP version of a flow's TCP connection (the inner packets, not the tunnel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IpVersion {
    /// IPv4: the flow identity is 12 bytes.
    V4,
    /// IPv6: the flow identity is 36 bytes.
    V6,
}

impl IpVersion {
    /// Bytes of the flow identity (two addresses, two ports) for this IP version.
    pub const fn flow_len(self) -> usize {
        match self {
            IpVersion::V4 => flow::FLOW_LEN_V4,
            IpVersion::V6 => flow::FLOW_LEN_V6,
        }
    }
}

/// How a DATA frame conveys its coefficient vector; see [`Coefficients`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoefficientMode {
    /// One byte per combined packet.
    Explicit,
    /// One 32-bit seed for the codec's coefficient generator.
    Seeded,
    /// No coefficient bytes: an uncoded source symbol (`n` = 1, coefficient 1).
    Systematic,
}

impl CoefficientMode {
    /// Bytes of the coefficient section for `n` combined packets.
    pub const fn len(self, n: usize) -> usize {
        match self {
            CoefficientMode::Explicit => n,
            CoefficientMode::Seeded => 4,
            CoefficientMode::Systematic => 0,
        }
    }
}

/// Bytes a DATA frame adds on top of the coded TCP subheader+payload, preamble included, outer
/// IP/UDP ([`OUTER_OVERHEAD_IPV4`], [`OUTER_OVERHEAD_IPV6`]) not included: the worst case over
/// the range encodings (the general, gapped one), which is what an MSS clamp must assume.
/// [`data_header_len`] gives the length for a known [`RangeForm`].
///
/// This is the DATA header length: `18 + flow + 4n + coefficients`, i.e. `30 + 5n` for IPv4 with
/// explicit coefficients, `34 + 4n` seeded, `34` systematic (`n` = 1); IPv6 adds 24. Relative to
/// the original TCP segment it costs 4 bytes less, because the TCP ports travel in the flow
/// identity and are removed from the coded subheader (Sundararajan et al. §III-A). A count of 0
/// is treated as 1 (there is no DATA frame without a packet range).
pub const fn header_overhead(n: usize, coefficients: CoefficientMode, ip: IpVersion) -> usize {
    let n = if n == 0 { 1 } else { n };
    data_header_len(n, coefficients, ip, RangeForm::Gapped)
}

/// The DATA header length for `n` packets whose ranges take the encoding `form` (see
/// [`RangeForm::of`]): `16 + flow + ranges + coefficients`, where the range section is `4n + 2`
/// (gapped), `2n + 4` (contiguous) or 8 (uniform) bytes. A count of 0 is treated as 1.
/// [`RangeForm::Gapped`] gives [`header_overhead`], the longest.
pub const fn data_header_len(
    n: usize,
    coefficients: CoefficientMode,
    ip: IpVersion,
    form: RangeForm,
) -> usize {
    let n = if n == 0 { 1 } else { n };
    data::FIXED_LEN + ip.flow_len() + form.len(n) + coefficients.len(n)
}
