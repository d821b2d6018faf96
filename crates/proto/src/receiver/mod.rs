//! The receiver half of a flow: the peer's data toward the local TCP (Sundararajan et al. §IV).
//!
//! * Every DATA frame is Gauss-Jordan eliminated ([`Decoder`]); the Start/End of every symbol
//!   index it names is recorded, so that the first unseen index maps to a byte (§IV-A).
//! * NC-ACKs per [`AckPolicy`](crate::AckPolicy): ack = first byte of the first unseen packet; window =
//!   min(local TCP's right edge, decoding-buffer space) − ack (§IV-D); Pid echo, loss bitmap
//!   and N_lp filled in (Ha & Tsuru §3.1, Karafillis et al. §II).
//! * Decoded symbols are rebuilt into the original TCP segment (ports back, padding removed,
//!   header and checksum untouched) and delivered (§IV-B). The local TCP's ACKs confirm
//!   delivery; an unconfirmed segment is delivered again after the redelivery timeout (§IV-C).
//! * A symbol is dropped from the decoder once its last byte is below the sender's Base *and*
//!   the local TCP acknowledged it (§IV-C).
//!
//! Files: this one takes DATA frames; `delivery.rs` rebuilds, delivers and redelivers
//! segments and follows the local TCP's ACKs; `nc_ack.rs` builds the NC-ACKs.

mod delivery;
mod index_table;
mod nc_ack;

use std::time::Duration;

use tcpnc_codec::{Decoder, DecoderConfig, Outcome};
use tcpnc_wire::{Coefficients, DataRepr, FlowId, SeqRange};

use crate::context::Context;
use crate::event::{DropReason, Event};
use crate::flow_id_conversion::flow_key;
use crate::pid_tracker::{Arrival, Late, PidTracker};
use crate::reorder::ReorderMeter;
use crate::tcp::{FlowKey, seq_lt};
use index_table::IndexTable;
use tcpnc_settings::AckDecision;

/// Largest decoded symbol accepted: a maximal TCP segment without ports.
const MAX_SYMBOL_LEN: usize = 65_536;

