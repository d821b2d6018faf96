//! Flight cap (`flight_cap`; issue 10 mechanism 7, "delay-based TCPs on top"): the window
//! given to the local TCP keeps its flight within what the path holds.
//!
//! Kernel BBR (Cardwell et al., ACM Queue 2016) paces at the highest delivery rate it measured
//! over ten round trips and keeps up to twice that rate times its minimum round trip in flight.
//! Through nc its measure runs high. BBR counts a segment delivered when the seen-ACK covers
//! it (Sundararajan et al. §IV-A), and the seen-ACK advances once for every innovative
//! combination: while the peer is short of degrees of freedom, every redundant or repair
//! combination that arrives advances it too. So over a round trip after a loss the seen-ACK
//! can advance at the link's whole datagram rate, although only 1/R of those datagrams carry
//! new segments. BBR keeps the highest such sample, paces above what the path carries for
//! TCP, and the gateway adds R − 1 datagrams per segment on top. On the lab's 10 % path
//! (20 Mbit/s, a one-BDP queue) its estimate read 16.5–18.1 Mbit/s against a ceiling of about
//! 16.4. The queue then dropped as many datagrams as the random loss did, and the drops drew
//! repairs that loaded the link further (docs/lab.md, "Kernel BBR over nc").
//!
//! The cap bounds the flight by what the path carries, reckoned in datagrams:
//!
//! * the **arrival rate** is the number of datagrams that the NC-ACKs show arrived at the peer
//!   (`LossEstimator::received`), of all the engine's flows together, per round of one
//!   smoothed round trip. Like plain TCP's delivery rate, it cannot exceed the link's rate,
//!   whatever the seen-ACK does;
//! * the **cap** is [`FLIGHT_CAP_GAIN`] × the highest arrival rate of the last
//!   [`FLIGHT_CAP_ROUNDS`] rounds over the random loss floor's delivery share (the link slots
//!   used, lost datagrams included) × the round-trip floor, divided by the datagrams sent per
//!   new segment over those rounds (R, repairs included): 1.75 floor-BDPs of datagrams, a BDP
//!   on the links and three quarters of one in the queue; over a floor shorter than 5.3 ms,
//!   a floor-BDP and [`FLIGHT_CAP_MIN_QUEUE`] (4 ms) of datagrams instead, since a host's
//!   batching and scheduling alone lift such a round trip by milliseconds;
//! * a round's rate is measured only while the bottleneck is busy: over the stretches between
//!   consecutive NC-ACKs whose own round-trip samples both stood above the floor by the queue
//!   evidence (`QueueDelay::sample_queued`), if they make up a quarter of the round
//!   ([`MIN_BUSY_SHARE`]). An idle link's arrivals say nothing of its rate: an application
//!   that sends less than the path carries (a stream between its frames, a request) leaves no
//!   queue, or one too short to measure, and is not capped. Without a measured round among
//!   the last [`FLIGHT_CAP_ROUNDS`] there is no cap;
//! * at least [`FLIGHT_CAP_MIN_SEGMENTS`] (RFC 6928's initial window);
//! * with a repair only (`repair` not `off`): the round trips come from the deficit repair's
//!   accounting (`repair.rs`).
//!
//! Why 1.75 and not BBR's own 2: two BDPs of datagrams is all that a path with a one-BDP queue
//! holds, so a TCP that keeps the cap full (`tests/flight_cap.rs`) sat at the queue's edge: the
//! queue's drops raised the loss estimate and R, and it lost about 4 % of what it sent. With
//! 1.75 it lost nothing after its first window, and a quarter of a BDP is left for repairs.
//!
//! A flight of F segments puts F·R datagrams on the path. With delivery ratio q they arrive at
//! F·R·q per smoothed round trip, so the cap is 1.75·F·floor/srtt. It binds only once the
//! round trip exceeds 1.75 times its floor, i.e. once the queue holds three quarters of a
//! floor round trip of the flow's datagrams. A loss-based TCP backs off at the bitmap signal
//! (the queue's overflow) and rarely meets it. The rate is the path's, not the flow's: with many
//! flows each may still fill the whole path's cap, so the cap keeps one flow from overfilling
//! the path and leaves the sharing between flows to their TCPs (a per-flow rate froze
//! 100 flows at their shares: aggregate −9 %, Jain's index 0.94 → 0.69–0.79 on the lab). The
//! right edge given to the TCP is held rather than moved back when the cap falls: a receiver
//! should not shrink its window (RFC 9293 §3.8.6).

