//! Flow identity (protocol + addresses + ports) parsed from an IP packet, for counters.

use std::fmt;
use std::net::IpAddr;

/// A 5-tuple. Ports are zero for protocols without ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// IP protocol number (6 = TCP, 17 = UDP, 1 = ICMP, ...).
    pub protocol: u8,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
}

impl FlowKey {
    /// Parses the 5-tuple of an IPv4 or IPv6 packet (IPv6 extension headers are not walked:
    /// the first next-header value is taken as the protocol).
    pub fn parse(packet: &[u8]) -> Option<FlowKey> {
        let (protocol, src, dst, l4) = match packet.first()? >> 4 {
            4 if packet.len() >= 20 => {
                let ihl = usize::from(packet[0] & 0x0f) * 4;
                let src: [u8; 4] = packet[12..16].try_into().ok()?;
                let dst: [u8; 4] = packet[16..20].try_into().ok()?;
                let frag_offset = u16::from_be_bytes([packet[6], packet[7]]) & 0x1fff;
                let l4 = if ihl >= 20 && frag_offset == 0 {
                    packet.get(ihl..).unwrap_or(&[])
                } else {
                    &[]
                };
                (packet[9], IpAddr::from(src), IpAddr::from(dst), l4)
            }
            6 if packet.len() >= 40 => {
                let src: [u8; 16] = packet[8..24].try_into().ok()?;
                let dst: [u8; 16] = packet[24..40].try_into().ok()?;
                (
                    packet[6],
                    IpAddr::from(src),
                    IpAddr::from(dst),
                    &packet[40..],
                )
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
        Some(FlowKey {
            protocol,
            src,
            dst,
            src_port,
            dst_port,
        })
    }

    /// The same flow seen from the other end.
    pub fn reversed(self) -> FlowKey {
        FlowKey {
            protocol: self.protocol,
            src: self.dst,
            dst: self.src,
            src_port: self.dst_port,
            dst_port: self.src_port,
        }
    }
}

impl fmt::Display for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = match self.protocol {
            6 => "tcp".to_string(),
            17 => "udp".to_string(),
            1 => "icmp".to_string(),
            58 => "icmpv6".to_string(),
            n => format!("proto{n}"),
        };
        let addr = |ip: IpAddr, port: u16| match ip {
            IpAddr::V4(a) => format!("{a}:{port}"),
            IpAddr::V6(a) => format!("[{a}]:{port}"),
        };
        write!(
            f,
            "{proto} {} -> {}",
            addr(self.src, self.src_port),
            addr(self.dst, self.dst_port)
        )
    }
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
        let k = FlowKey::parse(&p).unwrap();
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
        let k = FlowKey::parse(&p).unwrap();
        assert_eq!((k.protocol, k.src_port), (58, 0));
        assert_eq!(k.to_string(), "icmpv6 [::1]:0 -> [::2]:0");
        assert!(FlowKey::parse(&p[..30]).is_none());
        assert!(FlowKey::parse(&[0x45; 10]).is_none());
    }
}
