//! The sender's side of the Pid bookkeeping (Ha & Tsuru §3.1, "ACK accumulation").
//!
//! The sender numbers every DATA frame of a flow with a Pid (monotonic, wrapping modulo 2^32).
//! The receiver (`pid_tracker.rs`) fills every NC-ACK with the Pid echo and a 32-bit loss
//! bitmap: bit i set = Pid `echo − 1 − i` had not arrived (`docs/wire.md`). Because every ACK
//! repeats the status of the 32 Pids before its echo, the sender ([`LossEstimator`]) learns the
//! fate of each combination even when some ACKs are lost or suppressed; it keeps the counts the
//! adaptive-redundancy policy, the repair and the congestion signal use.

use crate::loss_burst::{BurstCounts, BurstFit};
use tcpnc_wire::AckRepr;

/// Sender-side loss record merged from the NC-ACKs' Pid echo and loss bitmap (Ha & Tsuru §3.1,
/// "ACK accumulation").
///
/// Every ACK updates the latest known status of the 33 Pids it covers; a status only moves
/// from lost to received (a late arrival), never back. A Pid is *judged* (counted received or
/// lost) once the newest echo is `judge_delay` Pids past it: with unordering adaptation the
/// delay is the sink's reported unordering length, so a combination that is merely late is not
/// counted lost; a Pid judged lost that a later bitmap (within its 32-Pid reach) shows received
/// is corrected to a late arrival. Without correction (`unordering = "off"`) every Pid is judged
/// by the first ACK that covers it, as before this record existed.
#[derive(Debug, Clone, PartialEq)]
pub struct LossEstimator {
    /// Latest status of recent Pids, indexed by `pid % STATUS_RING`.
    status: Vec<Slot>,
    /// Newest Pid echo merged.
    newest_echo: Option<u32>,
    /// Every Pid up to this one (modular) has been judged.
    classified_to: Option<u32>,
    /// Combinations judged received (late arrivals included).
    pub received: u64,
    /// Combinations judged lost (corrections subtracted).
    pub lost: u64,
    /// Combinations first reported missing and later received (late arrivals).
    pub late: u64,
    /// Latest N_lp reported by the receiver (Karafillis et al. §II step 2).
    pub lost_dof: u16,
    /// Pids lost and judged in the current estimation window.
    window: (u64, u64),
    /// Loss rates of the last [`WINDOWS_KEPT`] complete windows, newest last.
    rates: std::collections::VecDeque<f64>,
    /// Transitions between consecutive judged Pids, for the burstiness fit.
    bursts: BurstCounts,
    /// The same for the Pids judged while sampling only (the random loss, as the floor's
    /// windows): [`LossEstimator::random_burst_fit`].
    quiet_bursts: BurstCounts,
    /// Whether Pids judged now count in the random-loss windows ([`LossEstimator::set_sampling`]).
    sampling: bool,
}

/// What the record keeps of one recent Pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    pid: u32,
    status: Status,
    /// Counted lost when judged (and not corrected since).
    counted_lost: bool,
    /// Judged while sampling: its fate is in a random-loss window.
    sampled: bool,
}

impl Slot {
    const EMPTY: Slot = Slot {
        pid: 0,
        status: Status::Unknown,
        counted_lost: false,
        sampled: false,
    };
}

/// What the record knows of one Pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Unknown,
    Received,
    Lost,
}

/// Pids whose status is kept (twice the bitmap's reach and the largest judging delay).
const STATUS_RING: usize = 128;

/// Largest judging delay in Pids (the bitmap's reach: a Pid further back is never reported).
pub const MAX_JUDGE_DELAY: u32 = AckRepr::BITMAP_PIDS;

/// Classified Pids per estimation window of [`LossEstimator::random_loss_rate`].
pub const WINDOW_PIDS: u64 = 1024;
/// Complete windows whose minimum is the estimate.
pub const WINDOWS_KEPT: usize = 4;
/// Classified Pids of the first window from which its mean counts as a known floor (sd of the
/// mean ≈ 2 % at 10 % loss): Pids are sampled only between queues, and a queue that never
/// drains would otherwise leave the floor, and the bitmap signal with it, unknown for ever.
pub const MIN_SAMPLED: u64 = 256;
/// Loss bursts that must have ended among the sampled Pids before their fit counts
/// ([`LossEstimator::random_burst_fit`]): one or two bursts say little of their length.
pub const MIN_QUIET_BURSTS: u64 = 8;

