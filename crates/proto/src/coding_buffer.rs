//! The sender's coding buffer (§III-A "Forming the coding buffer", §III-C "The coding window",
//! §III-D "Buffer management").
//!
//! The buffer holds packets for **disjoint and contiguous** byte ranges of one direction's byte
//! stream, in sequence order, each with a consecutive symbol index (`u64`, the codec's symbol
//! identity), its `Start`/`End` (first and last sequence number occupied; a FIN occupies one) and
//! its subheader+payload bytes (ports removed). Rules (see `docs/tcp-handling.md`):
//!
//! * **Pre-processing (§III-A steps 1–3).** An arriving segment loses every part already in the
//!   buffer or already acknowledged; the remaining part becomes its own packet with seq adjusted
//!   and TCP checksum recomputed ([`crate::tcp::trim`]); ports are removed.
//! * **Padding (step 4)** is *not* stored: packets keep their true length and the codec reads a
//!   shorter symbol as zero-padded to the longest in the coding window. Same result, no copying.
//! * **No gaps.** Symbol indices must follow sequence order (the decoder's seen-ACK, §IV-A, maps
//!   the first unseen index to its `Start`). Bytes beyond `next_seq()` (the byte after the last
//!   buffered one) can only arrive after the buffer dropped data; buffering them would need a
//!   later index for earlier bytes once the gap is retransmitted, so the whole new part is dropped
//!   ([`DropReason::Gap`]). TCP retransmits it after the gap is filled. Consequence: at most one
//!   new packet per arrival (the part from `next_seq()` on).
//! * **Full buffer (§III-D).** "The segment with the newest set of bytes must be dropped". With
//!   the no-gap rule the new part of an arrival always *is* the newest set of bytes (everything
//!   buffered precedes `next_seq()`), so no buffered packet is ever evicted: the new part is
//!   dropped ([`DropReason::Full`]). The paper's example (a retransmission of a previously dropped
//!   segment) cannot evict later bytes here because those later bytes were dropped by the gap
//!   rule. An empty buffer always accepts one packet, so limits below one MSS cannot deadlock.
//! * **Acknowledgment (§III-D).** A packet leaves when an ACK requests a byte beyond its last
//!   byte. [`CodingBuffer::base`] is the oldest un-ACKed byte (§III-B `Base`).
//!
//! All sequence comparisons use [`crate::tcp::seq`]; the buffered span is capped at
//! [`MAX_SPAN`] (< 2^31) so comparisons stay unambiguous across the 2^32 wrap.

use std::collections::VecDeque;

use crate::tcp::{TcpError, TcpFlags, TcpPacket, seq_add, seq_diff, seq_gt, seq_lt, trim_into};

/// Largest sequence span the buffer covers (RFC 7323 windows are below 2^30 as well).
pub const MAX_SPAN: u32 = 1 << 30;

/// Bounds of the coding buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodingBufferLimits {
    /// Most packets held (0 is treated as 1).
    pub max_packets: usize,
    /// Most stored bytes (subheader+payload lengths) held.
    pub max_bytes: usize,
}

impl Default for CodingBufferLimits {
    /// 4096 packets, 8 MiB.
    fn default() -> Self {
        CodingBufferLimits {
            max_packets: 4096,
            max_bytes: 8 << 20,
        }
    }
}

/// An inclusive range of symbol indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IndexRange {
    /// First index.
    pub first: u64,
    /// Last index (inclusive, `>= first`).
    pub last: u64,
}

impl IndexRange {
    /// Number of indices.
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }
    /// Never empty (kept for clippy's `len_without_is_empty`).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Does the range hold `index`?
    pub fn contains(&self, index: u64) -> bool {
        self.first <= index && index <= self.last
    }
    /// The indices in order.
    pub fn iter(&self) -> std::ops::RangeInclusive<u64> {
        self.first..=self.last
    }
}

/// One buffered packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferedPacket {
    /// Symbol index.
    pub index: u64,
    /// First sequence number occupied (`Start`).
    pub start: u32,
    /// Last sequence number occupied (`End`, inclusive; the FIN's if it carries one).
    pub end: u32,
    /// Carries FIN.
    pub fin: bool,
    /// Subheader + payload (ports removed, no padding), TCP checksum valid for the flow.
    pub bytes: Vec<u8>,
}

impl BufferedPacket {
    /// Sequence numbers occupied (`End − Start + 1`).
    pub fn seq_len(&self) -> u32 {
        self.end.wrapping_sub(self.start).wrapping_add(1)
    }
    /// The sequence number after `End`.
    pub fn next_seq(&self) -> u32 {
        seq_add(self.end, 1)
    }
}

/// Why the new part of an arrival was not buffered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Its bytes start after `next_seq()` (module docs, "No gaps").
    Gap,
    /// The buffer was full (§III-D).
    Full,
}

