//! The receiver's record of arrived Pids (Ha & Tsuru §3.1, "ACK accumulation"): it fills every
//! NC-ACK with the Pid echo and a 32-bit loss bitmap (bit i set = Pid `echo − 1 − i` had not
//! arrived, `docs/wire.md`) and says how each combination arrived (§3.2). The sender's side of
//! the same bookkeeping is `loss_tracker.rs`.

/// Pids remembered by the receiver beyond the newest one.
const HISTORY: u32 = 64;

/// How a combination arrived ([`PidTracker::on_arrival`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Its Pid had already arrived.
    Duplicate,
    /// After every Pid received so far (gaps before it may be losses or late arrivals).
    InOrder,
    /// After a newer Pid: overtaken by this many Pids.
    Late(u32),
}

/// Receiver-side record of the Pids that arrived.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PidTracker {
    /// Newest Pid seen (modular order) and the first Pid ever seen.
    newest: Option<u32>,
    first: u32,
    /// Bit d set = Pid `newest − d` arrived, for d < 64.
    seen: u64,
}

impl PidTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the arrival of `pid`; returns `false` if it had already arrived (a duplicate).
    pub fn on_receive(&mut self, pid: u32) -> bool {
        self.on_arrival(pid) != Arrival::Duplicate
    }

    /// Records the arrival of `pid` and says how it arrived (Ha & Tsuru §3.2: a Pid below the
    /// newest one received came out of order).
    pub fn on_arrival(&mut self, pid: u32) -> Arrival {
        let newest = self.newest;
        if !self.record(pid) {
            return Arrival::Duplicate;
        }
        match newest {
            Some(n) if n.wrapping_sub(pid).wrapping_sub(1) < 1 << 31 => {
                Arrival::Late(n.wrapping_sub(pid))
            }
            _ => Arrival::InOrder,
        }
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

    /// The newest Pid received.
    pub fn newest(&self) -> Option<u32> {
        self.newest
    }

    fn record(&mut self, pid: u32) -> bool {
        let Some(newest) = self.newest else {
            self.newest = Some(pid);
            self.first = pid;
            self.seen = 1;
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
}