/// How far the whole record's loss rate may exceed the random floor for its burst fit to stand
/// in for the random record's ([`LossEstimator::whole_burst_fit`]): twice, the queue's drops
/// then at most half of its losses.
pub const WHOLE_RECORD_EXCESS: f64 = 2.0;

/// The fit of `counts` once [`MIN_QUIET_BURSTS`] loss bursts have ended in them (`None`
/// before): one or two bursts say little of their length.
fn settled_fit(counts: &BurstCounts) -> Option<BurstFit> {
    (counts.bursts_ended() >= MIN_QUIET_BURSTS)
        .then(|| counts.fit())
        .flatten()
}

impl Default for LossEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl LossEstimator {
    /// An empty estimator.
    pub fn new() -> Self {
        LossEstimator {
            status: vec![Slot::EMPTY; STATUS_RING],
            newest_echo: None,
            classified_to: None,
            received: 0,
            lost: 0,
            late: 0,
            lost_dof: 0,
            window: (0, 0),
            rates: std::collections::VecDeque::new(),
            bursts: BurstCounts::default(),
            quiet_bursts: BurstCounts::default(),
            sampling: true,
        }
    }

    /// The loss burstiness of the judged record, once it holds at least one loss burst that
    /// ended (`None` before: no burst length can be told).
    pub fn burst_fit(&self) -> Option<BurstFit> {
        self.bursts.fit()
    }

    /// The burstiness of the random loss alone: the fit of the Pids judged while sampling (no
    /// queue building, as the floor's windows), once [`MIN_QUIET_BURSTS`] loss bursts have
    /// ended among them (`None` before). A drop-tail queue's overflow is not the path's
    /// burstiness.
    pub fn random_burst_fit(&self) -> Option<BurstFit> {
        settled_fit(&self.quiet_bursts)
    }

    /// The burstiness of the whole judged record, queue drops included, while it may stand in
    /// for the random record's (`burst_redundancy`'s loss-event share, `nc_ack.rs`): once
    /// [`MIN_QUIET_BURSTS`] loss bursts ended in it and its loss rate is at most
    /// [`WHOLE_RECORD_EXCESS`] times the random floor as far as known (what R reads, known or
    /// not: [`LossEstimator::random_loss_rate`]); `None` otherwise. The random loss is then most
    /// of the record, whose burstiness is the path's.
    pub fn whole_burst_fit(&self) -> Option<BurstFit> {
        (self.loss_rate() <= WHOLE_RECORD_EXCESS * self.random_loss_rate())
            .then(|| settled_fit(&self.bursts))
            .flatten()
    }

    fn status_of(&self, pid: u32) -> Status {
        match self.status[pid as usize % STATUS_RING] {
            slot if slot.pid == pid => slot.status,
            _ => Status::Unknown,
        }
    }

    /// Merges one NC-ACK. `correct`: keep each Pid's status up to date and judge it
    /// `judge_delay` Pids after the newest echo (unordering adaptation); otherwise judge every
    /// Pid by the first ACK that covers it.
    pub fn on_ack(&mut self, ack: &AckRepr, correct: bool, judge_delay: u32) {
        self.lost_dof = ack.lost_dof;
        let echo = ack.pid_echo;
        let newer = self
            .newest_echo
            .is_none_or(|n| echo.wrapping_sub(n).wrapping_sub(1) < 1 << 31);
        if !correct {
            if newer {
                self.newest_echo = Some(echo);
                self.judge_from_ack(ack);
            }
            return;
        }
        self.merge_statuses(ack);
        if newer {
            self.newest_echo = Some(echo);
        }
        let Some(newest) = self.newest_echo else {
            return;
        };
        let delay = judge_delay.min(MAX_JUDGE_DELAY);
        // Pids before 0 do not exist: nothing is judged until the echo passes the delay.
        if newest < delay && self.classified_to.is_none() {
            return;
        }
        self.judge_to(newest.wrapping_sub(delay), |e, pid| {
            match e.status_of(pid) {
                Status::Unknown => None,
                s => Some(s == Status::Lost),
            }
        });
    }

