//! The flight cap shared between the flows of one peer (`flight_cap.rs`, issue 10 mechanism 5:
//! "many flows").
//!
//! The flight cap bounds one local TCP's flight by what the path holds (1.75 floor-BDPs of
//! datagrams). With several flows through the same bottleneck each used to get that whole cap,
//! so N loss-based TCPs could keep N times what the path holds in flight. The seen-ACK stalls
//! that the queue's drops caused used to reach each TCP as duplicate ACKs and cut its window;
//! the DoF ACK (`sender/dof_ack.rs`) masks those stalls as it masks random loss, and the
//! drops are spread over the flows, so no flow's loss bitmap passes the congestion signal's
//! threshold either. Measured on the lab (8 flows × 2.5 MB, Gilbert-Elliott 5 % in bursts of 4,
//! 20 Mbit/s, a 67-packet queue): the queue dropped 23 % of what the sending gateway offered,
//! flows left with a deep deficit waited on the repair budget and TCP's timeouts (3–8 RTOs a
//! run), and the aggregate spread over 9–16 Mbit/s (docs/lab.md, "Many flows, stop 39").
//!
//! So the path's cap is shared: each flow reports its local TCP's flight (the bytes between the
//! ack last given to it and the end of its newest segment, in segments), and a flow's cap is
//! the larger of
//!
//! * its **equal share**: the path's cap over the flows with something in flight (itself
//!   included), and
//! * **what the others leave**: the path's cap less the others' flights,
//!
//! at least [`FLIGHT_CAP_MIN_SEGMENTS`]. Greedy flows converge on equal shares whose sum is the
//! path's cap; a flow alone, or beside flows that send little (an interactive session beside a
//! download), keeps the whole cap. What a flow stalled on a hole leaves unused for a moment,
//! the others may take: a stricter rule (light flows below 10 segments, the cap less their
//! flights shared equally by the rest, so that one flow's dip moves no other cap) kept the
//! flights closer to the cap in `tests/flight_share.rs` but gave less on the lab (8 flows,
//! Gilbert-Elliott 5 %/4: 14.69 against 15.38 Mbit/s; 10 %: 14.00 against 14.52; docs/lab.md,
//! "Many flows, stop 39").
//!
//! The engine of each worker shares among its own flows (flows are sharded by their 4-tuple,
//! and each shard measures its own arrival rate, so its cap is already its part of the path).

use crate::flight_cap::FLIGHT_CAP_MIN_SEGMENTS;

/// The flights of one peer's local TCPs, as each flow last reported it; kept in the path
/// estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlightShare {
    /// Sum of the reported flights, segments.
    total: u64,
    /// Flows whose reported flight is not zero.
    busy: u64,
}

impl FlightShare {
    /// Replaces a flow's reported flight (`reported`, segments, 0 before its first report) with
    /// `flight`.
    pub fn report(&mut self, reported: &mut u64, flight: u64) {
        self.total = self.total.saturating_sub(*reported).saturating_add(flight);
        match (*reported > 0, flight > 0) {
            (false, true) => self.busy += 1,
            (true, false) => self.busy = self.busy.saturating_sub(1),
            _ => {}
        }
        *reported = flight;
    }

    /// A flow whose last reported flight was `reported` leaves.
    pub fn forget(&mut self, reported: u64) {
        self.report(&mut { reported }, 0);
    }

    /// The cap of a flow whose reported flight is `own`, out of the path's `cap` (segments).
    pub fn cap_for(&self, cap: u64, own: u64) -> u64 {
        let flows = self.busy + u64::from(own == 0);
        let equal = cap / flows.max(1);
        let left = cap.saturating_sub(self.total.saturating_sub(own));
        equal.max(left).max(FLIGHT_CAP_MIN_SEGMENTS)
    }

    /// Flows with something in flight.
    pub fn busy(&self) -> u64 {
        self.busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_alone_keeps_the_whole_cap() {
        let mut s = FlightShare::default();
        assert_eq!(s.cap_for(120, 0), 120);
        let mut a = 0;
        s.report(&mut a, 100);
        assert_eq!(s.cap_for(120, a), 120);
    }

    #[test]
    fn greedy_flows_get_equal_shares() {
        let mut s = FlightShare::default();
        let mut flows = [0u64; 8];
        for f in flows.iter_mut() {
            s.report(f, 100);
        }
        assert_eq!(s.busy(), 8);
        for f in flows {
            assert_eq!(s.cap_for(160, f), 20);
        }
        // Never below the initial window.
        assert_eq!(s.cap_for(40, flows[0]), FLIGHT_CAP_MIN_SEGMENTS);
    }

    #[test]
    fn what_a_light_flow_leaves_goes_to_the_others() {
        let mut s = FlightShare::default();
        let (mut bulk, mut chat) = (0, 0);
        s.report(&mut bulk, 110);
        s.report(&mut chat, 2);
        assert_eq!(s.cap_for(120, bulk), 118);
        assert_eq!(s.cap_for(120, chat), 60);
    }

    #[test]
    fn reports_and_departures_keep_the_sums() {
        let mut s = FlightShare::default();
        let (mut a, mut b) = (0, 0);
        s.report(&mut a, 50);
        s.report(&mut b, 30);
        s.report(&mut a, 0);
        assert_eq!((s.total, s.busy), (30, 1));
        s.report(&mut a, 10);
        s.forget(b);
        assert_eq!((s.total, s.busy), (10, 1));
        s.forget(a);
        assert_eq!(s, FlightShare::default());
    }
}
