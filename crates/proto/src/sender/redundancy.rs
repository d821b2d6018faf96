//! The flow's advance redundancy R (Sundararajan et al. §II-B: N += R per arrival): with an
//! adaptive R, the factor for the random loss floor times the loss-event share
//! (`burst_redundancy`), and with `redundancy_when_alone` 1 while another flow to the same
//! peer has something in flight (docs/engine.md "Advance redundancy for a lone flow").
//!
//! Several loss-based TCPs through one bottleneck queue fill it until it overflows, and each
//! flow's loss record takes the queue's drops with the path's random loss. The drops come
//! together at the queue's peaks; R's extra combinations go out all the time, and those
//! arriving between the peaks, where nothing was missing, are non-innovative. On the lab (8 ×
//! 20 MB, 10 % loss, one-BDP queue) the runs in which the flows' R followed their floors, to
//! 1.07–1.28, had 3–28 thousand datagrams arrive non-innovative (13.5–15.9 Mbit/s); those in
//! which R had stayed at 1 ran at 16.2–16.6 (plain BBR 16.4). Beside busy flows the deficit
//! repair answers what the NC-ACKs report instead, one round trip later, and the DoF ACK keeps
//! the wait from the local TCP (`dof_ack.rs`). A flow alone keeps its advance cover, worth
//! 3–5 % on independent loss (docs/engine.md, "Burst-aware redundancy"). A new flow starts
//! from the path's R (`path_memory`) and takes 1 at its first NC-ACK beside busy flows.

use super::SenderHalf;
use crate::context::Context;

impl SenderHalf {
    /// Sets R from the loss record after an NC-ACK (an adaptive R only; a fixed R stays).
    /// Beside busy flows the deficit repair does not foresee the flight's losses either
    /// (`repair.rs`, [`crate::repair::DeficitRepair::set_foresight`]), whatever R's policy.
    pub(super) fn follow_redundancy(&mut self, cx: &Context<'_>) {
        let beside_busy = self.beside_busy_flows(cx);
        self.repair.set_foresight(!beside_busy);
        let policy = cx.config.policies.redundancy;
        if !policy.adapts() {
            return;
        }
        let covered = match beside_busy {
            true => 0.0,
            false => self.loss.random_loss_rate() * self.event_share,
        };
        self.acc.set_factor(policy.factor_for(covered));
    }

    /// With `redundancy_when_alone`: whether another flow to the same peer has something in
    /// flight, as the flows last reported them (`flight_share.rs`). Then the flow sends no
    /// advance cover: R is 1, the deficit repair does not foresee the flight's losses, and
    /// a pause gets no tail repairs before the local TCP's FIN (`tail.rs`).
    pub(super) fn beside_busy_flows(&self, cx: &Context<'_>) -> bool {
        cx.config.policies.redundancy_when_alone.is_on() && self.others_busy(cx)
    }
}
