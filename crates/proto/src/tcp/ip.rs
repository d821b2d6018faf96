//! IPv4 (RFC 791) and IPv6 (RFC 8200) headers: the project's one reader of IP headers of any
//! protocol ([`read_ip_header`], [`packet_facts`]: the gateway routes and counts with it) and the
//! TCP packet layer's parser and synthesis.
//!
//! Reading tolerates IPv4 options and walks the IPv6 Hop-by-Hop, Routing and Destination Options
//! extension headers (skipped) up to the upper-layer header or a Fragment header. The TCP layer
//! ([`parse_ip`]) rejects every fragment (IPv4 MF or non-zero offset, any IPv6 Fragment header,
//! atomic ones included) with [`TcpError::Fragment`]: a fragment does not hold a whole TCP
//! segment, and the gateway turns off GSO/TSO so the local kernel does not fragment.
//! Synthesis always writes a minimal header (IPv4 without options, IPv6 without extension
//! headers); [`IpParams`] carries the fields that are not derived from the addresses and length.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::TcpError;
use super::checksum::{IPPROTO_TCP, internet_checksum};
use crate::seam::{FlowTuple, PacketFacts};

/// Default IPv4 TTL / IPv6 hop limit of synthesised packets.
pub const DEFAULT_TTL: u8 = 64;
/// Length of a synthesised IPv4 header (no options).
pub const IPV4_HEADER_LEN: usize = 20;
/// Length of a synthesised IPv6 header (no extension headers).
pub const IPV6_HEADER_LEN: usize = 40;
/// Largest IPv4 total length / IPv6 payload length.
pub const MAX_IP_LEN: usize = 65535;

/// A fragment's offset (8-byte units) and more-fragments flag.
pub type Fragment = (u16, bool);

/// The facts of an IP header ([`read_ip_header`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpMeta {
    /// Upper-layer protocol: the IPv4 protocol or the IPv6 next header after the skipped
    /// extension headers (after a Fragment header: the fragment's next header).
    pub protocol: u8,
    /// Length the header claims: IPv4 total length, 40 + IPv6 payload length (never more than
    /// the bytes read).
    pub total_len: usize,
    /// Fragment offset (8-byte units) and more-fragments flag, when the packet is a fragment
    /// (IPv4 MF or offset; any IPv6 Fragment header).
    pub fragment: Option<Fragment>,
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
    /// Bytes before the upper-layer header (IPv4 header with options, IPv6 header with
    /// extensions and any Fragment header).
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

/// Reads the IP header of a packet of any protocol; errors for anything that is not a whole
/// IPv4 or IPv6 header whose claimed length fits in `bytes` (trailing link padding is allowed).
pub fn read_ip_header(bytes: &[u8]) -> Result<IpMeta, TcpError> {
    need("IP version", 1, bytes.len())?;
    match bytes[0] >> 4 {
        4 => read_v4(bytes),
        6 => read_v6(bytes),
        v => Err(TcpError::UnsupportedVersion(v)),
    }
}

/// Parse the IP header of a TCP packet; returns the metadata and the TCP bytes (header and
/// payload, cut to the IP length: trailing link padding is ignored).
pub(crate) fn parse_ip(bytes: &[u8]) -> Result<(IpMeta, &[u8]), TcpError> {
    let meta = read_ip_header(bytes)?;
    if let Some((offset, more)) = meta.fragment {
        return Err(TcpError::Fragment { offset, more });
    }
    if meta.protocol != IPPROTO_TCP {
        return Err(TcpError::NotTcp(meta.protocol));
    }
    Ok((meta, &bytes[meta.header_len..meta.total_len]))
}

/// The facts a tagged pass-through checks and counts ([`crate::seam::Framing::Tagged`]):
/// claimed length and flow (ports for TCP, UDP and SCTP, from the first fragment only);
/// `None` when [`read_ip_header`] refuses the packet.
pub fn packet_facts(packet: &[u8]) -> Option<PacketFacts> {
    let h = read_ip_header(packet).ok()?;
    let first = h.fragment.is_none_or(|(offset, _)| offset == 0);
    let l4 = &packet[h.header_len..h.total_len];
    let (src_port, dst_port) = match h.protocol {
        6 | 17 | 132 if first && l4.len() >= 4 => (
            u16::from_be_bytes([l4[0], l4[1]]),
            u16::from_be_bytes([l4[2], l4[3]]),
        ),
        _ => (0, 0),
    };
    let flow = FlowTuple {
        protocol: h.protocol,
        src: h.src,
        dst: h.dst,
        src_port,
        dst_port,
    };
    Some(PacketFacts {
        claimed_len: h.total_len,
        flow: Some(flow),
    })
}

