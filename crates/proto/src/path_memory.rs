//! What an engine knows of the path to its peer, handed to every new flow as its starting point
//! (`path_memory`, issue 10: "loss, burst and reordering estimates are properties of the path").
//!
//! Each sender half writes its estimates here as they are learned (the random loss floor once
//! its first estimation window is complete, the peer's unordering length with every NC-ACK); a
//! sender half created later starts from them instead of from nothing: its redundancy from the
//! known floor (with `redundancy = "auto"`), its loss record with the floor as a prior window,
//! its coding window widened by the known unordering length and at least the known burst cover.
//! Each receiver half likewise writes the reordering it measures on arrivals; one created later
//! starts its unordering meter from it, so it neither reports late combinations lost nor drops
//! what they reference before it has seen reordering of its own.
//! Each flow then refines its own.
//! The round-trip floor is merged on every NC-ACK (below).

use std::time::Duration;

use crate::flight_cap::FlightCap;
use crate::flight_share::FlightShare;
use crate::queue_delay::queue_evidence;
use crate::reorder::Period;
use crate::repair_budget::RepairBudget;

/// A path round-trip floor that no flow has measured again (within the queue evidence) for
/// this long is replaced by the next flow's own: the route may have changed.
pub const RTT_FLOOR_AGE: Duration = Duration::from_secs(30);

/// The path estimates shared by the flows of one engine.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PathEstimate {
    /// Random loss floor of combinations (`LossEstimator::random_loss_rate`) of the latest
    /// flow that knew one.
    pub loss_floor: Option<f64>,
    /// Latest unordering length the peer reported (Ha & Tsuru §3.2), Pids.
    pub unordering: u16,
    /// Latest reordering this engine's receiver halves measured on the combinations from the
    /// peer (`reorder.rs`: unordering length and delay), a new receiver half's starting point.
    pub arrival_reordering: Period,
    /// Latest burst cover of a flow that knew one (`burst_window`,
    /// `loss_burst::BurstFit::cover`), packets; 0 before.
    pub burst_window: u16,
    /// Latest loss-event share of a flow that knew one (`burst_redundancy`,
    /// `loss_burst::BurstFit::event_share`); `None` before.
    pub event_share: Option<f64>,
    /// The repair tokens the flows share (`repair_budget.rs`).
    pub repair_budget: RepairBudget,
    /// Smallest smoothed combination round trip a flow measured (the path without a queue)
    /// and when a flow last measured it again ([`PathEstimate::merge_rtt_floor`]).
    pub rtt_floor: Option<(Duration, Duration)>,
    /// The datagram arrival rate of all flows and the flight cap it gives (`flight_cap.rs`).
    pub flight_cap: FlightCap,
    /// The flights of the flows' local TCPs and the path's one cap, shared among them
    /// (`flight_share.rs`).
    pub flight_share: FlightShare,
}

impl PathEstimate {
    /// Merges a flow's own round-trip floor at `now` and returns the path's. A flow that
    /// starts behind a full queue (a hundred flows starting together) measures the queue as
    /// its floor and could never tell that a queue is building (`repair.rs`,
    /// `queue_building`); the path's floor, from the flows that found the queue empty, can.
    /// A lower floor replaces it; one within the queue evidence of it confirms it; a higher
    /// one replaces it only once it is [`RTT_FLOOR_AGE`] old.
    pub fn merge_rtt_floor(&mut self, now: Duration, flow_floor: Duration) -> Duration {
        match self.rtt_floor {
            Some((f, at)) if flow_floor >= f => {
                if flow_floor <= f + queue_evidence(f) {
                    self.rtt_floor = Some((f, now));
                    f
                } else if now.saturating_sub(at) < RTT_FLOOR_AGE {
                    f
                } else {
                    self.rtt_floor = Some((flow_floor, now));
                    flow_floor
                }
            }
            _ => {
                self.rtt_floor = Some((flow_floor, now));
                flow_floor
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn the_rtt_floor_is_the_lowest_until_it_ages() {
        // (now, a flow's own floor, the path's floor after it, why), in ms.
        let steps = [
            (0, 80, 80, "the first"),
            (100, 41, 41, "lower replaces"),
            (200, 78, 41, "a queued flow's is kept out"),
            (20_000, 44, 41, "within 1/8: confirmed"),
            (40_000, 78, 41, "confirmed 20 s ago"),
            (50_001, 78, 78, "not seen for 30 s"),
        ];
        let mut p = PathEstimate::default();
        for (now, flow, path, why) in steps {
            assert_eq!(p.merge_rtt_floor(ms(now), ms(flow)), ms(path), "{why}");
        }
    }
}
