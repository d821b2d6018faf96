//! The receiver's NC-ACKs (Sundararajan et al. §IV-A, §IV-D): ack = first byte of the first
//! unseen packet, window = min(local TCP's right edge, decoding-buffer space) − ack, with the
//! Pid echo, loss bitmap and N_lp filled in (Ha & Tsuru §3.1, Karafillis et al. §II).

use tcpnc_wire::{AckRepr, FrameRepr};

use super::ReceiverHalf;
use crate::config::EngineConfig;
use crate::context::Context;
use crate::tcp::{seq_add, seq_diff};

impl ReceiverHalf {
    /// The seen-ACK: first byte of the first unseen packet (§IV-A), or one past the last byte
    /// of the packet before it when the first unseen packet's range is not known yet.
    pub(super) fn ack_seq(&self) -> Option<u32> {
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
        if cx.out.transmit_frame(&FrameRepr::Ack(repr)) {
            cx.out.stats.acks_sent += 1;
            cx.stats.acks_sent += 1;
            true
        } else {
            false
        }
    }
}
