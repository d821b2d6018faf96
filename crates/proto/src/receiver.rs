//! The receiver half of a flow: the peer's data toward the local TCP (Sundararajan et al. §IV).
//!
//! * Every DATA frame is Gauss-Jordan eliminated ([`Decoder`]); the Start/End of every symbol
//!   index it names is recorded, so that the first unseen index maps to a byte (§IV-A).
//! * NC-ACKs per [`AckPolicy`]: ack = first byte of the first unseen packet; window =
//!   min(local TCP's right edge, decoding-buffer space) − ack (§IV-D); Pid echo, loss bitmap
//!   and N_lp filled in (Ha & Tsuru §3.1, Karafillis et al. §II).
//! * Decoded symbols are rebuilt into the original TCP segment (ports back, padding removed,
//!   header and checksum untouched) and delivered (§IV-B). The local TCP's ACKs confirm
//!   delivery; an unconfirmed segment is delivered again after the redelivery timeout (§IV-C).
//! * A symbol is dropped from the decoder once its last byte is below the sender's Base *and*
//!   the local TCP acknowledged it (§IV-C).

use std::collections::BTreeMap;
use std::time::Duration;

use tcpnc_codec::{Decoder, DecoderConfig, Outcome};
use tcpnc_wire::{AckRepr, Coefficients, DataRepr, FlowId, FrameRepr, SeqRange};

use crate::ack_policy::AckDecision;
use crate::config::EngineConfig;
use crate::event::{DropReason, Event};
use crate::ident::flow_key;
use crate::loss_tracker::PidTracker;
use crate::output::Output;
use crate::stats::FlowStats;
use crate::tcp::{
    FlowKey, IpParams, Subheader, TcpFlags, rebuild_packet, seq_add, seq_diff, seq_lt,
};

/// Largest decoded symbol accepted: a maximal TCP segment without ports.
const MAX_SYMBOL_LEN: usize = 65_536;

/// Delivery state of one symbol index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Delivery {
    /// Not decoded yet.
    Pending,
    /// Handed to the local TCP, not yet acknowledged by it; kept for redelivery.
    Delivered {
        packet: Vec<u8>,
        last: Duration,
        attempts: u32,
    },
    /// Acknowledged by the local TCP (or given up / undeliverable).
    Confirmed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Symbol {
    range: SeqRange,
    delivery: Delivery,
}

/// What [`ReceiverHalf::on_data`] did, for the caller's bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataOutcome {
    /// The frame was innovative.
    pub innovative: bool,
    /// An NC-ACK was sent.
    pub acked: bool,
}

/// State of the peer → local direction of one flow.
#[derive(Debug)]
pub struct ReceiverHalf {
    /// The data direction (remote → local) as named in DATA and ACK frames.
    data_flow: FlowId,
    /// The same, as a TCP flow key (rebuilt packets travel on it).
    deliver_key: FlowKey,
    decoder: Option<Decoder>,
    symbols: BTreeMap<u64, Symbol>,
    /// Highest index recorded and its End.
    highest: Option<(u64, u32)>,
    /// One past the End of the last symbol dropped from the decoder.
    dropped_end: Option<u32>,
    /// In-order delivery frontier: every index below it was delivered; its seq.
    frontier_index: u64,
    frontier_seq: Option<u32>,
    pids: PidTracker,
    last_pid: u32,
    /// Latest Base from the sender.
    base_seq: Option<u32>,
    /// Latest ack number and right window edge the local TCP announced.
    local_ack: Option<u32>,
    local_right_edge: Option<u32>,
    /// Seq of the peer's FIN once decoded.
    fin_seq: Option<u32>,
    /// The peer's ISN from its SYN (via BYPASS).
    remote_isn: Option<u32>,
    last_window_sent: Option<u32>,
    max_seg: u32,
    /// A probe arrived uncoded from the peer: the local TCP's next ACK must reach the peer.
    probe_pending: bool,
    ip_ident: u16,
}

