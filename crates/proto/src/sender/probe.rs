//! The repair probe (`repair.rs`, `repair_probe`): an NC-ACK silence of two round trips while
//! packets are unacknowledged sends the last reported N_lp again as repairs, backing off; and,
//! with `probe_spread` beside busy flows, the probe's repairs leave one at a time over a round
//! trip ([`Spread`]).
//!
//! Why spread: a hundred flows to one peer keep the bottleneck's drop-tail queue full, and a
//! probe's repairs sent back to back reached it as one burst, of which it took the first at
//! best. A flow whose tail was lost then needed one probe per missing degree of freedom while
//! the probes backed off, and after [`MAX_PROBES`] waited for its TCP's backed-off
//! retransmission timer: traced on the lab (100 × 200 kB at 10 % loss, a flow 3.4 s late),
//! probes of 16, 16, 13, 11 and 10 repairs each brought 1, 3, 1, 1 and 0 to the peer, and the
//! last four, of 4 repairs each, none (docs/lab.md "A probe's repairs spread out, stop 56").
//! One at a time, each repair meets the queue as an arrival of its own; and a probe after one
//! that drew no NC-ACK is sized for the queue's drops as well as the random loss.

use std::time::Duration;

use super::SenderHalf;
use crate::context::Context;
use crate::repair::{MAX_PROBES, MAX_REPAIRS_PER_ACK, MIN_DELIVERY};
use crate::tail_repair::needed_for;

/// A probe's repairs still to leave one at a time (`probe_spread`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Spread {
    /// When the next one leaves.
    pub(super) next: Duration,
    /// How many are left.
    left: u32,
    /// The time between two of them: the round trip over the probe's repairs.
    gap: Duration,
}

impl SenderHalf {
    /// Arms the repair probe when a combination leaves and none is armed: the first
    /// combinations of a flow, or the first after an idle time, may all be lost, and then no
    /// NC-ACK would ever arm it (RFC 8985's tail loss probe at the coding layer; a TCP with
    /// one segment in flight would otherwise wait for its 1 s initial timeout).
    pub(super) fn arm_probe(&mut self, cx: &Context<'_>) {
        if self.probe.is_none()
            && cx.config.policies.repair_probe.is_on()
            && cx.config.policies.repair.repairs()
        {
            self.probe = Some((cx.now + self.probe_interval(0), 0));
        }
    }

    /// Two combination round trips (100 ms before one is measured), doubled per probe already
    /// sent: the NC layer's tail-loss probe, below TCP's own retransmission timeout.
    pub(super) fn probe_interval(&self, probes: u32) -> Duration {
        (self.probe_rtt() * 2).max(Duration::from_millis(10)) * (1 << probes.min(MAX_PROBES))
    }

    /// The combination round trip the probe times itself by (100 ms before one is measured).
    fn probe_rtt(&self) -> Duration {
        self.repair
            .delay()
            .srtt()
            .unwrap_or(Duration::from_millis(100))
    }

    /// The repair probe (`repair.rs`): packets are unacknowledged and no NC-ACK has arrived
    /// for the probe interval, so the repairs sent for the last reported N_lp, the newest
    /// combinations (a tail loss the receiver cannot report), or the NC-ACKs were lost and,
    /// with TCP waiting for those very ACKs, nothing else would trigger a repair before TCP's
    /// retransmission timeout. Sends the last reported N_lp (at least one) again as repairs,
    /// within the repair budget unless the local TCP sends nothing new (docs/engine.md, "A
    /// probe for a TCP that sends nothing new"); beside busy flows one at a time, and after a
    /// probe that drew no NC-ACK enough for the flow's whole loss rate (`probe_spread`,
    /// [`Self::probe_size`]); backs off and gives up after [`MAX_PROBES`] probes.
    pub fn on_timeout(&mut self, cx: &mut Context<'_>) {
        let Some((deadline, probes)) = self.probe else {
            return;
        };
        if deadline > cx.now {
            return;
        }
        if self.buffer.is_empty() || probes >= MAX_PROBES {
            self.probe = None;
            return;
        }
        let spread = self.spreads_probe(cx);
        let count = self.probe_size(spread && probes > 0);
        // A probe sends at least one repair whatever the budget: it is the flow's only way out
        // of a stall short of TCP's timeout, and it backs off by itself. For a local TCP that
        // sends nothing new it sends them all: that TCP waits for its timeout, and among busy
        // flows the budget's tokens go to the flows whose NC-ACKs keep coming.
        let granted = match self.sends_nothing_new(cx) {
            true => count,
            false => self.within_budget(cx, count),
        };
        self.send_probe_repairs(cx, granted.max(1), spread);
        cx.stats.repair_probes += 1;
        self.probe = Some((cx.now + self.probe_interval(probes + 1), probes + 1));
    }

    /// Whether this probe's repairs leave one at a time (`probe_spread`): another flow to the
    /// same peer has something in flight.
    fn spreads_probe(&self, cx: &Context<'_>) -> bool {
        cx.config.policies.probe_spread.is_on() && self.others_busy(cx)
    }

    /// A probe's repairs: the last reported N_lp (at least one) at the random loss floor's
    /// delivery rate; when `sure` (a spread probe after one that drew no NC-ACK), at least as
    /// many as carry those DoFs with probability [`crate::tail_repair::TAIL_SUCCESS`] at the
    /// delivery rate of the flow's whole loss record, the queue's drops included: spread, the
    /// repairs meet those drops one by one, and the silence after the last probe says they
    /// took its repairs. Traced on the lab, probes of one repair were lost four times running
    /// and the flow waited for its TCP's timer; sized so from the first probe on, the 100
    /// flows sent a fifth more datagrams than spread alone and ran 3 % slower. At most
    /// [`MAX_REPAIRS_PER_ACK`].
    fn probe_size(&self, sure: bool) -> u32 {
        let lost = self.loss.lost_dof.max(1);
        let q = (1.0 - self.loss.random_loss_rate()).clamp(MIN_DELIVERY, 1.0);
        let mean = (f64::from(lost) / q).ceil() as u32;
        let sure = match sure {
            true => needed_for(u64::from(lost), 0, self.delivery_rate()),
            false => 0,
        };
        mean.max(sure).min(MAX_REPAIRS_PER_ACK)
    }

    /// Sends a probe's `count` repairs: all now, or when `spread` the first now and the rest
    /// one at a time over a round trip ([`Self::on_spread`]). A new probe replaces what is
    /// left of the previous one's.
    fn send_probe_repairs(&mut self, cx: &mut Context<'_>, count: u32, spread: bool) {
        let spread = spread && count > 1;
        let now = match spread {
            true => 1,
            false => count,
        };
        for _ in 0..now {
            self.send_repair(cx);
        }
        self.spread = spread.then(|| {
            let gap = self.probe_rtt() / count;
            Spread {
                next: cx.now + gap,
                left: count - 1,
                gap,
            }
        });
    }

    /// The next of a probe's spread repairs, when due (`probe_spread`); none once the coding
    /// buffer is empty (everything acknowledged).
    pub fn on_spread(&mut self, cx: &mut Context<'_>) {
        let Some(spread) = self.spread else {
            return;
        };
        if spread.next > cx.now {
            return;
        }
        if self.buffer.is_empty() {
            self.spread = None;
            return;
        }
        self.send_repair(cx);
        cx.stats.spread_repairs += 1;
        self.spread = (spread.left > 1).then(|| Spread {
            next: cx.now + spread.gap,
            left: spread.left - 1,
            ..spread
        });
    }
}
