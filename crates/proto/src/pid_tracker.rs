//! The receiver's record of arrived Pids (Ha & Tsuru §3.1, "ACK accumulation"): it fills every
//! NC-ACK with the Pid echo and a 32-bit loss bitmap (bit i set = Pid `echo − 1 − i` had not
//! arrived, `docs/wire.md`) and says how each combination arrived (§3.2). The sender's side of
//! the same bookkeeping is `loss_tracker.rs`.
//!
//! It also keeps, for each remembered Pid, when the first Pid at or beyond it arrived: for a
//! Pid that arrived in order its own arrival, for one skipped the moment it was overtaken. A
//! late arrival is then late by a time as well as by a number of Pids, and the Pids that could
//! still be late are those overtaken less than a reordering delay ago (`reorder.rs`). And it
//! keeps the first packet index each arrived Pid was coded from, which bounds from below the
//! packets a Pid still missing may reference ([`PidTracker::late_floor`]).

use std::time::Duration;

/// Pids remembered by the receiver beyond the newest one.
const HISTORY: u32 = 64;

/// How a combination arrived ([`PidTracker::on_arrival`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Its Pid had already arrived.
    Duplicate,
    /// After every Pid received so far (gaps before it may be losses or late arrivals).
    InOrder,
    /// After a newer Pid.
    Late(Late),
}

/// How late a combination arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Late {
    /// Pids it was overtaken by (`newest − pid`).
    pub by: u32,
    /// Time since the first Pid beyond it arrived; zero when older than the history.
    pub after: Duration,
}

/// Receiver-side record of the Pids that arrived.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PidTracker {
    /// Newest Pid seen (modular order) and the first Pid ever seen.
    newest: Option<u32>,
    first: u32,
    /// Bit d set = Pid `newest − d` arrived, for d < 64.
    seen: u64,
    /// `slots[pid % 64]` for the remembered Pids (empty before the first arrival).
    slots: Vec<Slot>,
}

/// What is remembered of one Pid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Slot {
    /// When the first Pid at or beyond it arrived.
    reached: Duration,
    /// The first packet index (wire form) its combination was coded from, once it arrived.
    first_index: u32,
}