use std::time::Duration;

use crate::queue_delay::QUEUE_EVIDENCE_MIN;
use crate::repair::{MIN_DELIVERY, SentCounts};

/// Times the floor-BDP (in datagrams) the flight may reach: below BBR's own window gain of 2,
/// which is all a one-BDP queue's path holds.
pub const FLIGHT_CAP_GAIN: f64 = 1.75;

/// [`FLIGHT_CAP_GAIN`] on a path that reorders (the peer reports an unordering length, Ha &
/// Tsuru §3.2): half a floor-BDP in the queue instead of three quarters. Reordering delivers
/// the datagrams, so the NC-ACKs and the local TCP's answers to them, in bunches, and a bunch
/// of segments needs room in the queue that a smooth flow does not. On the simulator's
/// reordering paths (2–5 % loss, 5–20 ms of jitter, and 0 % at 10 ms) 1.5 cut the queue drops
/// by 42–94 % and was best or within 1.2 % of best among 1.25, 1.4, 1.5 and 1.6 on each
/// (docs/engine.md, "Flight cap": "Reordering, stop 42"). On the lab's kernel CUBIC it costs
/// up to 3 % at 10–20 ms of jitter and gains 1–2 % at 0–5 ms (docs/lab.md, "Reordering, stop 42").
pub const FLIGHT_CAP_GAIN_REORDERING: f64 = 1.5;

/// Rounds the arrival rate's maximum spans (BBR's bandwidth filter: ten round trips).
pub const FLIGHT_CAP_ROUNDS: usize = 10;

/// The smallest cap, segments (RFC 6928's initial window).
pub const FLIGHT_CAP_MIN_SEGMENTS: u64 = 10;

/// The least queue, in time, the cap leaves room for: twice the round-trip noise that is no
/// evidence of a queue ([`QUEUE_EVIDENCE_MIN`]). Over a short floor (a LAN, a direct path
/// between two gateways, Wi-Fi's aggregated ACKs) a host's batching and scheduling lift the
/// round trip milliseconds above the floor without any bottleneck queue. A cap of 1.75 floors
/// there held the flight below what that round trip needs; the next round's rate, measured at
/// the cap, was lower, and so the cap ratcheted down to [`FLIGHT_CAP_MIN_SEGMENTS`] (a 0.1 ms
/// floor and 1–6 ms round trips at 1.2 Gbit/s: `tcpnc lab speed`, docs/speed.md "The flight
/// cap on a short floor"). Above 5.3 ms of floor the gain's 0.75 floor is the larger.
pub const FLIGHT_CAP_MIN_QUEUE: Duration = QUEUE_EVIDENCE_MIN.saturating_mul(2);

/// The least busy time a round's rate is measured over, as a share of the round: less (the
/// queue one video frame leaves) is too few arrivals to tell the link's rate.
pub const MIN_BUSY_SHARE: f64 = 0.25;

/// One completed round: the arrival rate while the bottleneck was busy, if it was busy long
/// enough, and what the flows sent during the round.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Round {
    /// Datagrams the NC-ACKs showed arrived per second between NC-ACKs that both found a
    /// queue, if such stretches made up [`MIN_BUSY_SHARE`] of the round or more.
    busy_rate: Option<f64>,
    sent: SentCounts,
}

/// Where the current round began.
#[derive(Debug, Clone, Copy, PartialEq)]
struct RoundStart {
    at: Duration,
    sent: SentCounts,
}