/// What [`CodingBuffer::insert`] did with one arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InsertOutcome {
    /// Buffered packets holding any byte of the arrival, the new one included.
    pub touched: Option<IndexRange>,
    /// Index of the packet created from the arrival (at most one, always the last touched).
    pub new_index: Option<u64>,
    /// Sequence numbers already buffered (a retransmission).
    pub duplicate_seq: u32,
    /// Sequence numbers already acknowledged and no longer buffered.
    pub acked_seq: u32,
    /// Why the new part was dropped, if it was.
    pub dropped: Option<DropReason>,
    /// Sequence numbers dropped for `dropped`.
    pub dropped_seq: u32,
}

impl InsertOutcome {
    /// "The packet that arrived most recently from TCP (which could be a retransmission)"
    /// (§III-C): the newest buffered packet holding bytes of this arrival.
    pub fn most_recent(&self) -> Option<u64> {
        self.touched.map(|r| r.last)
    }
}

/// What [`CodingBuffer::acknowledge`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckOutcome {
    /// Packets removed (all of them fully acknowledged).
    pub removed: Option<IndexRange>,
    /// The ACK moved the acknowledged point forward.
    pub advanced: bool,
    /// The ACK lay beyond `next_seq()` (acknowledging bytes never buffered; anomalous).
    pub beyond_buffer: bool,
}

/// Cumulative counters (every drop is counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CodingBufferStats {
    /// Data segments offered to `insert`.
    pub segments: u64,
    /// Packets created.
    pub packets_created: u64,
    /// Sequence numbers buffered.
    pub buffered_seq: u64,
    /// Sequence numbers that were already buffered.
    pub duplicate_seq: u64,
    /// Sequence numbers already acknowledged.
    pub acked_seq: u64,
    /// Arrivals whose new part hit the gap rule.
    pub gap_drops: u64,
    /// Sequence numbers dropped by the gap rule.
    pub gap_dropped_seq: u64,
    /// Arrivals whose new part hit the full-buffer rule.
    pub full_drops: u64,
    /// Sequence numbers dropped by the full-buffer rule.
    pub full_dropped_seq: u64,
    /// Packets removed by ACKs.
    pub packets_removed: u64,
    /// ACKs beyond the buffered bytes.
    pub acks_beyond_buffer: u64,
}

/// Why [`CodingBuffer::insert`] refused a segment outright.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodingBufferError {
    /// SYN or RST: control segments bypass the coding buffer (§III-A).
    #[error("SYN/RST segments bypass the coding buffer")]
    Control,
    /// No sequence space (a pure ACK or window update): nothing to code.
    #[error("segment occupies no sequence space")]
    NoSequenceSpace,
    /// Splitting failed (unreachable for a parsed packet; reported rather than panicking).
    #[error(transparent)]
    Tcp(#[from] TcpError),
}

/// The coding buffer of one direction of one connection.
#[derive(Debug, Clone)]
pub struct CodingBuffer {
    limits: CodingBufferLimits,
    packets: VecDeque<BufferedPacket>,
    next_index: u64,
    /// `(low, high)`: bytes before `low` are acknowledged; `high` is one past the last buffered
    /// byte. Empty buffer ⇔ `low == high`; otherwise `front.start <= low <= front.end`.
    anchor: Option<(u32, u32)>,
    bytes: usize,
    stats: CodingBufferStats,
    /// Buffers of removed packets, reused by the next inserts: kept while the buffered packets
    /// and the spares together stay within `limits.max_packets` ([`CodingBuffer::keep_spare`]).
    spare: Vec<Vec<u8>>,
}

impl CodingBuffer {
    /// An empty buffer, anchored by the first `insert` or `acknowledge`.
    pub fn new(limits: CodingBufferLimits) -> Self {
        CodingBuffer {
            limits,
            packets: VecDeque::new(),
            next_index: 0,
            anchor: None,
            bytes: 0,
            stats: CodingBufferStats::default(),
            spare: Vec::new(),
        }
    }

    /// An empty buffer whose stream starts at `first_seq` (ISN + 1, learnt from the SYN).
    pub fn with_start(first_seq: u32, limits: CodingBufferLimits) -> Self {
        let mut b = Self::new(limits);
        b.anchor = Some((first_seq, first_seq));
        b
    }

