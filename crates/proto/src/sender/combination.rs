//! Building the sender's DATA frames: choosing the packets of a combination (the coding window
//! of an arrival, §III-C, or the whole buffer for a deficit repair, `repair.rs`), fitting them
//! into the tunnel MTU, drawing the coefficients, and combining the payload through the codec's
//! one combination routine ([`tcpnc_codec::combine_append`], straight into the frame).

use tcpnc_codec::Coefficients as CodecCoefficients;
use tcpnc_wire::{CoefficientMode, Coefficients, DataRepr, RangeForm, SeqRange};

use super::SenderHalf;
use crate::coding_buffer::IndexRange;
use crate::config::{CoefficientTransport, MAX_CODING_WINDOW};
use crate::context::Context;

/// What kind of DATA frame [`SenderHalf::emit`] builds (the REDUNDANT and FLUSH flags, and the
/// repair counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FrameKind {
    /// Sets the REDUNDANT flag (every combination but an arrival's first).
    redundant: bool,
    /// Sets the FLUSH flag (deficit repairs).
    flush: bool,
    /// A deficit repair (`repair.rs`): counted and timed as one.
    repair: bool,
    /// Left out of the deficit repair's in-flight accounting (`DeficitRepair::uncount`).
    uncounted: bool,
}

/// A repair combination (deficit, probe, tail, EOT/PB burst): REDUNDANT | FLUSH, counted and
/// timed as a repair.
const REPAIR: FrameKind = FrameKind {
    redundant: true,
    flush: true,
    repair: true,
    uncounted: false,
};

/// A burst-sized tail repair (`tail_burst`): a repair the deficit repair does not count as in
/// flight.
const UNCOUNTED_REPAIR: FrameKind = FrameKind {
    uncounted: true,
    ..REPAIR
};

/// Which end of the sent packets a repair's range keeps ([`SenderHalf::widest_fitting`]).
#[derive(Debug, Clone, Copy)]
enum Anchor {
    /// The oldest un-ACKed packet (a deficit repair: the receiver's first hole).
    Oldest,
    /// The newest packet sent (a tail repair: the burst that just ended).
    Newest,
}

impl SenderHalf {
    /// Emits one DATA frame over the coding window of `arrival` (§III-C).
    pub(super) fn send_combination(
        &mut self,
        cx: &mut Context<'_>,
        arrival: u64,
        systematic: bool,
        redundant: bool,
    ) {
        let range = if systematic {
            match self.buffer.get(arrival) {
                Some(_) => IndexRange {
                    first: arrival,
                    last: arrival,
                },
                None => return,
            }
        } else {
            match self.buffer.coding_window(arrival, self.coding_window(cx)) {
                Some(r) => r,
                None => return,
            }
        };
        let transport = (!systematic).then_some(cx.config.policies.coefficients);
        // The MSS clamp reserves the header of W packets of equal length (UNIFORM range form);
        // a window holding a shorter packet before its last one needs the longer CONTIGUOUS
        // form, so it gives up packets, farthest from the arrival first, until it fits.
        let mut range = range;
        let mode = cx.config.policies.coefficients.wire_mode();
        while range.len() > 1 && !self.fits(range, mode, cx.config.tunnel_mtu) {
            if range.first < arrival {
                range.first += 1;
            } else {
                range.last -= 1;
            }
        }
        let kind = FrameKind {
            redundant,
            flush: false,
            repair: false,
            uncounted: false,
        };
        self.emit(cx, range, transport, kind);
    }

    /// Whether a combination of `range` with coefficients sent as `mode` fits `tunnel_mtu`.
    /// Checked for every combination, so the ranges go into a reused scratch vector.
    fn fits(&mut self, range: IndexRange, mode: CoefficientMode, tunnel_mtu: usize) -> bool {
        let ranges = &mut self.ranges_scratch;
        ranges.clear();
        ranges.extend(
            self.buffer
                .range(range)
                .map(|p| SeqRange::new(p.start, p.end)),
        );
        let header = tcpnc_wire::data_header_len(
            ranges.len(),
            mode,
            self.data_flow.ip_version(),
            RangeForm::of(ranges),
        );
        header + self.buffer.max_packet_len(range) <= tunnel_mtu
    }

