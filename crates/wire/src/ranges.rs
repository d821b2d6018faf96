//! Packet ranges (Start_i, End_i) and coefficient vectors of the DATA header
//! (Sundararajan et al. §III-B).

use crate::CoefficientMode;
use crate::bytes::{u16_at, u32_at};

/// Bytes per further packet in the range section: gap_i (u16), len_i (u16).
pub(crate) const ENTRY: usize = 4;

/// Bytes of a PATCHED range section before its exceptions: Start_1 (u32), the shared len
/// (u16), the count of exceptions k (u8).
pub(crate) const PATCHED_FIXED: usize = 7;

/// Bytes per exception of a PATCHED range section: the packet's position (u8), its len (u16).
pub(crate) const PATCH_ENTRY: usize = 3;

/// How the range section of a DATA header is encoded (selected by the CONTIGUOUS and UNIFORM
/// flags; docs/wire.md section 3). [`crate::DataRepr::emit`] always picks [`RangeForm::of`]
/// its ranges, and parsing rejects any other choice, so every range list has exactly one
/// encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RangeForm {
    /// No flag: Start_1 (u32), len_1 (u16), then gap_i (u16), len_i (u16) for i = 2..n:
    /// `4n + 2` bytes.
    Gapped,
    /// CONTIGUOUS (n ≥ 2, every gap_i = 0): Start_1 (u32), len_1..len_n (u16 each): `2n + 4`
    /// bytes.
    Contiguous,
    /// CONTIGUOUS | UNIFORM (n ≥ 3, every gap_i = 0, len_1 = … = len_{n−1}): Start_1 (u32), the
    /// shared len (u16), len_n (u16): 8 bytes.
    Uniform,
    /// UNIFORM without CONTIGUOUS (n ≥ 3, every gap_i = 0, not UNIFORM's case): Start_1 (u32),
    /// the longest len (u16), shared by every packet not listed, k (u8), then for each of the
    /// k shorter packets, in increasing order, its 0-based position (u8) and len (u16):
    /// `7 + 3k` bytes, canonical only where it is shorter than CONTIGUOUS. A repair over a
    /// coding buffer with a few short packets (the end of an application write, a window
    /// edge) fits in one datagram this way.
    Patched {
        /// k: the packets shorter than the longest.
        exceptions: u8,
    },
}

impl RangeForm {
    /// Bytes of the range section for `n` ≥ 1 packets in this form.
    pub const fn len(self, n: usize) -> usize {
        match self {
            RangeForm::Gapped => ENTRY * n + 2,
            RangeForm::Contiguous => 2 * n + 4,
            RangeForm::Uniform => 8,
            RangeForm::Patched { exceptions } => PATCHED_FIXED + PATCH_ENTRY * exceptions as usize,
        }
    }

    /// The canonical (most compact) form of `ranges`: [`RangeForm::Uniform`] for n ≥ 3
    /// contiguous ranges whose first n − 1 have equal length, else [`RangeForm::Patched`] for
    /// n ≥ 3 contiguous ranges where it is shorter than [`RangeForm::Contiguous`], which takes
    /// the other n ≥ 2 contiguous ranges, [`RangeForm::Gapped`] otherwise (n ≤ 1 included,
    /// where no form is shorter). "Contiguous" means `Start_i = End_{i−1} + 1` (mod 2^32) for
    /// every i ≥ 2.
    pub fn of(ranges: &[SeqRange]) -> RangeForm {
        let Some(first) = ranges.first() else {
            return RangeForm::Gapped;
        };
        let mut scan = FormScan::new(first.end.wrapping_sub(first.start));
        for w in ranges.windows(2) {
            let gap = w[1].start.wrapping_sub(w[0].end).wrapping_sub(1);
            scan.push(gap, w[1].end.wrapping_sub(w[1].start));
        }
        scan.form()
    }

    /// Offset of len_i of packet `i` (0-based) of `n` within the range section `bytes` (which
    /// must hold the whole section). A PATCHED packet without an exception entry has the
    /// shared len.
    pub(crate) fn len_at(self, bytes: &[u8], n: usize, i: usize) -> usize {
        match self {
            RangeForm::Gapped => 4 + ENTRY * i,
            RangeForm::Contiguous => 4 + 2 * i,
            RangeForm::Uniform => {
                if i + 1 >= n {
                    6
                } else {
                    4
                }
            }
            RangeForm::Patched { exceptions } => (0..usize::from(exceptions))
                .map(|j| PATCHED_FIXED + PATCH_ENTRY * j)
                .find(|&at| usize::from(bytes[at]) == i)
                .map_or(4, |at| at + 1),
        }
    }
}

/// The canonical-form rule of [`RangeForm::of`] (docs/wire.md section 3) over a range list's
/// gaps and lengths, one packet at a time: `RangeForm::of` and a header being emitted
/// (`DataRepr::checked_form`) classify through it. The parser (`DataPacket::decode_ranges`)
/// keeps one loop per form, faster there, and the fuzz driver checks it against this rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FormScan {
    n: usize,
    len0: u32,
    /// The latest packet's length (the only one UNIFORM lets differ, if it is the last).
    last_len: u32,
    /// Every gap so far is 0.
    contiguous: bool,
    /// Every length before the latest equals the first.
    uniform: bool,
    /// The longest length so far, and how many packets have it (the others are PATCHED's
    /// exceptions).
    longest: u32,
    at_longest: usize,
}

impl FormScan {
    /// The scan after packet 1, whose length (`End − Start`) is `len0`.
    pub(crate) const fn new(len0: u32) -> FormScan {
        FormScan {
            n: 1,
            len0,
            last_len: len0,
            contiguous: true,
            uniform: true,
            longest: len0,
            at_longest: 1,
        }
    }

    /// The next packet: its gap after the previous one (`Start_i − End_{i−1} − 1`) and its
    /// length.
    pub(crate) fn push(&mut self, gap: u32, len: u32) {
        self.contiguous &= gap == 0;
        self.uniform &= self.last_len == self.len0;
        self.last_len = len;
        if len > self.longest {
            (self.longest, self.at_longest) = (len, 0);
        }
        self.at_longest += usize::from(len == self.longest);
        self.n += 1;
    }

    /// The canonical form of the packets so far.
    pub(crate) const fn form(&self) -> RangeForm {
        if self.n < 2 || !self.contiguous {
            RangeForm::Gapped
        } else if self.n >= 3 && self.uniform {
            RangeForm::Uniform
        } else if self.n >= 3
            && PATCHED_FIXED + PATCH_ENTRY * (self.n - self.at_longest) < 2 * self.n + 4
        {
            // k < n ≤ 255, so the count fits its byte.
            RangeForm::Patched {
                exceptions: (self.n - self.at_longest) as u8,
            }
        } else {
            RangeForm::Contiguous
        }
    }
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
    pub(crate) form: RangeForm,
    /// PATCHED: the next exception entry, matched in order as the parser matches them.
    pub(crate) patch: usize,
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
            let gap = match self.form {
                RangeForm::Gapped => u16_at(self.bytes, 2 + ENTRY * self.i),
                _ => 0,
            };
            self.prev_end.wrapping_add(1).wrapping_add(u32::from(gap))
        };
        let len_at = match self.form {
            RangeForm::Patched { exceptions } => {
                let at = PATCHED_FIXED + PATCH_ENTRY * self.patch;
                let listed =
                    self.patch < usize::from(exceptions) && usize::from(self.bytes[at]) == self.i;
                self.patch += usize::from(listed);
                if listed { at + 1 } else { 4 }
            }
            form => form.len_at(self.bytes, self.n, self.i),
        };
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
