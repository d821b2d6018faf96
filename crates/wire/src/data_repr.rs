//! The validated DATA header ([`DataRepr`]): one pass over the ranges to check them and pick
//! their canonical form (docs/wire.md section 3), then the header written in that form.

use crate::bytes::{put_u16, put_u32, room};
use crate::data::{DataPacket, field, flags};
use crate::frame::{FrameType, check_preamble, write_preamble};
use crate::ranges::{Coefficients, FormScan, PATCH_ENTRY, PATCHED_FIXED, RangeForm, SeqRange};
use crate::{FlowId, IpVersion, PREAMBLE_LEN, Result, WireError};

/// A validated NC data header.
///
/// Fields are public; [`DataRepr::validate`] (called by `emit`) checks the invariants:
/// `1 <= ranges.len() <= 255`; explicit coefficients one per range; SYSTEMATIC only with one
/// range; every `End_i - Start_i` and `Start_i - End_{i-1} - 1` (mod 2^32) below 65 536.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataRepr {
    /// REDUNDANT: sent beyond the first combination for its arrival (Mitsuzumi et al. §III).
    pub redundant: bool,
    /// FLUSH: part of an EOT/PB repair burst (Karafillis et al. §II).
    pub flush: bool,
    /// The data direction's flow.
    pub flow: FlowId,
    /// Per-flow monotonic packet id (wraps modulo 2^32; Ha & Tsuru §3.1).
    pub pid: u32,
    /// TCP sequence number of the oldest un-ACKed byte at the sender (Sundararajan et al.
    /// §III-B "Base"); the receiver may drop decoded packets ending before it.
    pub base: u32,
    /// Coding-buffer symbol index of the first combined packet; packet `i` has index
    /// `first_index + i` (modulo 2^32).
    pub first_index: u32,
    /// Start_i and End_i of each combined packet, in symbol-index order.
    pub ranges: Vec<SeqRange>,
    /// The coefficient vector.
    pub coefficients: Coefficients,
}

impl Default for DataRepr {
    /// An empty header (no ranges; IPv4 flow of unspecified addresses): a buffer for
    /// [`DataRepr::parse_into`], not a valid frame.
    fn default() -> Self {
        let any = std::net::Ipv4Addr::UNSPECIFIED;
        DataRepr {
            redundant: false,
            flush: false,
            flow: FlowId::v4(any, 0, any, 0),
            pid: 0,
            base: 0,
            first_index: 0,
            ranges: Vec::new(),
            coefficients: Coefficients::Systematic,
        }
    }
}

impl DataRepr {
    /// Checks the invariants listed on the type.
    pub fn validate(&self) -> Result<()> {
        self.checked_form().map(|_| ())
    }

    /// [`DataRepr::validate`] and [`RangeForm::of`] the ranges in one pass: the canonical
    /// form, or the first invariant broken.
    pub(crate) fn checked_form(&self) -> Result<RangeForm> {
        let n = self.ranges.len();
        if !(1..=255).contains(&n) {
            return Err(WireError::BadCount(n));
        }
        match &self.coefficients {
            Coefficients::Explicit(c) if c.len() != n => {
                return Err(WireError::CoefficientCount {
                    expected: n,
                    got: c.len(),
                });
            }
            Coefficients::Systematic if n != 1 => {
                return Err(WireError::BadFlags {
                    flags: self.flags_byte(),
                    count: n,
                });
            }
            _ => {}
        }
        let first = self.ranges[0];
        let len0 = first.end.wrapping_sub(first.start);
        if len0 > u32::from(u16::MAX) {
            return Err(WireError::RangeNotEncodable { index: 0 });
        }
        let (mut scan, mut prev_end) = (FormScan::new(len0), first.end);
        for (index, r) in self.ranges.iter().enumerate().skip(1) {
            let len = r.end.wrapping_sub(r.start);
            let gap = r.start.wrapping_sub(prev_end).wrapping_sub(1);
            if len > u32::from(u16::MAX) || gap > 0xFFFF {
                return Err(WireError::RangeNotEncodable { index });
            }
            scan.push(gap, len);
            prev_end = r.end;
        }
        Ok(scan.form())
    }

