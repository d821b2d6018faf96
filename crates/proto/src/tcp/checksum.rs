//! Internet checksum (RFC 1071), the TCP pseudo-header (RFC 9293 §3.1 for IPv4, RFC 8200 §8.1
//! for IPv6) and incremental update (RFC 1624).
//!
//! Sums are accumulated in a `u64` as a ones'-complement sum of big-endian 16-bit words
//! ([`Sum`]); only the final [`Sum::finish`] folds and complements. When summing a message in
//! several pieces every piece except the last must have even length (a 16-bit word must not
//! straddle two pieces).

use std::net::IpAddr;

/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;

/// A running ones'-complement sum of 16-bit big-endian words (not yet folded or complemented).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum(u64);

impl Sum {
    /// The empty sum.
    pub const fn new() -> Self {
        Sum(0)
    }

    /// Add `data` as big-endian words; an odd trailing byte is padded with a zero byte.
    pub fn add_bytes(mut self, data: &[u8]) -> Self {
        let mut chunks = data.chunks_exact(2);
        for c in &mut chunks {
            self.0 += u64::from(u16::from_be_bytes([c[0], c[1]]));
        }
        if let [last] = chunks.remainder() {
            self.0 += u64::from(*last) << 8;
        }
        self
    }

    /// Add one 16-bit word.
    pub fn add_u16(mut self, word: u16) -> Self {
        self.0 += u64::from(word);
        self
    }

    /// Add a 32-bit value as two words.
    pub fn add_u32(self, v: u32) -> Self {
        self.add_u16((v >> 16) as u16).add_u16(v as u16)
    }

    /// Add another sum.
    pub fn add_sum(mut self, other: Sum) -> Self {
        self.0 += other.0;
        self
    }

    /// The folded 16-bit ones'-complement sum (not complemented).
    pub fn fold(self) -> u16 {
        let mut s = self.0;
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    /// The checksum: the complement of the folded sum.
    pub fn finish(self) -> u16 {
        !self.fold()
    }
}

/// RFC 1071 internet checksum of `data` (checksum field, if inside, must be zero).
pub fn internet_checksum(data: &[u8]) -> u16 {
    Sum::new().add_bytes(data).finish()
}

/// Sum of the TCP/UDP pseudo-header: addresses, protocol and upper-layer length.
///
/// IPv4 (RFC 9293 §3.1): src, dst, zero, protocol, 16-bit TCP length. IPv6 (RFC 8200 §8.1): src,
/// dst, 32-bit upper-layer length, three zero bytes, next header. Both reduce to the same word sum
/// for lengths below 2^16. Mixed families are summed as given (callers validate families).
pub fn pseudo_header_sum(src: IpAddr, dst: IpAddr, protocol: u8, len: u32) -> Sum {
    add_addr(add_addr(Sum::new(), src), dst)
        .add_u32(len)
        .add_u16(u16::from(protocol))
}

fn add_addr(s: Sum, a: IpAddr) -> Sum {
    match a {
        IpAddr::V4(a) => s.add_bytes(&a.octets()),
        IpAddr::V6(a) => s.add_bytes(&a.octets()),
    }
}

/// The TCP checksum of `segment` (TCP header + payload) between `src` and `dst`, treating the
/// checksum field (bytes 16..18) as zero whatever it holds. `segment` shorter than 18 bytes is
/// summed as is.
pub fn tcp_checksum(src: IpAddr, dst: IpAddr, segment: &[u8]) -> u16 {
    let mut s = pseudo_header_sum(src, dst, IPPROTO_TCP, segment.len() as u32);
    if segment.len() >= 18 {
        s = s.add_bytes(&segment[..16]).add_bytes(&segment[18..]);
    } else {
        s = s.add_bytes(segment);
    }
    s.finish()
}

/// Does the checksum stored in `segment` verify (the sum over pseudo-header and segment,
/// checksum included, is 0xFFFF)?
pub fn verify_tcp_checksum(src: IpAddr, dst: IpAddr, segment: &[u8]) -> bool {
    pseudo_header_sum(src, dst, IPPROTO_TCP, segment.len() as u32)
        .add_bytes(segment)
        .fold()
        == 0xffff
}

/// RFC 1624 eqn. 3 incremental update: the new checksum when one 16-bit word of the covered data
/// changes from `old_word` to `new_word`: `HC' = ~(~HC + ~m + m')`.
pub fn checksum_update_u16(checksum: u16, old_word: u16, new_word: u16) -> u16 {
    Sum::new()
        .add_u16(!checksum)
        .add_u16(!old_word)
        .add_u16(new_word)
        .finish()
}

/// RFC 1624 update for a 32-bit field (e.g. a sequence number) at an even offset.
pub fn checksum_update_u32(checksum: u16, old: u32, new: u32) -> u16 {
    let c = checksum_update_u16(checksum, (old >> 16) as u16, (new >> 16) as u16);
    checksum_update_u16(c, old as u16, new as u16)
}

/// RFC 1624 update for a block of equal length replaced at an even offset of the covered data:
/// `HC' = ~(~HC + ~sum(old) + sum(new))`. Returns `checksum` unchanged when lengths differ
/// (callers must not do that).
pub fn checksum_update_block(checksum: u16, old: &[u8], new: &[u8]) -> u16 {
    if old.len() != new.len() {
        return checksum;
    }
    let old_sum = Sum::new().add_bytes(old).fold();
    let new_sum = Sum::new().add_bytes(new).fold();
    Sum::new()
        .add_u16(!checksum)
        .add_u16(!old_sum)
        .add_u16(new_sum)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3 example: words 0001 f203 f4f5 f6f7 sum to 0xddf2 (folded).
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(Sum::new().add_bytes(&d).fold(), 0xddf2);
        assert_eq!(internet_checksum(&d), !0xddf2);
    }

    #[test]
    fn odd_length_pads() {
        assert_eq!(internet_checksum(&[0x12]), !0x1200);
    }

    #[test]
    fn incremental_matches_full() {
        let mut data = vec![0u8; 40];
        for (i, b) in data.iter_mut().enumerate() {
            *b = (i * 37 + 11) as u8;
        }
        let c0 = internet_checksum(&data);
        let old = [data[10], data[11], data[12], data[13]];
        data[10..14].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        let c1 = internet_checksum(&data);
        assert_eq!(checksum_update_block(c0, &old, &data[10..14]), c1);
        assert_eq!(
            checksum_update_u32(c0, u32::from_be_bytes(old), 0xdeadbeef),
            c1
        );
    }
}
