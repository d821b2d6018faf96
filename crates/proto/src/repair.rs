//! Deficit repair: combinations the sender adds, beyond the redundancy accumulator, when the
//! receiver's reported missing degrees of freedom (N_lp) will not be covered by what is already
//! in flight.
//!
//! The paper's redundancy R repairs loss *on average* (Sundararajan et al. §II-B, §V-A); its
//! fluctuations are left to TCP. With a coding window of W packets, once more than W degrees of
//! freedom are missing the oldest unseen packet leaves the window of every new combination, the
//! NC-ACK stops advancing and TCP sees duplicate ACKs: a random-loss excursion costs a
//! congestion-window cut, and a burst of queue drops (a slow-start overshoot) leaves a run of
//! holes that TCP without SACK repairs one per round trip, usually ending in a retransmission
//! timeout. Karafillis et al. (§II) send N_lp extra combinations at the end of a transfer (EOT)
//! and every B packets (PB); this policy applies the same signal continuously, as a loss-driven
//! repair, and accounts for what is in flight so that each missing DoF is repaired once:
//!
//! On an NC-ACK echoing Pid `e` with N_lp = `d` (docs/wire.md), with `n_c` combinations sent
//! after `e`, `n_s` new packets first included in them, `n_r` of them repairs, and `q` the
//! delivery rate estimated from the loss bitmaps (1 − p̂, at least [`MIN_DELIVERY`]):
//!
//! * expected deficit once the flight lands: `D = d + n_s − q_f·n_c`, where the flight is
//!   expected to lose `1 − q_f = s·(1 − q)` with `s` the share of the loss that starts a burst
//!   (1, unless `burst_redundancy` fits the loss record with bursts: a burst's later losses
//!   are not foreseen but reported and repaired then, `loss_burst::BurstFit::event_share`);
//!   beside busy flows (`redundancy_when_alone`) the flight's losses are not foreseen at all,
//!   only the extras in flight count against the deficit reported: `D = d − q_f·(n_c − n_s)`
//!   ([`DeficitRepair::set_foresight`]);
//! * if the ACK did not advance (the oldest hole is out of the coding window, so only repairs,
//!   which cover the whole buffer, can fill it): `D = max(D, d − q·n_r)`;
//! * send `round(D / q)` repairs when `D ≥ 1` (at most [`MAX_REPAIRS_PER_ACK`]).
//!
//! Each repair combines every packet in the coding buffer (from the oldest un-ACKed one, which is
//! the receiver's first unseen packet as of the ACK) with seeded coefficients, cut at its newest
//! end only where the datagram would not fit the tunnel MTU (the PATCHED range form of
//! docs/wire.md section 3 fits a buffer with a few shorter packets whole). The repairs sent are
//! counted in `n_c` and `n_r` of later ACKs, so a deficit is not repaired twice; repairs that
//! are lost show up in a later N_lp and are repaired again one round trip later.
//!
//! Repairs are driven by NC-ACKs, so a stall in which every repair (or every NC-ACK) is lost
//! while TCP waits would only end with TCP's retransmission timeout, and so would a tail loss
//! (the newest combinations lost with nothing after them: the receiver cannot report packets
//! it never heard of). While the coding buffer holds unacknowledged packets, the sender
//! therefore keeps a probe armed (by the first combination sent, renewed by every NC-ACK):
//! after two round trips without an NC-ACK it sends max(N_lp, 1) / q repairs (doubling the
//! wait, at most [`MAX_PROBES`] times).
//!
//! **Congestion signal.** A repair that keeps the NC ack moving also keeps TCP from seeing
//! a queue that overflows (one lab run: TCP's window reached 330 segments on a 137-segment path
//! while repairs replaced 9,000 queue drops). So every NC-ACK's loss bitmap is compared with
//! the random loss floor p̂ ([`congestion_threshold`]); above it the sender gives the local TCP
//! three duplicate ACKs — one window reduction — at most once per two round trips.
//!
//! Repairs do not hide congestion from TCP otherwise either: a burst of queue drops still stalls the NC-ACK for
//! about one round trip (TCP sees duplicate ACKs and reduces its window) but the holes are
//! refilled in that round trip instead of one per round trip.

