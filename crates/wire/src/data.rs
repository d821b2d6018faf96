//! DATA frame: one network-coded packet (the NC data header of Sundararajan et al. §III-B, with
//! the Pid of Ha & Tsuru §3.1 and the redundant flag of Mitsuzumi et al. §III).
//!
//! ```text
//! offset          size  field
//! 0               1     version (1)
//! 1               1     type (0x01 DATA)
//! 2               1     flags: 0x80 IPV6, 0x20 UNIFORM, 0x10 CONTIGUOUS, 0x08 FLUSH,
//!                              0x04 SEEDED, 0x02 SYSTEMATIC, 0x01 REDUNDANT; 0x40 reserved (zero)
//! 3               1     n: packets combined, 1..=255
//! 4               F     flow identity (F = 12 IPv4, 36 IPv6)
//! 4+F             4     Pid
//! 8+F             4     Base
//! 12+F            4     first_index
//! 16+F            4     Start_1 (absolute TCP sequence number)
//! 20+F            2     len_1 = End_1 - Start_1
//! 22+F            4(n-1) per packet i = 2..n: gap_i = Start_i - End_{i-1} - 1 (u16),
//!                                              len_i = End_i - Start_i (u16)
//! 18+F+4n         C     coefficients: n bytes (explicit), 4-byte seed (SEEDED), or none
//!                       (SYSTEMATIC)
//! 18+F+4n+C       ...   coded TCP subheader+payload (the rest of the datagram)
//! ```
//!
//! That is the general ([`RangeForm::Gapped`]) range section. With CONTIGUOUS (n ≥ 2, every
//! gap_i = 0) it is Start_1, len_1..len_n (`2n + 4` bytes); with CONTIGUOUS | UNIFORM (n ≥ 3,
//! len_1 = … = len_{n−1}) it is Start_1, the shared len, len_n (8 bytes); with UNIFORM alone
//! (PATCHED: n ≥ 3, every gap_i = 0, k packets shorter than the longest) it is Start_1, the
//! longest len, k, then each shorter packet's position and len (`7 + 3k` bytes). The sender
//! always uses the most compact form ([`RangeForm::of`]) and a parser rejects any other
//! (`NonCanonical`), so each header has exactly one encoding.
//!
//! All sequence arithmetic is modulo 2^32.

use crate::bytes::{need, put_u16, put_u32, u16_at, u32_at};
use crate::flow::{FLOW_OFFSET, IPV6_FLAG, ip_version_of};
use crate::frame::{FrameType, check_preamble};
pub use crate::ranges::{Coefficients, RangeForm, SeqRange, SeqRanges};
use crate::ranges::{PATCH_ENTRY, PATCHED_FIXED};
use crate::{FlowId, IpVersion, Result, WireError};

/// DATA flag bits (byte 2).
pub mod flags {
    /// The combination was sent beyond the first one for its arrival: a redundancy or repair
    /// packet (Mitsuzumi et al. §III). The receiver does not ACK it if it is not innovative.
    pub const REDUNDANT: u8 = 0x01;
    /// An uncoded source symbol: `n` = 1, coefficient 1, no coefficient bytes.
    pub const SYSTEMATIC: u8 = 0x02;
    /// The coefficients come from a 32-bit seed (Parejiya et al.) instead of explicit bytes.
    pub const SEEDED: u8 = 0x04;
    /// Part of an end-of-transmission or pseudo-block repair burst (Karafillis et al. §II).
    pub const FLUSH: u8 = 0x08;
    /// The packet ranges are contiguous (every gap_i = 0) and the gap fields are omitted
    /// ([`RangeForm::Contiguous`]); only with n ≥ 2.
    pub const CONTIGUOUS: u8 = 0x10;
    /// With CONTIGUOUS: packets 1..n−1 also share one length field ([`RangeForm::Uniform`]);
    /// without it: contiguous packets share the longest length but for k listed shorter ones
    /// ([`RangeForm::Patched`]). Only with n ≥ 3.
    pub const UNIFORM: u8 = 0x20;
    /// Reserved; must be zero (frames with any of these set are rejected).
    pub const RESERVED: u8 = 0x40;
    /// The flow identity is IPv6 (shared with the ACK frame).
    pub const IPV6: u8 = crate::flow::IPV6_FLAG;
}

