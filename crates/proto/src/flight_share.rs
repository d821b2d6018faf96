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
//! **One cap for all (stop 45).** Each flow estimates the path's cap from the arrival rate all
//! flows share and its *own* round-trip floor, and a floor measured while other flows' queue
//! stood is higher: eight flows starting together measured floors of 42–65 ms on the lab's
//! 40 ms path, and their estimates spread over 97–140 segments. Shared out of each flow's own
//! estimate, "what the others leave" went to the flow with the largest: the others held their
//! equal shares of 12–16 segments, it took up to 40, and one flow of eight carried a quarter
//! to a half of the link until it finished (docs/lab.md, "Many flows, stop 45"). So each flow
//! reports its estimate with its flight, and with two flows or more every share is taken out
//! of one cap, the path's: the largest estimate until it ages ([`FlightShare::estimate`]), the
//! total the flows reached before, now divided equally. Each estimate is at the flow's own
//! loss rate once that rests on a complete window (`LossEstimator::known_random_loss_rate`),
//! at full delivery before: a flow a few combinations old can read a loss rate of a half, and
//! with a hundred flows starting together such estimates (up to 491 segments) lifted the
//! shares above the 10-segment least in the first two seconds (100 flows × 200 kB: 12.7
//! against 15.7 Mbit/s, medians of 12 runs). Compared at full delivery always, the 8-flow
//! aggregate fell by 3 %; at the path's random loss floor, one flow's floor sampled during a
//! queue's overflow (55–73 %) raised every flow's share and two runs of three flooded with
//! repairs (docs/lab.md, "Many flows, stop 45"). A flow alone keeps its own estimate.
//!
//! The largest estimate is also the largest total: in `tests/flight_share.rs` three greedy
//! flows that start together drop more at the queue than with each flow's own estimate
//! (6.1 % of their datagrams over ten seeds against 3.6 %); on the lab, 8 flows' queue drops
//! stayed level.
//!
//! The engine of each worker shares among its own flows (flows are sharded by their 4-tuple,
//! and each shard measures its own arrival rate, so its cap is already its part of the path).

use std::time::Duration;

use crate::flight_cap::FLIGHT_CAP_MIN_SEGMENTS;

/// The flights of one peer's local TCPs and their estimates of the path's cap, as each flow
/// last reported them, and the path's one cap; kept in the path estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlightShare {
    /// Sum of the reported flights, segments.
    total: u64,
    /// Flows whose reported flight is not zero.
    busy: u64,
    /// The path's cap, segments, and when an estimate last confirmed it
    /// ([`FlightShare::estimate`]); 0 before the first.
    cap: u64,
    confirmed_at: Duration,
    /// Flows that reported an estimate of the path's cap.
    estimating: u64,
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

    /// Takes a flow's estimate of the path's cap at `now` (`estimate`, segments; `reported` is
    /// its previous one, 0 before its first). The path's cap is the largest estimate: a larger
    /// one replaces it, one within an eighth below it confirms it, and a lower one replaces it
    /// only once no estimate has confirmed it for `age` (the flight cap's ten round trips: the
    /// flow that made it has left or estimates less now).
    pub fn estimate(&mut self, reported: &mut u64, estimate: u64, now: Duration, age: Duration) {
        if *reported == 0 && estimate > 0 {
            self.estimating += 1;
        }
        *reported = estimate;
        let stale = now.saturating_sub(self.confirmed_at) >= age;
        if estimate >= self.cap || stale {
            self.cap = estimate;
        }
        if estimate >= self.cap - self.cap / 8 {
            self.confirmed_at = now;
        }
    }

    /// A flow whose last reported flight and estimate were `flight` and `estimate` leaves;
    /// when no flow estimates any more, the path's cap is forgotten with them.
    pub fn forget(&mut self, flight: u64, estimate: u64) {
        self.report(&mut { flight }, 0);
        if estimate > 0 {
            self.estimating = self.estimating.saturating_sub(1);
        }
        if self.estimating == 0 {
            (self.cap, self.confirmed_at) = (0, Duration::ZERO);
        }
    }

    /// The path's cap for a flow whose own estimate is `own` (segments): the largest of the
    /// flows' estimates, or its own while it is the only flow that has made one.
    pub fn path_cap(&self, own: u64) -> u64 {
        match self.estimating {
            0 | 1 => own,
            _ => self.cap,
        }
    }

    /// The cap of a flow whose reported flight is `own`, out of the path's `cap` (segments).
    pub fn cap_for(&self, cap: u64, own: u64) -> u64 {
        let flows = self.others_busy(own) + 1;
        let equal = cap / flows;
        let left = cap.saturating_sub(self.total.saturating_sub(own));
        equal.max(left).max(FLIGHT_CAP_MIN_SEGMENTS)
    }

    /// Flows with something in flight.
    pub fn busy(&self) -> u64 {
        self.busy
    }

    /// Flows with something in flight other than one whose reported flight is `own`.
    pub fn others_busy(&self, own: u64) -> u64 {
        self.busy.saturating_sub(u64::from(own > 0))
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
        s.forget(b, 0);
        assert_eq!((s.total, s.busy), (10, 1));
        s.forget(a, 0);
        assert_eq!(s, FlightShare::default());
    }

    #[test]
    fn the_path_cap_is_the_largest_estimate_until_it_ages() {
        let ms = Duration::from_millis;
        let age = ms(400);
        let mut s = FlightShare::default();
        let (mut a, mut b) = (0, 0);
        s.estimate(&mut a, 120, ms(0), age);
        s.estimate(&mut a, 97, ms(10), age);
        assert_eq!(s.path_cap(97), 97, "alone: its own, at once");
        s.estimate(&mut b, 140, ms(20), age);
        assert_eq!(s.path_cap(97), 140, "the largest, for every flow");
        s.estimate(&mut a, 97, ms(300), age);
        assert_eq!(s.path_cap(97), 140, "a lower one within the age: kept");
        s.estimate(&mut b, 130, ms(410), age);
        s.estimate(&mut a, 97, ms(700), age);
        assert_eq!(
            s.path_cap(97),
            140,
            "130 is within an eighth: it confirmed 140"
        );
        // The largest flow leaves: once 140 ages, the others' estimate replaces it.
        s.forget(0, b);
        let mut c = 0;
        s.estimate(&mut c, 100, ms(800), age);
        assert_eq!(s.path_cap(97), 140, "not yet aged");
        s.estimate(&mut c, 100, ms(811), age);
        assert_eq!(s.path_cap(97), 100, "aged: the next estimate");
        s.forget(0, a);
        s.forget(0, c);
        assert_eq!(s, FlightShare::default(), "no estimate left: forgotten");
    }
}
