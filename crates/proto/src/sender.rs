//! The sender half of a flow: the local TCP's data toward the peer (Sundararajan et al. §III).
//!
//! * Each data-bearing segment goes through the [`CodingBuffer`] (dedupe, split, Start/End,
//!   §III-A); the redundancy accumulator decides how many combinations this arrival produces
//!   (N += R, send floor(N), §II-B); each combination mixes the coding window of the packet that
//!   arrived (§III-C) with random non-zero GF(2^8) coefficients. The first combination is "the
//!   new packet's" (uncoded in systematic mode); the others carry the REDUNDANT flag
//!   (Mitsuzumi et al. §III).
//! * Each NC-ACK from the peer removes acknowledged packets (§III-D) and becomes one ordinary TCP
//!   ACK for the local TCP (§II-C), duplicates included.

use std::time::Duration;

use tcpnc_codec::coefficients_from_seed;
use tcpnc_wire::{
    AckRepr, CoefficientMode, Coefficients, DataRepr, FlowId, FrameRepr, RangeForm, SeqRange,
};

use crate::coding_buffer::{CodingBuffer, CodingBufferError, CodingBufferLimits, IndexRange};
use crate::config::{CodingScheme, CoefficientTransport, EngineConfig};
use crate::episode::Episodes;
use crate::event::{DropReason, Event};
use crate::ident::flow_key;
use crate::loss_tracker::LossEstimator;
use crate::output::Output;
use crate::redundancy::{RedundancyAccumulator, RedundancyPolicy};
use crate::repair::{ACK_SILENCE, DeficitRepair, MAX_PROBES};
use crate::rng::EngineRng;
use crate::stats::FlowStats;
use crate::tcp::{FlowKey, IpParams, TcpFlags, TcpPacket, build_ack, seq_add, seq_lt};

/// State of the local → peer direction of one flow.
#[derive(Debug)]
pub struct SenderHalf {
    /// The data direction (local → remote) as named in DATA and ACK frames.
    data_flow: FlowId,
    /// The reverse direction (remote → local): synthesised ACKs travel on it.
    ack_key: FlowKey,
    buffer: CodingBuffer,
    acc: RedundancyAccumulator,
    next_pid: u32,
    loss: LossEstimator,
    repair: DeficitRepair,
    /// When the latest NC-ACK arrived.
    last_ack_at: Option<Duration>,
    /// `now` of the packet being handled (stamps the Pids sent for the RTT estimate).
    now: Duration,
    /// Stalls, signals and withheld duplicates (`episode.rs`).
    episodes: Episodes,
    /// Repair probe: deadline and probes sent since the last NC-ACK (`repair.rs`).
    probe: Option<(Duration, u32)>,
    /// Index of the newest packet already included in a sent combination.
    newest_sent: Option<u64>,
    /// Ack number and window field of the last TCP ACK given to the local TCP.
    last_tcp_ack: Option<(u32, u16)>,
    /// Latest NC ack received.
    nc_ack: Option<u32>,
    peer_window: u32,
    sources: u64,
    /// Seq of the local TCP's FIN once buffered.
    fin_seq: Option<u32>,
    payload: Vec<u8>,
    coefs: Vec<u8>,
    /// Scratch for [`SenderHalf::fits`].
    ranges_scratch: Vec<SeqRange>,
    ip_ident: u16,
    /// Largest payload of a local segment so far (the local TCP's effective MSS).
    largest_payload: u32,
}

impl SenderHalf {
    /// A sender for data flowing on `data_flow` (local → remote); `first_seq` is ISN + 1 when the
    /// local TCP's SYN was seen.
    pub fn new(data_flow: FlowId, first_seq: Option<u32>, cfg: &EngineConfig) -> Self {
        let limits = CodingBufferLimits {
            max_packets: cfg.limits.coding_buffer_packets,
            max_bytes: cfg.limits.coding_buffer_bytes,
        };
        SenderHalf {
            data_flow,
            ack_key: flow_key(&data_flow.reversed()),
            buffer: match first_seq {
                Some(s) => CodingBuffer::with_start(s, limits),
                None => CodingBuffer::new(limits),
            },
            acc: RedundancyAccumulator::new(&cfg.redundancy),
            next_pid: 0,
            loss: LossEstimator::new(),
            repair: DeficitRepair::new(),
            last_ack_at: None,
            now: Duration::ZERO,
            episodes: Episodes::new(),
            probe: None,
            newest_sent: None,
            last_tcp_ack: None,
            nc_ack: None,
            peer_window: 0,
            sources: 0,
            fin_seq: None,
            payload: Vec::new(),
            coefs: Vec::new(),
            ranges_scratch: Vec::new(),
            ip_ident: 0,
            largest_payload: 0,
        }
    }

