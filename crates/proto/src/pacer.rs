//! Pacing (`pacing`, with `queue_depth`; issue 10 mechanism 4 on a shallow queue): the DATA
//! datagrams of one engine leave at the path's measured rate, in bursts of no more than the
//! bottleneck queue holds.
//!
//! A TCP that is not paced (kernel CUBIC without the fq qdisc) sends a window's opening at once:
//! after a repair fills a hole the seen-ACK jumps by the packets behind it, and the TCP answers
//! with as many segments back to back. A drop-tail queue of a few milliseconds (the lab's 10
//! packets, 6 ms at 20 Mbit/s) drops the tail of such a burst although the flight is within
//! what the path holds; the drops draw repairs, which come in bursts too (up to
//! `MAX_REPAIRS_PER_ACK` an NC-ACK). Kernel BBR paces itself and loses little there; nc CUBIC
//! lost a third of its datagrams in `tests/shallow_queue.rs` with the flight capped.
//!
//! A token bucket, as in quinn-proto's pacer and the Linux fq qdisc: tokens (datagrams) accrue
//! at `rate` up to `burst`; a DATA datagram leaves when a token is there and nothing waits before
//! it, else it waits here until one is. The rate is the flight cap's slot rate (the link's
//! datagrams per second, `flight_cap.rs`), the burst three quarters of the deepest queue seen
//! ([`crate::queue_delay::DEPTH_CAP_SHARE`]), at least [`PACER_MIN_BURST`]. NC-ACKs and BYPASS
//! frames are not paced. Sans-IO: `now` comes with every call, and the engine's
//! `poll_timeout` names the time the next waiting datagram may leave.
//!
//! A waiting datagram's round trip counts from the departure forecast when it is admitted
//! (the bucket's wait is the gateway's, no queue of the path's). A rate set higher or lapsed
//! since lets it out sooner; [`Pacer::release`] then names it, and the engine moves its
//! departure to when it left (`Output::take_early_departure`). Counted from the forecast, a
//! queue's worth admitted at a rate measured during a loss burst (100 datagrams/s) and let out
//! at once read round trips of 0–58 µs in the simulator, and the flow's round-trip floor never
//! recovered. Holding each datagram to its forecast instead cost the lab's eight flows over a
//! 10-packet queue an eighth of their goodput (docs/lab.md, "Paced departures, stop 51").

use std::collections::VecDeque;
use std::time::Duration;

/// The least burst, datagrams: a gateway wakes a few hundred microseconds late at best.
pub const PACER_MIN_BURST: f64 = 2.0;

/// How far short of a whole token still counts as one: the rounding error that adding
/// `elapsed × rate` in floating point leaves ([`Pacer::next_release`]).
const TOKEN_SLACK: f64 = 1e-9;

/// How long a rate holds without being set again. Pacing is the path's (one pacer for all the
/// engine's flows): a flow that does not pace (a new one, or one that has not yet seen the
/// queue overflow) leaves it alone rather than turning it off, which with eight flows turned
/// it off and on between NC-ACKs and let the waiting datagrams out in bursts.
pub const PACE_HOLD: Duration = Duration::from_millis(200);

/// A token bucket and the DATA datagrams waiting for its tokens (module docs), each with a
/// `T` that names it to the caller (the engine's: its flow and Pid).
#[derive(Debug)]
pub struct Pacer<T> {
    /// Datagrams per second; 0 while not pacing.
    rate: f64,
    /// The most tokens kept.
    burst: f64,
    tokens: f64,
    /// When the tokens were last counted.
    last: Duration,
    /// When the rate lapses unless set again ([`PACE_HOLD`]).
    until: Duration,
    /// The waiting datagrams, oldest first, each with the departure forecast when it was
    /// admitted ([`Pacer::newest_departure`]) and its tag.
    waiting: VecDeque<(Duration, T, Vec<u8>)>,
}

impl<T> Default for Pacer<T> {
    fn default() -> Self {
        Pacer {
            rate: 0.0,
            burst: 0.0,
            tokens: 0.0,
            last: Duration::ZERO,
            until: Duration::ZERO,
            waiting: VecDeque::new(),
        }
    }
}

impl<T> Pacer<T> {
    /// Paces at `rate` datagrams per second in bursts of at most `burst` from `now` on, for
    /// [`PACE_HOLD`] unless set again, or stops pacing (`None`, or a rate that is not
    /// positive): the datagrams waiting then leave at the next [`Pacer::release`].
    pub fn set_rate(&mut self, now: Duration, pace: Option<(f64, f64)>) {
        self.refill(now);
        self.until = now + PACE_HOLD;
        match pace {
            Some((rate, burst)) if rate.is_finite() && rate > 0.0 && burst.is_finite() => {
                let burst = burst.max(PACER_MIN_BURST);
                if self.rate == 0.0 {
                    self.tokens = burst;
                }
                self.rate = rate;
                self.burst = burst;
                self.tokens = self.tokens.min(burst);
            }
            _ => self.rate = 0.0,
        }
    }

