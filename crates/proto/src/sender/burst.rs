//! Karafillis et al.'s repair bursts (§II, "The Proposed NC Improvement Algorithm"):
//!
//! * Step 1 (receiver): every NC-ACK carries N_lp, the degrees of freedom the sink misses up to
//!   the newest packet it has heard of (`receiver/nc_ack.rs`, docs/wire.md).
//! * Step 2 (source): N_lp is updated on every NC-ACK (`LossEstimator::lost_dof`, the latest
//!   NC-ACK's value).
//! * Step 3, EOT (`RepairPolicy::Eot`): when the local TCP's FIN arrives, after the final
//!   packet's combinations, N_lp coded packets "to cover any outstanding losses".
//! * Step 3, PB (`RepairPolicy::EotPb`; `Pb` without the EOT part): after every B =
//!   `pb_block` transmitted non-redundant packets (each arrival's first combination, which is
//!   what carries no REDUNDANT flag), N_lp coded packets; EOT as well.
//!
//! Each coded packet of a burst is a repair combination over the whole coding buffer (the
//! paper's coding window is every un-ACKed packet), REDUNDANT | FLUSH as docs/wire.md specifies
//! for EOT/PB bursts. A burst is at most as long as the coding buffer: the sink cannot miss more
//! degrees of freedom than the packets the source still holds un-ACKed (a larger N_lp is an
//! NC-ACK older than the ACKs that emptied the buffer).

use super::SenderHalf;
use crate::context::Context;

impl SenderHalf {
    /// The EOT burst: N_lp repairs (Karafillis §II, EOT).
    pub(super) fn eot_burst(&mut self, cx: &mut Context<'_>) {
        self.repair_burst(cx);
    }

    /// Counts one arrival's non-redundant combination towards the PB block; every `pb_block`
    /// of them, the PB burst (Karafillis §II, PB).
    pub(super) fn count_for_pb_burst(&mut self, cx: &mut Context<'_>) {
        if !cx.config.policies.repair.burst_per_block() {
            return;
        }
        self.since_pb_burst += 1;
        if self.since_pb_burst >= cx.config.policies.pb_block {
            self.since_pb_burst = 0;
            self.repair_burst(cx);
        }
    }

    /// Sends min(N_lp, buffered packets) whole-buffer repairs.
    fn repair_burst(&mut self, cx: &mut Context<'_>) {
        let count = usize::from(self.loss.lost_dof).min(self.buffer.len());
        for _ in 0..count {
            self.send_repair(cx);
        }
    }
}