    /// Pre-process and buffer a data segment (§III-A). See [`InsertOutcome`].
    pub fn insert(&mut self, pkt: &TcpPacket<'_>) -> Result<InsertOutcome, CodingBufferError> {
        if pkt.is_control() {
            return Err(CodingBufferError::Control);
        }
        let len = pkt.seq_len();
        if len == 0 {
            return Err(CodingBufferError::NoSequenceSpace);
        }
        self.stats.segments += 1;
        let s = pkt.tcp.seq;
        let e = seq_add(s, len - 1);
        let (low, high) = *self.anchor.get_or_insert((s, s));
        let buf_start = self.packets.front().map_or(low, |p| p.start);
        // Offsets from the buffer start; |distances| < 2^31 for any sane TCP segment.
        let ds = i64::from(seq_diff(s, buf_start));
        let de = ds + i64::from(len) - 1;
        let dh = i64::from(seq_diff(high, buf_start));
        let mut out = InsertOutcome::default();
        if ds < 0 {
            out.acked_seq = (de.min(-1) - ds + 1) as u32;
        }
        let (dup_lo, dup_hi) = (ds.max(0), de.min(dh - 1));
        if dup_lo <= dup_hi {
            out.duplicate_seq = (dup_hi - dup_lo + 1) as u32;
            let lo = self.position_of(dup_lo);
            let hi = self.position_of(dup_hi);
            let first = self.first_index_or_next();
            out.touched = Some(IndexRange {
                first: first + lo as u64,
                last: first + hi as u64,
            });
        }
        if de >= dh {
            let new_seq = (de - ds.max(dh) + 1) as u32;
            if ds > dh {
                out.dropped = Some(DropReason::Gap);
                out.dropped_seq = new_seq;
            } else {
                let mut bytes = self.spare.pop().unwrap_or_default();
                trim_into(pkt, high, e, &mut bytes)?;
                let fits = self.packets.is_empty()
                    || (self.packets.len() < self.limits.max_packets.max(1)
                        && self.bytes + bytes.len() <= self.limits.max_bytes
                        && dh as u64 + u64::from(new_seq) <= u64::from(MAX_SPAN));
                if fits {
                    let index = self.next_index;
                    self.next_index += 1;
                    self.bytes += bytes.len();
                    self.packets.push_back(BufferedPacket {
                        index,
                        start: high,
                        end: e,
                        fin: pkt.tcp.flags.contains(TcpFlags::FIN),
                        bytes,
                    });
                    self.anchor = Some((low, seq_add(e, 1)));
                    out.new_index = Some(index);
                    out.touched = Some(IndexRange {
                        first: out.touched.map_or(index, |t| t.first),
                        last: index,
                    });
                    self.stats.packets_created += 1;
                    self.stats.buffered_seq += u64::from(new_seq);
                } else {
                    out.dropped = Some(DropReason::Full);
                    out.dropped_seq = new_seq;
                    self.keep_spare(bytes);
                }
            }
        }
        self.count_insert(&out);
        Ok(out)
    }

    /// Adds an insertion's duplicate, acknowledged and dropped sequence space to the stats.
    fn count_insert(&mut self, out: &InsertOutcome) {
        self.stats.duplicate_seq += u64::from(out.duplicate_seq);
        self.stats.acked_seq += u64::from(out.acked_seq);
        match out.dropped {
            Some(DropReason::Gap) => {
                self.stats.gap_drops += 1;
                self.stats.gap_dropped_seq += u64::from(out.dropped_seq);
            }
            Some(DropReason::Full) => {
                self.stats.full_drops += 1;
                self.stats.full_dropped_seq += u64::from(out.dropped_seq);
            }
            None => {}
        }
    }

    /// Position in `packets` of the packet holding offset `off` (from the buffer start).
    fn position_of(&self, off: i64) -> usize {
        let Some(front) = self.packets.front() else {
            return 0;
        };
        let base = front.start;
        self.packets
            .partition_point(|p| i64::from(seq_diff(p.start, base)) <= off)
            .saturating_sub(1)
    }

    fn first_index_or_next(&self) -> u64 {
        self.next_index - self.packets.len() as u64
    }

    /// Keeps a removed packet's buffer for a later insert while the buffered packets and the
    /// spares together stay within the packet limit, and frees it otherwise. One NC-ACK can
    /// release a whole round trip of packets at once (hundreds on a fast path, where NC-ACKs
    /// arrive in batches), and the next round trip refills them: a fixed small pool would free
    /// and allocate most of them every time. The bound is the memory the buffer may hold
    /// anyway, and an idle flow's spares go with the flow.
    fn keep_spare(&mut self, bytes: Vec<u8>) {
        if self.packets.len() + self.spare.len() < self.limits.max_packets.max(1) {
            self.spare.push(bytes);
        }
    }