/// Delivery state of one symbol index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Delivery {
    /// Not decoded yet.
    Pending,
    /// Decoded, held until every segment before it is delivered: the local TCP gets its
    /// segments in order (a systematic code decodes past a loss).
    Decoded,
    /// Handed to the local TCP, not yet acknowledged by it. A redelivery rebuilds the packet
    /// from the decoder's symbol (held until the symbol is confirmed, `try_drop`) with the
    /// same IP identification, so it is byte for byte the first delivery.
    Delivered {
        ident: u16,
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
    symbols: IndexTable<Symbol>,
    /// Highest index recorded and its End.
    highest: Option<(u64, u32)>,
    /// One past the End of the last symbol dropped from the decoder.
    dropped_end: Option<u32>,
    /// In-order delivery frontier: every index below it was delivered; its seq.
    frontier_index: u64,
    /// Every symbol below this index is confirmed (or dropped): the local ACKs' and the
    /// redelivery timers' scans start here instead of at the decoder's base, which trails
    /// by the symbols waiting for the peer's Base.
    confirmed_to: u64,
    frontier_seq: Option<u32>,
    pids: PidTracker,
    last_pid: u32,
    /// Unordering length (Ha & Tsuru §3.2).
    reorder: ReorderMeter,
    /// Unordering length of the last NC-ACK sent.
    last_unordering_sent: u16,
    /// Ack number and Pid echo of the last NC-ACK sent.
    last_ack_sent: Option<(u32, u32)>,
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
    /// The shift the peer's TCP applies to the window fields it is given: the local TCP's own
    /// (RFC 7323 §2.3; the peer gateway synthesises its ACKs with `window >> shift`).
    window_shift: u8,
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
            symbols: IndexTable::default(),
            highest: None,
            dropped_end: None,
            frontier_index: 0,
            confirmed_to: 0,
            frontier_seq: None,
            pids: PidTracker::new(),
            last_pid: 0,
            reorder: ReorderMeter::new(),
            last_unordering_sent: 0,
            last_ack_sent: None,
            base_seq: None,
            local_ack: None,
            local_right_edge: None,
            fin_seq: None,
            remote_isn: None,
            last_window_sent: None,
            window_shift: 0,
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

    /// Takes one DATA frame: synchronises on the first one, records the Start/End of the
    /// indices it names, eliminates it, delivers what decoded and answers per the ACK policy.
    pub fn on_data(
        &mut self,
        cx: &mut Context<'_>,
        header: &DataRepr,
        payload: &[u8],
    ) -> DataOutcome {
        cx.stats.data_received += 1;
        let policies = &cx.config.policies;
        if self.pids.newest().is_none()
            && policies.unordering.is_on()
            && policies.path_memory.is_on()
        {
            self.reorder.start_from(cx.path.arrival_reordering);
        }
        let late = match self.pids.on_arrival(header.pid, cx.now, header.first_index) {
            Arrival::Late(l) => Some(l),
            _ => None,
        };
        cx.stats.late_received += u64::from(late.is_some());
        if cx.config.policies.unordering.is_on() {
            self.measure_reordering(cx, late);
        }
        self.last_pid = header.pid;
        if !self.synchronise(cx, header) {
            return DataOutcome::default();
        }
        let Some(idx) = self.unwrap_index(header.first_index) else {
            cx.stats.non_innovative += 1;
            return DataOutcome::default();
        };
        self.base_seq = Some(match self.base_seq {
            Some(b) if seq_lt(header.base, b) => b,
            _ => header.base,
        });
        self.record_ranges(idx, &header.ranges);
        let Some(innovative) = self.eliminate(cx, idx, header, payload) else {
            return DataOutcome::default();
        };
        if innovative {
            cx.stats.innovative += 1;
        } else {
            cx.stats.non_innovative += 1;
        }
        self.deliver_decoded(cx);
        self.try_drop();
        let decision = match cx
            .config
            .policies
            .ack_rule
            .decide(innovative, header.redundant)
        {
            // Ha & Tsuru §3.2: a useless combination that was merely overtaken is not a TCP
            // retransmission to answer; its duplicate ACK would only look like a loss.
            AckDecision::AckDependent
                if late.is_some() && cx.config.policies.unordering.is_on() =>
            {
                AckDecision::Suppress
            }
            d => d,
        };
        let acked = match decision {
            AckDecision::Ack => self.send_ack(cx, header.redundant, false),
            AckDecision::AckDependent => self.send_ack(cx, header.redundant, true),
            AckDecision::Suppress => false,
        };
        DataOutcome { innovative, acked }
    }

    /// Feeds one arrival to the unordering meter (Ha & Tsuru §3.2) and, with `path_memory`,
    /// leaves what it measures for the receiver halves created later.
    fn measure_reordering(&mut self, cx: &mut Context<'_>, late: Option<Late>) {
        let (pids, now) = (&self.pids, cx.now);
        self.reorder
            .on_arrival(now, late, |delay| pids.depth_within(now, delay));
        if cx.config.policies.path_memory.is_on() {
            cx.path.arrival_reordering = self.reorder.estimate();
        }
    }

    /// Creates the decoder on the first DATA frame whose first packet is the sender's oldest
    /// un-ACKed one: nothing before it is still needed (§III-B Base), so no byte can be
    /// skipped. `false` (counted) while no such frame has arrived.
    fn synchronise(&mut self, cx: &mut Context<'_>, header: &DataRepr) -> bool {
        if self.decoder.is_some() {
            return true;
        }
        let first = header.ranges[0];
        if header.base != first.start {
            cx.out.stats.decoding_buffer_drops += 1;
            return false;
        }
        let limits = &cx.config.limits;
        let mut d = Decoder::new(DecoderConfig {
            max_rows: limits.decoding_buffer_packets,
            max_span: limits.decoding_buffer_packets as u64,
            max_symbol_len: MAX_SYMBOL_LEN,
        });
        d.drop_below(u64::from(header.first_index));
        self.frontier_index = u64::from(header.first_index);
        self.frontier_seq = Some(first.start);
        self.decoder = Some(d);
        true
    }

    /// The symbol index named by a frame's 32-bit `first_index`, unwrapped around the
    /// decoder's first unseen index; `None` if it falls before index 0.
    fn unwrap_index(&self, first_index: u32) -> Option<u64> {
        let fu = self.decoder.as_ref()?.first_unseen();
        let idx = fu as i64 + i64::from(first_index.wrapping_sub(fu as u32) as i32);
        u64::try_from(idx).ok()
    }

    /// Records the Start/End of every index from `idx` on that the decoder still holds and
    /// could hold (its span), the largest segment seen and the highest index heard of (§IV-A).
    /// Called once the decoder exists (`synchronise`).
    fn record_ranges(&mut self, idx: u64, ranges: &[SeqRange]) {
        let (base, max_span) = self
            .decoder
            .as_ref()
            .map_or((0, 0), |d| (d.base(), d.config().max_span));
        // Indices the table already holds without a gap need no lookup (the first report
        // wins): on a clean path all but the newest of a frame's W (docs/speed.md).
        let (known_from, known_to) = self.symbols.dense_span().unwrap_or((0, 0));
        for (k, r) in ranges.iter().enumerate() {
            let i = idx + k as u64;
            if i < base {
                continue;
            }
            if !(known_from..known_to).contains(&i) {
                // Beyond the decoder's span the combination is refused anyway (SpanExceeded).
                let symbol = || Symbol {
                    range: *r,
                    delivery: Delivery::Pending,
                };
                self.symbols.insert_if_absent(i, symbol, max_span);
            }
            self.max_seg = self.max_seg.max((r.seq_len() as u32).min(65_535));
            if self.highest.is_none_or(|(h, _)| i > h) {
                self.highest = Some((i, r.end));
            }
        }
    }

    /// Gauss-Jordan eliminates one combination (§IV-A); whether it was innovative, or `None`
    /// (counted, reported) when the decoder refused it.
    fn eliminate(
        &mut self,
        cx: &mut Context<'_>,
        idx: u64,
        header: &DataRepr,
        payload: &[u8],
    ) -> Option<bool> {
        let decoder = self.decoder.as_mut()?;
        let n = header.ranges.len();
        let result = match &header.coefficients {
            Coefficients::Explicit(c) => decoder.receive(idx, c, payload),
            Coefficients::Seeded(s) => decoder.receive_seeded(idx, n, *s, payload),
            Coefficients::Systematic => decoder.receive(idx, &[1], payload),
        };
        match result {
            Ok(receipt) => Some(receipt.outcome == Outcome::Innovative),
            Err(_) => {
                cx.out.stats.decode_errors += 1;
                cx.out.stats.decoding_buffer_drops += 1;
                cx.out.event(Event::Dropped {
                    flow: Some(self.data_flow.reversed()),
                    reason: DropReason::DecodingBufferFull,
                });
                None
            }
        }
    }
}
