//! The sender's part of the flight cap (`flight_cap.rs`, `flight_share.rs`) and of pacing
//! (`pacer.rs`): the cap this flow gives its local TCP, the flight and estimate it reports to
//! the path, and the rate the engine's DATA datagrams leave at on a shallow queue.

use crate::context::Context;
use crate::flight_cap::{FLIGHT_CAP_GAIN, FLIGHT_CAP_GAIN_REORDERING, FLIGHT_CAP_ROUNDS};
use crate::queue_delay::DEPTH_CAP_SHARE;
use crate::tcp::seq_diff;

use super::SenderHalf;

/// The least flight cap gain while the engine paces (`pacer.rs`): kernel BBR probes for
/// bandwidth at 1.25 times its estimate for a round, and a cap below 1.25 floor-BDPs can hold
/// it at the rate it has (about 1.08/1.25 of the link on the lab's 10-packet queue, 15.8
/// Mbit/s against plain BBR's 18.2; with this floor two seeds of five reach 18.3 and three
/// do not, docs/lab.md). The pacer keeps what the queue cannot hold at the gateway.
pub const PACED_CAP_GAIN: f64 = 1.25;

impl SenderHalf {
    /// The flight cap (`flight_cap.rs`) in bytes of the local TCP's segments, with the policy
    /// on and the cap and the round-trip floor known.
    pub(super) fn flight_cap_bytes(&self, cx: &Context<'_>) -> Option<u32> {
        let bytes = self
            .flight_cap_segments(cx)?
            .saturating_mul(u64::from(self.largest_payload.max(536)));
        Some(bytes.min(u64::from(u32::MAX)) as u32)
    }

    /// The flight cap in segments, with the policy on and the cap and floor known: this flow's
    /// estimate of the path's, or with `flight_share` its share of the path's (the largest
    /// estimate, `flight_share.rs`).
    pub(super) fn flight_cap_segments(&self, cx: &Context<'_>) -> Option<u64> {
        if !cx.config.policies.flight_cap.is_on() {
            return None;
        }
        let own = self.cap_estimate(cx, self.loss.random_loss_rate())?;
        let share = &cx.path.flight_share;
        Some(match cx.config.policies.flight_share.is_on() {
            true => share.cap_for(share.path_cap(own), self.reported_flight),
            false => own,
        })
    }

    /// An estimate of the path's flight cap (`flight_cap.rs`), segments: the arrival rate all
    /// flows share over this flow's own round-trip floor and a random loss rate `loss`; with
    /// `queue_depth` the gain leaves room for the deepest queue seen only (`queue_delay.rs`),
    /// at least [`PACED_CAP_GAIN`] while the engine paces.
    fn cap_estimate(&self, cx: &Context<'_>, loss: f64) -> Option<u64> {
        let delivery = 1.0 - loss;
        let base = match self.reorders() {
            false => FLIGHT_CAP_GAIN,
            true => FLIGHT_CAP_GAIN_REORDERING,
        };
        let floor_gain = if self.paces(cx) { PACED_CAP_GAIN } else { 1.0 };
        let gain = self.repair.delay().cap_gain(base).max(floor_gain);
        let floor = self.repair.delay().rtt_floor()?;
        cx.path.flight_cap.cap_segments(floor, delivery, gain)
    }

    /// Reports the local TCP's flight to the path (`flight_share.rs`): from the ack last given
    /// to it to the end of its newest segment, in segments.
    pub(super) fn report_flight(&mut self, cx: &mut Context<'_>) {
        let bytes = match (self.last_tcp_ack, self.buffer.next_seq()) {
            (Some((ack, _)), Some(end)) => seq_diff(end, ack).max(0) as u64,
            _ => 0,
        };
        let segments = bytes.div_ceil(u64::from(self.largest_payload.max(536)));
        cx.path
            .flight_share
            .report(&mut self.reported_flight, segments);
        // At its loss rate once known, full delivery before (`flight_share.rs`).
        let estimate = self.cap_estimate(cx, self.loss.known_random_loss_rate());
        if let (Some(estimate), Some(floor)) = (estimate, self.repair.delay().rtt_floor()) {
            let age = floor.saturating_mul(FLIGHT_CAP_ROUNDS as u32);
            let share = &mut cx.path.flight_share;
            share.estimate(&mut self.reported_cap, estimate, cx.now, age);
        }
    }

    /// Whether another flow to the same peer has something in flight, as the flows last
    /// reported them (`flight_share.rs`): "beside busy flows", where `redundancy_when_alone`
    /// and `probe_spread` act.
    pub(super) fn others_busy(&self, cx: &Context<'_>) -> bool {
        cx.path.flight_share.others_busy(self.reported_flight) > 0
    }

    /// The flight and the estimate of the path's cap last reported to the path
    /// (`flight_share.rs`), segments.
    pub fn reported(&self) -> (u64, u64) {
        (self.reported_flight, self.reported_cap)
    }

    /// Sets the engine's pacing (`pacer.rs`) from this flow's NC-ACK: with `pacing` and
    /// `queue_depth`, on a shallow queue whose link rate is measured, the link's datagram rate
    /// (the flight cap's slot rate) in bursts of [`DEPTH_CAP_SHARE`] of the deepest queue seen.
    /// A flow that does not pace leaves the engine's pacer alone: it lapses unless a flow that
    /// paces sets it again (`pacer::PACE_HOLD`).
    pub(super) fn pace(&self, cx: &mut Context<'_>) {
        let delay = self.repair.delay();
        let pace = match (self.paces(cx), delay.depth()) {
            (true, Some(depth)) => {
                let delivery = 1.0 - self.loss.random_loss_rate();
                let rate = cx.path.flight_cap.slot_rate(delivery);
                rate.map(|r| (r, r * DEPTH_CAP_SHARE * depth.as_secs_f64()))
            }
            _ => None,
        };
        if pace.is_some() {
            cx.out.set_pacing(cx.now, pace);
        }
    }

    /// Whether this flow's path is paced: `pacing` and `queue_depth` on a shallow queue.
    fn paces(&self, cx: &Context<'_>) -> bool {
        let policies = &cx.config.policies;
        policies.pacing.is_on() && policies.queue_depth.is_on() && self.repair.delay().shallow()
    }
}
