//! The TCP subheader (§III-A): a TCP segment without its four port bytes.
//!
//! Layout (offsets within the subheader; TCP header offset minus 4):
//!
//! | 0..4 | 4..8 | 8 | 9 | 10..12 | 12..14 | 14..16 | 16.. | header_len.. |
//! |------|------|---|---|--------|--------|--------|------|--------------|
//! | seq  | ack  | data offset + reserved | flags | window | checksum | urgent | options | payload |
//!
//! The ports travel in the NC header because the receiver needs them to find the session and
//! they must not be coded (§III-A "The reason the port information is excluded from the coding").
//! [`rebuild_packet`] puts a decoded subheader back behind the flow's ports and a synthesised IP
//! header *without touching the TCP checksum bytes*: the receiving kernel then verifies the
//! sender kernel's checksum end to end, so a decoding bug shows up as a checksum failure.

use std::net::IpAddr;

use super::TcpError;
use super::checksum::{IPPROTO_TCP, pseudo_header_sum};
use super::flow_key::FlowKey;
use super::ip::{IpParams, ip_header_len, write_ip_header};
use super::segment::{TcpFlags, TcpPacket};
use super::seq::{seq_add, seq_diff, seq_gt, seq_le};

/// Length of a subheader without options (20-byte TCP header minus 4 port bytes).
pub const SUBHEADER_MIN: usize = 16;

/// Read-only view of a subheader followed by its payload (and possibly zero padding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subheader<'a> {
    bytes: &'a [u8],
    header_len: usize,
}

impl<'a> Subheader<'a> {
    /// Validate the fixed part and the data offset of `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, TcpError> {
        if bytes.len() < SUBHEADER_MIN {
            return Err(TcpError::Truncated {
                what: "TCP subheader",
                need: SUBHEADER_MIN,
                have: bytes.len(),
            });
        }
        let doff = bytes[8] >> 4;
        if doff < 5 {
            return Err(TcpError::BadDataOffset(doff));
        }
        let header_len = usize::from(doff) * 4 - 4;
        if header_len > bytes.len() {
            return Err(TcpError::Truncated {
                what: "TCP subheader options",
                need: header_len,
                have: bytes.len(),
            });
        }
        Ok(Subheader { bytes, header_len })
    }

    fn u16at(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.bytes[i], self.bytes[i + 1]])
    }

    fn u32at(&self, i: usize) -> u32 {
        let b = self.bytes;
        u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
    }

    /// Sequence number.
    pub fn seq(&self) -> u32 {
        self.u32at(0)
    }
    /// Acknowledgment number.
    pub fn ack(&self) -> u32 {
        self.u32at(4)
    }
    /// Control bits.
    pub fn flags(&self) -> TcpFlags {
        TcpFlags(self.bytes[9])
    }
    /// Window field.
    pub fn window(&self) -> u16 {
        self.u16at(10)
    }
    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        self.u16at(12)
    }
    /// Urgent pointer.
    pub fn urgent(&self) -> u16 {
        self.u16at(14)
    }
    /// Subheader length in bytes (TCP header length − 4).
    pub fn header_len(&self) -> usize {
        self.header_len
    }
    /// Option bytes.
    pub fn options(&self) -> &'a [u8] {
        &self.bytes[SUBHEADER_MIN..self.header_len]
    }
    /// Everything after the subheader (payload, plus any zero padding still attached).
    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[self.header_len..]
    }
    /// The whole byte string.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The true length of this subheader+payload once the coding padding is removed, given the
    /// packet's `Start`/`End` (first and last sequence number occupied, from the NC header,
    /// §IV-B "dummy zero symbols ... are pruned using the coding header information").
    /// Fails when the subheader's seq is not `start` or the bytes are too short: either means
    /// a decoding error or a corrupt header.
    pub fn unpadded_len(&self, start: u32, end: u32) -> Result<usize, TcpError> {
        if self.seq() != start || seq_gt(start, end) {
            return Err(TcpError::SubheaderMismatch {
                seq: self.seq(),
                start,
                end,
            });
        }
        let span = seq_diff(end, start) as u32 as u64 + 1;
        let ctl = u64::from(self.flags().contains(TcpFlags::FIN))
            + u64::from(self.flags().contains(TcpFlags::SYN));
        let payload = span.checked_sub(ctl).ok_or(TcpError::SubheaderMismatch {
            seq: self.seq(),
            start,
            end,
        })?;
        let total = self.header_len as u64 + payload;
        if total > self.bytes.len() as u64 {
            return Err(TcpError::Truncated {
                what: "decoded payload",
                need: total as usize,
                have: self.bytes.len(),
            });
        }
        Ok(total as usize)
    }
}

/// Split a parsed packet into its flow (addresses and ports) and its subheader+payload.
pub fn split<'a>(pkt: &TcpPacket<'a>) -> (FlowKey, &'a [u8]) {
    (pkt.flow(), pkt.subheader())
}