use std::time::Duration;

use crate::queue_delay::QueueDelay;
use tcpnc_wire::AckRepr;

/// While NC-ACKs keep arriving within this time, a TCP retransmission of bytes already in the
/// coding buffer is not coded again: the ACKs report every missing DoF and the repair answers
/// them, so such a retransmission (NewReno sends one per partial ACK during recovery) would only
/// load the path. After this long without an NC-ACK, retransmissions are coded as arrivals
/// (§III-C), which breaks a stall where every NC-ACK was lost (Mitsuzumi et al.'s
/// "non-communication state"). Shorter than TCP's smallest retransmission timeout (200 ms).
pub const ACK_SILENCE: Duration = Duration::from_millis(100);

/// Sent Pids remembered for the in-flight accounting (Pids further back are not accounted).
const LOG_LEN: usize = 4096;

/// Repair probes sent after one NC-ACK before the sender leaves the stall to TCP's timers.
pub const MAX_PROBES: u32 = 4;

/// Largest burst of repairs answering one NC-ACK.
pub const MAX_REPAIRS_PER_ACK: u32 = 16;

/// Losses among the 32 combinations of an NC-ACK's loss bitmap from which the sender calls it
/// congestion, for a random loss floor `p`: the binomial mean 32·p plus four standard
/// deviations plus 3 (3 of 32 without random loss). Random loss alone crosses it about once
/// in 10^4 bitmaps; a queue that overflows while repairs keep the NC ack moving crosses it at
/// once. (+ 6 instead of + 3 measured no better, docs/lab.md.)
pub fn congestion_threshold(p: f64) -> f64 {
    let p = p.clamp(0.0, 1.0);
    32.0 * p + 4.0 * (32.0 * p * (1.0 - p)).sqrt() + 3.0
}

/// Lower bound of the delivery-rate estimate used to size repairs (p̂ ≤ 0.8).
pub const MIN_DELIVERY: f64 = 0.2;

/// Running counts of what a sender sent (`tail_repair.rs` takes differences of two).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct SentCounts {
    /// Combinations sent.
    pub combinations: u64,
    /// New packets first included in them.
    pub sources: u64,
}

/// Counters kept right after a Pid was sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sent {
    pid: u32,
    sources: u64,
    repairs: u64,
    /// Repairs left out of the in-flight accounting ([`DeficitRepair::uncount`]).
    uncounted: u64,
    /// Combinations sent up to and including this one.
    combinations: u64,
    at: Duration,
}

/// In-flight bookkeeping of one sender and the repair decision.
#[derive(Debug, Clone)]
pub struct DeficitRepair {
    log: Vec<Sent>,
    /// New packets first included in a sent combination.
    sources: u64,
    /// Repair combinations sent.
    repairs: u64,
    /// Of them, left out of the in-flight accounting ([`DeficitRepair::uncount`]).
    uncounted: u64,
    /// Combinations sent (the next Pid minus the first one).
    sent: u64,
    /// The NC ack number of the previous NC-ACK.
    last_ack: Option<u32>,
    /// The round-trip samples of the NC-ACKs' echoes and what they say of the queue.
    delay: QueueDelay,
    /// The counters right after the Pid the latest accounted NC-ACK echoed.
    echoed: Option<Sent>,
    /// The counts right after the newest combination that first included a new packet.
    at_last_source: SentCounts,
    /// Every combination reaches back to the first unseen packet (a dense code): then any
    /// combination in flight covers a reported deficit. Not with a systematic code, whose
    /// uncoded packets cover only themselves and whose coded ones reach W back.
    covering: bool,
    /// The share of the loss rate the flight is expected to lose before the NC-ACKs report
    /// it (`burst_redundancy`: `loss_burst::BurstFit::event_share`; 1 = all of it).
    event_share: f64,
    /// Whether the flight's own losses are foreseen ([`DeficitRepair::set_foresight`]).
    foresee: bool,
}