    /// The flags byte this header encodes to.
    pub fn flags_byte(&self) -> u8 {
        self.flags_in(RangeForm::of(&self.ranges))
    }

    /// The flags byte with the range section in `form`.
    fn flags_in(&self, form: RangeForm) -> u8 {
        let mut f = 0;
        if self.redundant {
            f |= flags::REDUNDANT;
        }
        if self.flush {
            f |= flags::FLUSH;
        }
        match self.coefficients {
            Coefficients::Explicit(_) => {}
            Coefficients::Seeded(_) => f |= flags::SEEDED,
            Coefficients::Systematic => f |= flags::SYSTEMATIC,
        }
        match form {
            RangeForm::Gapped => {}
            RangeForm::Contiguous => f |= flags::CONTIGUOUS,
            RangeForm::Uniform => f |= flags::CONTIGUOUS | flags::UNIFORM,
            RangeForm::Patched { .. } => f |= flags::UNIFORM,
        }
        if matches!(self.flow.ip_version(), IpVersion::V6) {
            f |= flags::IPV6;
        }
        f
    }

    /// The range-section encoding this header emits: always the canonical
    /// [`RangeForm::of`] its ranges.
    pub fn range_form(&self) -> RangeForm {
        RangeForm::of(&self.ranges)
    }

    /// Parses and validates the header of a DATA frame (the payload is `packet.payload()`).
    pub fn parse<T: AsRef<[u8]>>(packet: &DataPacket<T>) -> Result<DataRepr> {
        let mut out = DataRepr::default();
        DataRepr::parse_into(packet, &mut out)?;
        Ok(out)
    }

    /// [`DataRepr::parse`] into `out`, reusing its range and coefficient buffers: a receiver
    /// that keeps one `DataRepr` parses every frame without allocating. On error `out` holds
    /// unspecified (valid, but meaningless) values.
    pub fn parse_into<T: AsRef<[u8]>>(packet: &DataPacket<T>, out: &mut DataRepr) -> Result<()> {
        check_preamble(packet.buffer().as_ref(), FrameType::Data)?;
        packet.check_len()?;
        let f = packet.flags();
        if f & flags::RESERVED != 0 {
            return Err(WireError::ReservedBits(u16::from(f & flags::RESERVED)));
        }
        let n = packet.count();
        let bad_form = match packet.range_form() {
            RangeForm::Gapped => false,
            RangeForm::Contiguous => n < 2,
            RangeForm::Uniform | RangeForm::Patched { .. } => n < 3,
        };
        if bad_form {
            return Err(WireError::BadFlags { flags: f, count: n });
        }
        let coefficients = match (f & flags::SYSTEMATIC != 0, f & flags::SEEDED != 0) {
            (true, true) => return Err(WireError::BadFlags { flags: f, count: n }),
            (true, false) if n != 1 => return Err(WireError::BadFlags { flags: f, count: n }),
            (true, false) => Coefficients::Systematic,
            (false, true) => Coefficients::Seeded(packet.seed().unwrap_or_default()),
            (false, false) => {
                let old = std::mem::replace(&mut out.coefficients, Coefficients::Systematic);
                let mut c = match old {
                    Coefficients::Explicit(v) => v,
                    _ => Vec::new(),
                };
                c.clear();
                c.extend_from_slice(packet.coefficients());
                Coefficients::Explicit(c)
            }
        };
        out.ranges.clear();
        if !packet.decode_ranges(&mut out.ranges) {
            return Err(WireError::NonCanonical);
        }
        out.redundant = f & flags::REDUNDANT != 0;
        out.flush = f & flags::FLUSH != 0;
        out.flow = packet.flow();
        out.pid = packet.pid();
        out.base = packet.base();
        out.first_index = packet.first_index();
        out.coefficients = coefficients;
        Ok(())
    }

    /// Header length: the offset of the payload (see [`crate::data_header_len`]; at most
    /// [`crate::header_overhead`]).
    pub fn buffer_len(&self) -> usize {
        self.len_in(self.range_form())
    }