impl PidTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the arrival of `pid` (at time zero, coded from index 0); returns `false` if it
    /// had already arrived (a duplicate).
    pub fn on_receive(&mut self, pid: u32) -> bool {
        self.on_arrival(pid, Duration::ZERO, 0) != Arrival::Duplicate
    }

    /// Records the arrival at `now` of `pid`, coded from packet index `first_index` (its wire
    /// form), and says how it arrived (Ha & Tsuru §3.2: a Pid below the newest one received
    /// came out of order).
    pub fn on_arrival(&mut self, pid: u32, now: Duration, first_index: u32) -> Arrival {
        let newest = self.newest;
        if !self.record(pid, now) {
            return Arrival::Duplicate;
        }
        let back = self.newest.map_or(0, |n| n.wrapping_sub(pid));
        if back < HISTORY {
            self.slots[slot(pid)].first_index = first_index;
        }
        match newest {
            Some(n) if n.wrapping_sub(pid).wrapping_sub(1) < 1 << 31 => {
                let by = n.wrapping_sub(pid);
                let after = match by < HISTORY {
                    true => now.saturating_sub(self.slots[slot(pid)].reached),
                    false => Duration::ZERO,
                };
                Arrival::Late(Late { by, after })
            }
            _ => Arrival::InOrder,
        }
    }

    /// The lowest packet index a combination still missing among the `depth` Pids before the
    /// newest one can reference, when one is missing: the first index of the nearest Pid
    /// received before the oldest such gap. The sender codes each combination from its oldest
    /// un-ACKed packet, which only moves forward, so a later Pid starts no earlier. `None`
    /// when nothing is missing there or no earlier Pid is remembered.
    pub fn late_floor(&self, depth: u32) -> Option<u32> {
        let newest = self.newest?;
        let oldest_gap = (1..=depth.min(HISTORY - 1))
            .rev()
            .find(|d| !self.received(newest.wrapping_sub(*d)))?;
        (oldest_gap + 1..HISTORY)
            .map(|d| newest.wrapping_sub(d))
            .take_while(|pid| pid.wrapping_sub(self.first) < 1 << 31)
            .find(|pid| self.received(*pid))
            .map(|pid| self.slots[slot(pid)].first_index)
    }

    /// Pids among the `depth` before the newest one that have not arrived (yet).
    pub fn missing_within(&self, depth: u32) -> u32 {
        let Some(newest) = self.newest else {
            return 0;
        };
        (1..=depth.min(HISTORY - 1))
            .filter(|d| !self.received(newest.wrapping_sub(*d)))
            .count() as u32
    }

    /// How many Pids before the newest one were reached less than `delay` before `now`: those
    /// that a reordering delay of `delay` could still bring (at most the history).
    pub fn depth_within(&self, now: Duration, delay: Duration) -> u32 {
        let Some(newest) = self.newest else {
            return 0;
        };
        // `reached` does not decrease with the Pid: count back until the first one too old.
        (1..HISTORY)
            .take_while(|d| {
                let pid = newest.wrapping_sub(*d);
                pid.wrapping_sub(self.first) < 1 << 31
                    && now.saturating_sub(self.slots[slot(pid)].reached) < delay
            })
            .count() as u32
    }

    /// The newest Pid received.
    pub fn newest(&self) -> Option<u32> {
        self.newest
    }

    fn record(&mut self, pid: u32, now: Duration) -> bool {
        let Some(newest) = self.newest else {
            self.newest = Some(pid);
            self.first = pid;
            self.seen = 1;
            self.slots = vec![
                Slot {
                    reached: now,
                    first_index: 0
                };
                HISTORY as usize
            ];
            return true;
        };
        let ahead = pid.wrapping_sub(newest);
        if ahead != 0 && ahead < 1 << 31 {
            self.seen = if ahead >= HISTORY {
                0
            } else {
                self.seen << ahead
            };
            self.seen |= 1;
            self.newest = Some(pid);
            // This Pid and every one it skipped are reached now.
            for back in 0..ahead.min(HISTORY) {
                self.slots[slot(pid.wrapping_sub(back))].reached = now;
            }
            return true;
        }
        let back = newest.wrapping_sub(pid);
        if back >= HISTORY {
            // Too old to tell: count it as new (it can only lower the loss estimate).
            return true;
        }
        let fresh = self.seen & (1 << back) == 0;
        self.seen |= 1 << back;
        fresh
    }

    /// Whether `pid` is known to have arrived; Pids before the first one and older than the
    /// history count as arrived (never reported lost).
    pub fn received(&self, pid: u32) -> bool {
        let Some(newest) = self.newest else {
            return false;
        };
        if pid.wrapping_sub(self.first) >= 1 << 31 {
            return true; // before the flow's first Pid
        }
        let back = newest.wrapping_sub(pid);
        if back >= 1 << 31 {
            return false; // newer than anything seen
        }
        back >= HISTORY || self.seen & (1 << back) != 0
    }

    /// The loss bitmap for an ACK echoing `echo`: bit i set = Pid `echo − 1 − i` not received.
    pub fn loss_bitmap(&self, echo: u32) -> u32 {
        (0..32u32).fold(0, |acc, i| {
            let pid = echo.wrapping_sub(1 + i);
            if self.received(pid) {
                acc
            } else {
                acc | (1 << i)
            }
        })
    }
}