    /// Packets in the coding buffer.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Whether the local TCP's FIN was sent and acknowledged by the peer.
    pub fn finished(&self) -> bool {
        matches!((self.fin_seq, self.nc_ack), (Some(f), Some(a)) if seq_lt(f, a))
    }

    /// Sequence-space probe test: a segment without payload whose seq is before the last NC ack
    /// is a keepalive or zero-window probe (it re-sends an acknowledged byte), not an ACK.
    pub fn is_probe(&self, seq: u32) -> bool {
        self.nc_ack.is_some_and(|a| seq_lt(seq, a))
    }

    /// Takes one data-bearing segment (payload or FIN) from the local TCP.
    #[allow(clippy::too_many_arguments)]
    pub fn on_segment(
        &mut self,
        now: Duration,
        pkt: &TcpPacket<'_>,
        cfg: &EngineConfig,
        rng: &mut EngineRng,
        seq_for_acks: Option<u32>,
        remote_shift: u8,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        self.now = now;
        fs.segments_from_local += 1;
        self.largest_payload = self.largest_payload.max(pkt.payload().len() as u32);
        let outcome = match self.buffer.insert(pkt) {
            Ok(o) => o,
            Err(CodingBufferError::Control | CodingBufferError::NoSequenceSpace) => return,
            Err(_) => {
                out.stats.local_malformed += 1;
                return;
            }
        };
        if outcome.new_index.is_some() {
            fs.packets_buffered += 1;
            self.sources += 1;
        }
        if outcome.dropped.is_some() {
            fs.coding_buffer_drops += 1;
            out.stats.coding_buffer_drops += 1;
            out.event(Event::Dropped {
                flow: Some(self.data_flow),
                reason: DropReason::CodingBufferFull,
            });
        }
        fs.coding_buffer_len = self.buffer.len();
        let Some(touched) = outcome.touched else {
            // Entirely acknowledged already: the local TCP missed our ACK; repeat it.
            if outcome.acked_seq > 0
                && let Some(ack) = self.nc_ack
            {
                let window = self.peer_window;
                self.synthesize(ack, window, seq_for_acks, remote_shift, out, fs);
            }
            return;
        };
        let fin_now = pkt.tcp.flags.contains(TcpFlags::FIN) && self.fin_seq.is_none();
        if pkt.tcp.flags.contains(TcpFlags::FIN) {
            self.fin_seq = Some(seq_add(pkt.end_seq(), u32::MAX));
        }
        if outcome.new_index.is_none()
            && !fin_now
            && cfg.repair.repairs_deficit()
            && self
                .last_ack_at
                .is_some_and(|t| now.saturating_sub(t) < ACK_SILENCE)
        {
            // A retransmission of buffered bytes while NC-ACKs flow: the deficit repair
            // already answers every missing DoF those ACKs report (repair.rs), so coding it
            // again would only load the path during TCP's recovery.
            fs.retransmissions_absorbed += 1;
            return;
        }
        // Every buffered packet holding bytes of this arrival counts as arriving (§III-C: "the
        // packet that arrived most recently from TCP (which could be a retransmission)"). A new
        // segment touches one packet; a repacketised retransmission may touch several, and each
        // must be coded again, or a packet outside the newest one's window would never be
        // resent (docs/engine.md).
        for arrival in touched.iter() {
            let count = self.acc.on_arrival();
            for k in 0..count {
                let systematic = k == 0 && cfg.scheme == CodingScheme::Systematic;
                self.send_combination(arrival, systematic, k > 0, false, cfg, rng, out, fs);
            }
        }
    }