    /// Emits one repair combination (`repair.rs`): every buffered packet from the oldest
    /// un-ACKed one, with seeded coefficients, cut at the newest end where the datagram would
    /// not fit the tunnel MTU.
    pub(super) fn send_repair(&mut self, cx: &mut Context<'_>) {
        let (Some(first), Some(last)) = (self.buffer.first_index(), self.newest_sent) else {
            return;
        };
        if last < first {
            return;
        }
        let range = self.widest_fitting(first, last, Anchor::Oldest, cx.config.tunnel_mtu);
        self.emit(cx, range, Some(CoefficientTransport::Seeded), REPAIR);
    }

    /// The widest range within `first..=last` (at most [`MAX_CODING_WINDOW`] packets) that
    /// starts at `first` or ends at `last`, as `anchor` says, and whose seeded combination fits
    /// `tunnel_mtu`. The MSS clamp keeps room for a UNIFORM range of any width and a
    /// CONTIGUOUS one of `CONTIGUOUS_RESERVE` packets, so a PATCHED one (docs/wire.md section
    /// 3) with a few packets shorter than the others fits whole. A range narrower than one
    /// that fits, from the same end, fits too (its form is the same or shorter: its shorter
    /// packets are among the wider one's; its longest packet is no longer), so the widest is
    /// found by bisection: about 8 scans of the range, not one per width tried.
    fn widest_fitting(
        &mut self,
        first: u64,
        last: u64,
        anchor: Anchor,
        tunnel_mtu: usize,
    ) -> IndexRange {
        let span = |n: u64| match anchor {
            Anchor::Oldest => IndexRange {
                first,
                last: first + n - 1,
            },
            Anchor::Newest => IndexRange {
                first: last + 1 - n,
                last,
            },
        };
        let widest = (last - first + 1).min(MAX_CODING_WINDOW as u64);
        if self.fits(span(widest), CoefficientMode::Seeded, tunnel_mtu) {
            return span(widest);
        }
        let (mut fit, mut over) = (1, widest);
        while over - fit > 1 {
            let mid = fit + (over - fit) / 2;
            match self.fits(span(mid), CoefficientMode::Seeded, tunnel_mtu) {
                true => fit = mid,
                false => over = mid,
            }
        }
        span(fit)
    }

    /// Emits `count` tail repairs (`tail_repair.rs`), each over the newest sent packets, as
    /// many as fit the tunnel MTU with seeded coefficients (at most 255), so the burst that
    /// just ended is covered whatever sizes the packets before it had (a frame's short last
    /// packet ends the compact range form of a window reaching past it, docs/wire.md).
    /// The last `uncounted` of them are left out of the deficit repair's in-flight accounting.
    pub(super) fn send_tail_repairs(&mut self, cx: &mut Context<'_>, count: u32, uncounted: u32) {
        // Sizing the range costs scans of it: not for nothing. Most pauses of a fast, clean
        // path grant no repair (2 % of a sending gateway's samples at 1.4 Gbit/s when each
        // width tried cost a scan, docs/speed.md "The tunnel's cipher").
        if count == 0 {
            return;
        }
        let Some(range) = self.newest_fitting(cx.config.tunnel_mtu) else {
            return;
        };
        for i in 0..count {
            let kind = if i + uncounted >= count {
                UNCOUNTED_REPAIR
            } else {
                REPAIR
            };
            self.emit(cx, range, Some(CoefficientTransport::Seeded), kind);
        }
    }

    /// The widest range ending at the newest sent packet whose seeded combination fits
    /// `tunnel_mtu`.
    fn newest_fitting(&mut self, tunnel_mtu: usize) -> Option<IndexRange> {
        let (oldest, last) = (self.buffer.first_index()?, self.newest_sent?);
        (last >= oldest).then(|| self.widest_fitting(oldest, last, Anchor::Newest, tunnel_mtu))
    }