/// The `reached` slot of `pid`.
fn slot(pid: u32) -> usize {
    (pid % HISTORY) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_marks_missing_pids() {
        let mut t = PidTracker::new();
        for p in [10u32, 11, 13, 16] {
            assert!(t.on_receive(p));
        }
        assert!(!t.on_receive(13));
        // echo 16: Pid 15 (bit 0), 14 (bit 1), 12 (bit 3) missing; 13, 11, 10 present;
        // Pids before the first one (10) count as received.
        assert_eq!(t.loss_bitmap(16), 0b1011);
        // A late arrival clears its bit.
        assert!(t.on_receive(14));
        assert_eq!(t.loss_bitmap(16), 0b1001);
    }

    #[test]
    fn wrapping_pids() {
        let mut t = PidTracker::new();
        assert!(t.on_receive(u32::MAX - 1));
        assert!(t.on_receive(1));
        // Missing: MAX (bit 1), 0 (bit 0).
        assert_eq!(t.loss_bitmap(1), 0b11);
        assert!(t.received(u32::MAX - 1));
        assert!(!t.received(2));
    }

    #[test]
    fn big_jump_resets_history() {
        let mut t = PidTracker::new();
        t.on_receive(0);
        t.on_receive(1000);
        assert!(!t.received(999));
        assert!(t.received(1000));
        assert!(t.received(5)); // older than the history: not reported lost
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn a_late_arrival_is_late_by_pids_and_by_time() {
        let mut t = PidTracker::new();
        assert_eq!(t.on_arrival(10, ms(0), 0), Arrival::InOrder);
        // 11 and 12 are skipped (reached) at 5 ms, 14 at 9 ms.
        assert_eq!(t.on_arrival(13, ms(5), 0), Arrival::InOrder);
        assert_eq!(t.on_arrival(15, ms(9), 0), Arrival::InOrder);
        let late = |by, after| {
            Arrival::Late(Late {
                by,
                after: ms(after),
            })
        };
        assert_eq!(t.on_arrival(11, ms(12), 0), late(4, 7));
        assert_eq!(t.on_arrival(14, ms(13), 0), late(1, 4));
        assert_eq!(t.on_arrival(14, ms(14), 0), Arrival::Duplicate);
    }

    #[test]
    fn depth_counts_the_pids_reached_within_the_delay() {
        let mut t = PidTracker::new();
        assert_eq!(t.depth_within(ms(0), ms(10)), 0, "nothing arrived");
        for (pid, at) in [(0u32, 0u64), (1, 2), (2, 4), (5, 6), (6, 8)] {
            t.on_arrival(pid, ms(at), 0);
        }
        // Reached: 0 at 0, 1 at 2, 2 at 4, 3..=5 at 6, 6 at 8.
        assert_eq!(t.depth_within(ms(8), Duration::ZERO), 0);
        assert_eq!(t.depth_within(ms(8), ms(2)), 0, "6 itself is the newest");
        assert_eq!(t.depth_within(ms(8), ms(3)), 3, "5, 4 and 3 at 6 ms");
        assert_eq!(t.depth_within(ms(8), ms(5)), 4, "and 2 at 4 ms");
        assert_eq!(
            t.depth_within(ms(8), ms(100)),
            6,
            "not before the first Pid"
        );
    }

    /// Against a naive oracle that keeps every arrival: the depth is the number of Pids in
    /// `(newest − 64, newest)` for which some Pid at or beyond them arrived less than `delay`
    /// ago and which are not before the first.
    #[test]
    fn depth_matches_a_naive_record() {
        let mut rng = crate::rng::EngineRng::new(7);
        let mut below = |n: u64| rng.next_u64() % n;
        let mut t = PidTracker::new();
        let mut log: Vec<(u32, u64)> = Vec::new();
        let mut next = 1000u32;
        for step in 0..3000u64 {
            let pid = next.wrapping_sub(below(8) as u32);
            next = next.wrapping_add(below(3) as u32);
            let now = step * 3;
            t.on_arrival(pid, ms(now), 0);
            log.push((pid, now));
            let delay = below(40);
            let newest = log.iter().map(|l| l.0).max().expect("one arrival");
            let first = log[0].0;
            let expected = (1..HISTORY)
                .map(|d| newest - d)
                .take_while(|p| *p >= first)
                .take_while(|p| {
                    let reached = log.iter().filter(|l| l.0 >= *p).map(|l| l.1).min();
                    reached.is_some_and(|r| now - r < delay)
                })
                .count() as u32;
            assert_eq!(t.depth_within(ms(now), ms(delay)), expected, "step {step}");
        }
    }

    #[test]
    fn the_late_floor_is_the_first_index_before_the_oldest_gap() {
        let mut t = PidTracker::new();
        // (pid, first index): Pids 3 and 5 missing.
        for (pid, first) in [(0u32, 0u32), (1, 0), (2, 4), (4, 6), (6, 7), (7, 7)] {
            t.on_arrival(pid, Duration::ZERO, first);
        }
        assert_eq!(t.late_floor(0), None, "no depth");
        assert_eq!(t.late_floor(1), None, "Pid 6 arrived");
        assert_eq!(t.late_floor(2), Some(6), "5 missing: 4 came before it");
        assert_eq!(t.late_floor(4), Some(4), "3 missing: 2 came before it");
        assert_eq!(t.late_floor(30), Some(4));
        t.on_arrival(3, Duration::ZERO, 5);
        assert_eq!(t.late_floor(30), Some(6), "only 5 is missing now");
        t.on_arrival(5, Duration::ZERO, 6);
        assert_eq!(t.late_floor(30), None);
    }
}
