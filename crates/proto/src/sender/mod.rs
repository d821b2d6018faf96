//! The sender half of a flow: the local TCP's data toward the peer (Sundararajan et al. §III).
//!
//! * Each data-bearing segment goes through the [`CodingBuffer`] (dedupe, split, Start/End,
//!   §III-A); the redundancy accumulator decides how many combinations this arrival produces
//!   (N += R, send floor(N), §II-B); each combination mixes the coding window of the packet that
//!   arrived (§III-C) with random non-zero GF(2^8) coefficients (`combination.rs`, through
//!   [`tcpnc_codec::combine`]). The first combination is "the new packet's" (uncoded in
//!   systematic mode); the others carry the REDUNDANT flag (Mitsuzumi et al. §III).
//! * Each NC-ACK from the peer removes acknowledged packets (§III-D) and becomes one ordinary TCP
//!   ACK for the local TCP (§II-C), duplicates included (`nc_ack.rs`).

mod burst;
mod combination;
mod dof_ack;
mod flight;
mod nc_ack;
mod probe;
mod recovery;
mod redundancy;
mod tail;

pub use recovery::RECOVERY_ACKS;

use std::collections::VecDeque;
use std::time::Duration;

use tcpnc_wire::{FlowId, SeqRange};

use crate::coding_buffer::{
    CodingBuffer, CodingBufferError, CodingBufferLimits, IndexRange, InsertOutcome,
};
use crate::config::{CodingScheme, EngineConfig};
use crate::context::Context;
use crate::episode::Episodes;
use crate::event::{DropReason, Event};
use crate::flow_id_conversion::flow_key;
use crate::loss_burst::BitmapLossBound;
use crate::loss_tracker::LossEstimator;
use crate::path_memory::PathEstimate;
use crate::redundancy::RedundancyAccumulator;
use crate::repair::{ACK_SILENCE, DeficitRepair, SentCounts};
use crate::tcp::{FlowKey, TcpFlags, TcpPacket, seq_add, seq_lt};
use crate::vbnc::{Observation, Vbnc};

/// What a TCP ACK synthesised for the local TCP takes from the rest of its connection: the
/// sequence number it carries (the peer's next one, known to the receiver half) and the shift
/// its window is encoded with (the remote's window scale, RFC 7323). The connection hands it
/// to the sender with every call that may synthesise ACKs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckStamp {
    /// Sequence number of the synthesised ACKs (`None`: not known yet, 0 is sent).
    pub seq: Option<u32>,
    /// Right shift applied to the window in bytes.
    pub window_shift: u8,
}

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
    /// Stalls, signals and withheld duplicates (`episode.rs`).
    episodes: Episodes,
    /// Repair probe: deadline and probes sent since the last NC-ACK (`repair.rs`).
    probe: Option<(Duration, u32)>,
    /// The latest probe's repairs still to leave one at a time (`probe.rs`, `probe_spread`).
    spread: Option<probe::Spread>,
    /// The recovery a congestion signal started in the local TCP (`recovery.rs`).
    recovery: Option<recovery::Recovery>,
    /// Index of the newest packet already included in a sent combination.
    newest_sent: Option<u64>,
    /// Ack number and window field of the last TCP ACK given to the local TCP.
    last_tcp_ack: Option<(u32, u16)>,
    /// The right edge of the window last given to the local TCP: its ack number plus the
    /// scaled window (`tail.rs`: a TCP that has sent up to it waits for the ACK clock).
    given_edge: Option<u32>,
    /// Latest NC ack received.
    nc_ack: Option<u32>,
    peer_window: u32,
    /// Seq of the local TCP's FIN once buffered.
    fin_seq: Option<u32>,
    coefs: Vec<u8>,
    /// Scratch for the MTU fit check (`combination.rs`).
    ranges_scratch: Vec<SeqRange>,
    ip_ident: u16,
    /// Largest payload of a local segment so far (the local TCP's effective MSS).
    largest_payload: u32,
    /// The sink's latest unordering length in Pids (Ha & Tsuru §3.2; 0 with the mechanism off).
    unordering: u16,
    /// The coding window the path's loss bursts ask for (`burst_window`,
    /// `loss_burst::BurstFit::cover`); 0 until known.
    burst_window: u16,
    /// The share of the random loss rate that R and the deficit repair's flight expectation
    /// cover (`burst_redundancy`, `loss_burst::BurstFit::event_share`); 1 until known.
    event_share: f64,
    /// The losses a bitmap of the path's random loss reaches (`burst_signal`).
    bitmap_bound: BitmapLossBound,
    /// A duplicate NC-ACK the sink flagged PAUSE, held from the local TCP until this deadline
    /// (Ha & Tsuru §3.3): its ack number and window.
    paused: Option<(Duration, u32, u32)>,
    /// The variable coding window (`vbnc.rs`), with `window_policy = "vbnc"`.
    vbnc: Option<Vbnc>,
    /// Non-redundant combinations sent since the last PB burst (`burst.rs`).
    since_pb_burst: u32,
    /// When the local TCP counts as paused, for the tail repair (`tail.rs`).
    tail: Option<Duration>,
    /// Pending tail probes (`tail.rs`): each deadline, and the sent counts right after the
    /// pause's last combination with a new packet.
    tail_probes: VecDeque<(Duration, SentCounts)>,
    /// What was sent at the previous pause (`tail.rs`).
    pause_mark: SentCounts,
    /// When the local TCP last sent a new packet, and last resent buffered bytes.
    last_new_at: Option<Duration>,
    last_resent_at: Option<Duration>,
    /// When the local TCP was last given an ACK that advanced, and when it was last seen to
    /// have left one unanswered for a pause gap (`tail.rs`, `application_limited`).
    advanced_at: Option<Duration>,
    idle_seen_at: Option<Duration>,
    /// When the local TCP was last given a duplicate ACK.
    duplicate_at: Option<Duration>,
    /// The newest index of each recent frame, by Pid (`dof_ack.rs`).
    sent_indices: dof_ack::SentIndices,
    /// The local TCP's flight, segments, as last reported to the path (`flight_share.rs`).
    reported_flight: u64,
    /// This flow's estimate of the path's flight cap, segments, as last reported to the path
    /// (`flight_share.rs`; 0 before its first).
    reported_cap: u64,
}