fn read_v4(b: &[u8]) -> Result<IpMeta, TcpError> {
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
    Ok(IpMeta {
        protocol: b[9],
        total_len: total,
        fragment: (more || offset != 0).then_some((offset, more)),
        src: IpAddr::V4(Ipv4Addr::new(b[12], b[13], b[14], b[15])),
        dst: IpAddr::V4(Ipv4Addr::new(b[16], b[17], b[18], b[19])),
        tos: b[1],
        ttl: b[8],
        dont_fragment: frag & 0x4000 != 0,
        ident: u16::from_be_bytes([b[4], b[5]]),
        flow_label: 0,
        header_len: hlen,
        header_checksum_ok: internet_checksum(&b[..hlen]) == 0,
    })
}

/// Walks the IPv6 extension headers of `b[..total]`: (upper-layer protocol, its offset,
/// fragment).
fn walk_v6(b: &[u8], total: usize) -> Result<(u8, usize, Option<Fragment>), TcpError> {
    let mut next = b[6];
    let mut off = IPV6_HEADER_LEN;
    loop {
        match next {
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
                return Ok((b[off], off + 8, Some((f >> 3, f & 1 != 0))));
            }
            other => return Ok((other, off, None)),
        }
    }
}

fn read_v6(b: &[u8]) -> Result<IpMeta, TcpError> {
    need("IPv6 header", IPV6_HEADER_LEN, b.len())?;
    let payload = usize::from(u16::from_be_bytes([b[4], b[5]]));
    let total = IPV6_HEADER_LEN + payload;
    if payload == 0 || total > b.len() {
        // Payload length 0 means a jumbogram (RFC 2675): never a TUN-sized packet.
        return Err(TcpError::BadIpLength(payload));
    }
    let (protocol, header_len, fragment) = walk_v6(b, total)?;
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&b[8..24]);
    dst.copy_from_slice(&b[24..40]);
    Ok(IpMeta {
        protocol,
        total_len: total,
        fragment,
        src: IpAddr::V6(Ipv6Addr::from(src)),
        dst: IpAddr::V6(Ipv6Addr::from(dst)),
        tos: ((b[0] & 0x0f) << 4) | (b[1] >> 4),
        ttl: b[7],
        dont_fragment: false,
        ident: 0,
        flow_label: u32::from_be_bytes([0, b[1] & 0x0f, b[2], b[3]]),
        header_len,
        header_checksum_ok: true,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ipv4_udp;

    #[test]
    fn reads_udp_v4_and_refuses_it_as_tcp() {
        let p = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1234, 53, b"q");
        let f = packet_facts(&p).unwrap();
        assert_eq!(f.claimed_len, p.len());
        let k = f.flow.unwrap();
        assert_eq!((k.protocol, k.src_port, k.dst_port), (17, 1234, 53));
        assert_eq!(k.to_string(), "udp 10.0.0.1:1234 -> 10.0.0.2:53");
        assert!(matches!(parse_ip(&p), Err(TcpError::NotTcp(17))));
        let mut padded = p.clone();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(packet_facts(&padded), Some(f), "link padding ignored");
        assert!(
            packet_facts(&p[..p.len() - 1]).is_none(),
            "claims more than it has"
        );
    }

    #[test]
    fn v4_fragments_have_no_ports_after_the_first() {
        let mut p = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1234, 53, b"q");
        p[6] = 0x20; // MF, offset 0: the first fragment carries the ports
        assert_eq!(packet_facts(&p).unwrap().flow.unwrap().src_port, 1234);
        p[6..8].copy_from_slice(&3u16.to_be_bytes());
        let h = read_ip_header(&p).unwrap();
        assert_eq!(h.fragment, Some((3, false)));
        assert_eq!(packet_facts(&p).unwrap().flow.unwrap().src_port, 0);
        assert!(matches!(
            parse_ip(&p),
            Err(TcpError::Fragment {
                offset: 3,
                more: false
            })
        ));
    }

    #[test]
    fn v6_walks_extension_headers_and_reads_portless() {
        // IPv6, Hop-by-Hop (8 bytes) then ICMPv6.
        let mut p = vec![0u8; 56];
        p[0] = 0x60;
        p[4..6].copy_from_slice(&16u16.to_be_bytes());
        p[6] = 0;
        p[23] = 1;
        p[39] = 2;
        p[40] = 58;
        let h = read_ip_header(&p).unwrap();
        assert_eq!((h.protocol, h.header_len, h.total_len), (58, 48, 56));
        let k = packet_facts(&p).unwrap().flow.unwrap();
        assert_eq!((k.protocol, k.src_port), (58, 0));
        assert_eq!(k.to_string(), "icmpv6 [::1]:0 -> [::2]:0");
        assert!(packet_facts(&p[..30]).is_none());
        assert!(packet_facts(&[0x45; 10]).is_none());
        assert!(packet_facts(&[]).is_none());
        assert!(packet_facts(&[0x10; 40]).is_none());
    }
}
