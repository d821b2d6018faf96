//! The tail repair's timer (`tail_repair.rs`): armed by every arrival from the local TCP,
//! fired after a pause without one.

use super::SenderHalf;
use crate::context::Context;
use crate::repair::MIN_DELIVERY;
use crate::tail_repair::{pause_gap, tail_repairs};

impl SenderHalf {
    /// Moves the pause deadline after an arrival was coded (with a repair and `tail_repair`).
    pub(super) fn arm_tail(&mut self, cx: &Context<'_>) {
        if cx.config.policies.tail_repair.is_on() && cx.config.policies.repair.repairs() {
            self.tail = Some(cx.now + pause_gap(self.repair.srtt()));
        }
    }

    /// At a pause: the repairs that make the burst since the previous pause (or since the
    /// latest echoed Pid, whichever is later) carry its new packets with probability
    /// `TAIL_SUCCESS`, within the peer's repair budget.
    pub fn on_pause(&mut self, cx: &mut Context<'_>) {
        let Some(deadline) = self.tail else {
            return;
        };
        if deadline > cx.now {
            return;
        }
        self.tail = None;
        let now = self.repair.sent_counts();
        let from = self.pause_mark.max(self.repair.echoed_counts());
        if !self.buffer.is_empty() {
            let needed = now.sources - from.sources;
            let in_flight = now.combinations - from.combinations;
            let q = (1.0 - self.loss.loss_rate()).clamp(MIN_DELIVERY, 1.0);
            let window = self.coding_window(cx) as u64;
            let granted = self.within_budget(cx, tail_repairs(needed, in_flight, window, q));
            self.send_tail_repairs(cx, granted);
            cx.stats.tail_repairs += u64::from(granted);
        }
        // The next burst starts after these repairs.
        self.pause_mark = self.repair.sent_counts();
    }
}