impl Default for DeficitRepair {
    fn default() -> Self {
        Self::new()
    }
}

impl DeficitRepair {
    /// Empty bookkeeping.
    pub fn new() -> Self {
        DeficitRepair {
            log: vec![Sent::default(); LOG_LEN],
            sources: 0,
            repairs: 0,
            uncounted: 0,
            sent: 0,
            last_ack: None,
            delay: QueueDelay::default(),
            echoed: None,
            at_last_source: SentCounts::default(),
            covering: true,
            event_share: 1.0,
            foresee: true,
        }
    }

    /// Whether the combinations sent reach back to the first unseen packet (dense, the
    /// default) or are uncoded packets and W-wide combinations (systematic): then only the
    /// repairs in flight count against a reported deficit.
    pub fn set_covering(&mut self, covering: bool) {
        self.covering = covering;
    }

    /// The share of the loss rate the combinations in flight are expected to lose (the rest
    /// comes in bursts that the NC-ACKs report and the repair answers then); 1 by default.
    pub fn set_event_share(&mut self, share: f64) {
        self.event_share = share.clamp(0.0, 1.0);
    }

    /// Whether the repair foresees the losses of the combinations in flight (the default) or
    /// answers only the deficit the NC-ACKs report, less the extras in flight expected to
    /// arrive: `D = d − q_f·(n_c − n_s)`. Foreseeing them is advance cover, like R's; beside busy
    /// flows (`redundancy_when_alone`) the sender leaves it to the reports (docs/engine.md,
    /// "Advance redundancy for a lone flow").
    pub fn set_foresight(&mut self, foresee: bool) {
        self.foresee = foresee;
    }

    /// Records the combination sent with `pid`: it is the first to include a new packet
    /// (`new_source`) and/or a repair.
    pub fn on_sent(&mut self, now: Duration, pid: u32, new_source: bool, repair: bool) {
        self.sources += u64::from(new_source);
        self.repairs += u64::from(repair);
        self.sent += 1;
        self.log[pid as usize % LOG_LEN] = Sent {
            pid,
            sources: self.sources,
            repairs: self.repairs,
            uncounted: self.uncounted,
            combinations: self.sent,
            at: now,
        };
        if new_source {
            self.at_last_source = self.sent_counts();
        }
    }

    /// Combination `pid` left at `at`, before the departure recorded for it (the pacer's
    /// forecast, `pacer.rs`): its round trip counts from `at`.
    pub fn departed(&mut self, pid: u32, at: Duration) {
        let sent = &mut self.log[pid as usize % LOG_LEN];
        if sent.pid == pid {
            sent.at = sent.at.min(at);
        }
    }

    /// Leaves the repair just recorded for `pid` out of the in-flight accounting: the NC-ACKs
    /// that follow repair a reported deficit as if it had not been sent (the tail repair's
    /// burst-sized extras, `tail_burst`: insurance against a burst that takes the flight's
    /// end, which the mean delivery rate says nothing about).
    pub fn uncount(&mut self, pid: u32) {
        let slot = &mut self.log[pid as usize % LOG_LEN];
        if slot.pid == pid && slot.combinations == self.sent {
            self.uncounted += 1;
            slot.uncounted = self.uncounted;
        }
    }

    /// [`DeficitRepair::sent_counts`] right after the newest combination that first included
    /// a new packet: the sink acknowledges it whenever it arrives (a redundant combination only
    /// when innovative).
    pub fn source_counts(&self) -> SentCounts {
        self.at_last_source
    }

