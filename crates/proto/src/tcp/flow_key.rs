//! Connection identity: directed flow keys and their direction-normalised form.
//!
//! A TCP connection is identified by its 4-tuple (RFC 9293 §3.3.1 "socket pair"). The engine
//! keeps one record per connection with an encoder and a decoder per direction (design brief:
//! "each direction has its own encoder and decoder"), so both directions must map to one
//! [`ConnKey`]; [`Direction`] says which way a given packet travels.

use std::fmt;
use std::net::IpAddr;

/// One end of a connection: address and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    /// IP address.
    pub addr: IpAddr,
    /// TCP port.
    pub port: u16,
}

impl Endpoint {
    /// An endpoint.
    pub const fn new(addr: IpAddr, port: u16) -> Self {
        Endpoint { addr, port }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.addr {
            IpAddr::V4(a) => write!(f, "{a}:{}", self.port),
            IpAddr::V6(a) => write!(f, "[{a}]:{}", self.port),
        }
    }
}

/// A directed flow: packets from `src` to `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    /// Sender of the packets.
    pub src: Endpoint,
    /// Receiver of the packets.
    pub dst: Endpoint,
}

/// Which way a directed flow runs relative to its [`ConnKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From `ConnKey::a` to `ConnKey::b`.
    AToB,
    /// From `ConnKey::b` to `ConnKey::a`.
    BToA,
}

impl Direction {
    /// The other direction.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::AToB => Direction::BToA,
            Direction::BToA => Direction::AToB,
        }
    }
}

/// A connection, direction-normalised: `a` is the smaller endpoint (by address, then port), so
/// both directions of one connection give the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnKey {
    /// The smaller endpoint.
    pub a: Endpoint,
    /// The larger endpoint.
    pub b: Endpoint,
}

impl FlowKey {
    /// A directed flow.
    pub const fn new(src: Endpoint, dst: Endpoint) -> Self {
        FlowKey { src, dst }
    }

    /// The opposite direction (e.g. the flow an ACK toward the sender travels on).
    pub fn reversed(&self) -> FlowKey {
        FlowKey {
            src: self.dst,
            dst: self.src,
        }
    }

    /// The connection this flow belongs to and its direction within it.
    pub fn normalize(&self) -> (ConnKey, Direction) {
        if self.src <= self.dst {
            (
                ConnKey {
                    a: self.src,
                    b: self.dst,
                },
                Direction::AToB,
            )
        } else {
            (
                ConnKey {
                    a: self.dst,
                    b: self.src,
                },
                Direction::BToA,
            )
        }
    }

    /// Are source and destination of the same address family?
    pub fn same_family(&self) -> bool {
        self.src.addr.is_ipv6() == self.dst.addr.is_ipv6()
    }

    /// The four port bytes of a TCP header on this flow (source port, destination port).
    pub fn port_bytes(&self) -> [u8; 4] {
        let s = self.src.port.to_be_bytes();
        let d = self.dst.port.to_be_bytes();
        [s[0], s[1], d[0], d[1]]
    }
}

impl ConnKey {
    /// The directed flow for `dir`.
    pub fn flow(&self, dir: Direction) -> FlowKey {
        match dir {
            Direction::AToB => FlowKey::new(self.a, self.b),
            Direction::BToA => FlowKey::new(self.b, self.a),
        }
    }
}

impl fmt::Display for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.src, self.dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn both_directions_same_conn() {
        let x = Endpoint::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 40000);
        let y = Endpoint::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 80);
        let f = FlowKey::new(x, y);
        let (c1, d1) = f.normalize();
        let (c2, d2) = f.reversed().normalize();
        assert_eq!(c1, c2);
        assert_eq!(d1, d2.reverse());
        assert_eq!(c1.flow(d1), f);
        assert_eq!(c2.flow(d2), f.reversed());
        assert_eq!(f.port_bytes(), [0x9c, 0x40, 0, 80]);
    }
}