    /// Emits one DATA frame over the coding window of `arrival` (§III-C).
    #[allow(clippy::too_many_arguments)]
    fn send_combination(
        &mut self,
        arrival: u64,
        systematic: bool,
        redundant: bool,
        flush: bool,
        cfg: &EngineConfig,
        rng: &mut EngineRng,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        let w = cfg.coding_window;
        let range = if systematic {
            match self.buffer.get(arrival) {
                Some(_) => IndexRange {
                    first: arrival,
                    last: arrival,
                },
                None => return,
            }
        } else {
            match self.buffer.coding_window(arrival, w) {
                Some(r) => r,
                None => return,
            }
        };
        let transport = if systematic {
            None
        } else {
            Some(cfg.coefficients)
        };
        // The MSS clamp reserves the header of W packets of equal length (UNIFORM range form);
        // a window holding a shorter packet before its last one needs the longer CONTIGUOUS
        // form, so it gives up packets, farthest from the arrival first, until it fits.
        let mut range = range;
        while range.len() > 1 && !self.fits(range, cfg.coefficients.wire_mode(), cfg) {
            if range.first < arrival {
                range.first += 1;
            } else {
                range.last -= 1;
            }
        }
        self.emit(range, transport, redundant, flush, false, rng, out, fs);
    }

    /// Whether a combination of `range` with coefficients sent as `mode` fits the tunnel MTU.
    /// Checked for every combination, so the ranges go into a reused scratch vector.
    fn fits(&mut self, range: IndexRange, mode: CoefficientMode, cfg: &EngineConfig) -> bool {
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
        header + self.buffer.max_packet_len(range) <= cfg.tunnel_mtu
    }

    /// Emits one repair combination (`repair.rs`): every buffered packet from the oldest
    /// un-ACKed one, with seeded coefficients, shrunk from the newest end until the datagram
    /// fits the tunnel MTU.
    fn send_repair(
        &mut self,
        cfg: &EngineConfig,
        rng: &mut EngineRng,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        let (Some(first), Some(last)) = (self.buffer.first_index(), self.newest_sent) else {
            return;
        };
        if last < first {
            return;
        }
        let mut n = (last - first + 1).min(crate::config::MAX_CODING_WINDOW as u64);
        loop {
            let range = IndexRange {
                first,
                last: first + n - 1,
            };
            if n == 1 || self.fits(range, CoefficientMode::Seeded, cfg) {
                let transport = Some(CoefficientTransport::Seeded);
                self.emit(range, transport, true, true, true, rng, out, fs);
                return;
            }
            n = n.div_ceil(2);
        }
    }

