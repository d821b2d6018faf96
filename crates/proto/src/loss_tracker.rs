//! Pid bookkeeping on both sides (Ha & Tsuru §3.1, "ACK accumulation").
//!
//! The sender numbers every DATA frame of a flow with a Pid (monotonic, wrapping modulo 2^32).
//! The receiver half ([`PidTracker`]) remembers which of the recent Pids arrived and fills every
//! NC-ACK with the Pid echo and a 32-bit loss bitmap: bit i set = Pid `echo − 1 − i` had not
//! arrived (`docs/wire.md`). Because every ACK repeats the status of the 32 Pids before its echo,
//! the sender ([`LossEstimator`]) learns the fate of each combination even when some ACKs are lost
//! or suppressed; it keeps the counts that the adaptive-redundancy policy will use.

use tcpnc_wire::AckRepr;

/// Pids remembered by the receiver beyond the newest one.
const HISTORY: u32 = 64;

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

/// Sender-side loss counts merged from the NC-ACKs' Pid echo and loss bitmap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LossEstimator {
    /// Every Pid up to this one (modular) has been classified.
    classified_to: Option<u32>,
    /// Combinations reported received.
    pub received: u64,
    /// Combinations reported lost.
    pub lost: u64,
    /// Latest N_lp reported by the receiver (Karafillis et al. §II step 2).
    pub lost_dof: u16,
}

impl LossEstimator {
    /// An empty estimator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Merges one NC-ACK: the Pids after the last classified one, up to the echo, are counted
    /// received or lost (those beyond the bitmap's reach are skipped).
    pub fn on_ack(&mut self, ack: &AckRepr) {
        self.lost_dof = ack.lost_dof;
        let echo = ack.pid_echo;
        let from = match self.classified_to {
            None => echo.wrapping_sub(32),
            Some(c) => {
                let ahead = echo.wrapping_sub(c);
                if ahead == 0 || ahead >= 1 << 31 {
                    return; // older or same echo: already classified
                }
                c.wrapping_add(1)
            }
        };
        let mut pid = from;
        loop {
            match ack.pid_lost(pid) {
                Some(true) => self.lost += 1,
                Some(false) => self.received += 1,
                None => {}
            }
            if pid == echo {
                break;
            }
            pid = pid.wrapping_add(1);
        }
        self.classified_to = Some(echo);
    }

    /// Fraction of classified combinations that were lost (0 when nothing is known).
    pub fn loss_rate(&self) -> f64 {
        let total = self.received + self.lost;
        if total == 0 {
            0.0
        } else {
            self.lost as f64 / total as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use tcpnc_wire::FlowId;

    fn ack(echo: u32, bitmap: u32) -> AckRepr {
        AckRepr {
            flow: FlowId::v4(Ipv4Addr::LOCALHOST, 1, Ipv4Addr::LOCALHOST, 2),
            ack: 0,
            window: 0,
            pid_echo: echo,
            loss_bitmap: bitmap,
            lost_dof: 0,
            unordering: 0,
            redundant: false,
            dependent: None,
            pause: false,
            update: false,
        }
    }

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

    #[test]
    fn estimator_counts_each_pid_once() {
        let mut e = LossEstimator::new();
        // First ACK: echo 40, Pid 39 lost (bit 0).
        e.on_ack(&ack(40, 1));
        assert_eq!((e.received, e.lost), (32, 1));
        // Stale ACK is ignored.
        e.on_ack(&ack(39, 0));
        assert_eq!((e.received, e.lost), (32, 1));
        // Next ACK echo 43: 41 lost (bit 1), 42 received (bit 0 clear).
        e.on_ack(&ack(43, 0b10));
        assert_eq!((e.received, e.lost), (34, 2));
        assert!((e.loss_rate() - 2.0 / 36.0).abs() < 1e-9);
    }
}
