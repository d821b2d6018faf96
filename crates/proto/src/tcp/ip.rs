//! IPv4 (RFC 791) and IPv6 (RFC 8200) header parsing and synthesis, for TCP packets only.
//!
//! Parsing tolerates IPv4 options and the IPv6 Hop-by-Hop, Routing and Destination Options
//! extension headers (skipped), and rejects every fragment (IPv4 MF or non-zero offset, any IPv6
//! Fragment header, atomic ones included) with [`TcpError::Fragment`]: a fragment does not hold a
//! whole TCP segment, and the gateway turns off GSO/TSO so the local kernel does not fragment.
//! Synthesis always writes a minimal header (IPv4 without options, IPv6 without extension
//! headers); [`IpParams`] carries the fields that are not derived from the addresses and length.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::TcpError;
use super::checksum::{IPPROTO_TCP, internet_checksum};

/// Default IPv4 TTL / IPv6 hop limit of synthesised packets.
pub const DEFAULT_TTL: u8 = 64;
/// Length of a synthesised IPv4 header (no options).
pub const IPV4_HEADER_LEN: usize = 20;
/// Length of a synthesised IPv6 header (no extension headers).
pub const IPV6_HEADER_LEN: usize = 40;
/// Largest IPv4 total length / IPv6 payload length.
pub const MAX_IP_LEN: usize = 65535;

/// The IP-layer facts of a parsed TCP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpMeta {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// IPv4 type of service / IPv6 traffic class (DSCP and ECN bits).
    pub tos: u8,
    /// IPv4 time to live / IPv6 hop limit.
    pub ttl: u8,
    /// IPv4 Don't Fragment flag (always `false` for IPv6).
    pub dont_fragment: bool,
    /// IPv4 identification (0 for IPv6).
    pub ident: u16,
    /// IPv6 flow label (0 for IPv4).
    pub flow_label: u32,
    /// Bytes before the TCP header (IPv4 header with options, IPv6 header with extensions).
    pub header_len: usize,
    /// Whether the IPv4 header checksum verifies (always `true` for IPv6, which has none).
    pub header_checksum_ok: bool,
}

impl IpMeta {
    /// Is this an IPv6 packet?
    pub fn is_ipv6(&self) -> bool {
        self.src.is_ipv6()
    }

    /// The parameters that rebuild this header byte for byte (when it had no IPv4 options or
    /// IPv6 extension headers).
    pub fn params(&self) -> IpParams {
        IpParams {
            tos: self.tos,
            ttl: self.ttl,
            dont_fragment: self.dont_fragment,
            ident: self.ident,
            flow_label: self.flow_label,
        }
    }
}

/// Fields of a synthesised IP header that are not derived from addresses and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpParams {
    /// IPv4 TOS / IPv6 traffic class.
    pub tos: u8,
    /// TTL / hop limit.
    pub ttl: u8,
    /// IPv4 DF flag (ignored for IPv6).
    pub dont_fragment: bool,
    /// IPv4 identification (ignored for IPv6); the caller picks it (e.g. a per-flow counter).
    pub ident: u16,
    /// IPv6 flow label, low 20 bits (ignored for IPv4).
    pub flow_label: u32,
}

impl Default for IpParams {
    /// TOS 0, TTL 64, DF set, ID 0, flow label 0.
    fn default() -> Self {
        IpParams {
            tos: 0,
            ttl: DEFAULT_TTL,
            dont_fragment: true,
            ident: 0,
            flow_label: 0,
        }
    }
}

fn need(what: &'static str, need: usize, have: usize) -> Result<(), TcpError> {
    if have < need {
        Err(TcpError::Truncated { what, need, have })
    } else {
        Ok(())
    }
}

/// Parse the IP header of a TCP packet; returns the metadata and the TCP bytes (header and
/// payload, cut to the IP length: trailing link padding is ignored).
pub(crate) fn parse_ip(bytes: &[u8]) -> Result<(IpMeta, &[u8]), TcpError> {
    need("IP version", 1, bytes.len())?;
    match bytes[0] >> 4 {
        4 => parse_v4(bytes),
        6 => parse_v6(bytes),
        v => Err(TcpError::UnsupportedVersion(v)),
    }
}

