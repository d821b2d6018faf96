//! Packet ranges (Start_i, End_i) and coefficient vectors of the DATA header
//! (Sundararajan et al. §III-B).

use crate::CoefficientMode;
use crate::bytes::{u16_at, u32_at};

/// Bytes per further packet in the range section: gap_i (u16), len_i (u16).
pub(crate) const ENTRY: usize = 4;

/// Bytes of the range section for `n` ≥ 1 packets: Start_1, len_1, then 4 per further packet.
pub(crate) const fn ranges_len(n: usize) -> usize {
    ENTRY * n + 2
}

/// The sequence-number span of one combined packet: first and last byte, inclusive (the paper's
/// Start_i and End_i).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeqRange {
    /// TCP sequence number of the first byte.
    pub start: u32,
    /// TCP sequence number of the last byte (inclusive; `start` for a 1-byte packet).
    pub end: u32,
}

impl SeqRange {
    /// The range `start ..= end`.
    pub const fn new(start: u32, end: u32) -> SeqRange {
        SeqRange { start, end }
    }

    /// Number of sequence numbers covered, `end - start + 1` modulo 2^32 (as u64, so that a full
    /// 2^32 span is representable).
    pub const fn seq_len(&self) -> u64 {
        self.end.wrapping_sub(self.start) as u64 + 1
    }
}

/// The coefficient vector of a combination.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Coefficients {
    /// One GF(2^8) coefficient per combined packet, in packet order (Sundararajan et al. §III-B,
    /// α_i).
    Explicit(Vec<u8>),
    /// A 32-bit seed from which the codec's specified generator derives the `n` coefficients
    /// (Parejiya et al., "random seed in the header"). Sets the SEEDED flag.
    Seeded(u32),
    /// An uncoded source symbol: `n` = 1 and coefficient 1. Sets the SYSTEMATIC flag.
    Systematic,
}

impl Coefficients {
    /// The mode, for [`crate::header_overhead`].
    pub const fn mode(&self) -> CoefficientMode {
        match self {
            Coefficients::Explicit(_) => CoefficientMode::Explicit,
            Coefficients::Seeded(_) => CoefficientMode::Seeded,
            Coefficients::Systematic => CoefficientMode::Systematic,
        }
    }
}

/// Iterator over the delta-decoded [`SeqRange`]s of a DATA header.
#[derive(Debug, Clone)]
pub struct SeqRanges<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) n: usize,
    pub(crate) i: usize,
    pub(crate) prev_end: u32,
}

impl Iterator for SeqRanges<'_> {
    type Item = SeqRange;

    fn next(&mut self) -> Option<SeqRange> {
        if self.i >= self.n {
            return None;
        }
        let start = if self.i == 0 {
            u32_at(self.bytes, 0)
        } else {
            let gap = u16_at(self.bytes, 2 + ENTRY * self.i);
            self.prev_end.wrapping_add(1).wrapping_add(u32::from(gap))
        };
        let len_at = if self.i == 0 { 4 } else { 4 + ENTRY * self.i };
        let end = start.wrapping_add(u32::from(u16_at(self.bytes, len_at)));
        self.prev_end = end;
        self.i += 1;
        Some(SeqRange { start, end })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let r = self.n.saturating_sub(self.i);
        (r, Some(r))
    }
}

impl ExactSizeIterator for SeqRanges<'_> {}