/// The datagram arrival rate at the peer while its bottleneck is busy, of all the engine's
/// flows together, and the cap it gives each (module docs); kept in the path estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FlightCap {
    /// Datagrams known to have arrived so far.
    arrivals: u64,
    /// Combinations sent so far, and the new segments first included in them.
    sent: SentCounts,
    start: Option<RoundStart>,
    /// The previous NC-ACK, when its round trip showed a queue: when, and the arrivals known
    /// then.
    queued_ack: Option<(Duration, u64)>,
    /// Time and arrivals of the current round between consecutive NC-ACKs that both showed a
    /// queue: while the bottleneck was busy.
    busy: (Duration, u64),
    rounds: [Round; FLIGHT_CAP_ROUNDS],
    /// Where the next completed round goes, and how many are kept.
    next: usize,
    kept: usize,
}

impl FlightCap {
    /// Counts one DATA frame sent; `new_source` when it first included a new segment.
    pub fn on_sent(&mut self, new_source: bool) {
        self.sent.combinations += 1;
        self.sent.sources += u64::from(new_source);
    }

    /// Counts `delivered` more datagrams shown arrived by an NC-ACK that carries no round of
    /// its own: one overtaken on the way back by a newer NC-ACK (a stale one, Ha & Tsuru §3.1).
    /// Its arrivals are the link's all the same; left out, a path that reorders NC-ACKs would
    /// measure its rate low and the cap would ratchet down (docs/engine.md, "Flight cap").
    pub fn on_arrivals(&mut self, delivered: u64) {
        self.arrivals += delivered;
    }

    /// Takes one NC-ACK's news at `now`: `delivered` more datagrams arrived; the flow's
    /// smoothed round trip is `srtt` (no rounds without one), and `queued` says whether its
    /// latest round-trip sample showed a queue (`QueueDelay::sample_queued`).
    pub fn on_ack(&mut self, now: Duration, delivered: u64, srtt: Option<Duration>, queued: bool) {
        self.arrivals += delivered;
        let Some(srtt) = srtt else {
            return;
        };
        let Some(start) = self.start else {
            self.start = Some(RoundStart {
                at: now,
                sent: self.sent,
            });
            return;
        };
        if queued {
            if let Some((t, a)) = self.queued_ack {
                self.busy.0 += now.saturating_sub(t);
                self.busy.1 += self.arrivals - a;
            }
            self.queued_ack = Some((now, self.arrivals));
        } else {
            self.queued_ack = None;
        }
        let elapsed = now.saturating_sub(start.at);
        if elapsed < srtt || elapsed.is_zero() {
            return;
        }
        let (busy, arrived) = self.busy;
        let busy_rate = (!busy.is_zero()
            && busy.as_secs_f64() >= MIN_BUSY_SHARE * elapsed.as_secs_f64())
        .then(|| arrived as f64 / busy.as_secs_f64());
        self.rounds[self.next] = Round {
            busy_rate,
            sent: SentCounts {
                combinations: self.sent.combinations - start.sent.combinations,
                sources: self.sent.sources - start.sent.sources,
            },
        };
        self.next = (self.next + 1) % FLIGHT_CAP_ROUNDS;
        self.kept = (self.kept + 1).min(FLIGHT_CAP_ROUNDS);
        self.start = Some(RoundStart {
            at: now,
            sent: self.sent,
        });
        self.busy = (Duration::ZERO, 0);
    }

    /// The link's datagram slots per second: the highest busy arrival rate of the last
    /// [`FLIGHT_CAP_ROUNDS`] rounds over `delivery` (1 − the random loss floor: the lost
    /// datagrams used their slots too); `None` without a busy round among them.
    pub fn slot_rate(&self, delivery: f64) -> Option<f64> {
        let rounds = &self.rounds[..self.kept];
        let rate = rounds.iter().filter_map(|r| r.busy_rate).reduce(f64::max)?;
        Some(rate / delivery.clamp(MIN_DELIVERY, 1.0))
    }