    /// Whether it paces.
    pub fn is_pacing(&self) -> bool {
        self.rate > 0.0
    }

    /// Takes a DATA datagram at `now`: `Some` to send at once, `None` when it waits here.
    pub fn admit(&mut self, now: Duration, tag: T, datagram: Vec<u8>) -> Option<Vec<u8>> {
        self.refill(now);
        if self.waiting.is_empty() && self.take_token() {
            return Some(datagram);
        }
        let departure = self.forecast(now);
        self.waiting.push_back((departure, tag, datagram));
        None
    }

    /// When a datagram admitted at `now` behind those waiting will leave: after the newest of
    /// them, and when the bucket has a token for each of them and for it.
    fn forecast(&self, now: Duration) -> Duration {
        if !self.is_pacing() {
            return now; // it leaves at the next release
        }
        let behind = self.waiting.back().map_or(now, |&(t, ..)| t.max(now));
        let n = self.waiting.len() as f64 + 1.0;
        let wait = Duration::from_secs_f64((n - self.tokens).max(0.0) / self.rate);
        behind.max(self.last.saturating_add(wait))
    }

    /// Hands `send` the waiting datagrams whose tokens have come by `now`, oldest first, each
    /// with its tag if it leaves before the departure forecast for it (a rate set higher or
    /// lapsed since it was admitted; module docs).
    pub fn release(&mut self, now: Duration, mut send: impl FnMut(Vec<u8>, Option<T>)) {
        self.refill(now);
        while !self.waiting.is_empty() && self.take_token() {
            if let Some((forecast, tag, d)) = self.waiting.pop_front() {
                send(d, (forecast > now).then_some(tag));
            }
        }
    }

    /// When the oldest waiting datagram may leave (`None` when none waits).
    pub fn next_release(&self) -> Option<Duration> {
        self.waiting.front()?;
        Some(self.next_token())
    }

    /// When the bucket next has a token (`last` when it has one, or does not pace).
    fn next_token(&self) -> Duration {
        if !self.is_pacing() || self.tokens >= 1.0 - TOKEN_SLACK {
            return self.last;
        }
        // Rounded up to the next nanosecond: a wait rounded down to `last` itself would leave
        // the token short there, and a driver woken at once would find nothing to release and
        // the same deadline again (the simulator spun in one instant for ever, GE 10 %/8).
        // (`as` and the addition saturate: a wait past them is the longest one.)
        let wait = ((1.0 - self.tokens) / self.rate * 1e9).ceil() as u64;
        self.last.saturating_add(Duration::from_nanos(wait))
    }

    /// When the newest waiting datagram leaves, if the bucket is released in time (`None`
    /// when none waits): its round trip counts from then, not from its coding
    /// (`queue_delay.rs`: the pacer's wait is no queue of the path's). Forecast when it was
    /// admitted; if a rate set higher or lapsed since lets it out sooner, [`Pacer::release`]
    /// names it (module docs).
    pub fn newest_departure(&self) -> Option<Duration> {
        self.waiting.back().map(|&(t, ..)| t)
    }

    /// Datagrams waiting.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Drops the waiting datagrams for which `keep` is false; returns how many.
    pub fn retain(&mut self, mut keep: impl FnMut(&Vec<u8>) -> bool) -> usize {
        let before = self.waiting.len();
        self.waiting.retain(|(_, _, d)| keep(d));
        before - self.waiting.len()
    }

    /// One token, if there is one (always while not pacing).
    fn take_token(&mut self) -> bool {
        if !self.is_pacing() {
            return true;
        }
        if self.tokens < 1.0 - TOKEN_SLACK {
            return false;
        }
        self.tokens = (self.tokens - 1.0).max(0.0);
        true
    }

