//! The tail repair's timer (`tail_repair.rs`): armed by every arrival from the local TCP,
//! fired after a pause without one; what follows a pause with `tail_recovery`: deficit
//! repairs sized like the tail repair while paused, and the tail probe a round trip later;
//! and whether the local TCP is application-limited (`burst_signal = "paused"`). With
//! `tail_burst` the tail repair and the tail probe size for the path's fitted loss bursts as
//! well, from the repair budget above its reserve.

use std::time::Duration;

use super::SenderHalf;
use crate::config::BurstSignal;
use crate::context::Context;
use crate::loss_burst::BurstFit;
use crate::repair::MIN_DELIVERY;
use crate::repair_budget::BURST_RESERVE;
use crate::tail_repair::{needed_for, pause_gap, tail_repairs};

/// Tail probes pending at most: pauses come once per frame, probes fire about a round trip
/// later, so a stream of short frames keeps a few.
const MAX_PENDING_PROBES: usize = 4;

impl SenderHalf {
    /// The path's delay jitter as the pause gap and the queue evidence allow for it: the mean
    /// deviation of the round-trip samples once the peer reports reordering (Ha & Tsuru §3.2's
    /// unordering length above 0), zero otherwise. Without reordering the samples' deviation is
    /// mostly the queue's own movement (eight flows through one queue), which is evidence.
    pub(super) fn jitter(&self) -> Duration {
        match self.reorders() {
            false => Duration::ZERO,
            true => self.repair.delay().rtt_deviation(),
        }
    }

    /// Whether the path reorders: the peer reports an unordering length above 0 (Ha & Tsuru
    /// §3.2; always 0 with `unordering` off). Such a path gets the jitter allowance above and
    /// the flight cap's [`crate::flight_cap::FLIGHT_CAP_GAIN_REORDERING`].
    pub(super) fn reorders(&self) -> bool {
        self.unordering > 0
    }

    /// Whether the latest round-trip sample showed a queue at the bottleneck, the path's jitter
    /// allowed for (`QueueDelay::sample_queued`): the tail rules and the flight cap's busy
    /// rounds read it alike.
    pub(super) fn sample_queued(&self) -> bool {
        self.repair.delay().sample_queued(self.jitter())
    }

    /// Moves the pause deadline after an arrival was coded (with a repair and `tail_repair`).
    pub(super) fn arm_tail(&mut self, cx: &Context<'_>) {
        if cx.config.policies.tail_repair.is_on() && cx.config.policies.repair.repairs() {
            self.tail = Some(cx.now + pause_gap(self.repair.delay().srtt(), self.jitter()));
        }
    }

