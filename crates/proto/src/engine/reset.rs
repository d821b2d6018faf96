//! Resetting every connection when the peer gateway lost its state (it restarted: the
//! gateway learns it from the tunnel handshake's boot id). TCP/NC cannot resume such a
//! connection: the sender gateway acknowledges to its TCP what the receiver gateway has *seen*
//! (Sundararajan et al. §IV-A), so segments seen but not yet decoded by the lost receiver state,
//! or still needed for repair from the lost coding buffer, were acknowledged to the sending TCP,
//! freed there, and are gone for good. The connection is reset at both ends instead of stalling:
//!
//! * to the local TCP: an RST whose sequence number is the local TCP's next expected one
//!   ([`crate::receiver::ReceiverHalf::next_remote_seq`]; RFC 793 §3.4, RFC 5961 §3: accepted
//!   only if exact); and from then on any segment the local TCP still sends on that connection
//!   (e.g. a challenge ACK, RFC 5961 §3.2) is answered with an RST whose sequence number is that
//!   segment's acknowledgment number, which is exact (RFC 793 §3.4, "reset generation");
//! * to the remote TCP: a bare ACK with a sequence number half the sequence space away from
//!   anything in its window; the remote TCP answers an unacceptable segment with an ACK
//!   (RFC 793 §3.9), which crosses the peer's fresh gateway uncoded to our local stack, whose
//!   connection is closed by then and which answers with an exact RST (RFC 793 §3.4) that we
//!   forward. The provoking ACK is sent again every second ([`PROVOKE_EVERY`], at most
//!   [`PROVOKES`] times), since it may be lost, or sent before the peer's new session is
//!   confirmed, and so may our local stack's RST: passing this gateway does not mean it reached
//!   the remote TCP, which, a receiver with nothing to send, would then wait for ever. The
//!   repeats end when an RST of the connection arrives from the peer: the remote TCP, closed,
//!   answered a provoking ACK with one (RFC 793 §3.4), so it has been reset.
//!
//! DATA and NC-ACK frames still queued for the peer are dropped first
//! ([`crate::output::Output::discard_coded`]): sealed in the peer's new session, a DATA frame
//! would make its fresh engine build a receiver mid-stream, which suppresses the remote TCP's
//! pure ACKs (§IV-A), its answer to the provoking ACK among them, and that end would stall.

use std::time::Duration;

use super::Engine;
use crate::event::CloseReason;
use crate::flow_id_conversion::flow_key;
use crate::tcp::{ConnKey, IpParams, SegmentFields, TcpFlags, TcpPacket, build_segment};

/// How long a reset connection is remembered (its local segments answered with RSTs).
pub const RESET_MEMORY: Duration = Duration::from_secs(60);
/// Interval of the provoking ACKs.
pub const PROVOKE_EVERY: Duration = Duration::from_secs(1);
/// Most provoking ACKs per connection.
pub const PROVOKES: u8 = 10;

/// A reset connection: when, and the provoking ACK still to repeat.
#[derive(Debug)]
pub(super) struct ResetConn {
    at: Duration,
    provoke: Vec<u8>,
    next: Duration,
    left: u8,
}

impl Engine {
    /// Resets every connection (see the module documentation) and forgets their state.
    pub fn reset_flows(&mut self, now: Duration) {
        self.forget_old_resets(now);
        self.out.discard_coded();
        let conns: Vec<ConnKey> = self.flows.keys().copied().collect();
        for conn in conns {
            self.reset_one(conn, now);
        }
    }