    fn refill(&mut self, now: Duration) {
        if now > self.until {
            self.rate = 0.0;
        }
        if now > self.last {
            let elapsed = (now - self.last).as_secs_f64();
            self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
            self.last = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Admits `n` datagrams at `now`; returns how many left at once.
    fn admit(p: &mut Pacer<u8>, now: Duration, n: u8) -> usize {
        (0..n)
            .filter(|&k| p.admit(now, k, vec![k]).is_some())
            .count()
    }

    /// A token short of whole by a rounding error is due when `next_release` says: released
    /// there, not named again as the deadline with nothing released (a driver woken at once
    /// would spin; before the fix the wait rounded down to `last` and nothing left).
    #[test]
    fn a_token_short_by_a_rounding_error_leaves_when_due() {
        for short in [1e-13, 1e-10, 1e-6] {
            let mut p = Pacer::<u8>::default();
            p.set_rate(ms(0), Some((1000.0, 2.0)));
            assert_eq!(admit(&mut p, ms(0), 3), 2);
            (p.last, p.tokens) = (ms(2), 1.0 - short); // what adding elapsed × rate can leave
            let due = p.next_release().unwrap();
            let mut sent = 0;
            p.release(due, |_, _| sent += 1);
            assert_eq!(sent, 1, "{short}: nothing released at {due:?}");
            assert_eq!(p.next_release(), None);
        }
    }

    #[test]
    fn without_a_rate_everything_leaves_at_once() {
        let mut p = Pacer::<u8>::default();
        assert_eq!(admit(&mut p, ms(0), 50), 50);
        assert_eq!(p.next_release(), None);
    }

    #[test]
    fn a_burst_leaves_at_the_rate_after_the_bucket() {
        let mut p = Pacer::<u8>::default();
        // 1000 datagrams/s, bursts of 4: 4 at once, then one a millisecond.
        p.set_rate(ms(0), Some((1000.0, 4.0)));
        assert_eq!(admit(&mut p, ms(0), 20), 4);
        assert_eq!((p.len(), p.next_release()), (16, Some(ms(1))));
        assert_eq!(p.newest_departure(), Some(ms(16)));
        let mut sent = Vec::new();
        for t in 1..=5 {
            p.release(ms(t), |d, _| sent.push(d[0]));
        }
        assert_eq!(
            sent,
            vec![4, 5, 6, 7, 8],
            "one token a millisecond, oldest first"
        );
        // A new datagram waits behind the old ones.
        assert!(p.admit(ms(5), 99, vec![99]).is_none());
        // Woken late, no more than a burst leaves.
        p.release(ms(100), |d, _| sent.push(d[0]));
        assert_eq!((sent.len(), p.next_release()), (9, Some(ms(101))));
        p.release(ms(200), |d, _| sent.push(d[0]));
        p.release(ms(300), |d, _| sent.push(d[0]));
        assert_eq!((sent.len(), sent[16], p.next_release()), (17, 99, None));
    }

    #[test]
    fn a_rate_not_set_again_lapses() {
        let mut p = Pacer::<u8>::default();
        p.set_rate(ms(0), Some((100.0, 2.0)));
        assert_eq!(admit(&mut p, ms(0), 10), 2);
        p.set_rate(ms(150), Some((100.0, 2.0)));
        assert!(p.is_pacing());
        let mut n = 0;
        p.release(ms(400), |_, _| n += 1);
        assert_eq!((n, p.is_pacing(), p.is_empty()), (8, false, true));
    }

    #[test]
    fn stopping_releases_what_waits() {
        let mut p = Pacer::<u8>::default();
        p.set_rate(ms(0), Some((100.0, 0.5)));
        assert_eq!(admit(&mut p, ms(0), 10), 2, "at least the least burst");
        p.set_rate(ms(1), None);
        assert_eq!(p.next_release(), Some(ms(1)));
        let mut n = 0;
        p.release(ms(1), |_, _| n += 1);
        assert_eq!((n, p.is_empty()), (8, true));
        assert_eq!(p.retain(|_| false), 0);
    }

    /// A waiting datagram's round trip counts from its forecast departure
    /// ([`Pacer::newest_departure`]); one let out sooner is named with its tag, so that its
    /// round trip counts from when it left. Before, a rate measured low (100 datagrams/s,
    /// during a loss burst) that was then set higher or lapsed let the simulator's waiting
    /// datagrams out at once, their round trips read 0–58 µs, the flow's round-trip floor fell
    /// from 40 ms to 58 µs for good and its flight cap stayed at 10 segments (GE 10 %/8, seeds
    /// 2 and 4: 0.9 Mbit/s; docs/engine.md, "Pacing").
    #[test]
    fn a_datagram_let_out_before_its_forecast_is_named() {
        for change in [Some((100.0, 2.0)), Some((100_000.0, 50.0)), None] {
            let mut p = Pacer::<u8>::default();
            p.set_rate(ms(0), Some((100.0, 2.0)));
            assert_eq!(admit(&mut p, ms(0), 10), 2);
            assert_eq!(
                p.newest_departure(),
                Some(ms(80)),
                "the 8th waiting, 10 ms apart"
            );
            p.set_rate(ms(1), change);
            let mut early = Vec::new();
            for t in 1..=100 {
                p.release(ms(t), |d, tag| early.extend(tag.map(|k| (t, d[0], k))));
            }
            assert!(p.is_empty());
            let expected: Vec<(u64, u8, u8)> = match change {
                Some((100.0, _)) => vec![], // each left at its forecast
                Some(_) => (2..10).map(|k| (2, k, k)).collect(), // with the next token
                None => (2..10).map(|k| (1, k, k)).collect(), // at once
            };
            assert_eq!(early, expected, "{change:?}");
        }
    }
}