impl ReceiverHalf {
    /// A receiver for data flowing on `data_flow` (remote → local).
    pub fn new(data_flow: FlowId) -> Self {
        ReceiverHalf {
            data_flow,
            deliver_key: flow_key(&data_flow),
            decoder: None,
            symbols: BTreeMap::new(),
            highest: None,
            dropped_end: None,
            frontier_index: 0,
            frontier_seq: None,
            pids: PidTracker::new(),
            last_pid: 0,
            base_seq: None,
            local_ack: None,
            local_right_edge: None,
            fin_seq: None,
            remote_isn: None,
            last_window_sent: None,
            max_seg: 536,
            probe_pending: false,
            ip_ident: 0,
        }
    }

    /// Whether any DATA frame has been accepted.
    pub fn started(&self) -> bool {
        self.decoder.is_some()
    }

    /// Records the peer's ISN (from its SYN or SYN-ACK).
    pub fn on_remote_syn(&mut self, isn: u32) {
        self.remote_isn = Some(isn);
    }

    /// Marks that the peer sent an uncoded probe: the local TCP's answer must be relayed.
    pub fn on_probe(&mut self) {
        self.probe_pending = true;
    }

    /// The sequence number synthesised ACKs toward the local TCP carry: the peer's next
    /// sequence number as far as the local TCP is concerned (its latest ack, the in-order
    /// delivery frontier, or ISN + 1).
    pub fn next_remote_seq(&self) -> Option<u32> {
        let candidates = [
            self.local_ack,
            self.frontier_seq,
            self.remote_isn.map(|i| i.wrapping_add(1)),
        ];
        candidates
            .into_iter()
            .flatten()
            .reduce(|a, b| if seq_lt(a, b) { b } else { a })
    }

    /// Whether the peer's FIN was delivered and acknowledged by the local TCP.
    pub fn finished(&self) -> bool {
        matches!((self.fin_seq, self.local_ack), (Some(f), Some(a)) if seq_lt(f, a))
    }

    /// Symbols tracked (for tests and stats).
    pub fn tracked(&self) -> usize {
        self.symbols.len()
    }

