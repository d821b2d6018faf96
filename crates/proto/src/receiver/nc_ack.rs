//! The receiver's NC-ACKs (Sundararajan et al. §IV-A, §IV-D): ack = first byte of the first
//! unseen packet, window = min(local TCP's right edge, decoding-buffer space) − ack, with the
//! Pid echo, loss bitmap and N_lp filled in (Ha & Tsuru §3.1, Karafillis et al. §II).

use tcpnc_wire::AckRepr;

use super::ReceiverHalf;
use crate::config::EngineConfig;
use crate::context::Context;
use crate::output::Queued;
use crate::tcp::{seq_add, seq_diff, seq_lt};

impl ReceiverHalf {
    /// The seen-ACK: first byte of the first unseen packet (§IV-A), or one past the last byte
    /// of the packet before it when the first unseen packet's range is not known yet.
    pub(super) fn ack_seq(&self) -> Option<u32> {
        let fu = self.decoder.as_ref()?.first_unseen();
        if let Some(s) = self.symbols.get(fu) {
            return Some(s.range.start);
        }
        if let Some(s) = fu.checked_sub(1).and_then(|p| self.symbols.get(p)) {
            return Some(seq_add(s.range.end, 1));
        }
        self.dropped_end.or(self.frontier_seq)
    }

    /// Advertised window for `ack` (§IV-D): the smaller of the local TCP's last acceptable byte
    /// and the last byte the decoding buffer can hold, minus `ack`. Delivered data counts as
    /// free space (Base will free it); the decoder's index span bounds it too.
    pub(super) fn window(&self, ack: u32, cfg: &EngineConfig) -> u32 {
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

    /// Unseen indices up to the highest one heard of: the tracked span minus the rank (equal to
    /// `highest + 1 − first unseen` when the seen indices are a prefix); at most 65535.
    fn missing_dof(&self) -> u16 {
        match (&self.decoder, self.highest) {
            (Some(d), Some((h, _))) => (h + 1)
                .saturating_sub(d.base())
                .saturating_sub(d.rank() as u64)
                .min(65_535) as u16,
            _ => 0,
        }
    }

    /// Sends one NC-ACK; `false` if nothing is known to acknowledge yet.
    pub(super) fn send_ack(
        &mut self,
        cx: &mut Context<'_>,
        redundant: bool,
        dependent: bool,
    ) -> bool {
        let Some(ack) = self.ack_seq() else {
            return false;
        };
        let window = self.window(ack, cx.config);
        let missing = self.missing_dof();
        // Ha & Tsuru §3.2: combinations missing for less than the unordering length may only be
        // late; they are not reported lost (N_lp), so the sender does not repair them.
        let (unordering, lost_dof) = match cx.config.policies.unordering.is_on() {
            true => {
                let l = self.reorder.length();
                let late = self.pids.missing_within(u32::from(l));
                (l, missing.saturating_sub(late.min(65_535) as u16))
            }
            false => (0, missing),
        };
        // §3.3: a duplicate that reordering explains (every missing DoF may be late) is flagged
        // for the sender to hold.
        let pause = cx.config.policies.pause_ack.is_on()
            && self.last_ack_sent.is_some_and(|(last, _)| last == ack)
            && missing > 0
            && lost_dof == 0;
        let repr = AckRepr {
            flow: self.data_flow,
            ack,
            window,
            pid_echo: self.last_pid,
            loss_bitmap: self.pids.loss_bitmap(self.last_pid),
            lost_dof,
            unordering,
            redundant,
            dependent: dependent.then_some(ack),
            pause,
            update: unordering != self.last_unordering_sent,
        };
        // ACK coalescing (`coalesce.rs`): only an ACK that advances and carries no flag.
        let replaceable = match self.last_ack_sent {
            Some((last, echo)) if seq_lt(last, ack) => Some(echo),
            _ => None,
        }
        .filter(|_| cx.config.policies.coalesce_acks.is_on())
        .filter(|_| !(repr.pause || repr.update || repr.dependent.is_some()));
        self.last_window_sent = Some(window);
        self.last_ack_sent = Some((ack, repr.pid_echo));
        self.last_unordering_sent = unordering;
        let queued = cx.out.transmit_ack(&repr, replaceable);
        if queued == Queued::Dropped {
            return false;
        }
        if queued == Queued::Coalesced {
            // It took the place of one counted as sent when queued.
            cx.out.stats.acks_coalesced += 1;
            cx.stats.acks_coalesced += 1;
        } else {
            cx.out.stats.acks_sent += 1;
            cx.stats.acks_sent += 1;
        }
        true
    }
}
