//! One TCP connection through the engine: a sender half (the local TCP's data, §III) and a
//! receiver half (the peer's data, §IV), the window scales and ISNs learnt from both SYNs, the
//! connection's counters and the timers that end it.
//!
//! The connection hands each half what it needs from the other: the receiver learns the local
//! TCP's ACKs (from every local segment, data-bearing or not) before the sender codes the
//! segment's payload, and the sender's synthesised ACKs take the peer's next sequence number
//! from the receiver ([`AckStamp`]).

use std::time::Duration;

use tcpnc_wire::{AckRepr, DataRepr, FlowId};

use crate::config::EngineConfig;
use crate::context::{Call, Context};
use crate::receiver::ReceiverHalf;
use crate::sender::{AckStamp, SenderHalf};
use crate::stats::FlowStats;
use crate::tcp::{TcpFlags, TcpPacket, effective_window_shift, seq_add};

/// A connection, oriented local → remote.
#[derive(Debug)]
pub struct Connection {
    /// Local → remote identity (the sender half's data direction).
    pub out_id: FlowId,
    /// The local TCP's data, created at its first data segment.
    pub sender: Option<SenderHalf>,
    /// The peer's data.
    pub receiver: ReceiverHalf,
    /// Window-scale option of the local TCP's SYN (`None`: SYN not seen or no option).
    pub local_wscale: Option<u8>,
    /// Window-scale option of the remote TCP's SYN.
    pub remote_wscale: Option<u8>,
    /// The local TCP's ISN, from its SYN.
    pub local_isn: Option<u32>,
    /// The remote TCP's ISN, from its SYN.
    pub remote_isn: Option<u32>,
    /// When the peer's SYN (or SYN-ACK) was last delivered (handshake protection's dedupe).
    pub remote_syn_at: Option<Duration>,
    /// Last packet in either direction.
    pub last_activity: Duration,
    /// When both directions were seen finished.
    pub finished_at: Option<Duration>,
    /// Counters of both halves (the coding buffer's length is read on demand, see
    /// [`Connection::stats`]).
    stats: FlowStats,
}

impl Connection {
    /// A new connection whose local → remote identity is `out_id`.
    pub fn new(out_id: FlowId, now: Duration) -> Self {
        Connection {
            out_id,
            sender: None,
            receiver: ReceiverHalf::new(out_id.reversed()),
            local_wscale: None,
            remote_wscale: None,
            local_isn: None,
            remote_isn: None,
            remote_syn_at: None,
            last_activity: now,
            finished_at: None,
            stats: FlowStats::default(),
        }
    }

    /// The shift the local TCP applies to the windows it advertises (RFC 7323: its own option,
    /// only if both SYNs carried one).
    pub fn local_shift(&self) -> u8 {
        effective_window_shift(self.local_wscale, self.remote_wscale)
    }

    /// The shift the local TCP applies to windows it receives: the remote's option, only if both
    /// SYNs carried one. Synthesised ACKs encode their window with it.
    pub fn remote_shift(&self) -> u8 {
        effective_window_shift(self.remote_wscale, self.local_wscale)
    }

    /// The connection's counters now, computed on demand (nothing is copied per packet).
    pub fn stats(&self) -> FlowStats {
        let mut stats = self.stats.clone();
        if let Some(s) = &self.sender {
            stats.coding_buffer_len = s.buffered();
        }
        stats
    }

    /// Counts a local pure ACK suppressed (§IV-A).
    pub fn count_pure_ack_suppressed(&mut self) {
        self.stats.pure_acks_suppressed += 1;
    }

    /// The local TCP's ACK field and window (any local segment with ACK): the receiver half
    /// confirms deliveries and may re-open the window (§IV-C, §IV-D). A SYN-ACK's window is
    /// never scaled (RFC 7323 §2.2).
    pub fn on_local_ack(&mut self, call: Call<'_>, pkt: &TcpPacket<'_>) {
        let (edge, scale) = self.local_edge(pkt);
        let mut cx = call.with_stats(&mut self.stats);
        self.receiver
            .on_local_ack(&mut cx, pkt.tcp.ack, edge, scale);
    }