    /// Repairs to send for `ack`, given the next Pid to be assigned and the estimated loss
    /// rate of combinations.
    pub fn on_ack(&mut self, now: Duration, ack: &AckRepr, next_pid: u32, loss_rate: f64) -> u32 {
        let stalled = self.last_ack == Some(ack.ack);
        self.last_ack = Some(ack.ack);
        let after = next_pid.wrapping_sub(ack.pid_echo).wrapping_sub(1);
        if after as usize >= LOG_LEN || u64::from(after) >= self.sent {
            return 0; // an echo we never sent or can no longer account for
        }
        let at = self.log[ack.pid_echo as usize % LOG_LEN];
        if at.pid != ack.pid_echo {
            return 0;
        }
        if self.echoed.is_none_or(|e| at.combinations > e.combinations) {
            self.echoed = Some(at);
        }
        self.delay.on_sample(now, now.saturating_sub(at.at));
        if ack.lost_dof == 0 {
            return 0;
        }
        let deficit = f64::from(ack.lost_dof);
        let q = (1.0 - loss_rate).clamp(MIN_DELIVERY, 1.0);
        let new_sources = (self.sources - at.sources) as f64;
        let uncounted = (self.uncounted - at.uncounted) as f64;
        let repairs = (self.repairs - at.repairs) as f64 - uncounted;
        let in_flight = f64::from(after) - uncounted;
        let expected = if self.covering {
            let arriving = 1.0 - (1.0 - q) * self.event_share;
            let expected = match self.foresee {
                true => deficit + new_sources - arriving * in_flight,
                false => deficit - arriving * (in_flight - new_sources),
            };
            match stalled {
                true => expected.max(deficit - q * repairs),
                false => expected,
            }
        } else {
            // Uncoded packets bring their own DoF only, and coded ones reach W back: only
            // the repairs in flight (from the oldest unseen packet) surely cover the deficit.
            deficit - q * repairs
        };
        if expected < 1.0 {
            return 0;
        }
        ((expected / q).round() as u32).clamp(1, MAX_REPAIRS_PER_ACK)
    }

    /// Combinations sent and new packets first included in them, so far.
    pub fn sent_counts(&self) -> SentCounts {
        SentCounts {
            combinations: self.sent,
            sources: self.sources,
        }
    }

    /// [`DeficitRepair::sent_counts`] right after the Pid the latest accounted NC-ACK echoed
    /// (zero before the first).
    pub fn echoed_counts(&self) -> SentCounts {
        self.echoed.map_or(SentCounts::default(), |at| SentCounts {
            combinations: at.combinations,
            sources: at.sources,
        })
    }

    /// The round trips and the queue they show (`queue_delay.rs`).
    pub fn delay(&self) -> &QueueDelay {
        &self.delay
    }

    /// [`DeficitRepair::delay`], to set the path's floor.
    pub fn delay_mut(&mut self) -> &mut QueueDelay {
        &mut self.delay
    }