fn parse_v4(b: &[u8]) -> Result<(IpMeta, &[u8]), TcpError> {
    need("IPv4 header", IPV4_HEADER_LEN, b.len())?;
    let ihl = b[0] & 0x0f;
    let hlen = usize::from(ihl) * 4;
    if ihl < 5 {
        return Err(TcpError::BadIhl(ihl));
    }
    need("IPv4 header with options", hlen, b.len())?;
    let total = usize::from(u16::from_be_bytes([b[2], b[3]]));
    if total < hlen || total > b.len() {
        return Err(TcpError::BadIpLength(total));
    }
    let frag = u16::from_be_bytes([b[6], b[7]]);
    let more = frag & 0x2000 != 0;
    let offset = frag & 0x1fff;
    if more || offset != 0 {
        return Err(TcpError::Fragment { offset, more });
    }
    if b[9] != IPPROTO_TCP {
        return Err(TcpError::NotTcp(b[9]));
    }
    let meta = IpMeta {
        src: IpAddr::V4(Ipv4Addr::new(b[12], b[13], b[14], b[15])),
        dst: IpAddr::V4(Ipv4Addr::new(b[16], b[17], b[18], b[19])),
        tos: b[1],
        ttl: b[8],
        dont_fragment: frag & 0x4000 != 0,
        ident: u16::from_be_bytes([b[4], b[5]]),
        flow_label: 0,
        header_len: hlen,
        header_checksum_ok: internet_checksum(&b[..hlen]) == 0,
    };
    Ok((meta, &b[hlen..total]))
}

fn parse_v6(b: &[u8]) -> Result<(IpMeta, &[u8]), TcpError> {
    need("IPv6 header", IPV6_HEADER_LEN, b.len())?;
    let payload = usize::from(u16::from_be_bytes([b[4], b[5]]));
    let total = IPV6_HEADER_LEN + payload;
    if payload == 0 || total > b.len() {
        // Payload length 0 means a jumbogram (RFC 2675): never a TUN-sized TCP segment.
        return Err(TcpError::BadIpLength(payload));
    }
    let mut next = b[6];
    let mut off = IPV6_HEADER_LEN;
    loop {
        match next {
            IPPROTO_TCP => break,
            // Hop-by-Hop, Routing, Destination Options: skip (RFC 8200 §4.3-4.6).
            0 | 43 | 60 => {
                need("IPv6 extension header", off + 2, total)?;
                let len = (usize::from(b[off + 1]) + 1) * 8;
                need("IPv6 extension header", off + len, total)?;
                next = b[off];
                off += len;
            }
            44 => {
                need("IPv6 fragment header", off + 8, total)?;
                let f = u16::from_be_bytes([b[off + 2], b[off + 3]]);
                return Err(TcpError::Fragment {
                    offset: f >> 3,
                    more: f & 1 != 0,
                });
            }
            other => return Err(TcpError::NotTcp(other)),
        }
    }
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&b[8..24]);
    dst.copy_from_slice(&b[24..40]);
    let meta = IpMeta {
        src: IpAddr::V6(Ipv6Addr::from(src)),
        dst: IpAddr::V6(Ipv6Addr::from(dst)),
        tos: ((b[0] & 0x0f) << 4) | (b[1] >> 4),
        ttl: b[7],
        dont_fragment: false,
        ident: 0,
        flow_label: u32::from_be_bytes([0, b[1] & 0x0f, b[2], b[3]]),
        header_len: off,
        header_checksum_ok: true,
    };
    Ok((meta, &b[off..total]))
}

/// Length of the minimal IP header synthesised for this address family (20 or 40).
pub fn ip_header_len(addr: IpAddr) -> usize {
    if addr.is_ipv6() {
        IPV6_HEADER_LEN
    } else {
        IPV4_HEADER_LEN
    }
}

/// Append a minimal IP header for a TCP payload of `transport_len` bytes: IPv4 version/IHL 0x45,
/// TOS, total length, ID, DF, TTL, protocol 6 and header checksum; or IPv6 version, traffic class,
/// flow label, payload length, next header 6 and hop limit.
pub(crate) fn write_ip_header(
    out: &mut Vec<u8>,
    src: IpAddr,
    dst: IpAddr,
    transport_len: usize,
    p: &IpParams,
) -> Result<(), TcpError> {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = IPV4_HEADER_LEN + transport_len;
            let total16 = u16::try_from(total).map_err(|_| TcpError::TooLong(total))?;
            let start = out.len();
            let flags: u16 = if p.dont_fragment { 0x4000 } else { 0 };
            out.extend_from_slice(&[0x45, p.tos]);
            out.extend_from_slice(&total16.to_be_bytes());
            out.extend_from_slice(&p.ident.to_be_bytes());
            out.extend_from_slice(&flags.to_be_bytes());
            out.extend_from_slice(&[p.ttl, IPPROTO_TCP, 0, 0]);
            out.extend_from_slice(&s.octets());
            out.extend_from_slice(&d.octets());
            let c = internet_checksum(&out[start..]);
            out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
            Ok(())
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            let len16 =
                u16::try_from(transport_len).map_err(|_| TcpError::TooLong(transport_len))?;
            let fl = p.flow_label & 0x000f_ffff;
            let word = (6u32 << 28) | (u32::from(p.tos) << 20) | fl;
            out.extend_from_slice(&word.to_be_bytes());
            out.extend_from_slice(&len16.to_be_bytes());
            out.extend_from_slice(&[IPPROTO_TCP, p.ttl]);
            out.extend_from_slice(&s.octets());
            out.extend_from_slice(&d.octets());
            Ok(())
        }
        _ => Err(TcpError::AddressFamilyMismatch),
    }
}