    /// Emits one DATA frame combining the packets of `range`: uncoded when `transport` is
    /// `None` (systematic), else with random coefficients sent as `transport` says.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        range: IndexRange,
        transport: Option<CoefficientTransport>,
        redundant: bool,
        flush: bool,
        repair: bool,
        rng: &mut EngineRng,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        let (Some(base), Some(first)) = (self.buffer.base(), self.buffer.get(range.first)) else {
            return;
        };
        let first_index = first.index;
        let n = range.len() as usize;
        let coefficients = match transport {
            None => {
                self.coefs.clear();
                self.coefs.push(1);
                Coefficients::Systematic
            }
            Some(transport) => {
                self.coefs.clear();
                self.coefs.resize(n, 0);
                match transport {
                    CoefficientTransport::Explicit => {
                        rng.fill_nonzero(&mut self.coefs);
                        Coefficients::Explicit(self.coefs.clone())
                    }
                    CoefficientTransport::Seeded => {
                        let seed = rng.next_u32();
                        coefficients_from_seed(seed, &mut self.coefs);
                        Coefficients::Seeded(seed)
                    }
                }
            }
        };
        let len = self.buffer.max_packet_len(range);
        self.payload.clear();
        self.payload.resize(len, 0);
        let mut ranges = Vec::with_capacity(n);
        let mut srcs: Vec<&[u8]> = Vec::with_capacity(n);
        for p in self.buffer.range(range) {
            ranges.push(SeqRange::new(p.start, p.end));
            srcs.push(&p.bytes);
        }
        tcpnc_field::dot(&mut self.payload, &srcs, &self.coefs);
        let pid = self.next_pid;
        let header = DataRepr {
            redundant,
            flush,
            flow: self.data_flow,
            pid,
            base,
            first_index: first_index as u32,
            ranges,
            coefficients,
        };
        self.next_pid = self.next_pid.wrapping_add(1);
        let new_source = self.newest_sent.is_none_or(|s| range.last > s);
        if new_source {
            self.newest_sent = Some(range.last);
        }
        self.repair.on_sent(self.now, pid, new_source, repair);
        let frame = FrameRepr::Data {
            header,
            payload: &self.payload,
        };
        if out.transmit_frame(&frame) {
            out.stats.data_sent += 1;
            fs.data_sent += 1;
            if redundant {
                fs.redundant_sent += 1;
            }
            if repair {
                fs.repairs_sent += 1;
            }
        }
    }

    /// Takes one NC-ACK for this direction and gives the local TCP its TCP ACK.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        now: Duration,
        ack: &AckRepr,
        cfg: &EngineConfig,
        rng: &mut EngineRng,
        seq_for_acks: Option<u32>,
        remote_shift: u8,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        self.now = now;
        fs.acks_received += 1;
        self.last_ack_at = Some(now);
        // The loss floor as known before this ACK, against which its bitmap is judged.
        let floor = self
            .loss
            .floor_known()
            .then(|| self.loss.random_loss_rate());
        self.buffer.acknowledge(ack.ack);
        fs.coding_buffer_len = self.buffer.len();
        self.loss.on_ack(ack);
        fs.loss_rate_estimate_ppm = (self.loss.loss_rate() * 1e6) as u32;
        if let RedundancyPolicy::Adaptive { .. } = cfg.redundancy {
            let r = cfg.redundancy.factor_for(self.loss.random_loss_rate());
            self.acc.set_factor(r);
        }
        fs.redundancy_permille = (self.acc.factor() * 1000.0).round() as u64;
        if self.nc_ack.is_none_or(|a| seq_lt(a, ack.ack)) {
            self.nc_ack = Some(ack.ack);
        }
        self.peer_window = ack.window;
        // (A congestion signal repeats the last ACK, so this is the same before and after it.)
        let duplicate = self.last_tcp_ack.is_some_and(|(a, _)| a == ack.ack);
        if cfg.repair.repairs_deficit() {
            let count = self
                .repair
                .on_ack(now, ack, self.next_pid, self.loss.loss_rate());
            for _ in 0..count {
                self.send_repair(cfg, rng, out, fs);
            }
            // While DoFs are missing, an NC-ACK silence of two round trips sends a probe.
            self.probe = (ack.lost_dof > 0 && !self.buffer.is_empty())
                .then(|| (now + self.probe_interval(0), 0));
            let rtt = self.repair.srtt();
            if self.episodes.congested(now, rtt, ack, floor) {
                self.episodes.signalled(now, ack.pid_echo);
                self.signal_congestion(seq_for_acks, remote_shift, out, fs);
            }
            if self.episodes.hold_duplicate(now, rtt, duplicate) {
                fs.dup_acks_held += 1;
                return;
            }
        }
        self.synthesize(ack.ack, ack.window, seq_for_acks, remote_shift, out, fs);
    }

    /// Makes the local TCP reduce its window once: three duplicates of the last ACK it got (a
    /// fast retransmit; the retransmission is absorbed while NC-ACKs flow).
    fn signal_congestion(
        &mut self,
        seq_for_acks: Option<u32>,
        remote_shift: u8,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        let Some((ack, _)) = self.last_tcp_ack else {
            return;
        };
        if self.buffer.is_empty() {
            return;
        }
        let window = self.peer_window;
        for _ in 0..3 {
            self.synthesize(ack, window, seq_for_acks, remote_shift, out, fs);
        }
        fs.congestion_signals += 1;
    }

    /// Builds and queues a pure TCP ACK from the remote endpoint to the local TCP: ack = NC
    /// ack, window = NC window >> the remote's window shift, seq = the remote's next sequence
    /// number (§II-C).
    fn synthesize(
        &mut self,
        ack: u32,
        window_bytes: u32,
        seq_for_acks: Option<u32>,
        remote_shift: u8,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        let window_bytes = window_bytes.min(self.coding_buffer_window());
        let window = (window_bytes >> remote_shift).min(65_535) as u16;
        self.ip_ident = self.ip_ident.wrapping_add(1);
        let ip = IpParams {
            ident: self.ip_ident,
            ..IpParams::default()
        };
        let seq = seq_for_acks.unwrap_or(0);
        let Ok(packet) = build_ack(&self.ack_key, seq, ack, window, &ip) else {
            return;
        };
        if self.last_tcp_ack == Some((ack, window)) && !self.buffer.is_empty() {
            fs.dup_acks_synthesized += 1;
            out.stats.dup_acks_synthesized += 1;
            out.event(Event::LossVisible {
                flow: self.data_flow,
                ack,
            });
        }
        self.last_tcp_ack = Some((ack, window));
        fs.tcp_acks_synthesized += 1;
        out.stats.tcp_acks_synthesized += 1;
        out.deliver_local(packet, Some(self.data_flow));
    }

    /// The most bytes beyond the ACK that the coding buffer can hold: the window given to the
    /// local TCP never exceeds it.
    ///
    /// §III-D drops the newest segment when the buffer is full, and with the no-gap rule of
    /// the coding buffer every later segment is dropped too until TCP retransmits, so nothing
    /// reaches the receiver and TCP recovers only by a retransmission timeout. Advertising no
    /// more than the buffer holds keeps the local TCP's flight inside it (flow control, like
    /// the receiver-side window of §IV-D), so the buffer overflows only on repacketised or
    /// unusually small segments. Each packet costs its payload plus at most 60 bytes of
    /// subheader; one packet of headroom is kept.
    fn coding_buffer_window(&self) -> u32 {
        let limits = self.buffer.limits();
        let mss = u64::from(self.largest_payload.max(536));
        let by_packets = (limits.max_packets.saturating_sub(1) as u64) * mss;
        let by_bytes = (limits.max_bytes as u64) * mss / (mss + 60);
        by_packets.min(by_bytes).min(u64::from(u32::MAX)) as u32
    }

    /// When [`SenderHalf::on_timeout`] must run: the repair probe's deadline.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.probe.map(|(deadline, _)| deadline)
    }

    /// Two combination round trips (100 ms before one is measured), doubled per probe already
    /// sent: the NC layer's tail-loss probe, below TCP's own retransmission timeout.
    fn probe_interval(&self, probes: u32) -> Duration {
        let rtt = self.repair.srtt().unwrap_or(Duration::from_millis(100));
        (rtt * 2).max(Duration::from_millis(10)) * (1 << probes.min(MAX_PROBES))
    }

    /// The repair probe (`repair.rs`): the last NC-ACK reported missing DoFs and none has
    /// arrived for the probe interval, so the repairs sent for it (or the NC-ACKs) were lost
    /// and, with TCP waiting for those very ACKs, nothing else would trigger a repair before
    /// TCP's retransmission timeout. Sends the last reported N_lp again as repairs; backs off
    /// and gives up after [`MAX_PROBES`] probes.
    pub fn on_timeout(
        &mut self,
        now: Duration,
        cfg: &EngineConfig,
        rng: &mut EngineRng,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        let Some((deadline, probes)) = self.probe else {
            return;
        };
        if deadline > now {
            return;
        }
        self.now = now;
        if self.buffer.is_empty() || probes >= MAX_PROBES {
            self.probe = None;
            return;
        }
        let q = (1.0 - self.loss.random_loss_rate()).clamp(crate::repair::MIN_DELIVERY, 1.0);
        let count = ((f64::from(self.loss.lost_dof.max(1)) / q).ceil() as u32)
            .min(crate::repair::MAX_REPAIRS_PER_ACK);
        for _ in 0..count {
            self.send_repair(cfg, rng, out, fs);
        }
        fs.repair_probes += 1;
        self.probe = Some((now + self.probe_interval(probes + 1), probes + 1));
    }
}
