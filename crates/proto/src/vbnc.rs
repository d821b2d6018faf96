//! The variable coding window (VBNC, Parejiya & Desai, "Transforming network coding with TCP
//! for broadcasting streaming data", §II-B), sized from what a gateway sees of its local TCP.
//!
//! The paper's NC layer sits inside the sender's stack and reads TCP's congestion window, the
//! receiver's window, the bytes in flight and the queued data. A gateway sees none of TCP's
//! state, only its segments and the ACKs it synthesises, so each input stands in as follows
//! (docs/engine.md, "Variable coding window"):
//!
//! | paper | here |
//! | --- | --- |
//! | bytes in flight (`unack`) | the local TCP's highest sequence number sent minus the NC ack it was given |
//! | `cwnd` | the largest flight of the last complete round trip, plus its growth over the round before (TCP in slow start doubles it) |
//! | `rwnd` | the window of the peer's latest NC-ACK (what the synthesised ACKs advertise) |
//! | RTT | the combination round trip, from a Pid's sending to its echo (`repair.rs`) |
//! | a loss seen by TCP | a duplicate ACK synthesised for the local TCP (`dup_acks_synthesized`) |
//!
//! The rules (§II-B): the window starts at 1; every ACK that advances grows it by the packets it
//! acknowledges (as TCP's window grows per ACK), never beyond the transmission opportunity
//! `min(cwnd, rwnd) / packet size` nor the configured W; a loss TCP sees shrinks the estimate
//! of its window by half (Reno's decrease; the next round's measurement corrects it for CUBIC)
//! and the coding window with it, once per round trip; and while the round trip exceeds
//! [`RTT_BOUND`] the window halves once per round trip and does not grow.

use std::time::Duration;

/// Round trip above which the window is halved (§II-B: "the RTT from Google across US goes up
/// to a maximum of 100 ms … when the RTT goes above 100 ms, we reduce the bucket size by half").
pub const RTT_BOUND: Duration = Duration::from_millis(100);

/// Round length used before the first round trip is measured (Linux's initial RTO is 1 s; a
/// round this long merely delays the first cwnd estimate).
const FIRST_ROUND: Duration = Duration::from_millis(200);

/// What the sender half knows of its local TCP when it codes a new segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    /// Now.
    pub now: Duration,
    /// One past the last sequence number the local TCP has sent (its `snd_nxt` as seen here).
    pub sent_end: u32,
    /// The NC ack last given to the local TCP (`None` before the first NC-ACK).
    pub acked: Option<u32>,
    /// The peer's latest advertised window, bytes.
    pub rwnd: u32,
    /// The smoothed combination round trip, once measured.
    pub rtt: Option<Duration>,
    /// Duplicate ACKs synthesised for the local TCP so far (losses TCP sees).
    pub losses: u64,
    /// The largest local segment so far, bytes (the paper's `maxPktSize`).
    pub packet_size: u32,
}

/// The VBNC controller of one flow's sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vbnc {
    /// The configured W: the window's upper bound.
    max: usize,
    /// The current window, `1..=max`.
    window: usize,
    /// The NC ack of the previous observation.
    acked: Option<u32>,
    /// Losses counted at the previous observation.
    losses: u64,
    /// Start of the current measurement round and the largest flight within it.
    round: Option<(Duration, u32)>,
    /// Estimated congestion window, bytes: the largest flight of the last complete round.
    cwnd: u32,
    /// Growth of the largest flight from the round before the last one to the last one.
    growth: u32,
    /// When the window last shrank (on loss or above the bound): at most once per round trip.
    shrunk_at: Option<Duration>,
}

impl Vbnc {
    /// A controller whose window starts at 1 and never exceeds `max` (at least 1).
    pub fn new(max: usize) -> Self {
        Vbnc {
            max: max.max(1),
            window: 1,
            acked: None,
            losses: 0,
            round: None,
            cwnd: 0,
            growth: 0,
            shrunk_at: None,
        }
    }

    /// The coding window now, in packets.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The estimated congestion window of the local TCP, bytes.
    pub fn cwnd_estimate(&self) -> u32 {
        self.cwnd
    }

    /// Takes one observation and applies the rules; returns the window.
    pub fn observe(&mut self, o: &Observation) -> usize {
        let flight = o
            .acked
            .map_or(0, |a| o.sent_end.wrapping_sub(a))
            .min(i32::MAX as u32);
        self.measure_round(o, flight);
        let size = o.packet_size.max(1);
        let newly_acked = match (self.acked, o.acked) {
            (Some(prev), Some(now)) if now.wrapping_sub(prev) <= i32::MAX as u32 => {
                now.wrapping_sub(prev)
            }
            (None, Some(_)) => size,
            _ => 0,
        };
        self.acked = o.acked.or(self.acked);
        let rtt = o.rtt.unwrap_or(FIRST_ROUND);
        let may_shrink = self
            .shrunk_at
            .is_none_or(|t| o.now.saturating_sub(t) >= rtt);
        let loss = o.losses > self.losses;
        self.losses = o.losses;
        let above_bound = o.rtt.is_some_and(|r| r > RTT_BOUND);
        if loss && may_shrink {
            self.cwnd = (self.cwnd.max(flight) / 2).max(size);
            self.growth = 0;
            self.shrink(o.now, self.opportunity(size, o.rwnd));
        } else if above_bound && may_shrink {
            self.shrink(o.now, self.window / 2);
        } else if !above_bound && newly_acked > 0 {
            let grown = self.window + newly_acked.div_ceil(size) as usize;
            self.window = grown.min(self.opportunity(size, o.rwnd)).max(self.window);
        }
        self.window = self.window.clamp(1, self.max);
        self.window
    }

    /// Closes the measurement round once a round trip has passed: its largest flight is the
    /// new cwnd estimate.
    fn measure_round(&mut self, o: &Observation, flight: u32) {
        let rtt = o.rtt.unwrap_or(FIRST_ROUND);
        match self.round {
            Some((start, largest)) if o.now.saturating_sub(start) >= rtt => {
                self.growth = largest.saturating_sub(self.cwnd);
                self.cwnd = largest;
                self.round = Some((o.now, flight));
            }
            Some((start, largest)) => self.round = Some((start, largest.max(flight))),
            None => self.round = Some((o.now, flight)),
        }
    }

    /// The transmission opportunity in packets (§II-B: `min(cwnd, rwnd) / maxPktSize`): the
    /// estimated window plus its growth per round, bounded by the peer's window, at least 1.
    fn opportunity(&self, size: u32, rwnd: u32) -> usize {
        let cwnd = self.cwnd.saturating_add(self.growth);
        let bytes = if rwnd > 0 { cwnd.min(rwnd) } else { cwnd };
        (bytes.div_ceil(size) as usize).max(1)
    }

    /// Shrinks the window to `to` (at least 1) and starts the once-per-round-trip wait.
    fn shrink(&mut self, now: Duration, to: usize) {
        self.window = self.window.min(to).max(1);
        self.shrunk_at = Some(now);
    }
}