impl SenderHalf {
    /// A sender for data flowing on `data_flow` (local → remote); `first_seq` is ISN + 1 when the
    /// local TCP's SYN was seen.
    /// `path`: what earlier flows learned of the path, the starting point with `path_memory`.
    pub fn new(
        data_flow: FlowId,
        first_seq: Option<u32>,
        cfg: &EngineConfig,
        path: &PathEstimate,
    ) -> Self {
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
            acc: RedundancyAccumulator::new(&cfg.policies.redundancy),
            next_pid: 0,
            loss: LossEstimator::new(),
            repair: DeficitRepair::new().with_queue_depth(cfg.policies.queue_depth.is_on()),
            last_ack_at: None,
            episodes: Episodes::new(),
            probe: None,
            spread: None,
            recovery: None,
            newest_sent: None,
            last_tcp_ack: None,
            given_edge: None,
            nc_ack: None,
            peer_window: 0,
            fin_seq: None,
            coefs: Vec::new(),
            ranges_scratch: Vec::new(),
            ip_ident: 0,
            largest_payload: 0,
            unordering: 0,
            burst_window: 0,
            event_share: 1.0,
            bitmap_bound: BitmapLossBound::default(),
            paused: None,
            vbnc: cfg
                .policies
                .window_policy
                .is_variable()
                .then(|| Vbnc::new(cfg.coding_window())),
            since_pb_burst: 0,
            tail: None,
            tail_probes: VecDeque::new(),
            pause_mark: SentCounts::default(),
            last_new_at: None,
            last_resent_at: None,
            advanced_at: None,
            idle_seen_at: None,
            duplicate_at: None,
            sent_indices: dof_ack::SentIndices::default(),
            reported_flight: 0,
            reported_cap: 0,
        }
        .starting_from(cfg, path)
    }

    /// Starts from the path's estimates (`path_memory.rs`): R for the known loss floor (times
    /// the known loss-event share, `burst_redundancy`), the floor as a prior window of the loss
    /// record, the known unordering length.
    fn starting_from(mut self, cfg: &EngineConfig, path: &PathEstimate) -> Self {
        if !cfg.policies.path_memory.is_on() {
            return self;
        }
        if cfg.policies.burst_redundancy.is_on()
            && let Some(share) = path.event_share
        {
            self.event_share = share;
            self.repair.set_event_share(share);
        }
        if let Some(floor) = path.loss_floor {
            self.loss.set_prior(floor);
            if cfg.policies.redundancy.adapts() {
                self.acc
                    .set_factor(cfg.policies.redundancy.factor_for(floor * self.event_share));
            }
        }
        if cfg.policies.unordering.is_on() {
            self.unordering = path.unordering;
        }
        if cfg.policies.burst_window.is_on() {
            self.burst_window = path.burst_window;
        }
        self
    }

    /// The coding window W of a new combination: the configured one (or VBNC's, at most it),
    /// at least the path's burst cover (`burst_window`: a combination must reach back to the
    /// first unseen packet after a loss burst), widened by the sink's unordering length (Ha &
    /// Tsuru §3.2: the same after the combinations before it were overtaken), at most 255.
    fn coding_window(&self, cx: &Context<'_>) -> usize {
        let w = self
            .vbnc
            .as_ref()
            .map_or(cx.config.coding_window(), Vbnc::window)
            .max(usize::from(self.burst_window));
        (w + usize::from(self.unordering)).min(crate::config::MAX_CODING_WINDOW)
    }

    /// Whether an arrival's first combination is the packet alone: always with the systematic
    /// scheme; with the dense one and `systematic_when_clean`, while the flow's record shows
    /// no random loss and no late arrival (nothing to mask: combining would only cost CPU). A
    /// late uncoded packet holds the seen-ACK until it arrives, and the DoF ACK then counts
    /// the unordering length as missing: reordering needs the dense code's masking too.
    fn sends_systematic(&self, cx: &Context<'_>) -> bool {
        match cx.config.policies.scheme {
            CodingScheme::Systematic => true,
            CodingScheme::Dense => {
                cx.config.policies.systematic_when_clean.is_on()
                    && self.loss.clean()
                    && self.loss.late == 0
                    && self.unordering == 0
            }
        }
    }

    /// Gives the VBNC controller what this segment shows of the local TCP (`vbnc.rs`).
    fn observe_local_tcp(&mut self, cx: &Context<'_>, pkt: &TcpPacket<'_>) {
        let rtt = self.repair.delay().srtt();
        if let Some(v) = self.vbnc.as_mut() {
            v.observe(&Observation {
                now: cx.now,
                sent_end: pkt.end_seq(),
                acked: self.nc_ack,
                rwnd: self.peer_window,
                rtt,
                losses: cx.stats.dup_acks_synthesized,
                packet_size: self.largest_payload,
            });
        }
    }

    /// Combination `pid` left at `at`, before the departure forecast for it (`pacer.rs`).
    pub fn departed(&mut self, pid: u32, at: Duration) {
        self.repair.departed(pid, at);
    }

    /// Packets in the coding buffer.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Whether the local TCP's FIN was sent and acknowledged by the peer.
    pub fn finished(&self) -> bool {
        matches!((self.fin_seq, self.nc_ack), (Some(f), Some(a)) if seq_lt(f, a))
    }

    /// Sequence-space probe test: a segment without payload whose seq is before the last ack
    /// the local TCP has (the NC ack, or the DoF ACK's beyond it) is a keepalive or zero-window
    /// probe (it re-sends an acknowledged byte), not an ACK.
    pub fn is_probe(&self, seq: u32) -> bool {
        self.acked_to_tcp().is_some_and(|a| seq_lt(seq, a))
    }

    /// The latest ack number the local TCP has been given, or the NC ack if later.
    fn acked_to_tcp(&self) -> Option<u32> {
        match (self.nc_ack, self.last_tcp_ack) {
            (Some(nc), Some((tcp, _))) if seq_lt(nc, tcp) => Some(tcp),
            (nc, tcp) => nc.or(tcp.map(|(a, _)| a)),
        }
    }

    /// Takes one data-bearing segment (payload or FIN) from the local TCP: buffers it, then
    /// codes every packet it touched (§III-C), unless it is a retransmission the deficit repair
    /// already answers.
    pub fn on_segment(&mut self, cx: &mut Context<'_>, pkt: &TcpPacket<'_>, stamp: AckStamp) {
        let Some(outcome) = self.buffer_segment(cx, pkt) else {
            return;
        };
        self.observe_local_tcp(cx, pkt);
        if outcome.new_index.is_none() {
            self.on_resend();
        }
        let Some(touched) = outcome.touched else {
            // Entirely acknowledged already: the local TCP missed our ACK; repeat it (in a
            // signal's recovery, when its turn comes: `recovery.rs`).
            if outcome.acked_seq > 0
                && let Some(ack) = self.acked_to_tcp()
                && !self.thins(cx, ack)
            {
                let window = self.peer_window_from(ack);
                self.synthesize(cx, ack, window, stamp);
            }
            return;
        };
        let fin_now = pkt.tcp.flags.contains(TcpFlags::FIN) && self.fin_seq.is_none();
        if pkt.tcp.flags.contains(TcpFlags::FIN) {
            self.fin_seq = Some(seq_add(pkt.end_seq(), u32::MAX));
        }
        if outcome.new_index.is_none() && !fin_now && self.repair_covers_retransmission(cx) {
            cx.stats.retransmissions_absorbed += 1;
            return;
        }
        self.code_arrivals(cx, touched);
        if fin_now && cx.config.policies.repair.burst_on_fin() {
            self.eot_burst(cx);
        }
    }

    /// Inserts a local segment into the coding buffer and counts what happened; `None` when
    /// the buffer refused it (control segment, no sequence space, malformed).
    fn buffer_segment(
        &mut self,
        cx: &mut Context<'_>,
        pkt: &TcpPacket<'_>,
    ) -> Option<InsertOutcome> {
        cx.stats.segments_from_local += 1;
        self.largest_payload = self.largest_payload.max(pkt.payload().len() as u32);
        let outcome = match self.buffer.insert(pkt) {
            Ok(o) => o,
            Err(CodingBufferError::Control | CodingBufferError::NoSequenceSpace) => return None,
            Err(_) => {
                cx.out.stats.local_malformed += 1;
                return None;
            }
        };
        if outcome.new_index.is_some() {
            self.report_flight(cx);
            cx.stats.packets_buffered += 1;
            self.note_idle(cx);
            self.last_new_at = Some(cx.now);
        } else if outcome.touched.is_some() {
            self.last_resent_at = Some(cx.now);
        }
        if outcome.dropped.is_some() {
            cx.stats.coding_buffer_drops += 1;
            cx.out.stats.coding_buffer_drops += 1;
            cx.out.event(Event::Dropped {
                flow: Some(self.data_flow),
                reason: DropReason::CodingBufferFull,
            });
        }
        Some(outcome)
    }

    /// A retransmission of buffered bytes while NC-ACKs flow: the repair already answers the
    /// missing DoFs those ACKs report (`repair.rs`), so coding it again would only load the path
    /// during TCP's recovery (with a repair and `absorb_retransmissions` on). Not when the
    /// peer's repair budget is spent (`repair_budget.rs`): the repairs are then refused and
    /// TCP's retransmission, at TCP's own pace, is the repair.
    fn repair_covers_retransmission(&self, cx: &Context<'_>) -> bool {
        cx.config.policies.repair.repairs()
            && cx.config.policies.absorb_retransmissions.is_on()
            && (!cx.config.policies.repair_budget.is_on() || cx.path.repair_budget.available())
            && self
                .last_ack_at
                .is_some_and(|t| cx.now.saturating_sub(t) < ACK_SILENCE)
    }

    /// Every buffered packet holding bytes of this arrival counts as arriving (§III-C: "the
    /// packet that arrived most recently from TCP (which could be a retransmission)"). A new
    /// segment touches one packet; a repacketised retransmission may touch several, and each
    /// must be coded again, or a packet outside the newest one's window would never be resent
    /// (docs/engine.md). Each arrival gets floor(N += R) combinations (§II-B).
    fn code_arrivals(&mut self, cx: &mut Context<'_>, touched: IndexRange) {
        for arrival in touched.iter() {
            let count = self.acc.on_arrival();
            for k in 0..count {
                let systematic = k == 0 && self.sends_systematic(cx);
                self.send_combination(cx, arrival, systematic, k > 0);
            }
            self.count_for_pb_burst(cx);
        }
        self.arm_probe(cx);
        self.arm_tail(cx);
    }
}