    /// Takes one DATA frame.
    pub fn on_data(
        &mut self,
        header: &DataRepr,
        payload: &[u8],
        now: Duration,
        cfg: &EngineConfig,
        out: &mut Output,
        fs: &mut FlowStats,
    ) -> DataOutcome {
        fs.data_received += 1;
        self.pids.on_receive(header.pid);
        self.last_pid = header.pid;
        let first = header.ranges[0];
        if self.decoder.is_none() {
            // Synchronise on a frame whose first packet is the sender's oldest un-ACKed one:
            // nothing before it is still needed (§III-B Base), so no byte can be skipped.
            if header.base != first.start {
                out.stats.decoding_buffer_drops += 1;
                return DataOutcome::default();
            }
            let span = cfg.limits.decoding_buffer_packets as u64;
            let mut d = Decoder::new(DecoderConfig {
                max_rows: cfg.limits.decoding_buffer_packets,
                max_span: span,
                max_symbol_len: MAX_SYMBOL_LEN,
            });
            d.drop_below(u64::from(header.first_index));
            self.frontier_index = u64::from(header.first_index);
            self.frontier_seq = Some(first.start);
            self.decoder = Some(d);
        }
        let decoder = self.decoder.as_mut().expect("synchronised above");
        // Unwrap the 32-bit index around the decoder's first unseen index.
        let fu = decoder.first_unseen();
        let idx = fu as i64 + i64::from(header.first_index.wrapping_sub(fu as u32) as i32);
        if idx < 0 {
            fs.non_innovative += 1;
            return DataOutcome::default();
        }
        let idx = idx as u64;
        self.base_seq = Some(match self.base_seq {
            Some(b) if seq_lt(header.base, b) => b,
            _ => header.base,
        });
        let base = decoder.base();
        for (k, r) in header.ranges.iter().enumerate() {
            let i = idx + k as u64;
            if i < base {
                continue;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = self.symbols.entry(i) {
                e.insert(Symbol {
                    range: *r,
                    delivery: Delivery::Pending,
                });
            }
            self.max_seg = self.max_seg.max((r.seq_len() as u32).min(65_535));
            if self.highest.is_none_or(|(h, _)| i > h) {
                self.highest = Some((i, r.end));
            }
        }
        let n = header.ranges.len();
        let result = match &header.coefficients {
            Coefficients::Explicit(c) => decoder.receive(idx, c, payload),
            Coefficients::Seeded(s) => decoder.receive_seeded(idx, n, *s, payload),
            Coefficients::Systematic => decoder.receive(idx, &[1], payload),
        };
        let receipt = match result {
            Ok(r) => r,
            Err(_) => {
                out.stats.decode_errors += 1;
                out.stats.decoding_buffer_drops += 1;
                out.event(Event::Dropped {
                    flow: Some(self.data_flow.reversed()),
                    reason: DropReason::DecodingBufferFull,
                });
                return DataOutcome::default();
            }
        };
        let innovative = receipt.outcome == Outcome::Innovative;
        if innovative {
            fs.innovative += 1;
        } else {
            fs.non_innovative += 1;
        }
        self.deliver_decoded(now, out, fs);
        self.try_drop();
        let decision = cfg.ack_policy.decide(innovative, header.redundant);
        let acked = match decision {
            AckDecision::Ack => self.send_ack(header.redundant, false, cfg, out, fs),
            AckDecision::AckDependent => self.send_ack(header.redundant, true, cfg, out, fs),
            AckDecision::Suppress => false,
        };
        DataOutcome { innovative, acked }
    }

    /// Delivers every newly decoded symbol to the local TCP.
    fn deliver_decoded(&mut self, now: Duration, out: &mut Output, fs: &mut FlowStats) {
        let Some(decoder) = self.decoder.as_mut() else {
            return;
        };
        while let Some((index, bytes)) = decoder.poll_decoded() {
            let Some(sym) = self.symbols.get_mut(&index) else {
                continue;
            };
            if sym.delivery != Delivery::Pending {
                continue;
            }
            let r = sym.range;
            let rebuilt = Subheader::parse(bytes).and_then(|s| {
                let len = s.unpadded_len(r.start, r.end)?;
                let fin = s.flags().contains(TcpFlags::FIN);
                self.ip_ident = self.ip_ident.wrapping_add(1);
                let ip = IpParams {
                    ident: self.ip_ident,
                    ..IpParams::default()
                };
                Ok((
                    rebuild_packet(&self.deliver_key, &bytes[..len], &ip)?,
                    fin,
                    len - s.header_len(),
                ))
            });
            match rebuilt {
                Ok((packet, fin, payload_len)) => {
                    if fin {
                        self.fin_seq = Some(r.end);
                    }
                    fs.segments_delivered += 1;
                    fs.bytes_delivered += payload_len as u64;
                    out.stats.segments_delivered += 1;
                    out.deliver_local(packet.clone(), Some(self.data_flow.reversed()));
                    let already = self.local_ack.is_some_and(|a| seq_lt(r.end, a));
                    sym.delivery = if already {
                        Delivery::Confirmed
                    } else {
                        Delivery::Delivered {
                            packet,
                            last: now,
                            attempts: 0,
                        }
                    };
                }
                Err(_) => {
                    out.stats.rebuild_errors += 1;
                    out.event(Event::Dropped {
                        flow: Some(self.data_flow.reversed()),
                        reason: DropReason::Rebuild,
                    });
                    sym.delivery = Delivery::Confirmed;
                }
            }
        }
        while let Some(sym) = self.symbols.get(&self.frontier_index) {
            if sym.delivery == Delivery::Pending {
                break;
            }
            self.frontier_seq = Some(seq_add(sym.range.end, 1));
            self.frontier_index += 1;
        }
    }

    /// Drops from the decoder the prefix of symbols that are below Base and confirmed (§IV-C).
    fn try_drop(&mut self) {
        let (Some(decoder), Some(base_seq)) = (self.decoder.as_mut(), self.base_seq) else {
            return;
        };
        let mut cut = decoder.base();
        while let Some(sym) = self.symbols.get(&cut) {
            if sym.delivery == Delivery::Confirmed && seq_lt(sym.range.end, base_seq) {
                self.dropped_end = Some(seq_add(sym.range.end, 1));
                cut += 1;
            } else {
                break;
            }
        }
        if cut > decoder.base() {
            decoder.drop_below(cut);
            self.symbols = self.symbols.split_off(&cut);
            self.frontier_index = self.frontier_index.max(cut);
        }
    }

    /// The seen-ACK: first byte of the first unseen packet (§IV-A), or one past the last byte
    /// of the packet before it when the first unseen packet's range is not known yet.
    fn ack_seq(&self) -> Option<u32> {
        let fu = self.decoder.as_ref()?.first_unseen();
        if let Some(s) = self.symbols.get(&fu) {
            return Some(s.range.start);
        }
        if let Some(s) = fu.checked_sub(1).and_then(|p| self.symbols.get(&p)) {
            return Some(seq_add(s.range.end, 1));
        }
        self.dropped_end.or(self.frontier_seq)
    }

    /// Advertised window for `ack` (§IV-D): the smaller of the local TCP's last acceptable byte
    /// and the last byte the decoding buffer can hold, minus `ack`. Delivered data counts as
    /// free space (Base will free it); the decoder's index span bounds it too.
    fn window(&self, ack: u32, cfg: &EngineConfig) -> u32 {
        let cap = cfg.limits.decoding_buffer_bytes as u64;
        let held = self
            .frontier_seq
            .map_or(0, |f| seq_diff(ack, f).max(0) as u64);
        let mut w = cap.saturating_sub(held);
        if let Some(d) = &self.decoder {
            let used = d.first_unseen().saturating_sub(d.base());
            let free = (cfg.limits.decoding_buffer_packets as u64).saturating_sub(used);
            // Bytes per free index slot: the largest packet seen (at least 536). Approximate:
            // smaller packets can exhaust the span first; the decoder then refuses the
            // combination (counted) and TCP's retransmission recovers it.
            w = w.min(free * u64::from(self.max_seg));
        }
        if let Some(edge) = self.local_right_edge {
            w = w.min(seq_diff(edge, ack).max(0) as u64);
        }
        w.min(u64::from(u32::MAX)) as u32
    }

    /// Sends one NC-ACK; `false` if nothing is known to acknowledge yet.
    fn send_ack(
        &mut self,
        redundant: bool,
        dependent: bool,
        cfg: &EngineConfig,
        out: &mut Output,
        fs: &mut FlowStats,
    ) -> bool {
        let Some(ack) = self.ack_seq() else {
            return false;
        };
        let window = self.window(ack, cfg);
        // Unseen indices up to the highest one heard of: the tracked span minus the rank
        // (equal to `highest + 1 − first unseen` when the seen indices are a prefix).
        let lost_dof = match (&self.decoder, self.highest) {
            (Some(d), Some((h, _))) => (h + 1)
                .saturating_sub(d.base())
                .saturating_sub(d.rank() as u64)
                .min(65_535) as u16,
            _ => 0,
        };
        let repr = AckRepr {
            flow: self.data_flow,
            ack,
            window,
            pid_echo: self.last_pid,
            loss_bitmap: self.pids.loss_bitmap(self.last_pid),
            lost_dof,
            unordering: 0,
            redundant,
            dependent: dependent.then_some(ack),
            pause: false,
            update: false,
        };
        self.last_window_sent = Some(window);
        if out.transmit_frame(&FrameRepr::Ack(repr)) {
            out.stats.acks_sent += 1;
            fs.acks_sent += 1;
            true
        } else {
            false
        }
    }

    /// The local TCP acknowledged up to `ack` with its window right edge at `right_edge`
    /// (its window already scaled). Confirms delivered segments; sends a window-update NC-ACK
    /// when the window reopens from below one segment, or when a probe is pending.
    #[allow(clippy::too_many_arguments)]
    pub fn on_local_ack(
        &mut self,
        ack: u32,
        right_edge: u32,
        now: Duration,
        cfg: &EngineConfig,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        let advanced = self.local_ack.is_none_or(|a| seq_lt(a, ack));
        if advanced {
            self.local_ack = Some(ack);
        }
        self.local_right_edge = Some(right_edge);
        for sym in self.symbols.values_mut() {
            if matches!(sym.delivery, Delivery::Delivered { .. }) && seq_lt(sym.range.end, ack) {
                sym.delivery = Delivery::Confirmed;
            }
        }
        self.try_drop();
        if advanced {
            self.redeliver_at(ack, now, cfg, out, fs);
        }
        let Some(a) = self.ack_seq() else {
            return;
        };
        let reopened = self
            .last_window_sent
            .is_some_and(|w| w < self.max_seg && self.window(a, cfg) >= self.max_seg);
        if reopened || self.probe_pending {
            self.probe_pending = false;
            self.send_ack(false, false, cfg, out, fs);
        }
    }

    /// Earliest redelivery deadline.
    pub fn poll_timeout(&self, cfg: &EngineConfig) -> Option<Duration> {
        self.symbols
            .values()
            .filter_map(|s| match s.delivery {
                Delivery::Delivered { last, attempts, .. }
                    if attempts <= cfg.max_redeliveries
                        || Some(s.range.start) == self.local_ack =>
                {
                    Some(last + backoff(cfg.redelivery_timeout, attempts))
                }
                _ => None,
            })
            .min()
    }

    /// Redelivers every segment whose redelivery timeout expired (§IV-C). After
    /// `max_redeliveries` a segment is redelivered only while it is the one the local TCP's ack
    /// asks for (the head), so a segment the NC layer acknowledged is never given up while the
    /// local TCP still needs it.
    pub fn on_timeout(
        &mut self,
        now: Duration,
        cfg: &EngineConfig,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        let flow = self.data_flow.reversed();
        let head = self.local_ack;
        for sym in self.symbols.values_mut() {
            let is_head = Some(sym.range.start) == head;
            let Delivery::Delivered {
                packet,
                last,
                attempts,
            } = &mut sym.delivery
            else {
                continue;
            };
            if (*attempts > cfg.max_redeliveries && !is_head)
                || *last + backoff(cfg.redelivery_timeout, *attempts) > now
            {
                continue;
            }
            if *attempts == cfg.max_redeliveries && !is_head {
                // Timer-driven redelivery stops; the segment is kept (the NC layer has
                // acknowledged it, nobody else holds it) and is still delivered again when the
                // local TCP's ack reaches it.
                *attempts += 1;
                out.stats.redeliveries_abandoned += 1;
                out.event(Event::Dropped {
                    flow: Some(flow),
                    reason: DropReason::RedeliveryAbandoned,
                });
                continue;
            }
            *attempts = attempts.saturating_add(1);
            *last = now;
            out.stats.redeliveries += 1;
            fs.redeliveries += 1;
            out.deliver_local(packet.clone(), Some(flow));
        }
        self.try_drop();
    }
}

/// Redelivery timeout after `attempts` redeliveries: doubled each time (at most 64×).
fn backoff(timeout: Duration, attempts: u32) -> Duration {
    timeout * (1u32 << attempts.min(6))
}

impl ReceiverHalf {
    /// The local TCP's ack advanced to `ack`: if the segment starting there was delivered (more
    /// than a grace time ago) but not accepted — dropped as out of order — deliver it again at
    /// once (§IV-C). Only that one
    /// segment: its acceptance advances the ack again, which redelivers the next, so a gap costs
    /// one extra delivery per segment (a TCP that keeps out-of-order data jumps its ack instead).
    fn redeliver_at(
        &mut self,
        ack: u32,
        now: Duration,
        cfg: &EngineConfig,
        out: &mut Output,
        fs: &mut FlowStats,
    ) {
        // A segment handed over within the last quarter timeout is probably still queued
        // toward the local TCP (it processes packets in order): leave it to the timer.
        let grace = cfg.redelivery_timeout / 4;
        let flow = self.data_flow.reversed();
        let next = self
            .symbols
            .values_mut()
            .find(|s| !seq_lt(s.range.end, ack));
        if let Some(sym) = next
            && sym.range.start == ack
            && let Delivery::Delivered { packet, last, .. } = &mut sym.delivery
            && *last + grace <= now
        {
            *last = now;
            out.stats.redeliveries += 1;
            fs.redeliveries += 1;
            out.deliver_local(packet.clone(), Some(flow));
        }
    }
}
