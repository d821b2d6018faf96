//! IP prefixes (`10.0.0.0/24`, `fd00::/64`) and a longest-prefix-match table.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use thiserror::Error;

/// Why a CIDR string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CidrError {
    /// No `/` separating address and prefix length.
    #[error("'{0}' is not in ADDRESS/PREFIX form (e.g. 10.0.0.0/24)")]
    MissingPrefix(String),
    /// The address part did not parse.
    #[error("'{0}' has an invalid IP address")]
    BadAddress(String),
    /// The prefix length did not parse or is too long for the address family.
    #[error("'{0}' has an invalid prefix length (0..=32 for IPv4, 0..=128 for IPv6)")]
    BadPrefix(String),
}

/// An IP address with a prefix length. The address keeps any host bits it was written with
/// (an interface address such as `10.0.0.1/24`); [`Cidr::network`] masks them off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    /// The address as written.
    pub addr: IpAddr,
    /// Prefix length in bits.
    pub prefix: u8,
}

impl Cidr {
    /// Builds a prefix; `None` if `prefix` is too long for the address family.
    pub fn new(addr: IpAddr, prefix: u8) -> Option<Self> {
        (prefix <= max_prefix(addr)).then_some(Cidr { addr, prefix })
    }

    /// The network address (host bits cleared).
    pub fn network(&self) -> IpAddr {
        mask(self.addr, self.prefix)
    }

    /// Whether `ip` lies inside this prefix (always false across address families).
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.addr.is_ipv4() && mask(ip, self.prefix) == self.network()
    }

    /// Whether the two prefixes share at least one address.
    pub fn overlaps(&self, other: &Cidr) -> bool {
        let shorter = self.prefix.min(other.prefix);
        self.addr.is_ipv4() == other.addr.is_ipv4()
            && mask(self.addr, shorter) == mask(other.addr, shorter)
    }

    /// Whether the address has host bits set (i.e. it names an interface, not a network).
    pub fn has_host_bits(&self) -> bool {
        self.network() != self.addr
    }
}

/// The first host address of the network `addr` belongs to (its last bit set).
pub(crate) fn first_host(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V4(a) => IpAddr::V4((u32::from(a) | 1).into()),
        IpAddr::V6(a) => IpAddr::V6((u128::from(a) | 1).into()),
    }
}

/// 32 or 128.
pub(crate) fn max_prefix(addr: IpAddr) -> u8 {
    if addr.is_ipv4() { 32 } else { 128 }
}

fn mask(addr: IpAddr, prefix: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let m = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(prefix.min(32)))
            };
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(prefix.min(128)))
            };
            IpAddr::V6((u128::from(a) & m).into())
        }
    }
}

impl FromStr for Cidr {
    type Err = CidrError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, p) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| CidrError::MissingPrefix(s.to_string()))?;
        let addr: IpAddr = a
            .parse()
            .map_err(|_| CidrError::BadAddress(s.to_string()))?;
        let prefix: u8 = p.parse().map_err(|_| CidrError::BadPrefix(s.to_string()))?;
        Cidr::new(addr, prefix).ok_or_else(|| CidrError::BadPrefix(s.to_string()))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// Longest-prefix-match table mapping prefixes to values (peer indices).
#[derive(Debug, Clone, Default)]
pub struct PrefixTable<T> {
    /// Entries sorted by prefix length, longest first.
    entries: Vec<(Cidr, T)>,
}

impl<T: Clone> PrefixTable<T> {
    /// An empty table.
    pub fn new() -> Self {
        PrefixTable {
            entries: Vec::new(),
        }
    }

    /// Adds a prefix (host bits are ignored).
    pub fn insert(&mut self, cidr: Cidr, value: T) {
        let net = Cidr {
            addr: cidr.network(),
            prefix: cidr.prefix,
        };
        let at = self
            .entries
            .iter()
            .position(|(c, _)| c.prefix < net.prefix)
            .unwrap_or(self.entries.len());
        self.entries.insert(at, (net, value));
    }

    /// The value of the longest prefix containing `ip`.
    pub fn lookup(&self, ip: IpAddr) -> Option<&T> {
        self.entries
            .iter()
            .find(|(c, _)| c.contains(ip))
            .map(|(_, v)| v)
    }

    /// Number of prefixes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Cidr {
        s.parse().unwrap()
    }

    #[test]
    fn parse_and_display() {
        assert_eq!(c("10.0.0.1/24").to_string(), "10.0.0.1/24");
        assert_eq!(c("10.0.0.1/24").network().to_string(), "10.0.0.0");
        assert!(c("10.0.0.1/24").has_host_bits());
        assert_eq!(c("fd00::1/64").network().to_string(), "fd00::");
        assert!(matches!(
            "10.0.0.0".parse::<Cidr>(),
            Err(CidrError::MissingPrefix(_))
        ));
        assert!(matches!(
            "10.0.0/8".parse::<Cidr>(),
            Err(CidrError::BadAddress(_))
        ));
        assert!(matches!(
            "10.0.0.0/33".parse::<Cidr>(),
            Err(CidrError::BadPrefix(_))
        ));
        assert!("::/129".parse::<Cidr>().is_err());
        assert!("::/128".parse::<Cidr>().is_ok());
    }

    #[test]
    fn overlap_and_contains() {
        assert!(c("10.0.0.0/8").overlaps(&c("10.1.0.0/16")));
        assert!(c("10.1.0.0/16").overlaps(&c("10.0.0.0/8")));
        assert!(!c("10.1.0.0/16").overlaps(&c("10.2.0.0/16")));
        assert!(c("0.0.0.0/0").overlaps(&c("1.2.3.4/32")));
        assert!(!c("0.0.0.0/0").overlaps(&c("::/0")));
        assert!(c("10.0.0.0/8").contains("10.9.9.9".parse().unwrap()));
        assert!(!c("10.0.0.0/8").contains("11.0.0.1".parse().unwrap()));
    }

    #[test]
    fn longest_prefix_wins() {
        let mut t = PrefixTable::new();
        t.insert(c("0.0.0.0/0"), 0);
        t.insert(c("10.0.0.0/8"), 1);
        t.insert(c("10.1.2.0/24"), 2);
        t.insert(c("fd00::/8"), 3);
        assert_eq!(t.lookup("10.1.2.3".parse().unwrap()), Some(&2));
        assert_eq!(t.lookup("10.1.3.3".parse().unwrap()), Some(&1));
        assert_eq!(t.lookup("8.8.8.8".parse().unwrap()), Some(&0));
        assert_eq!(t.lookup("fd12::1".parse().unwrap()), Some(&3));
        assert_eq!(t.lookup("fe80::1".parse().unwrap()), None);
        assert_eq!(t.len(), 4);
    }
}