    /// Process a cumulative ACK requesting byte `ack` (§III-D): remove every packet whose last
    /// byte is before `ack`. Stale or duplicate ACKs change nothing.
    pub fn acknowledge(&mut self, ack: u32) -> AckOutcome {
        let mut out = AckOutcome::default();
        let Some((low, high)) = self.anchor else {
            self.anchor = Some((ack, ack));
            out.advanced = true;
            return out;
        };
        if !seq_gt(ack, low) {
            return out;
        }
        out.advanced = true;
        let mut high = high;
        if seq_gt(ack, high) {
            out.beyond_buffer = true;
            self.stats.acks_beyond_buffer += 1;
            high = ack;
        }
        self.anchor = Some((ack, high));
        let first = self.first_index_or_next();
        let mut n = 0u64;
        while self.packets.front().is_some_and(|p| seq_lt(p.end, ack)) {
            if let Some(p) = self.packets.pop_front() {
                self.bytes -= p.bytes.len();
                n += 1;
                self.keep_spare(p.bytes);
            }
        }
        if n > 0 {
            out.removed = Some(IndexRange {
                first,
                last: first + n - 1,
            });
            self.stats.packets_removed += n;
        }
        out
    }

    /// The coding window (§III-C) for the most recent arrival `newest` and size `w`: `newest`
    /// and up to `w − 1` packets before it; when fewer remain before it, extended after it up
    /// to `w` packets (bounded by the buffer end). A `newest` already removed is treated as the
    /// first buffered packet. `None` when empty, `w == 0` or `newest` is not yet assigned.
    pub fn coding_window(&self, newest: u64, w: usize) -> Option<IndexRange> {
        let (first, last) = (self.first_index()?, self.last_index()?);
        if w == 0 || newest > last {
            return None;
        }
        let w = w as u64;
        let newest = newest.max(first);
        let lo = newest.saturating_sub(w - 1).max(first);
        Some(IndexRange {
            first: lo,
            last: last.min(lo.saturating_add(w - 1)),
        })
    }

    /// The packet with symbol index `index`, if buffered.
    pub fn get(&self, index: u64) -> Option<&BufferedPacket> {
        let first = self.first_index()?;
        let pos = usize::try_from(index.checked_sub(first)?).ok()?;
        self.packets.get(pos)
    }

    /// Buffered packets in `range` (those still buffered), in index order: one slice of the
    /// ring, not a lookup per index (the sender walks each combination's range several times).
    pub fn range(
        &self,
        range: IndexRange,
    ) -> impl ExactSizeIterator<Item = &BufferedPacket> + Clone {
        let first = self.first_index().unwrap_or(0);
        let n = self.packets.len() as u64;
        let lo = range.first.saturating_sub(first).min(n);
        let hi = range
            .last
            .saturating_add(1)
            .saturating_sub(first)
            .min(n)
            .max(lo);
        self.packets.range(lo as usize..hi as usize)
    }

    /// `(Start, End)` of each buffered packet in `range` (for the NC data header, §III-B).
    pub fn start_end(&self, range: IndexRange) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.range(range).map(|p| (p.start, p.end))
    }

    /// All buffered packets in index (= sequence) order.
    pub fn iter(&self) -> impl Iterator<Item = &BufferedPacket> {
        self.packets.iter()
    }

    /// The buffered packet holding sequence number `seq`.
    pub fn find_seq(&self, seq: u32) -> Option<&BufferedPacket> {
        let front = self.packets.front()?;
        let off = i64::from(seq_diff(seq, front.start));
        let back = self.packets.back()?;
        if off < 0 || seq_gt(seq, back.end) {
            return None;
        }
        self.packets.get(self.position_of(off))
    }

    /// Index of the oldest buffered packet.
    pub fn first_index(&self) -> Option<u64> {
        self.packets.front().map(|p| p.index)
    }

    /// Index of the newest buffered packet.
    pub fn last_index(&self) -> Option<u64> {
        self.packets.back().map(|p| p.index)
    }

    /// Index the next new packet will get.
    pub fn next_index(&self) -> u64 {
        self.next_index
    }

    /// `Base` (§III-B): the oldest un-ACKed byte; `None` before the buffer is anchored.
    pub fn base(&self) -> Option<u32> {
        self.anchor.map(|(low, _)| low)
    }

    /// The byte after the last buffered one (where the next new packet must start).
    pub fn next_seq(&self) -> Option<u32> {
        self.anchor.map(|(_, high)| high)
    }

    /// Number of packets held.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// No packets held.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Stored bytes (sum of subheader+payload lengths).
    pub fn stored_bytes(&self) -> usize {
        self.bytes
    }

    /// Longest stored packet (the symbol length the codec pads to), 0 when empty.
    pub fn max_packet_len(&self, range: IndexRange) -> usize {
        self.range(range).map(|p| p.bytes.len()).max().unwrap_or(0)
    }

    /// The limits.
    pub fn limits(&self) -> CodingBufferLimits {
        self.limits
    }

    /// Cumulative counters.
    pub fn stats(&self) -> &CodingBufferStats {
        &self.stats
    }
}
