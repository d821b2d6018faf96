//! Parsed view of a TCP/IP packet (RFC 9293 §3.1 header format).

use std::fmt;
use std::ops::BitOr;

use super::TcpError;
use super::checksum::verify_tcp_checksum;
use super::flow_key::{Endpoint, FlowKey};
use super::ip::{IpMeta, parse_ip};
use super::seq::seq_add;

/// Length of a TCP header without options.
pub const TCP_HEADER_MIN: usize = 20;
/// Largest TCP header (data offset 15).
pub const TCP_HEADER_MAX: usize = 60;

/// TCP control bits (header byte 13).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    /// FIN: no more data from sender; occupies one sequence number.
    pub const FIN: TcpFlags = TcpFlags(0x01);
    /// SYN: synchronise sequence numbers; occupies one sequence number.
    pub const SYN: TcpFlags = TcpFlags(0x02);
    /// RST: reset the connection.
    pub const RST: TcpFlags = TcpFlags(0x04);
    /// PSH: push function.
    pub const PSH: TcpFlags = TcpFlags(0x08);
    /// ACK: acknowledgment field significant.
    pub const ACK: TcpFlags = TcpFlags(0x10);
    /// URG: urgent pointer significant.
    pub const URG: TcpFlags = TcpFlags(0x20);
    /// ECE: ECN echo (RFC 3168).
    pub const ECE: TcpFlags = TcpFlags(0x40);
    /// CWR: congestion window reduced (RFC 3168).
    pub const CWR: TcpFlags = TcpFlags(0x80);

    /// Raw bits.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Are all bits of `other` set?
    pub fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// These flags with `other` set or cleared.
    pub fn with(self, other: TcpFlags, on: bool) -> TcpFlags {
        if on {
            TcpFlags(self.0 | other.0)
        } else {
            TcpFlags(self.0 & !other.0)
        }
    }
}

impl BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for TcpFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [&str; 8] = ["FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"];
        let mut first = true;
        for (i, n) in NAMES.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(n)?;
                first = false;
            }
        }
        if first {
            f.write_str("-")?;
        }
        Ok(())
    }
}

/// The fixed TCP header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpHeader {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Header length in bytes (data offset × 4), options included.
    pub header_len: usize,
    /// Low nibble of byte 12 (reserved bits; the old NS bit is bit 0), kept as is.
    pub reserved: u8,
    /// Control bits.
    pub flags: TcpFlags,
    /// Window (unscaled, as on the wire).
    pub window: u16,
    /// Checksum as on the wire.
    pub checksum: u16,
    /// Urgent pointer.
    pub urgent: u16,
}

impl TcpHeader {
    /// Parse the header at the start of `seg` (TCP header + payload).
    pub fn parse(seg: &[u8]) -> Result<TcpHeader, TcpError> {
        if seg.len() < TCP_HEADER_MIN {
            return Err(TcpError::Truncated {
                what: "TCP header",
                need: TCP_HEADER_MIN,
                have: seg.len(),
            });
        }
        let doff = seg[12] >> 4;
        let header_len = usize::from(doff) * 4;
        if doff < 5 {
            return Err(TcpError::BadDataOffset(doff));
        }
        if header_len > seg.len() {
            return Err(TcpError::Truncated {
                what: "TCP options",
                need: header_len,
                have: seg.len(),
            });
        }
        let u16at = |i: usize| u16::from_be_bytes([seg[i], seg[i + 1]]);
        let u32at = |i: usize| u32::from_be_bytes([seg[i], seg[i + 1], seg[i + 2], seg[i + 3]]);
        Ok(TcpHeader {
            src_port: u16at(0),
            dst_port: u16at(2),
            seq: u32at(4),
            ack: u32at(8),
            header_len,
            reserved: seg[12] & 0x0f,
            flags: TcpFlags(seg[13]),
            window: u16at(14),
            checksum: u16at(16),
            urgent: u16at(18),
        })
    }
}

/// A parsed TCP/IP packet borrowing the original bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpPacket<'a> {
    /// IP header facts.
    pub ip: IpMeta,
    /// TCP header fields.
    pub tcp: TcpHeader,
    /// The whole TCP segment (header, options, payload), cut to the IP length.
    pub segment: &'a [u8],
}

impl<'a> TcpPacket<'a> {
    /// Parse an IPv4 or IPv6 packet carrying a TCP segment. Never panics; see [`TcpError`].
    pub fn parse(packet: &'a [u8]) -> Result<Self, TcpError> {
        let (ip, segment) = parse_ip(packet)?;
        let tcp = TcpHeader::parse(segment)?;
        Ok(TcpPacket { ip, tcp, segment })
    }

    /// Option bytes (between the fixed header and the payload).
    pub fn options(&self) -> &'a [u8] {
        &self.segment[TCP_HEADER_MIN..self.tcp.header_len]
    }

    /// Payload bytes.
    pub fn payload(&self) -> &'a [u8] {
        &self.segment[self.tcp.header_len..]
    }

    /// The TCP header bytes (options included).
    pub fn header_bytes(&self) -> &'a [u8] {
        &self.segment[..self.tcp.header_len]
    }

    /// The directed flow (source to destination) of this packet.
    pub fn flow(&self) -> FlowKey {
        FlowKey::new(
            Endpoint::new(self.ip.src, self.tcp.src_port),
            Endpoint::new(self.ip.dst, self.tcp.dst_port),
        )
    }

    /// The TCP subheader followed by the payload (§III-A: the segment without its 4 port bytes).
    pub fn subheader(&self) -> &'a [u8] {
        &self.segment[4..]
    }

    /// Sequence space occupied: payload length, plus one for SYN and one for FIN (RFC 9293
    /// §3.4 "SEG.LEN").
    pub fn seq_len(&self) -> u32 {
        let mut n = self.payload().len() as u32;
        if self.tcp.flags.contains(TcpFlags::SYN) {
            n += 1;
        }
        if self.tcp.flags.contains(TcpFlags::FIN) {
            n += 1;
        }
        n
    }

    /// One past the last sequence number occupied (`seq + seq_len`).
    pub fn end_seq(&self) -> u32 {
        seq_add(self.tcp.seq, self.seq_len())
    }

    /// Does the TCP checksum verify?
    pub fn checksum_ok(&self) -> bool {
        verify_tcp_checksum(self.ip.src, self.ip.dst, self.segment)
    }

    /// SYN or RST: control segments bypass the coding buffer (§III-A, last paragraph).
    pub fn is_control(&self) -> bool {
        self.tcp.flags.contains(TcpFlags::SYN) || self.tcp.flags.contains(TcpFlags::RST)
    }
}