    /// At a pause: the repairs that make the burst since the previous pause (or since the
    /// latest echoed Pid, whichever is later) carry its new packets with probability
    /// `TAIL_SUCCESS`, within the peer's repair budget and, for a local TCP at the edge of its
    /// window, within [`Self::edge_allowance`]. None while the latest round trip shows a queue
    /// at the bottleneck (`tail_queue`): many flows through a shallow queue each pause between
    /// their segments, and the repairs, sized for a loss rate the queue's drops inflate, fed
    /// those drops (docs/engine.md, deficit repair part 10). None beside busy flows before the
    /// local TCP's FIN (`redundancy_when_alone`, docs/engine.md "Advance redundancy for a lone
    /// flow"): a pause there is the ACK clock's among the other flows' datagrams, and the
    /// repairs, sized for a loss record that holds the queue's drops, were most of what the
    /// peer threw away (8 × 20 MB on the lab, stop 55).
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
        let queued = cx.config.policies.tail_queue.is_on() && self.sample_queued();
        // Beside busy flows a TCP pauses between the others' datagrams, and more of its own
        // follow, until its FIN (`redundancy_when_alone`).
        let clocked = self.beside_busy_flows(cx) && self.fin_seq.is_none();
        if !self.buffer.is_empty() && !queued && !clocked {
            let needed = now.sources - from.sources;
            let in_flight = now.combinations - from.combinations;
            let limit = self.edge_allowance(cx);
            cx.stats.tail_repairs += u64::from(self.repair_tail(cx, needed, in_flight, limit));
        }
        // The next burst starts after these repairs.
        self.pause_mark = self.repair.sent_counts();
        self.arm_tail_probe(cx);
    }

    /// Deficit repairs for an NC-ACK reporting `lost_dof` missing DoFs while the local TCP is
    /// paused (`tail_recovery`): enough that the combinations in flight since the echoed Pid
    /// and the repairs carry the deficit and the new packets among them with probability
    /// `TAIL_SUCCESS` (the tail repair's rule). The deficit repair's own count expects the
    /// in-flight combinations at the mean delivery rate; after a burst they are lost together,
    /// and nothing else follows until the next burst of sending, a round trip or more later.
    pub(super) fn pause_deficit(&self, cx: &Context<'_>, lost_dof: u32) -> u32 {
        let policies = &cx.config.policies;
        let on = policies.tail_recovery.is_on() && policies.tail_repair.is_on();
        let paused = self.tail.is_none() && !self.buffer.is_empty();
        // With a queue at the bottleneck the loss may be its drops, and repairs beyond the
        // mean would add to them (a hundred short flows ending together into one queue).
        if !(on && paused) || lost_dof == 0 || self.sample_queued() {
            return 0;
        }
        let (sent, echoed) = (self.repair.sent_counts(), self.repair.echoed_counts());
        let needed = u64::from(lost_dof) + (sent.sources - echoed.sources);
        let in_flight = sent.combinations - echoed.combinations;
        needed_for(needed, in_flight, self.delivery_rate())
    }

    /// Whether the local TCP left the latest advancing ACK it was given unanswered for a pause
    /// gap (`tail_repair::pause_gap`) by `now`, with room in its window and outside a window
    /// reduction: a TCP limited by its window sends on every ACK that advances, except while
    /// its flight drains to a window just cut (a duplicate ACK within two round trips); one
    /// that has sent all it had waits for the application.
    pub(super) fn ignored_advance(&self, now: Duration) -> bool {
        let Some(rtt) = self.repair.delay().srtt() else {
            return false;
        };
        let cutting = self
            .duplicate_at
            .is_some_and(|d| now.saturating_sub(d) <= rtt * 2);
        let unanswered = self.advanced_at.is_some_and(|at| {
            self.last_new_at.is_none_or(|new| at > new)
                && now.saturating_sub(at) >= pause_gap(Some(rtt), self.jitter())
        });
        unanswered && !cutting && !self.window_held()
    }

    /// Before a new packet or a new advancing ACK (with `burst_signal = "paused"`, the only
    /// reader): remembers the time if the local TCP left the previous advancing ACK unanswered.
    pub(super) fn note_idle(&mut self, cx: &Context<'_>) {
        if cx.config.policies.burst_signal == BurstSignal::Paused && self.ignored_advance(cx.now) {
            self.idle_seen_at = Some(cx.now);
        }
    }

    /// Whether the local TCP is application-limited (`burst_signal = "paused"`): it leaves an
    /// advancing ACK unanswered now, or was seen doing so within the last two combination
    /// round trips. A stream between frames or a request-response flow keeps no standing
    /// queue, so a loss burst in its bitmap is the path's.
    pub(super) fn application_limited(&self, now: Duration) -> bool {
        let Some(rtt) = self.repair.delay().srtt() else {
            return false;
        };
        self.ignored_advance(now)
            || self
                .idle_seen_at
                .is_some_and(|t| now.saturating_sub(t) <= rtt * 2)
    }

    /// Schedules the tail probe of the pause that just passed (`tail_recovery`): one round-trip
    /// floor and a pause gap later, the newest combination that carried a new packet should
    /// have been echoed.
    fn arm_tail_probe(&mut self, cx: &Context<'_>) {
        let on = cx.config.policies.tail_recovery.is_on();
        let Some(floor) = self
            .repair
            .delay()
            .rtt_floor()
            .filter(|_| on && !self.buffer.is_empty())
        else {
            return;
        };
        if self.tail_probes.len() >= MAX_PENDING_PROBES {
            self.tail_probes.pop_front();
        }
        let deadline = cx.now + floor + pause_gap(Some(floor), self.jitter());
        self.tail_probes
            .push_back((deadline, self.repair.source_counts()));
    }

    /// The tail probe (`tail_recovery`; RFC 8985's tail loss probe, at one round trip because
    /// the sink echoes every combination at once): when no NC-ACK has echoed the pause's last
    /// combination with a new packet (the sink acknowledges such a combination whenever it
    /// arrives) and none has come for a pause gap, that combination, everything after the
    /// latest echo before it and the tail repairs were lost together (a burst), and the sink
    /// cannot report packets it never heard of. The new packets sent since the latest echo are
    /// repaired as lost, at `TAIL_SUCCESS`, within the repair budget; without the probe they
    /// wait for the next burst of sending or the repair probe (two round trips).
    pub fn on_tail_probe(&mut self, cx: &mut Context<'_>) {
        let Some(&(deadline, mark)) = self.tail_probes.front() else {
            return;
        };
        if deadline > cx.now {
            return;
        }
        self.tail_probes.pop_front();
        let echoed = self.repair.echoed_counts();
        if echoed.combinations >= mark.combinations
            || self.buffer.is_empty()
            || self.sample_queued()
        {
            return;
        }
        let silence = pause_gap(self.repair.delay().srtt(), self.jitter());
        if let Some(at) = self.last_ack_at
            && cx.now < at + silence
        {
            // NC-ACKs still come (a queue delays the flight): look again after a silence.
            self.tail_probes.push_front((at + silence, mark));
            return;
        }
        let lost = mark.sources - echoed.sources;
        cx.stats.tail_probes += u64::from(self.repair_tail(cx, lost, 0, None));
    }

    /// At the edge of the window it was given (the flight cap, the peer's window, the coding
    /// buffer), the local TCP sends again on the next ACK that advances. Tail repairs arriving
    /// after its flight carry nothing new when the flight arrived whole, draw no NC-ACK
    /// (Mitsuzumi's rule) and so hold its ACK clock still for as long as they take to cross
    /// the bottleneck; if that is longer than a pause gap, its next flight ends in a pause too,
    /// a round trip later, and the repairs repeat every round trip (`tail_repair.rs`). So at
    /// the edge the tail repairs go only if all of them cross within a pause gap at the link's
    /// slot rate (`FlightCap::slot_rate`). Returns how many cross in a pause gap; `None` when
    /// the TCP is not at its edge or the rate is not measured.
    fn edge_allowance(&self, cx: &Context<'_>) -> Option<u32> {
        if !self.at_given_edge() {
            return None;
        }
        let delivery = 1.0 - self.loss.random_loss_rate();
        let slots = cx.path.flight_cap.slot_rate(delivery)?;
        let gap = pause_gap(self.repair.delay().srtt(), self.jitter());
        Some((gap.as_secs_f64() * slots).floor() as u32)
    }

    /// Sends the tail repairs ([`tail_repairs`]) for `sources` new packets with `in_flight`
    /// combinations that may still arrive, within the repair budget, none if they are more
    /// than `limit` ([`Self::edge_allowance`]); returns how many went.
    fn repair_tail(
        &mut self,
        cx: &mut Context<'_>,
        sources: u64,
        in_flight: u64,
        limit: Option<u32>,
    ) -> u32 {
        let window = self.coding_window(cx) as u64;
        let q = self.delivery_rate();
        let mean = tail_repairs(sources, in_flight, window, q, None);
        // At the window's edge all of them or none (`edge_allowance`).
        let limit = limit.map_or(u32::MAX, |l| if mean > l { 0 } else { l });
        let mean = mean.min(limit);
        let granted = self.within_budget(cx, mean);
        let mut extras = 0;
        if let Some(fit) = self.tail_bursts(cx)
            && granted == mean
        {
            // The burst-sized extras, from the budget above its reserve only, and not counted
            // as in flight: a deficit the NC-ACKs report is repaired as without them.
            let wanted = tail_repairs(sources, in_flight, window, q, Some(fit)).min(limit) - mean;
            extras = self.extras_within_budget(cx, wanted);
            cx.stats.burst_repairs += u64::from(extras);
        }
        self.send_tail_repairs(cx, granted + extras, extras);
        granted + extras
    }

    /// The tail repair's burst-sized extras that may go: at most `wanted`, from what the peer's
    /// repair budget holds above [`BURST_RESERVE`]. Those it cannot pay for are not counted as
    /// refused (`repairs_over_budget`): they are insurance beyond what the loss estimate asks.
    fn extras_within_budget(&self, cx: &mut Context<'_>, wanted: u32) -> u32 {
        if !cx.config.policies.repair_budget.is_on() {
            return wanted;
        }
        cx.path.repair_budget.take_above(wanted, BURST_RESERVE)
    }

    /// The loss bursts the tail rules also size repairs for (`tail_burst`): the Gilbert fit
    /// of the path's random loss (judged while no queue built, so a queue's overflow is not
    /// taken for the path's burstiness).
    fn tail_bursts(&self, cx: &Context<'_>) -> Option<BurstFit> {
        let on = cx.config.policies.tail_burst.is_on();
        on.then(|| self.loss.random_burst_fit()).flatten()
    }

    /// The estimated delivery rate of combinations the tail rules size repairs with.
    pub(super) fn delivery_rate(&self) -> f64 {
        (1.0 - self.loss.loss_rate()).clamp(MIN_DELIVERY, 1.0)
    }
}