    /// Emits one DATA frame combining the packets of `range`: uncoded when `transport` is
    /// `None` (systematic), else with random coefficients sent as `transport` says.
    fn emit(
        &mut self,
        cx: &mut Context<'_>,
        range: IndexRange,
        transport: Option<CoefficientTransport>,
        kind: FrameKind,
    ) {
        let (Some(base), Some(first)) = (self.buffer.base(), self.buffer.get(range.first)) else {
            return;
        };
        let first_index = first.index;
        let coefficients = self.draw_coefficients(cx, range, transport);
        let pid = self.next_pid;
        let header = DataRepr {
            redundant: kind.redundant,
            flush: kind.flush,
            flow: self.data_flow,
            pid,
            base,
            first_index: first_index as u32,
            ranges: self.ranges_of(range),
            coefficients,
        };
        let codec_coefficients = match &header.coefficients {
            Coefficients::Seeded(seed) => CodecCoefficients::Seeded(*seed),
            Coefficients::Systematic | Coefficients::Explicit(_) => {
                CodecCoefficients::Explicit(&self.coefs)
            }
        };
        // Combined straight into the frame, after its header, through the codec's one
        // combination routine (the one `tcpnc bench codec` measures); it refuses only a range
        // that is not of buffered packets.
        let symbols = self.buffer.range(range).map(|p| p.bytes.as_slice());
        let queued = cx.out.transmit_data(cx.now, &header, |out| {
            tcpnc_codec::combine_append(symbols, codec_coefficients, out).is_ok()
        });
        self.ranges_scratch = header.ranges;
        let Some(queued) = queued else {
            return;
        };
        self.next_pid = self.next_pid.wrapping_add(1);
        self.sent_indices.record(pid, range.last);
        let new_source = self.newest_sent.is_none_or(|s| range.last > s);
        if new_source {
            self.newest_sent = Some(range.last);
        }
        // Its round trip counts from when it leaves, after the pacer's wait (`pacer.rs`).
        let departure = cx.out.departure(cx.now);
        self.repair.on_sent(departure, pid, new_source, kind.repair);
        if kind.uncounted {
            self.repair.uncount(pid);
        }
        cx.path.flight_cap.on_sent(new_source);
        if queued {
            cx.out.stats.data_sent += 1;
            cx.stats.data_sent += 1;
            cx.stats.redundant_sent += u64::from(kind.redundant);
            cx.stats.repairs_sent += u64::from(kind.repair);
        }
    }

    /// The sequence ranges of `range`'s packets, in the scratch vector's allocation (given
    /// back by [`SenderHalf::emit`] once the frame is encoded: no allocation per frame).
    fn ranges_of(&mut self, range: IndexRange) -> Vec<SeqRange> {
        let mut ranges = std::mem::take(&mut self.ranges_scratch);
        ranges.clear();
        ranges.extend(
            self.buffer
                .range(range)
                .map(|p| SeqRange::new(p.start, p.end)),
        );
        ranges
    }

    /// The coefficients of a combination of `range`, as the header carries them: `[1]` for a
    /// systematic packet, else non-zero random bytes from the engine's PRNG (explicit) or a
    /// random seed expanded by [`tcpnc_codec::coefficients_from_seed`] (seeded). Explicit
    /// coefficients are also left in `self.coefs`.
    fn draw_coefficients(
        &mut self,
        cx: &mut Context<'_>,
        range: IndexRange,
        transport: Option<CoefficientTransport>,
    ) -> Coefficients {
        self.coefs.clear();
        match transport {
            None => {
                self.coefs.push(1);
                Coefficients::Systematic
            }
            Some(CoefficientTransport::Explicit) => {
                self.coefs.resize(range.len() as usize, 0);
                cx.rng.fill_nonzero(&mut self.coefs);
                Coefficients::Explicit(self.coefs.clone())
            }
            Some(CoefficientTransport::Seeded) => Coefficients::Seeded(cx.rng.next_u32()),
        }
    }
}