    /// Header length with the range section in `form`.
    pub(crate) fn len_in(&self, form: RangeForm) -> usize {
        crate::data_header_len(
            self.ranges.len(),
            self.coefficients.mode(),
            self.flow.ip_version(),
            form,
        )
    }

    /// Writes the header (preamble included) to the start of `packet`, whose buffer must hold at
    /// least `buffer_len()` bytes; the payload is written separately (`payload_mut`).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut DataPacket<T>) -> Result<()> {
        let form = self.checked_form()?;
        room(self.len_in(form), packet.buffer().as_ref().len())?;
        self.write(packet, form);
        Ok(())
    }

    /// The header alone into `out` (replaced; no allocation when its capacity suffices), for
    /// the payload to be appended after it: the sender combines straight into the frame
    /// ([`FrameRepr::encode_into`](crate::FrameRepr::encode_into) appends a given payload).
    /// Fails, leaving `out` untouched, as [`DataRepr::emit`] does.
    pub fn encode_header_into(&self, out: &mut Vec<u8>) -> Result<usize> {
        let form = self.checked_form()?;
        out.clear();
        out.resize(self.len_in(form), 0);
        self.write(&mut DataPacket::new_unchecked(&mut out[..]), form);
        Ok(out.len())
    }

    /// Writes the header in `form`, which must be [`DataRepr::checked_form`]'s answer, to a
    /// buffer of at least [`DataRepr::len_in`] `form` bytes.
    pub(crate) fn write<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut DataPacket<T>,
        form: RangeForm,
    ) {
        const { assert!(PREAMBLE_LEN <= field::FLAGS) };
        write_preamble(packet.buffer_mut().as_mut(), FrameType::Data);
        packet.set_flags(self.flags_in(form));
        packet.set_count(self.ranges.len() as u8);
        packet.set_flow(&self.flow);
        packet.set_pid(self.pid);
        packet.set_base(self.base);
        packet.set_first_index(self.first_index);
        let at = packet.ranges_offset();
        write_ranges(&mut packet.buffer_mut().as_mut()[at..], &self.ranges, form);
        match &self.coefficients {
            Coefficients::Explicit(c) => packet.coefficients_mut().copy_from_slice(c),
            Coefficients::Seeded(s) => packet.set_seed(*s),
            Coefficients::Systematic => {}
        }
    }
}

/// Writes the range section of `ranges` (at least one, encodable in `form`) to the start of
/// `out`, laid out as docs/wire.md section 3 says.
fn write_ranges(out: &mut [u8], ranges: &[SeqRange], form: RangeForm) {
    let len = |r: &SeqRange| r.end.wrapping_sub(r.start) as u16;
    put_u32(out, 0, ranges[0].start);
    match form {
        RangeForm::Uniform => {
            put_u16(out, 4, len(&ranges[0]));
            put_u16(out, 6, len(&ranges[ranges.len() - 1]));
        }
        RangeForm::Contiguous => {
            for (i, r) in ranges.iter().enumerate() {
                put_u16(out, 4 + 2 * i, len(r));
            }
        }
        RangeForm::Patched { exceptions } => {
            let shared = ranges.iter().map(len).max().unwrap_or(0);
            put_u16(out, 4, shared);
            out[PATCHED_FIXED - 1] = exceptions;
            let listed = ranges.iter().enumerate().filter(|(_, r)| len(r) < shared);
            for (j, (i, r)) in listed.enumerate() {
                let at = PATCHED_FIXED + PATCH_ENTRY * j;
                out[at] = i as u8;
                put_u16(out, at + 1, len(r));
            }
        }
        RangeForm::Gapped => {
            put_u16(out, 4, len(&ranges[0]));
            for (i, w) in ranges.windows(2).enumerate() {
                let gap = w[1].start.wrapping_sub(w[0].end).wrapping_sub(1) as u16;
                put_u16(out, 6 + 4 * i, gap);
                put_u16(out, 8 + 4 * i, len(&w[1]));
            }
        }
    }
}