    /// Records the 33 statuses `ack` reports; a judged loss shown received is corrected.
    fn merge_statuses(&mut self, ack: &AckRepr) {
        let echo = ack.pid_echo;
        for back in 0..=32u32 {
            let pid = echo.wrapping_sub(back);
            if back > echo {
                break; // before Pid 0
            }
            let Some(lost) = ack.pid_lost(pid) else {
                continue;
            };
            let slot = &mut self.status[pid as usize % STATUS_RING];
            if slot.pid != pid {
                *slot = Slot { pid, ..Slot::EMPTY };
            }
            if slot.status != Status::Received {
                slot.status = if lost { Status::Lost } else { Status::Received };
            }
            let corrected = slot.counted_lost && slot.status == Status::Received;
            if corrected {
                slot.counted_lost = false;
                self.lost -= 1;
                self.received += 1;
                self.late += 1;
                if slot.sampled {
                    self.window.0 = self.window.0.saturating_sub(1);
                }
            }
        }
    }

    /// Judges Pids by `ack` alone: those after the last judged one, up to the echo.
    fn judge_from_ack(&mut self, ack: &AckRepr) {
        if self.classified_to.is_none() {
            // Pids start at 0: before it there is nothing to count as received.
            self.classified_to = Some(ack.pid_echo.saturating_sub(32).wrapping_sub(1));
        }
        self.judge_to(ack.pid_echo, |_, pid| ack.pid_lost(pid));
    }

    /// Judges every Pid after the last judged one up to `to` with `fate` (`None`: unknown,
    /// skipped). A jump beyond the record's reach skips what it cannot know.
    fn judge_to(&mut self, to: u32, fate: impl Fn(&Self, u32) -> Option<bool>) {
        let from = match self.classified_to {
            None => to.saturating_sub(32),
            Some(c) => {
                let ahead = to.wrapping_sub(c);
                if ahead == 0 || ahead >= 1 << 31 {
                    return;
                }
                if ahead as usize > STATUS_RING {
                    self.bursts.break_run(); // the Pids between are not consecutive
                    self.quiet_bursts.break_run();
                    to.wrapping_sub(32)
                } else {
                    c.wrapping_add(1)
                }
            }
        };
        let mut pid = from;
        loop {
            if let Some(lost) = fate(self, pid) {
                self.count(lost);
                let sampled = self.sampling;
                let slot = &mut self.status[pid as usize % STATUS_RING];
                if slot.pid == pid {
                    slot.counted_lost = lost;
                    slot.sampled = sampled;
                }
            }
            if pid == to {
                break;
            }
            pid = pid.wrapping_add(1);
        }
        self.classified_to = Some(to);
    }

