//! Congestion episodes as the local TCP sees them (`repair.rs`, docs/engine.md parts 2 and 5):
//! which duplicate ACKs the sender withholds and when an NC-ACK's loss bitmap calls for a
//! congestion signal.
//!
//! * The third duplicate ACK of a stall makes the local TCP reduce its window once; duplicates
//!   within two round trips of a signal belong to the same loss episode (its holes are being
//!   repaired) and are withheld rather than cutting the window again (RFC 5681 §3.2 and
//!   RFC 3168 §6.1.2: one reduction per window of data). Later duplicates pass, and nothing is
//!   withheld once NC-ACKs stop, so TCP's own timers still see a dead path.
//! * An NC-ACK whose bitmap shows more losses than the random loss floor explains
//!   ([`congestion_threshold`]) is a queue overflowing while repairs keep the NC ack moving:
//!   the sender then gives TCP a signal (three duplicate ACKs). Each loss counts towards one
//!   signal only, and nothing is judged before the floor is known.

use std::time::Duration;

#[cfg(doc)]
use crate::repair::congestion_threshold;

/// Round-trip time assumed before one is measured.
const DEFAULT_RTT: Duration = Duration::from_millis(100);

/// Episode state of one sender.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Episodes {
    /// Duplicate ACKs given to TCP in the current stall of the NC ack.
    stall_dups: u32,
    /// When the current stall of the NC ack began.
    stall_since: Option<Duration>,
    /// When TCP last got a congestion signal (a stall's third duplicate or a bitmap signal).
    signalled_at: Option<Duration>,
    /// Pid echo of the NC-ACK that last triggered a bitmap signal: its losses are spent.
    signal_pid: Option<u32>,
}

impl Episodes {
    /// No stall, no signal yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether TCP got a signal less than two round trips (`rtt`) before `now`.
    pub fn recently_signalled(&self, now: Duration, rtt: Option<Duration>) -> bool {
        let rtt = rtt.unwrap_or(DEFAULT_RTT);
        self.signalled_at
            .is_some_and(|t| now.saturating_sub(t) < rtt * 2)
    }

    /// Whether `ack`'s loss bitmap calls for a signal: at least `threshold` losses among its
    /// Pids not counted by an earlier signal, outside the quiet time. `threshold` comes from
    /// the random loss known before this ACK ([`congestion_threshold`], raised for a bursty
    /// path by `BurstFit::losses_above`; `None`: not known yet, no judgement).
    pub fn congested(
        &self,
        now: Duration,
        rtt: Option<Duration>,
        echo: u32,
        bitmap: u32,
        threshold: Option<f64>,
    ) -> bool {
        let Some(threshold) = threshold else {
            return false;
        };
        if self.recently_signalled(now, rtt) {
            return false;
        }
        // Bit i is Pid echo − 1 − i; Pids up to the last signal's echo were counted then.
        let fresh = match self.signal_pid {
            Some(p) => match echo.wrapping_sub(p).wrapping_sub(1) {
                d if d < 32 => (1u32 << d) - 1,
                _ => u32::MAX,
            },
            None => u32::MAX,
        };
        f64::from((bitmap & fresh).count_ones()) >= threshold
    }

    /// Records a bitmap signal given at `now` for the NC-ACK echoing `pid`.
    pub fn signalled(&mut self, now: Duration, pid: u32) {
        self.signalled_at = Some(now);
        self.signal_pid = Some(pid);
    }

    /// For a TCP ACK about to be given: `true` if it is a duplicate to withhold. Counts the
    /// duplicates of a stall; the third one is a signal. `random`: no queue is building, so
    /// the stall is a burst of random loss that the repairs fill within a round trip; its
    /// duplicates are withheld for two round trips from the stall's start (then they pass and
    /// TCP recovers as usual).
    pub fn hold_duplicate(
        &mut self,
        now: Duration,
        rtt: Option<Duration>,
        duplicate: bool,
        random: bool,
    ) -> bool {
        if !duplicate {
            self.stall_dups = 0;
            self.stall_since = None;
            return false;
        }
        let since = *self.stall_since.get_or_insert(now);
        if self.recently_signalled(now, rtt) {
            return true;
        }
        if random && now.saturating_sub(since) < rtt.unwrap_or(DEFAULT_RTT) * 2 {
            return true;
        }
        self.stall_dups += 1;
        if self.stall_dups == 3 {
            self.signalled_at = Some(now);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repair::congestion_threshold;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn third_duplicate_signals_and_the_episode_is_withheld() {
        let rtt = Some(ms(20));
        let mut e = Episodes::new();
        assert!(!e.hold_duplicate(ms(0), rtt, false, false));
        for t in 1..=3 {
            assert!(!e.hold_duplicate(ms(t), rtt, true, false));
        }
        // Within 2 RTTs of the third: withheld, even across a new stall.
        assert!(e.hold_duplicate(ms(10), rtt, true, false));
        assert!(!e.hold_duplicate(ms(11), rtt, false, false));
        assert!(e.hold_duplicate(ms(12), rtt, true, false));
        // After 2 RTTs: passes, and a new stall needs three again.
        assert!(!e.hold_duplicate(ms(50), rtt, true, false));
        assert!(e.recently_signalled(ms(42), rtt));
        assert!(!e.recently_signalled(ms(43), rtt));
    }

    #[test]
    fn a_random_burst_stall_is_withheld_for_two_round_trips() {
        let rtt = Some(ms(20));
        let mut e = Episodes::new();
        assert!(!e.hold_duplicate(ms(0), rtt, false, true));
        for t in [1, 5, 20, 39] {
            assert!(e.hold_duplicate(ms(t), rtt, true, true), "t = {t}");
        }
        // Two round trips after the stall began the duplicates reach TCP: the third signals.
        for t in [41, 42] {
            assert!(!e.hold_duplicate(ms(t), rtt, true, true));
        }
        assert!(!e.hold_duplicate(ms(43), rtt, true, true));
        assert!(e.recently_signalled(ms(44), rtt));
        // Without the rule the same stall signals at its third duplicate.
        let mut plain = Episodes::new();
        for t in [1, 5, 20] {
            assert!(!plain.hold_duplicate(ms(t), rtt, true, false));
        }
        assert!(plain.recently_signalled(ms(21), rtt));
    }

    #[test]
    fn bitmap_signal_needs_a_known_floor_and_spends_its_losses() {
        let rtt = Some(ms(20));
        let mut e = Episodes::new();
        let t = |floor| Some(congestion_threshold(floor));
        let burst = 0b1111; // 4 of 32 lost
        assert!(!e.congested(ms(0), rtt, 100, burst, None));
        assert!(e.congested(ms(0), rtt, 100, burst, t(0.0)));
        assert!(!e.congested(ms(0), rtt, 100, 0b11, t(0.0)));
        // At 10 % loss four losses are ordinary.
        assert!(!e.congested(ms(0), rtt, 100, burst, t(0.1)));
        e.signalled(ms(0), 100);
        // Quiet time, then the same losses (Pids 96..=99) are spent: echo 110 still shows
        // them in bits 10..13, plus three new ones.
        assert!(!e.congested(ms(10), rtt, 110, 0b111, t(0.0)));
        assert!(!e.congested(ms(60), rtt, 110, (burst << 10) | 0b11, t(0.0)));
        assert!(e.congested(ms(60), rtt, 110, (burst << 10) | 0b111, t(0.0)));
    }
}