pub(crate) mod field {
    pub const FLAGS: usize = 2;
    pub const COUNT: usize = 3;
    // Offsets relative to the end of the flow identity.
    pub const PID: usize = 0;
    pub const BASE: usize = 4;
    pub const FIRST_INDEX: usize = 8;
    pub const START: usize = 12;
}

/// Bytes before the flow identity plus Pid, Base and first_index.
pub(crate) const FIXED_LEN: usize = FLOW_OFFSET + 12;

/// Length of the coefficient section for a flags byte and count.
const fn coeff_len(flags_byte: u8, n: usize) -> usize {
    if flags_byte & flags::SYSTEMATIC != 0 {
        0
    } else if flags_byte & flags::SEEDED != 0 {
        4
    } else {
        n
    }
}

/// A zero-copy view of a DATA frame (preamble included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> DataPacket<T> {
    /// Wraps a buffer without checks; getters may panic if the buffer is shorter than the
    /// header it describes. Use it to emit into a fresh buffer.
    pub const fn new_unchecked(buffer: T) -> DataPacket<T> {
        DataPacket { buffer }
    }

    /// Wraps a buffer after checking the preamble (version 2, type DATA), `n` ≥ 1 and that the
    /// buffer holds the whole header; afterwards no getter panics.
    pub fn new_checked(buffer: T) -> Result<DataPacket<T>> {
        let p = DataPacket::new_unchecked(buffer);
        check_preamble(p.buffer.as_ref(), FrameType::Data)?;
        p.check_len()?;
        Ok(p)
    }

    /// `Truncated` unless the buffer holds the whole header, `BadCount` if `n` is 0.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        need(field::COUNT + 1, len)?;
        if self.count() == 0 {
            return Err(WireError::BadCount(0));
        }
        if self.patched() {
            // The count of exceptions sizes the range section.
            need(self.ranges_offset() + PATCHED_FIXED, len)?;
        }
        need(self.header_len(), len)
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The underlying buffer, borrowed.
    pub(crate) fn buffer(&self) -> &T {
        &self.buffer
    }

    /// Offset of the range section (Start_1).
    pub(crate) fn ranges_offset(&self) -> usize {
        self.after_flow() + field::START
    }

    /// Appends the packet ranges, delta-decoded, to `out` in one pass (the form matched once,
    /// not per packet as [`DataPacket::ranges`] does), and says whether the range section is
    /// in the canonical form of those ranges ([`RangeForm::of`]). Call after `check_len`.
    pub(crate) fn decode_ranges(&self, out: &mut Vec<SeqRange>) -> bool {
        let b = &self.buffer.as_ref()[self.ranges_offset()..];
        let (n, from, form) = (self.count(), out.len(), self.range_form());
        let mut start = u32_at(b, 0);
        let mut push = |start: u32, len: u16| {
            let end = start.wrapping_add(u32::from(len));
            out.push(SeqRange { start, end });
            end.wrapping_add(1)
        };
        // Beyond the form of the decoded ranges: a PATCHED section's entries must name
        // packets in increasing order (else some is left over) and shorter ones than the
        // shared len (else another listing of the same ranges would be as short).
        let entries_ok = match form {
            RangeForm::Uniform => {
                let len = u16_at(b, 4);
                for _ in 1..n {
                    start = push(start, len);
                }
                push(start, u16_at(b, 6));
                true
            }
            RangeForm::Contiguous => {
                for i in 0..n {
                    start = push(start, u16_at(b, 4 + 2 * i));
                }
                true
            }
            RangeForm::Patched { exceptions } => {
                let (shared, k) = (u16_at(b, 4), usize::from(exceptions));
                let entry = |j: usize| {
                    let at = PATCHED_FIXED + PATCH_ENTRY * j;
                    (usize::from(b[at]), u16_at(b, at + 1))
                };
                let (mut j, mut listed_shorter) = (0, true);
                for i in 0..n {
                    let len = match (j < k).then(|| entry(j)) {
                        Some((at, len)) if at == i => {
                            j += 1;
                            listed_shorter &= len < shared;
                            len
                        }
                        _ => shared,
                    };
                    start = push(start, len);
                }
                j == k && listed_shorter
            }
            RangeForm::Gapped => {
                start = push(start, u16_at(b, 4));
                for i in 1..n {
                    let gap = u16_at(b, 2 + 4 * i);
                    start = push(start.wrapping_add(u32::from(gap)), u16_at(b, 4 + 4 * i));
                }
                true
            }
        };
        // Canonical: the form the sender would pick for these ranges (one home for the rule).
        entries_ok && RangeForm::of(&out[from..]) == form
    }

    /// Raw flags byte (see [`flags`]).
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// REDUNDANT flag.
    pub fn redundant(&self) -> bool {
        self.flags() & flags::REDUNDANT != 0
    }

    /// SYSTEMATIC flag.
    pub fn systematic(&self) -> bool {
        self.flags() & flags::SYSTEMATIC != 0
    }

    /// SEEDED flag.
    pub fn seeded(&self) -> bool {
        self.flags() & flags::SEEDED != 0
    }

    /// FLUSH (EOT/PB repair burst) flag.
    pub fn flush(&self) -> bool {
        self.flags() & flags::FLUSH != 0
    }

    /// CONTIGUOUS flag.
    pub fn contiguous(&self) -> bool {
        self.flags() & flags::CONTIGUOUS != 0
    }

    /// UNIFORM flag.
    pub fn uniform(&self) -> bool {
        self.flags() & flags::UNIFORM != 0
    }

    /// UNIFORM without CONTIGUOUS: the PATCHED range form.
    fn patched(&self) -> bool {
        self.uniform() && !self.contiguous()
    }

    /// The range-section encoding the flags select (and, for PATCHED, the count of
    /// exceptions: 0 when the buffer ends before it, which `check_len` reports).
    pub fn range_form(&self) -> RangeForm {
        match (self.contiguous(), self.uniform()) {
            (true, true) => RangeForm::Uniform,
            (true, false) => RangeForm::Contiguous,
            (false, true) => RangeForm::Patched {
                exceptions: self
                    .buffer
                    .as_ref()
                    .get(self.ranges_offset() + PATCHED_FIXED - 1)
                    .copied()
                    .unwrap_or(0),
            },
            (false, false) => RangeForm::Gapped,
        }
    }

    /// Length of the range section.
    fn ranges_len(&self) -> usize {
        self.range_form().len(self.count().max(1))
    }

    /// IP version of the flow identity.
    pub fn ip_version(&self) -> IpVersion {
        ip_version_of(self.flags())
    }

    /// `n`: packets combined.
    pub fn count(&self) -> usize {
        self.buffer.as_ref()[field::COUNT] as usize
    }

    /// Offset of the first field after the flow identity.
    fn after_flow(&self) -> usize {
        FLOW_OFFSET + self.ip_version().flow_len()
    }

    /// Offset of the coefficient section.
    fn coeff_offset(&self) -> usize {
        self.after_flow() + field::START + self.ranges_len()
    }

    /// Header length as described by the flags and `n` (payload starts here).
    pub fn header_len(&self) -> usize {
        self.coeff_offset() + coeff_len(self.flags(), self.count())
    }

    /// The flow identity.
    pub fn flow(&self) -> FlowId {
        FlowId::read(&self.buffer.as_ref()[FLOW_OFFSET..], self.ip_version())
    }

    /// Pid: the sender's count of coded packets of this flow (Ha & Tsuru §3.1).
    pub fn pid(&self) -> u32 {
        u32_at(self.buffer.as_ref(), self.after_flow() + field::PID)
    }

    /// Base: oldest un-ACKed byte at the sender (Sundararajan et al. §III-B, §IV-B).
    pub fn base(&self) -> u32 {
        u32_at(self.buffer.as_ref(), self.after_flow() + field::BASE)
    }

    /// Coding-buffer symbol index of the first combined packet.
    pub fn first_index(&self) -> u32 {
        u32_at(self.buffer.as_ref(), self.after_flow() + field::FIRST_INDEX)
    }

    /// Start_1: sequence number of the first byte of the first packet.
    pub fn start(&self) -> u32 {
        u32_at(self.buffer.as_ref(), self.after_flow() + field::START)
    }

    /// Raw `len_i = End_i - Start_i` of packet `i` (0-based), `None` if `i >= n`.
    pub fn len_delta(&self, i: usize) -> Option<u16> {
        (i < self.count()).then(|| u16_at(self.buffer.as_ref(), self.len_offset(i)))
    }

    /// Raw `gap_i = Start_i - End_{i-1} - 1` of packet `i` (0-based), `None` unless `1 <= i < n`;
    /// always 0 in a CONTIGUOUS frame (which has no gap fields).
    pub fn gap_delta(&self, i: usize) -> Option<u16> {
        (i >= 1 && i < self.count()).then(|| match self.range_form() {
            RangeForm::Gapped => u16_at(self.buffer.as_ref(), self.len_offset(i) - 2),
            _ => 0,
        })
    }

    fn len_offset(&self, i: usize) -> usize {
        let at = self.ranges_offset();
        let section = &self.buffer.as_ref()[at..at + self.ranges_len()];
        at + self.range_form().len_at(section, self.count(), i)
    }

    /// The packet ranges, delta-decoded.
    pub fn ranges(&self) -> SeqRanges<'_> {
        let a = self.after_flow() + field::START;
        SeqRanges {
            bytes: &self.buffer.as_ref()[a..a + self.ranges_len()],
            n: self.count(),
            i: 0,
            prev_end: 0,
            form: self.range_form(),
            patch: 0,
        }
    }

    /// Explicit coefficients (empty when SEEDED or SYSTEMATIC).
    pub fn coefficients(&self) -> &[u8] {
        if self.seeded() || self.systematic() {
            &[]
        } else {
            let o = self.coeff_offset();
            &self.buffer.as_ref()[o..o + self.count()]
        }
    }

    /// The coefficient seed, when SEEDED (and not SYSTEMATIC).
    pub fn seed(&self) -> Option<u32> {
        (self.seeded() && !self.systematic())
            .then(|| u32_at(self.buffer.as_ref(), self.coeff_offset()))
    }

    /// The coded TCP subheader+payload.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> DataPacket<T> {
    /// The underlying buffer, mutably borrowed.
    pub(crate) fn buffer_mut(&mut self) -> &mut T {
        &mut self.buffer
    }

    /// Sets the raw flags byte. Set it (and `n`) before the fields whose offsets depend on it.
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }

    /// Sets `n`.
    pub fn set_count(&mut self, n: u8) {
        self.buffer.as_mut()[field::COUNT] = n;
    }

    /// Writes the flow identity and sets or clears the IPV6 flag accordingly.
    pub fn set_flow(&mut self, flow: &FlowId) {
        let f = self.flags() & !IPV6_FLAG;
        let v6 = matches!(flow.ip_version(), IpVersion::V6);
        self.set_flags(if v6 { f | IPV6_FLAG } else { f });
        flow.write(&mut self.buffer.as_mut()[FLOW_OFFSET..]);
    }

    /// Sets Pid.
    pub fn set_pid(&mut self, v: u32) {
        let o = self.after_flow() + field::PID;
        put_u32(self.buffer.as_mut(), o, v);
    }

    /// Sets Base.
    pub fn set_base(&mut self, v: u32) {
        let o = self.after_flow() + field::BASE;
        put_u32(self.buffer.as_mut(), o, v);
    }

    /// Sets first_index.
    pub fn set_first_index(&mut self, v: u32) {
        let o = self.after_flow() + field::FIRST_INDEX;
        put_u32(self.buffer.as_mut(), o, v);
    }

    /// Sets Start_1.
    pub fn set_start(&mut self, v: u32) {
        let o = self.after_flow() + field::START;
        put_u32(self.buffer.as_mut(), o, v);
    }

    /// Sets the raw `len_i` of packet `i` (0-based). In a UNIFORM frame packets `0..n-1` share
    /// one field; in a PATCHED one every packet without an exception entry
    /// ([`DataPacket::set_exception`]) shares one.
    ///
    /// # Panics
    /// If `i >= n` or the buffer is too short.
    pub fn set_len_delta(&mut self, i: usize, v: u16) {
        assert!(i < self.count(), "packet index out of range");
        let o = self.len_offset(i);
        put_u16(self.buffer.as_mut(), o, v);
    }

    /// Sets the raw `gap_i` of packet `i` (0-based). A CONTIGUOUS frame has no gap fields: there
    /// only 0 is accepted (and nothing is written).
    ///
    /// # Panics
    /// Unless `1 <= i < n`, if the buffer is too short, or if `v != 0` in a CONTIGUOUS frame.
    pub fn set_gap_delta(&mut self, i: usize, v: u16) {
        assert!(i >= 1 && i < self.count(), "packet index out of range");
        if self.range_form() != RangeForm::Gapped {
            assert!(v == 0, "a CONTIGUOUS frame has no gap fields");
            return;
        }
        let o = self.len_offset(i) - 2;
        put_u16(self.buffer.as_mut(), o, v);
    }

    /// Sets the count k of a PATCHED frame's exception entries (set it, after the flags and
    /// `n`, before the fields whose offsets depend on it).
    ///
    /// # Panics
    /// If the frame is not PATCHED or the buffer is too short.
    pub fn set_exception_count(&mut self, k: u8) {
        assert!(self.patched(), "only a PATCHED frame lists exceptions");
        let o = self.ranges_offset() + PATCHED_FIXED - 1;
        self.buffer.as_mut()[o] = k;
    }

    /// Sets exception entry `j` of a PATCHED frame: packet `position` (0-based) has `len`.
    ///
    /// # Panics
    /// If the frame is not PATCHED, `j` is not below its count, or the buffer is too short.
    pub fn set_exception(&mut self, j: usize, position: u8, len: u16) {
        let RangeForm::Patched { exceptions } = self.range_form() else {
            panic!("only a PATCHED frame lists exceptions");
        };
        assert!(j < usize::from(exceptions), "exception index out of range");
        let o = self.ranges_offset() + PATCHED_FIXED + PATCH_ENTRY * j;
        self.buffer.as_mut()[o] = position;
        put_u16(self.buffer.as_mut(), o + 1, len);
    }

    /// The explicit coefficients, mutable (empty when SEEDED or SYSTEMATIC).
    pub fn coefficients_mut(&mut self) -> &mut [u8] {
        if self.seeded() || self.systematic() {
            &mut []
        } else {
            let (o, n) = (self.coeff_offset(), self.count());
            &mut self.buffer.as_mut()[o..o + n]
        }
    }

    /// Sets the seed (SEEDED must already be set; the seed occupies the coefficient section).
    pub fn set_seed(&mut self, seed: u32) {
        let o = self.coeff_offset();
        put_u32(self.buffer.as_mut(), o, seed);
    }

    /// The coded payload, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let o = self.header_len();
        &mut self.buffer.as_mut()[o..]
    }
}
