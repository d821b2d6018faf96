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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LossEstimator {
    /// Every Pid up to this one (modular) has been classified.
    classified_to: Option<u32>,
    /// Combinations reported received.
    pub received: u64,
    /// Combinations reported lost.
    pub lost: u64,
    /// Latest N_lp reported by the receiver (Karafillis et al. §II step 2).
    pub lost_dof: u16,
    /// Pids lost and classified in the current estimation window.
    window: (u64, u64),
    /// Loss rates of the last [`WINDOWS_KEPT`] complete windows, newest last.
    rates: std::collections::VecDeque<f64>,
}

/// Classified Pids per estimation window of [`LossEstimator::random_loss_rate`].
pub const WINDOW_PIDS: u64 = 1024;
/// Complete windows whose minimum is the estimate.
pub const WINDOWS_KEPT: usize = 4;

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
            // Pids start at 0: before it there is nothing to count as received.
            None => echo.saturating_sub(32),
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
            if let Some(lost) = ack.pid_lost(pid) {
                if lost {
                    self.lost += 1;
                } else {
                    self.received += 1;
                }
                self.window.0 += u64::from(lost);
                self.window.1 += 1;
                if self.window.1 == WINDOW_PIDS {
                    if self.rates.len() == WINDOWS_KEPT {
                        self.rates.pop_front();
                    }
                    self.rates
                        .push_back(self.window.0 as f64 / WINDOW_PIDS as f64);
                    self.window = (0, 0);
                }
            }
            if pid == echo {
                break;
            }
            pid = pid.wrapping_add(1);
        }
        self.classified_to = Some(echo);
    }

    /// Whether [`LossEstimator::random_loss_rate`] rests on at least one complete window.
    pub fn floor_known(&self) -> bool {
        !self.rates.is_empty()
    }

    /// Estimate of the path's *random* loss rate: the smallest loss rate among the last
    /// [`WINDOWS_KEPT`] windows of [`WINDOW_PIDS`] classified Pids (before the first window is
    /// complete, the mean so far; 0 when nothing is known). Queue drops come in episodes that
    /// inflate some windows and not others, so the minimum follows the loss floor rather than
    /// the congestion (an estimate that counted a slow-start overshoot's drops raised R and with
    /// it the load on a full queue: 17.7 against 18.6 Mbit/s without loss, docs/lab.md). A loss
    /// rate that rises shows after WINDOWS_KEPT windows; until then the deficit repair covers
    /// the difference.
    pub fn random_loss_rate(&self) -> f64 {
        match self.rates.iter().copied().reduce(f64::min) {
            Some(r) => r,
            None if self.window.1 > 0 => self.window.0 as f64 / self.window.1 as f64,
            None => 0.0,
        }
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
    use crate::test_util::nc_ack;

    fn ack(echo: u32, bitmap: u32) -> AckRepr {
        nc_ack(0, echo, bitmap, 0)
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
    fn first_ack_counts_no_pid_before_zero() {
        let mut e = LossEstimator::new();
        // Echo 5, Pid 4 lost: Pids 0..=5 classified, not 32 imaginary ones before 0.
        e.on_ack(&ack(5, 1));
        assert_eq!((e.received, e.lost), (5, 1));
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
        // No complete window yet: the estimate is the plain mean.
        assert!((e.random_loss_rate() - 2.0 / 36.0).abs() < 1e-9);
        assert_eq!(LossEstimator::new().random_loss_rate(), 0.0);
    }

    #[test]
    fn random_rate_is_the_floor_of_recent_windows() {
        let mut e = LossEstimator::new();
        let mut echo = 100u32;
        let mut feed = |e: &mut LossEstimator, acks: u32, bitmap: u32| {
            for _ in 0..acks {
                e.on_ack(&ack(echo, bitmap));
                echo += 32;
            }
        };
        // 0x5555_5555: 16 of each 32 Pids lost. Before a window completes: the mean so far.
        feed(&mut e, 16, 0x5555_5555);
        assert!(
            (e.random_loss_rate() - 0.5).abs() < 0.02,
            "{}",
            e.random_loss_rate()
        );
        // A window at 50 %, then windows of one loss in 32: the minimum wins at once.
        feed(&mut e, 16 + 32, 1);
        assert!(
            (e.random_loss_rate() - 1.0 / 32.0).abs() < 2e-3,
            "{}",
            e.random_loss_rate()
        );
        // A burst window does not raise it while a quieter window is kept.
        feed(&mut e, 32, 0xFFFF_0000);
        assert!((e.random_loss_rate() - 1.0 / 32.0).abs() < 2e-3);
        // A lasting increase shows once every kept window has it.
        feed(&mut e, 32 * WINDOWS_KEPT as u32, 0x0000_FFFF);
        assert!(
            (e.random_loss_rate() - 0.5).abs() < 2e-3,
            "{}",
            e.random_loss_rate()
        );
        assert!(e.loss_rate() > 0.2);
    }
}