    fn count(&mut self, lost: bool) {
        self.bursts.record(lost);
        if self.sampling {
            self.quiet_bursts.record(lost);
        } else {
            self.quiet_bursts.break_run();
        }
        if lost {
            self.lost += 1;
        } else {
            self.received += 1;
        }
        if !self.sampling {
            return;
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

    /// The judged Pids as a loss bitmap: `(echo, bitmap)` with bit i set when Pid
    /// `echo − 1 − i` is (as now known) lost, `echo` one past the last judged Pid. Congestion is
    /// judged on this corrected record (`episode.rs`).
    pub fn judged_bitmap(&self) -> Option<(u32, u32)> {
        let to = self.classified_to?;
        let bitmap = (0..32u32).fold(0, |acc, i| {
            if self.status_of(to.wrapping_sub(i)) == Status::Lost {
                acc | (1 << i)
            } else {
                acc
            }
        });
        Some((to.wrapping_add(1), bitmap))
    }

    /// Starts from a known floor (the path's, `path_memory.rs`): it counts as one complete
    /// window until [`WINDOWS_KEPT`] windows of this flow replace it.
    pub fn set_prior(&mut self, floor: f64) {
        if floor.is_finite() && (0.0..1.0).contains(&floor) {
            self.rates.clear();
            self.rates.push_back(floor);
        }
    }

    /// Forgets the random loss windows so far (the prior, the complete windows and the current
    /// one): they took a queue's drops for random loss (`queue_delay.rs`: a shallow queue, seen
    /// to overflow only now). The floor is then unknown until [`MIN_SAMPLED`] Pids are sampled.
    pub fn forget_floor(&mut self) {
        self.rates.clear();
        self.window = (0, 0);
    }

    /// Whether the Pids judged from now on count in the windows of
    /// [`LossEstimator::random_loss_rate`] (they always count in the totals and the burst fit).
    /// The sender turns it off while a queue is building on the path (`repair.rs`,
    /// `queue_building`): the losses then include the queue's drops, which the random loss
    /// floor must not follow, and the losses of the quiet periods between are the path's.
    pub fn set_sampling(&mut self, on: bool) {
        self.sampling = on;
    }

    /// Whether [`LossEstimator::random_loss_rate`] rests on at least one complete window or
    /// [`MIN_SAMPLED`] Pids of the first.
    pub fn floor_known(&self) -> bool {
        !self.rates.is_empty() || self.window.1 >= MIN_SAMPLED
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

    /// [`LossEstimator::random_loss_rate`] once [`LossEstimator::floor_known`], 0 before: a
    /// flow a few combinations old can read a half (`flight_share.rs`).
    pub fn known_random_loss_rate(&self) -> f64 {
        match self.floor_known() {
            true => self.random_loss_rate(),
            false => 0.0,
        }
    }

    /// No random loss on record: neither in the kept windows (or the prior) nor in the
    /// current one (`systematic_when_clean`).
    pub fn clean(&self) -> bool {
        self.random_loss_rate() == 0.0 && self.window.0 == 0
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
    use crate::pid_tracker::PidTracker;
    use crate::test_util::nc_ack;

    fn ack(echo: u32, bitmap: u32) -> AckRepr {
        nc_ack(0, echo, bitmap, 0)
    }

    #[test]
    fn first_ack_counts_no_pid_before_zero() {
        let mut e = LossEstimator::new();
        // Echo 5, Pid 4 lost: Pids 0..=5 classified, not 32 imaginary ones before 0.
        e.on_ack(&ack(5, 1), false, 0);
        assert_eq!((e.received, e.lost), (5, 1));
    }

    #[test]
    fn estimator_counts_each_pid_once() {
        let mut e = LossEstimator::new();
        // First ACK: echo 40, Pid 39 lost (bit 0).
        e.on_ack(&ack(40, 1), false, 0);
        assert_eq!((e.received, e.lost), (32, 1));
        // Stale ACK is ignored.
        e.on_ack(&ack(39, 0), false, 0);
        assert_eq!((e.received, e.lost), (32, 1));
        // Next ACK echo 43: 41 lost (bit 1), 42 received (bit 0 clear).
        e.on_ack(&ack(43, 0b10), false, 0);
        assert_eq!((e.received, e.lost), (34, 2));
        assert!((e.loss_rate() - 2.0 / 36.0).abs() < 1e-9);
        // No complete window yet: the estimate is the plain mean.
        assert!((e.random_loss_rate() - 2.0 / 36.0).abs() < 1e-9);
        assert_eq!(LossEstimator::new().random_loss_rate(), 0.0);
    }

    #[test]
    fn a_late_arrival_is_corrected_and_not_counted_lost() {
        let mut e = LossEstimator::new();
        // Echo 40 says 39 and 38 missing; judged at once (no judging delay).
        e.on_ack(&ack(40, 0b11), true, 0);
        assert_eq!((e.received, e.lost, e.late), (31, 2, 0));
        // 39 arrives late: the sink echoes it, 38 still missing, 40 received (not in the
        // bitmap of echo 39, whose bits are 38 and below).
        e.on_ack(&ack(39, 0b1), true, 0);
        assert_eq!((e.received, e.lost, e.late), (32, 1, 1));
        // The same ACKs without correction count 39 lost for good.
        let mut plain = LossEstimator::new();
        plain.on_ack(&ack(40, 0b11), false, 0);
        plain.on_ack(&ack(39, 0b1), false, 0);
        assert_eq!((plain.received, plain.lost, plain.late), (31, 2, 0));
    }

    #[test]
    fn judging_waits_for_the_unordering_length() {
        let mut e = LossEstimator::new();
        e.on_ack(&ack(100, 0b1), true, 4);
        // Judged up to Pid 96 (from 68, the bitmap's reach): Pid 99 (missing) is not judged.
        assert_eq!((e.received, e.lost), (29, 0));
        assert_eq!(e.judged_bitmap(), Some((97, 0)));
        // Pid 99 arrives (echo 99), then echo 104 with nothing missing: 97..=100 judged
        // received, 99 never counted lost.
        e.on_ack(&ack(99, 0), true, 4);
        e.on_ack(&ack(104, 0), true, 4);
        assert_eq!((e.received, e.lost, e.late), (33, 0, 0));
        // A real loss is judged once it is older than the delay, and shows in the bitmap.
        e.on_ack(&ack(112, 0b1_0000), true, 4); // Pid 107 lost
        assert_eq!(e.lost, 1);
        let (echo, bitmap) = e.judged_bitmap().unwrap();
        assert_eq!(echo, 109);
        assert_eq!(bitmap, 1 << (108 - 107));
    }

    #[test]
    fn random_rate_is_the_floor_of_recent_windows() {
        let mut e = LossEstimator::new();
        let mut echo = 100u32;
        let mut feed = |e: &mut LossEstimator, acks: u32, bitmap: u32| {
            for _ in 0..acks {
                e.on_ack(&ack(echo, bitmap), false, 0);
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

    /// The sink's ACKs for a Gilbert-Elliott path (5 % mean loss in bursts of 4, the lab's
    /// burst setting): the fit from the judged record recovers p and r; independent loss at the
    /// same rate fits a mean burst near 1.
    #[test]
    fn burst_fit_recovers_the_gilbert_parameters() {
        let fit = |p: f64, r: f64| {
            let mut state = 0x2545_f491_4f6c_dd1du64;
            let mut uniform = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64
            };
            let (mut bad, mut history, mut e) = (false, 0u64, LossEstimator::new());
            for pid in 0..200_000u32 {
                bad = if bad { uniform() >= r } else { uniform() < p };
                history = history << 1 | u64::from(bad);
                if !bad {
                    e.on_ack(&ack(pid, (history >> 1) as u32), true, 0);
                }
            }
            e.burst_fit().expect("bursts ended")
        };
        let ge = fit(0.05 * 0.25 / 0.95, 0.25);
        assert!((ge.mean_burst() - 4.0).abs() < 0.3, "{ge:?}");
        assert!((ge.p / (ge.p + ge.r) - 0.05).abs() < 0.005, "{ge:?}");
        let iid = fit(0.05, 0.95);
        assert!(iid.mean_burst() < 1.2, "{iid:?}");
        assert_eq!(LossEstimator::new().burst_fit(), None);
    }

    /// The random burst fit sees only the Pids judged while sampling, and only once
    /// [`MIN_QUIET_BURSTS`] bursts ended there: bursts of 10 while a queue builds, then bursts
    /// of 3, fit a mean of 3.
    #[test]
    fn the_random_burst_fit_leaves_queue_periods_out() {
        let mut e = LossEstimator::new();
        let (mut history, mut pid) = (0u64, 0u32);
        let mut feed = |e: &mut LossEstimator, bursts: u32, len: u32| {
            for _ in 0..bursts {
                for i in 0..40 {
                    let lost = i >= 20 && i < 20 + len;
                    history = history << 1 | u64::from(lost);
                    if !lost {
                        e.on_ack(&ack(pid, (history >> 1) as u32), false, 0);
                    }
                    pid += 1;
                }
            }
        };
        e.set_sampling(false);
        feed(&mut e, 20, 10);
        e.set_sampling(true);
        feed(&mut e, 7, 3);
        assert_eq!(e.random_burst_fit(), None, "7 quiet bursts");
        feed(&mut e, 1, 3);
        let quiet = e.random_burst_fit().expect("8 quiet bursts");
        assert!((quiet.mean_burst() - 3.0).abs() < 1e-9, "{quiet:?}");
        assert!(e.burst_fit().unwrap().mean_burst() > 7.0);
    }

    #[test]
    fn pids_judged_while_not_sampling_stay_out_of_the_floor() {
        // 300 Pids with one in 10 lost while a queue builds, then 300 without loss: every loss
        // is in the totals, none in the floor, which is known from MIN_SAMPLED quiet Pids.
        // (A Pid is judged by the first ACK past it: Pid 299 would be judged while sampling.)
        let lost = |p: u32| p < 290 && p % 10 == 9;
        let mut sink = PidTracker::new();
        let mut e = LossEstimator::new();
        for echo in (0..600).filter(|p| !lost(*p)) {
            e.set_sampling(echo >= 300);
            sink.on_receive(echo);
            e.on_ack(&ack(echo, sink.loss_bitmap(echo)), true, 0);
            if echo == 299 {
                assert!(!e.floor_known());
            }
        }
        assert_eq!(e.lost, 29);
        assert!(e.floor_known());
        assert_eq!(e.random_loss_rate(), 0.0);
        assert!((e.loss_rate() - 0.05).abs() < 0.01, "{}", e.loss_rate());
    }
}
