//! Flow identity: the TCP connection a DATA or ACK frame belongs to.
//!
//! Carried explicitly (addresses and ports) at byte offset 4 of every DATA and ACK frame, with the
//! IP version in bit 7 ([`IPV6_FLAG`]) of byte 2. Both directions name the *data direction's*
//! tuple: a DATA frame names (sender, receiver) of the data it carries, and the ACK for that data
//! names the same tuple, so the data sender looks its flow up without reversing anything.
//!
//! The explicit tuple (12 B for IPv4, 36 B for IPv6) replaces the paper's 4 bytes of ports
//! (Sundararajan et al. §III-B: "the port information is needed for the receiver to identify the
//! coded packet's session") because a gateway serves many hosts: ports alone do not identify a
//! connection. It is preferred to a negotiated flow id because it needs no handshake state: a
//! gateway that restarts, or that lost the first packets of a flow, can still attribute every
//! frame. Compressing it to a negotiated flow id is a possible later optimisation.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::IpVersion;
use crate::bytes::{put_u16, u16_at};

/// Bit 7 of byte 2 (the flags byte of DATA, the high byte of the ACK's 16-bit flags): the flow
/// identity holds IPv6 addresses (36 B) instead of IPv4 (12 B).
pub const IPV6_FLAG: u8 = 0x80;
/// Byte offset of the flow identity in DATA and ACK frames.
pub(crate) const FLOW_OFFSET: usize = 4;
/// Flow identity length for IPv4: two 4-byte addresses, two 2-byte ports.
pub(crate) const FLOW_LEN_V4: usize = 12;
/// Flow identity length for IPv6: two 16-byte addresses, two 2-byte ports.
pub(crate) const FLOW_LEN_V6: usize = 36;

/// The two addresses of a flow, of one IP version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlowAddrs {
    /// An IPv4 connection.
    V4 {
        /// Source address of the data direction.
        src: Ipv4Addr,
        /// Destination address of the data direction.
        dst: Ipv4Addr,
    },
    /// An IPv6 connection.
    V6 {
        /// Source address of the data direction.
        src: Ipv6Addr,
        /// Destination address of the data direction.
        dst: Ipv6Addr,
    },
}

/// The data direction's TCP 4-tuple (plus IP version) of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowId {
    /// Source and destination address of the data direction.
    pub addrs: FlowAddrs,
    /// TCP source port of the data direction.
    pub src_port: u16,
    /// TCP destination port of the data direction.
    pub dst_port: u16,
}

impl FlowId {
    /// An IPv4 flow from `src:src_port` to `dst:dst_port`.
    pub const fn v4(src: Ipv4Addr, src_port: u16, dst: Ipv4Addr, dst_port: u16) -> Self {
        FlowId {
            addrs: FlowAddrs::V4 { src, dst },
            src_port,
            dst_port,
        }
    }

    /// An IPv6 flow from `[src]:src_port` to `[dst]:dst_port`.
    pub const fn v6(src: Ipv6Addr, src_port: u16, dst: Ipv6Addr, dst_port: u16) -> Self {
        FlowId {
            addrs: FlowAddrs::V6 { src, dst },
            src_port,
            dst_port,
        }
    }

    /// IP version of the flow.
    pub const fn ip_version(&self) -> IpVersion {
        match self.addrs {
            FlowAddrs::V4 { .. } => IpVersion::V4,
            FlowAddrs::V6 { .. } => IpVersion::V6,
        }
    }

    /// Bytes this identity takes on the wire (12 or 36).
    pub const fn wire_len(&self) -> usize {
        self.ip_version().flow_len()
    }

    /// Source address of the data direction.
    pub const fn src_addr(&self) -> IpAddr {
        match self.addrs {
            FlowAddrs::V4 { src, .. } => IpAddr::V4(src),
            FlowAddrs::V6 { src, .. } => IpAddr::V6(src),
        }
    }

    /// Destination address of the data direction.
    pub const fn dst_addr(&self) -> IpAddr {
        match self.addrs {
            FlowAddrs::V4 { dst, .. } => IpAddr::V4(dst),
            FlowAddrs::V6 { dst, .. } => IpAddr::V6(dst),
        }
    }

    /// The same connection seen from the other direction (addresses and ports swapped).
    pub const fn reversed(&self) -> FlowId {
        let addrs = match self.addrs {
            FlowAddrs::V4 { src, dst } => FlowAddrs::V4 { src: dst, dst: src },
            FlowAddrs::V6 { src, dst } => FlowAddrs::V6 { src: dst, dst: src },
        };
        FlowId {
            addrs,
            src_port: self.dst_port,
            dst_port: self.src_port,
        }
    }

    /// Reads an identity from `b` (which starts at the identity and holds at least
    /// `ip.flow_len()` bytes).
    pub(crate) fn read(b: &[u8], ip: IpVersion) -> FlowId {
        match ip {
            IpVersion::V4 => {
                let a = |o: usize| Ipv4Addr::new(b[o], b[o + 1], b[o + 2], b[o + 3]);
                FlowId::v4(a(0), u16_at(b, 8), a(4), u16_at(b, 10))
            }
            IpVersion::V6 => {
                let a = |o: usize| {
                    let mut x = [0u8; 16];
                    x.copy_from_slice(&b[o..o + 16]);
                    Ipv6Addr::from(x)
                };
                FlowId::v6(a(0), u16_at(b, 32), a(16), u16_at(b, 34))
            }
        }
    }

    /// Writes the identity to `b` (which starts at the identity and holds at least
    /// `self.wire_len()` bytes). The IP version bit lives in the flags and is set by the caller.
    pub(crate) fn write(&self, b: &mut [u8]) {
        let ports_at = match self.addrs {
            FlowAddrs::V4 { src, dst } => {
                b[0..4].copy_from_slice(&src.octets());
                b[4..8].copy_from_slice(&dst.octets());
                8
            }
            FlowAddrs::V6 { src, dst } => {
                b[0..16].copy_from_slice(&src.octets());
                b[16..32].copy_from_slice(&dst.octets());
                32
            }
        };
        put_u16(b, ports_at, self.src_port);
        put_u16(b, ports_at + 2, self.dst_port);
    }
}

/// IP version indicated by a flags byte 2.
pub(crate) const fn ip_version_of(flags_byte: u8) -> IpVersion {
    if flags_byte & IPV6_FLAG != 0 {
        IpVersion::V6
    } else {
        IpVersion::V4
    }
}