/// Rebuild a full IP packet from a flow, a subheader+payload (padding already removed) and IP
/// parameters, appending to `out` (which is cleared first). The TCP header and checksum bytes are
/// copied verbatim (see the module docs).
pub fn rebuild_packet_into(
    out: &mut Vec<u8>,
    flow: &FlowKey,
    subheader: &[u8],
    ip: &IpParams,
) -> Result<(), TcpError> {
    Subheader::parse(subheader)?;
    out.clear();
    out.reserve(ip_header_len(flow.src.addr) + 4 + subheader.len());
    write_ip_header(out, flow.src.addr, flow.dst.addr, 4 + subheader.len(), ip)?;
    out.extend_from_slice(&flow.port_bytes());
    out.extend_from_slice(subheader);
    Ok(())
}

/// [`rebuild_packet_into`] into a new vector.
pub fn rebuild_packet(
    flow: &FlowKey,
    subheader: &[u8],
    ip: &IpParams,
) -> Result<Vec<u8>, TcpError> {
    let mut out = Vec::new();
    rebuild_packet_into(&mut out, flow, subheader, ip)?;
    Ok(out)
}

/// The TCP checksum of a segment given as ports + subheader (checksum field treated as zero).
pub fn subheader_checksum(src: IpAddr, dst: IpAddr, ports: [u8; 4], sub: &[u8]) -> u16 {
    let mut s = pseudo_header_sum(src, dst, IPPROTO_TCP, (4 + sub.len()) as u32).add_bytes(&ports);
    if sub.len() >= 14 {
        s = s.add_bytes(&sub[..12]).add_bytes(&sub[14..]);
    } else {
        s = s.add_bytes(sub);
    }
    s.finish()
}

/// The subheader+payload of the part of `pkt` occupying sequence numbers `first..=last`
/// (§III-A step 2: "a separate TCP packet is created out of each remaining contiguous part").
///
/// The part gets `seq = first`, the payload bytes of that range and the original options.
/// SYN stays only on the part holding the SYN's sequence number, FIN only on the part holding
/// the FIN's; PSH only on the part ending where the segment ends. An urgent pointer keeps
/// pointing at the same absolute sequence number (URG is cleared when that lies at or before
/// `first`). The TCP checksum is recomputed over the new segment (pseudo-header from the packet's
/// addresses). The whole range returns the original bytes untouched.
pub fn trim(pkt: &TcpPacket<'_>, first: u32, last: u32) -> Result<Vec<u8>, TcpError> {
    let mut out = Vec::new();
    trim_into(pkt, first, last, &mut out)?;
    Ok(out)
}

/// [`trim`] into `out` (cleared first; its capacity is reused, so a caller that keeps its
/// buffers trims without allocating).
pub fn trim_into(
    pkt: &TcpPacket<'_>,
    first: u32,
    last: u32,
    out: &mut Vec<u8>,
) -> Result<(), TcpError> {
    out.clear();
    let seq = pkt.tcp.seq;
    let len = pkt.seq_len();
    let out_of_range = TcpError::RangeOutsideSegment { first, last };
    if len == 0 || !seq_le(first, last) || seq_diff(first, seq) < 0 {
        return Err(out_of_range);
    }
    let last_occupied = seq_add(seq, len - 1);
    if seq_diff(last, last_occupied) > 0 {
        return Err(out_of_range);
    }
    if first == seq && last == last_occupied {
        out.extend_from_slice(pkt.subheader());
        return Ok(());
    }
    let flags = pkt.tcp.flags;
    let syn = flags.contains(TcpFlags::SYN);
    let fin = flags.contains(TcpFlags::FIN);
    let payload = pkt.payload();
    // Offsets relative to `seq`, all within 0..len (< 2^16 + 2).
    let lo = seq_diff(first, seq) as usize;
    let hi = seq_diff(last, seq) as usize;
    let data_off = usize::from(syn);
    let data_lo = lo.max(data_off) - data_off;
    let data_hi = (hi + 1).saturating_sub(data_off).min(payload.len());
    let data = if data_lo < data_hi {
        &payload[data_lo..data_hi]
    } else {
        &[][..]
    };
    let mut new_flags = flags
        .with(TcpFlags::SYN, syn && lo == 0)
        .with(TcpFlags::FIN, fin && hi == len as usize - 1)
        .with(
            TcpFlags::PSH,
            flags.contains(TcpFlags::PSH) && hi == len as usize - 1,
        );
    let mut urgent = 0u16;
    if flags.contains(TcpFlags::URG) {
        let abs = seq_add(seq, u32::from(pkt.tcp.urgent));
        if seq_gt(abs, first) {
            urgent = seq_diff(abs, first) as u16;
        } else {
            new_flags = new_flags.with(TcpFlags::URG, false);
        }
    }
    let sub_hdr = &pkt.subheader()[..pkt.tcp.header_len - 4];
    out.extend_from_slice(sub_hdr);
    out.extend_from_slice(data);
    out[0..4].copy_from_slice(&first.to_be_bytes());
    out[9] = new_flags.bits();
    out[12..14].copy_from_slice(&[0, 0]);
    out[14..16].copy_from_slice(&urgent.to_be_bytes());
    let c = subheader_checksum(pkt.ip.src, pkt.ip.dst, pkt.flow().port_bytes(), out);
    out[12..14].copy_from_slice(&c.to_be_bytes());
    Ok(())
}