    /// The right edge of the local TCP's window in `pkt` and the local TCP's window scale (a
    /// SYN's own window is never scaled, RFC 7323 §2.2).
    fn local_edge(&self, pkt: &TcpPacket<'_>) -> (u32, u8) {
        let scale = effective_window_shift(self.local_wscale, self.remote_wscale);
        let shift = match pkt.tcp.flags.contains(TcpFlags::SYN) {
            true => 0,
            false => scale,
        };
        (
            seq_add(pkt.tcp.ack, u32::from(pkt.tcp.window) << shift),
            scale,
        )
    }

    /// A data-bearing segment (payload or FIN) from the local TCP: its ACK goes to the receiver
    /// half first, then the sender half (created on demand) codes it.
    pub fn on_local_data(&mut self, call: Call<'_>, pkt: &TcpPacket<'_>) {
        let (edge, scale) = self.local_edge(pkt);
        let mut cx = call.with_stats(&mut self.stats);
        if pkt.tcp.flags.contains(TcpFlags::ACK) {
            self.receiver
                .on_local_ack(&mut cx, pkt.tcp.ack, edge, scale);
        }
        let stamp = AckStamp {
            seq: self.receiver.next_remote_seq(),
            window_shift: effective_window_shift(self.remote_wscale, self.local_wscale),
        };
        let first_seq = self.local_isn.map(|i| i.wrapping_add(1));
        let out_id = self.out_id;
        self.sender
            .get_or_insert_with(|| SenderHalf::new(out_id, first_seq, cx.config, cx.path))
            .on_segment(&mut cx, pkt, stamp);
    }

    /// A DATA frame from the peer, for the receiver half.
    pub fn on_data(&mut self, call: Call<'_>, header: &DataRepr, payload: &[u8]) {
        let mut cx = call.with_stats(&mut self.stats);
        self.receiver.on_data(&mut cx, header, payload);
    }

    /// An NC-ACK from the peer, for the sender half; `false` if there is no sender half yet.
    pub fn on_nc_ack(&mut self, call: Call<'_>, ack: &AckRepr) -> bool {
        let stamp = self.ack_stamp();
        let Some(sender) = self.sender.as_mut() else {
            return false;
        };
        self.last_activity = call.now;
        let mut cx = call.with_stats(&mut self.stats);
        sender.on_ack(&mut cx, ack, stamp);
        true
    }

    /// Runs both halves' timers: redeliveries (§IV-C), the tail repair, the repair probe, a
    /// paused ACK's end.
    pub fn on_timeout(&mut self, call: Call<'_>) {
        let stamp = self.ack_stamp();
        let mut cx: Context<'_> = call.with_stats(&mut self.stats);
        self.receiver.on_timeout(&mut cx);
        if let Some(sender) = self.sender.as_mut() {
            sender.on_pause(&mut cx);
            sender.on_tail_probe(&mut cx);
            sender.on_timeout(&mut cx);
            sender.on_spread(&mut cx);
            sender.release_paused(&mut cx, stamp);
            sender.release_withheld(&mut cx, stamp);
        }
    }

    /// What the sender's synthesised ACKs take from the rest of the connection now.
    fn ack_stamp(&self) -> AckStamp {
        AckStamp {
            seq: self.receiver.next_remote_seq(),
            window_shift: self.remote_shift(),
        }
    }

    /// Both directions finished: the local FIN was acknowledged by the peer and the peer's FIN
    /// was acknowledged by the local TCP (a direction that never carried data does not count
    /// as finished).
    pub fn both_finished(&self) -> bool {
        self.sender.as_ref().is_some_and(|s| s.finished()) && self.receiver.finished()
    }

    /// When this connection must be looked at again: idle expiry, linger after finishing,
    /// redelivery, repair probe.
    pub fn deadline(&self, cfg: &EngineConfig) -> Duration {
        let mut d = self.last_activity + cfg.idle_timeout;
        if let Some(f) = self.finished_at {
            d = d.min(f + cfg.closed_linger);
        }
        if let Some(r) = self.receiver.poll_timeout(cfg) {
            d = d.min(r);
        }
        if let Some(s) = self.sender.as_ref().and_then(|s| s.poll_timeout()) {
            d = d.min(s);
        }
        d
    }
}
