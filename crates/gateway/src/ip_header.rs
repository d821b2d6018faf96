//! The gateway's one reader of IP headers of any protocol: destination (routing), claimed
//! length and flow (the pass-through engine's checks and counters).
//!
//! `tcpnc_proto::tcp` parses TCP packets only (its `parse_ip` is crate-private and refuses
//! other protocols), while the gateway also routes and counts UDP, ICMP and the rest; this
//! module is the protocol-agnostic remainder, built on proto's header-length constants.
//! IPv6 extension headers are not walked: the first next-header value is taken as the protocol.

use std::net::IpAddr;

use tcpnc_proto::seam::{FlowTuple, PacketFacts};
use tcpnc_proto::tcp::ip::{IPV4_HEADER_LEN, IPV6_HEADER_LEN};

/// The facts of an IPv4 or IPv6 header the gateway uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpHeader {
    /// Length the header claims (IPv4 total length; 40 + IPv6 payload length).
    pub claimed_len: usize,
    /// Protocol, addresses and (for TCP, UDP, SCTP) ports.
    pub flow: FlowTuple,
}

impl IpHeader {
    /// Reads the header of an IPv4 or IPv6 packet; `None` for anything else or a packet
    /// shorter than its fixed header.
    pub fn read(packet: &[u8]) -> Option<IpHeader> {
        let (claimed_len, protocol, src, dst, l4) = match packet.first()? >> 4 {
            4 if packet.len() >= IPV4_HEADER_LEN => {
                let ihl = usize::from(packet[0] & 0x0f) * 4;
                let src: [u8; 4] = packet[12..16].try_into().ok()?;
                let dst: [u8; 4] = packet[16..20].try_into().ok()?;
                let frag_offset = u16::from_be_bytes([packet[6], packet[7]]) & 0x1fff;
                let l4 = if ihl >= IPV4_HEADER_LEN && frag_offset == 0 {
                    packet.get(ihl..).unwrap_or(&[])
                } else {
                    &[]
                };
                let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
                (total, packet[9], IpAddr::from(src), IpAddr::from(dst), l4)
            }
            6 if packet.len() >= IPV6_HEADER_LEN => {
                let src: [u8; 16] = packet[8..24].try_into().ok()?;
                let dst: [u8; 16] = packet[24..40].try_into().ok()?;
                let payload = usize::from(u16::from_be_bytes([packet[4], packet[5]]));
                let l4 = &packet[IPV6_HEADER_LEN..];
                let (src, dst) = (IpAddr::from(src), IpAddr::from(dst));
                (IPV6_HEADER_LEN + payload, packet[6], src, dst, l4)
            }
            _ => return None,
        };
        let (src_port, dst_port) = match protocol {
            6 | 17 | 132 if l4.len() >= 4 => (
                u16::from_be_bytes([l4[0], l4[1]]),
                u16::from_be_bytes([l4[2], l4[3]]),
            ),
            _ => (0, 0),
        };
        let flow = FlowTuple {
            protocol,
            src,
            dst,
            src_port,
            dst_port,
        };
        Some(IpHeader { claimed_len, flow })
    }
}

/// The destination address of an IPv4 or IPv6 packet (for routing by allowed_ips).
pub fn packet_destination(packet: &[u8]) -> Option<IpAddr> {
    IpHeader::read(packet).map(|h| h.flow.dst)
}

/// [`IpHeader::read`] as the pass-through engine's [`tcpnc_proto::seam::Inspector`].
pub fn inspect(packet: &[u8]) -> Option<PacketFacts> {
    IpHeader::read(packet).map(|h| PacketFacts {
        claimed_len: h.claimed_len,
        flow: Some(h.flow),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds an IPv4/UDP packet (checksums left zero; UDP checksum 0 is legal in IPv4).
    pub(crate) fn ipv4_udp(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, data: &[u8]) -> Vec<u8> {
        let total = 28 + data.len();
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 17;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p[20..22].copy_from_slice(&sp.to_be_bytes());
        p[22..24].copy_from_slice(&dp.to_be_bytes());
        p[24..26].copy_from_slice(&((8 + data.len()) as u16).to_be_bytes());
        p[28..].copy_from_slice(data);
        p
    }

    #[test]
    fn parses_udp_v4() {
        let p = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1234, 53, b"q");
        let k = IpHeader::read(&p).unwrap().flow;
        assert_eq!(k.protocol, 17);
        assert_eq!((k.src_port, k.dst_port), (1234, 53));
        assert_eq!(k.to_string(), "udp 10.0.0.1:1234 -> 10.0.0.2:53");
        assert_eq!(k.reversed().reversed(), k);
    }

    #[test]
    fn parses_v6_and_portless() {
        let mut p = vec![0u8; 48];
        p[0] = 0x60;
        p[6] = 58;
        p[23] = 1;
        p[39] = 2;
        let k = IpHeader::read(&p).unwrap().flow;
        assert_eq!((k.protocol, k.src_port), (58, 0));
        assert_eq!(k.to_string(), "icmpv6 [::1]:0 -> [::2]:0");
        assert!(IpHeader::read(&p[..30]).is_none());
        assert!(IpHeader::read(&[0x45; 10]).is_none());
    }

    #[test]
    fn destinations() {
        let mut v4 = [0u8; 20];
        v4[0] = 0x45;
        v4[16..20].copy_from_slice(&[10, 0, 0, 2]);
        assert_eq!(packet_destination(&v4), Some("10.0.0.2".parse().unwrap()));
        let mut v6 = [0u8; 40];
        v6[0] = 0x60;
        v6[39] = 1;
        assert_eq!(packet_destination(&v6), Some("::1".parse().unwrap()));
        assert_eq!(packet_destination(&v4[..10]), None);
        assert_eq!(packet_destination(&[]), None);
        assert_eq!(packet_destination(&[0x10; 40]), None);
    }
}