    fn reset_one(&mut self, conn: ConnKey, now: Duration) {
        let Some(flow) = self.flows.get(&conn) else {
            return;
        };
        let to_local = flow_key(&flow.out_id).reversed();
        let local_next = flow.receiver.next_remote_seq();
        // Half the sequence space away from the local TCP's ISN: outside any window.
        let provoke_seq = flow
            .local_isn
            .unwrap_or_else(|| local_next.unwrap_or(0))
            .wrapping_add(0x8000_0000);
        let ip = IpParams::default();
        if let Some(seq) = local_next
            && let Ok(rst) = build_segment(&to_local, &rst_fields(seq), &[], &[], &ip)
        {
            self.out.deliver_local(rst, None);
            self.out.stats.resets_sent += 1;
        }
        let fields = SegmentFields {
            seq: provoke_seq,
            ack: local_next.unwrap_or(0),
            flags: TcpFlags::ACK,
            window: 0,
            urgent: 0,
        };
        let provoke =
            build_segment(&to_local.reversed(), &fields, &[], &[], &ip).unwrap_or_default();
        self.out.bypass(&provoke);
        self.remove_flow(&conn, CloseReason::Reset);
        self.out.stats.flows_reset += 1;
        if self.reset_conns.len() < self.config.limits.max_flows {
            let r = ResetConn {
                at: now,
                provoke,
                next: now + PROVOKE_EVERY,
                left: PROVOKES - 1,
            };
            self.reset_conns.insert(conn, r);
        }
    }

    /// A local segment of a reset connection: answered with an exact RST (`true`: handled).
    /// SYNs (a new connection on the same ports; the memory ends) and RSTs go their usual way.
    pub(super) fn answer_reset_conn(
        &mut self,
        now: Duration,
        pkt: &TcpPacket<'_>,
        conn: ConnKey,
    ) -> bool {
        if self.reset_conns.is_empty() {
            return false;
        }
        self.forget_old_resets(now);
        let flags = pkt.tcp.flags;
        if !self.reset_conns.contains_key(&conn) {
            return false;
        }
        if flags.contains(TcpFlags::SYN) {
            self.reset_conns.remove(&conn);
            return false;
        }
        if flags.contains(TcpFlags::RST) {
            // Forwarded; the memory stays, as the RST may be lost (module documentation).
            return false;
        }
        if flags.contains(TcpFlags::ACK) {
            let to_local = pkt.flow().reversed();
            if let Ok(rst) = build_segment(
                &to_local,
                &rst_fields(pkt.tcp.ack),
                &[],
                &[],
                &IpParams::default(),
            ) {
                self.out.deliver_local(rst, None);
                self.out.stats.resets_sent += 1;
            }
        }
        true
    }

    /// An RST of connection `conn` from the peer: if it is a reset connection, its remote TCP
    /// is closed, and the provoking ACKs end.
    pub(super) fn remote_reset_seen(&mut self, conn: &ConnKey) {
        if let Some(r) = self.reset_conns.get_mut(conn) {
            r.left = 0;
        }
    }

    fn forget_old_resets(&mut self, now: Duration) {
        self.reset_conns
            .retain(|_, r| now.saturating_sub(r.at) < RESET_MEMORY);
    }

    /// When a provoking ACK is due or a reset connection is forgotten.
    pub(super) fn reset_deadline(&self) -> Option<Duration> {
        self.reset_conns
            .values()
            .map(|r| {
                if r.left > 0 {
                    r.next
                } else {
                    r.at + RESET_MEMORY
                }
            })
            .min()
    }

    /// Repeats the provoking ACKs that are due; forgets old resets.
    pub(super) fn on_reset_timers(&mut self, now: Duration) {
        self.forget_old_resets(now);
        let mut due = Vec::new();
        for r in self.reset_conns.values_mut() {
            if r.left > 0 && r.next <= now {
                r.left -= 1;
                r.next = now + PROVOKE_EVERY;
                due.push(r.provoke.clone());
            }
        }
        for p in due {
            self.out.bypass(&p);
        }
    }
}

fn rst_fields(seq: u32) -> SegmentFields {
    SegmentFields {
        seq,
        ack: 0,
        flags: TcpFlags::RST,
        window: 0,
        urgent: 0,
    }
}