    /// The most segments the local TCP may have in flight for a round-trip `floor`: `None`
    /// unless a queue was seen in one of the last [`FLIGHT_CAP_ROUNDS`] rounds. Only while the
    /// bottleneck is busy does the arrival rate measure it; an application that sends less
    /// than the path carries (a stream between frames, a request) leaves no queue, and its
    /// rate says nothing of the path's.
    /// `delivery` is the share of datagrams the path's random loss lets through (1 − the
    /// random loss floor): arrivals over it are the link slots the flow used.
    /// `gain` is the floors of datagrams allowed: [`FLIGHT_CAP_GAIN`], or
    /// [`FLIGHT_CAP_GAIN_REORDERING`] on a reordering path.
    pub fn cap_segments(&self, floor: Duration, delivery: f64, gain: f64) -> Option<u64> {
        let slots = self.slot_rate(delivery)?;
        let rounds = &self.rounds[..self.kept];
        let combinations: u64 = rounds.iter().map(|r| r.sent.combinations).sum();
        let sources: u64 = rounds.iter().map(|r| r.sent.sources).sum();
        let per_segment = if sources == 0 {
            1.0
        } else {
            (combinations as f64 / sources as f64).max(1.0)
        };
        // `gain` floors of datagrams, or the floor and [`FLIGHT_CAP_MIN_QUEUE`].
        let floor = floor.as_secs_f64();
        let datagrams =
            (gain * slots * floor).max(slots * (floor + FLIGHT_CAP_MIN_QUEUE.as_secs_f64()));
        let cap = (datagrams / per_segment).ceil();
        Some((cap as u64).max(FLIGHT_CAP_MIN_SEGMENTS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// `n` rounds of 50 ms after `from` ms, each with `arrivals` datagrams arrived (NC-ACKs
    /// every 5 ms), `per.0` combinations sent for `per.1` new segments and a queue or not;
    /// returns the time reached.
    fn rounds(
        cap: &mut FlightCap,
        from: u64,
        n: u64,
        arrivals: u64,
        per: (u64, u64),
        queue: bool,
    ) -> u64 {
        let mut t = from;
        for _ in 0..n {
            for i in 0..per.0 {
                cap.on_sent(i < per.1);
            }
            for _ in 0..10 {
                t += 5;
                cap.on_ack(ms(t), arrivals / 10, Some(ms(50)), queue);
            }
        }
        t
    }

    fn started() -> FlightCap {
        let mut cap = FlightCap::default();
        cap.on_ack(ms(0), 0, Some(ms(50)), false);
        cap
    }

    #[test]
    fn no_cap_without_a_queue() {
        let mut cap = started();
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), None);
        let t = rounds(&mut cap, 0, 5, 100, (115, 100), false);
        assert_eq!(
            cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN),
            None,
            "an application-limited flow"
        );
        rounds(&mut cap, t, 1, 100, (115, 100), true);
        assert!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN).is_some());
    }

    #[test]
    fn the_cap_is_one_and_three_quarter_floor_bdps_of_datagrams_over_r() {
        let mut cap = started();
        // 100 datagrams per 50 ms round: 2000/s; 115 combinations per 100 segments.
        rounds(&mut cap, 0, 5, 100, (115, 100), true);
        // 1.75 × 2000/s × 40 ms / 1.15 = 121.7 → 122.
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), Some(122));
    }

    #[test]
    fn arrivals_shown_by_stale_acks_count() {
        // The same path as above, but every other NC-ACK overtaken on the way back: its
        // arrivals come in through `on_arrivals` and the rate, so the cap, is the same.
        let mut cap = started();
        let mut t = 0;
        for _ in 0..5 {
            for i in 0..115 {
                cap.on_sent(i < 100);
            }
            for k in 0..10 {
                t += 5;
                match k % 2 {
                    0 => cap.on_arrivals(10),
                    _ => cap.on_ack(ms(t), 10, Some(ms(50)), true),
                }
            }
        }
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), Some(122));
    }

    #[test]
    fn random_loss_counts_as_used_slots() {
        let mut cap = started();
        // 90 of 100 slots arrive on a 10 % path: the link still carries 2000 per second.
        rounds(&mut cap, 0, 5, 90, (100, 100), true);
        assert_eq!(cap.cap_segments(ms(40), 0.9, FLIGHT_CAP_GAIN), Some(140));
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), Some(126));
    }

    #[test]
    fn the_highest_rate_of_the_last_ten_rounds_with_a_queue_counts() {
        let mut cap = started();
        let t = rounds(&mut cap, 0, 1, 300, (100, 100), false);
        let t = rounds(&mut cap, t, 1, 200, (100, 100), true);
        let t = rounds(&mut cap, t, 8, 100, (100, 100), true);
        // 200 per 50 ms: 1.75 × 4000/s × 40 ms = 280; the faster round had no queue.
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), Some(280));
        let t = rounds(&mut cap, t, 1, 100, (100, 100), true);
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), Some(280));
        rounds(&mut cap, t, 1, 100, (100, 100), true);
        // The fast round has left the filter.
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), Some(140));
    }

    #[test]
    fn a_short_queue_measures_nothing() {
        let mut cap = started();
        // One NC-ACK in ten with a queue: no busy period to measure a rate over.
        for i in 0..50 {
            cap.on_ack(ms(5 * (i + 1)), 10, Some(ms(50)), i % 10 == 3);
        }
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), None);
    }

    #[test]
    fn a_queue_ten_rounds_ago_no_longer_caps() {
        let mut cap = started();
        let t = rounds(&mut cap, 0, 1, 100, (100, 100), true);
        let t = rounds(&mut cap, t, 9, 100, (100, 100), false);
        assert!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN).is_some());
        rounds(&mut cap, t, 1, 100, (100, 100), false);
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), None);
    }

    /// A 0.1 ms floor with 3.1 ms round trips that no bottleneck queue causes (a host's
    /// batching): the path carries 100 datagrams per ms, so a flight of 310 keeps it busy.
    /// Each round's arrivals are what the cap let the TCP send. With the cap at 1.75 floors it
    /// would fall round by round to the 10-segment minimum; with room for
    /// [`FLIGHT_CAP_MIN_QUEUE`] it stays above the flight the round trip needs.
    #[test]
    fn a_short_floor_does_not_ratchet_the_cap_down() {
        let (floor, srtt) = (Duration::from_micros(100), Duration::from_micros(3100));
        let path_flight = 310;
        let mut cap = FlightCap::default();
        let mut t = Duration::ZERO;
        cap.on_ack(t, 0, Some(srtt), true);
        for _ in 0..30 {
            let flight = cap
                .cap_segments(floor, 1.0, FLIGHT_CAP_GAIN)
                .map_or(path_flight, |c| c.min(path_flight));
            for _ in 0..flight {
                cap.on_sent(true);
            }
            for _ in 0..10 {
                t += srtt / 10;
                cap.on_ack(t, flight / 10, Some(srtt), true);
            }
        }
        let c = cap.cap_segments(floor, 1.0, FLIGHT_CAP_GAIN).unwrap();
        assert!(c >= path_flight, "cap {c} below the round trip's flight");
    }

    #[test]
    fn no_round_without_a_round_trip_and_a_floor_of_ten_segments() {
        let mut cap = FlightCap::default();
        for t in 0..20 {
            cap.on_sent(true);
            cap.on_ack(ms(t * 50), 100, None, true);
        }
        assert_eq!(cap.cap_segments(ms(40), 1.0, FLIGHT_CAP_GAIN), None);
        cap.on_ack(ms(1000), 0, Some(ms(50)), false);
        rounds(&mut cap, 1000, 3, 10, (100, 100), true);
        // 1.75 × 200/s × 10 ms = 3.5.
        assert_eq!(
            cap.cap_segments(ms(10), 1.0, FLIGHT_CAP_GAIN),
            Some(FLIGHT_CAP_MIN_SEGMENTS)
        );
    }
}
