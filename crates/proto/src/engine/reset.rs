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
//!   forward.

use std::time::Duration;

use super::Engine;
use crate::event::CloseReason;
use crate::flow_id_conversion::flow_key;
use crate::tcp::{ConnKey, IpParams, SegmentFields, TcpFlags, TcpPacket, build_segment};

/// How long a reset connection is remembered (its local segments answered with RSTs).
pub const RESET_MEMORY: Duration = Duration::from_secs(60);

impl Engine {
    /// Resets every connection (see the module documentation) and forgets their state.
    pub fn reset_flows(&mut self, now: Duration) {
        self.forget_old_resets(now);
        let conns: Vec<ConnKey> = self.flows.keys().copied().collect();
        for conn in conns {
            let Some(flow) = self.flows.get(&conn) else {
                continue;
            };
            let to_local = flow_key(&flow.out_id).reversed();
            let local_next = flow.receiver.next_remote_seq();
            let provoke_seq = flow
                .local_isn
                .unwrap_or_else(|| local_next.unwrap_or(0))
                .wrapping_add(0x8000_0000);
            if let Some(seq) = local_next
                && let Ok(rst) =
                    build_segment(&to_local, &rst_fields(seq), &[], &[], &IpParams::default())
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
            if let Ok(probe) = build_segment(
                &to_local.reversed(),
                &fields,
                &[],
                &[],
                &IpParams::default(),
            ) {
                self.out.bypass(&probe);
            }
            self.remove_flow(&conn, CloseReason::Reset);
            self.out.stats.flows_reset += 1;
            if self.reset_conns.len() < self.config.limits.max_flows {
                self.reset_conns.insert(conn, now);
            }
        }
    }

    /// A local segment of a reset connection: answered with an exact RST (`true`: handled).
    /// SYNs (a new connection on the same ports) and RSTs go their usual way.
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
        if flags.contains(TcpFlags::SYN) || flags.contains(TcpFlags::RST) {
            self.reset_conns.remove(&conn);
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

    fn forget_old_resets(&mut self, now: Duration) {
        self.reset_conns
            .retain(|_, at| now.saturating_sub(*at) < RESET_MEMORY);
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