    /// The same bookkeeping with the `queue_depth` policy on or off (`queue_delay.rs`).
    pub fn with_queue_depth(mut self, on: bool) -> Self {
        self.delay = QueueDelay::new(on);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::nc_ack;

    fn ack(ack: u32, echo: u32, lost_dof: u16) -> AckRepr {
        nc_ack(ack, echo, 0, lost_dof)
    }

    /// Sends `n` combinations from `pid`, the first `sources` of them each with a new packet.
    fn send(r: &mut DeficitRepair, pid: &mut u32, n: u32, sources: u32) {
        for k in 0..n {
            r.on_sent(Duration::ZERO, *pid, k < sources, false);
            *pid += 1;
        }
    }

    /// Sends `k` repairs from `pid`.
    fn send_repairs(r: &mut DeficitRepair, pid: &mut u32, k: u32) {
        for _ in 0..k {
            r.on_sent(Duration::ZERO, *pid, false, true);
            *pid += 1;
        }
    }

    /// A combination the pacer let out before its forecast departure counts its round trip
    /// from when it left (`departed`); a Pid the log no longer holds is left alone.
    #[test]
    fn a_departure_moved_earlier_lengthens_the_sample() {
        let ms = Duration::from_millis;
        let mut r = DeficitRepair::new();
        r.on_sent(ms(100), 0, true, false); // forecast 100 ms
        r.on_sent(ms(110), 1, true, false);
        r.departed(0, ms(2)); // it left at 2 ms
        r.departed(1, ms(200)); // never later than recorded
        r.departed(1 + LOG_LEN as u32, ms(3)); // another Pid in the same slot
        r.on_ack(ms(42), &ack(0, 0, 0), 2, 0.0);
        assert_eq!(
            r.delay().srtt(),
            Some(ms(40)),
            "from 2 ms, not 0 from the forecast"
        );
        r.on_ack(ms(150), &ack(0, 1, 0), 2, 0.0);
        assert_eq!(
            r.delay().srtt(),
            Some(ms(40)),
            "from 110 ms, the later one ignored"
        );
    }

    #[test]
    fn nothing_missing_nothing_sent() {
        let mut r = DeficitRepair::new();
        let mut pid = 0;
        send(&mut r, &mut pid, 10, 10);
        assert_eq!(r.on_ack(Duration::ZERO, &ack(100, 5, 0), pid, 0.1), 0);
    }

    #[test]
    fn in_flight_surplus_covers_a_small_deficit() {
        let mut r = DeficitRepair::new();
        let mut pid = 0;
        send(&mut r, &mut pid, 10, 10);
        // 40 combinations after the echo, 30 of them new: 0.9·40 − 30 = 6 spare DoFs ≥ 2.
        send(&mut r, &mut pid, 40, 30);
        assert_eq!(r.on_ack(Duration::ZERO, &ack(100, 9, 2), pid, 0.1), 0);
    }

    /// Under a systematic code the combinations in flight are uncoded packets that cover only
    /// themselves: the same surplus that covers a dense code's deficit does not, and only the
    /// repairs sent for it do.
    #[test]
    fn a_systematic_deficit_counts_only_repairs_in_flight() {
        let mut r = DeficitRepair::new();
        r.set_covering(false);
        let mut pid = 0;
        send(&mut r, &mut pid, 10, 10);
        send(&mut r, &mut pid, 40, 30);
        let k = r.on_ack(Duration::ZERO, &ack(100, 9, 2), pid, 0.1);
        assert_eq!(k, 2); // 2 / 0.9 = 2.2
        send_repairs(&mut r, &mut pid, k);
        assert_eq!(r.on_ack(Duration::ZERO, &ack(100, 10, 2), pid, 0.1), 0);
    }

    /// On a bursty path the flight is expected to lose only its bursts' first packets: at
    /// R = 1 the repair for a reported deficit pre-empts a quarter of the mean loss.
    #[test]
    fn a_bursty_flight_is_expected_to_lose_less() {
        let sent = |share: f64| {
            let mut r = DeficitRepair::new();
            r.set_event_share(share);
            let mut pid = 0;
            send(&mut r, &mut pid, 10, 10);
            send(&mut r, &mut pid, 40, 40);
            r.on_ack(Duration::ZERO, &ack(100, 9, 2), pid, 0.1)
        };
        assert_eq!(sent(1.0), 7); // (2 + 40 − 0.9·40) / 0.9 = 6.7
        assert_eq!(sent(0.25), 3); // (2 + 40 − 0.975·40) / 0.9 = 3.3
        assert_eq!(sent(7.0), 7); // clamped to 1
    }

    /// Without foresight (beside busy flows) a reported deficit is repaired as reported, less
    /// the extras in flight: the flight's own losses wait for the NC-ACKs that report them.
    #[test]
    fn without_foresight_only_the_reported_deficit_is_repaired() {
        let sent = |foresee: bool, new_in_flight: u32| {
            let mut r = DeficitRepair::new();
            r.set_foresight(foresee);
            let mut pid = 0;
            send(&mut r, &mut pid, 10, 10);
            send(&mut r, &mut pid, 40, new_in_flight);
            r.on_ack(Duration::ZERO, &ack(100, 9, 2), pid, 0.1)
        };
        assert_eq!(sent(true, 40), 7); // (2 + 40 − 0.9·40) / 0.9 = 6.7
        assert_eq!(sent(false, 40), 2); // (2 − 0.9·0) / 0.9 = 2.2
        assert_eq!(sent(false, 38), 0); // 2 − 0.9·2 = 0.2 < 1: the two extras cover it
    }

    #[test]
    fn a_deficit_beyond_the_flight_is_repaired_once() {
        let mut r = DeficitRepair::new();
        let mut pid = 0;
        send(&mut r, &mut pid, 20, 20);
        // Echo 9: 10 combinations in flight, 10 new packets: 0.9·10 − 10 = −1; 6 missing.
        let k = r.on_ack(Duration::ZERO, &ack(100, 9, 6), pid, 0.1);
        assert_eq!(k, 8); // (6 + 1) / 0.9 = 7.8
        send_repairs(&mut r, &mut pid, k);
        // The next ACK (echo 10) reports the same deficit: the repairs are in flight.
        assert_eq!(r.on_ack(Duration::ZERO, &ack(200, 10, 6), pid, 0.1), 0);
    }

    #[test]
    fn uncounted_repairs_are_not_in_flight() {
        let mut r = DeficitRepair::new();
        let mut pid = 0;
        send(&mut r, &mut pid, 20, 20);
        // Eight repairs, all left out of the accounting: the next ACK repairs the deficit as
        // if none had been sent (the 8 of `a_deficit_beyond_the_flight_is_repaired_once`).
        for _ in 0..8 {
            r.on_sent(Duration::ZERO, pid, false, true);
            r.uncount(pid);
            pid += 1;
        }
        assert_eq!(r.on_ack(Duration::ZERO, &ack(100, 9, 6), pid, 0.1), 8);
        // Counted ones are in flight.
        send_repairs(&mut r, &mut pid, 8);
        assert_eq!(r.on_ack(Duration::ZERO, &ack(200, 10, 6), pid, 0.1), 0);
        // A Pid that is not the latest recorded is not uncounted.
        r.uncount(pid - 3);
        assert_eq!(r.uncounted, 8);
    }

    #[test]
    fn a_stalled_ack_counts_only_repairs_in_flight() {
        let mut r = DeficitRepair::new();
        let mut pid = 0;
        send(&mut r, &mut pid, 100, 20);
        // Plenty of redundancy in flight (0.9·60 − 0 new), but the ack is stuck twice.
        assert_eq!(r.on_ack(Duration::ZERO, &ack(100, 39, 5), pid, 0.1), 0);
        let k = r.on_ack(Duration::ZERO, &ack(100, 40, 5), pid, 0.1);
        assert_eq!(k, 6); // 5 / 0.9 = 5.6
        send_repairs(&mut r, &mut pid, k);
        assert_eq!(r.on_ack(Duration::ZERO, &ack(100, 41, 5), pid, 0.1), 0);
    }

    #[test]
    fn unknown_or_forgotten_echoes_are_ignored() {
        let mut r = DeficitRepair::new();
        assert_eq!(r.on_ack(Duration::ZERO, &ack(1, 0, 9), 0, 0.0), 0);
        let mut pid = 0;
        send(&mut r, &mut pid, 5, 5);
        assert_eq!(r.on_ack(Duration::ZERO, &ack(1, 7, 9), pid, 0.0), 0); // echo not sent yet
        send(&mut r, &mut pid, LOG_LEN as u32 + 10, LOG_LEN as u32);
        assert_eq!(r.on_ack(Duration::ZERO, &ack(1, 2, 9), pid, 0.0), 0); // too far back
    }

    #[test]
    fn congestion_threshold_sits_above_random_loss() {
        assert_eq!(congestion_threshold(0.0), 3.0);
        // 10 %: mean 3.2, sd 1.70 -> 12.99.
        assert!((congestion_threshold(0.1) - 12.99).abs() < 0.01);
        assert!(congestion_threshold(0.4) < 32.0);
    }

    #[test]
    fn burst_is_bounded_and_loss_rate_clamped() {
        let mut r = DeficitRepair::new();
        let mut pid = 0;
        send(&mut r, &mut pid, 10, 10);
        assert_eq!(
            r.on_ack(Duration::ZERO, &ack(1, 9, u16::MAX), pid, 0.99),
            MAX_REPAIRS_PER_ACK
        );
    }
}
