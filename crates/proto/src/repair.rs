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
//! * expected deficit once the flight lands: `D = d + n_s − q·n_c`;
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

use crate::tail_repair::JITTER_DEVIATIONS;
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

/// A queue is building when the smoothed combination round trip exceeds its floor by
/// 1/QUEUE_EVIDENCE of it (a full one-BDP drop-tail queue doubles it; the paper testbed's
/// 5-packet queue adds a third), by at least [`QUEUE_EVIDENCE_MIN`], and by at least half
/// of the largest excess seen lately ([`RTT_PEAK_DECAY`]).
pub const QUEUE_EVIDENCE: u32 = 8;
/// Smallest excess over the floor that counts as a queue (timer and scheduling noise).
pub const QUEUE_EVIDENCE_MIN: Duration = Duration::from_millis(2);
/// The recent peak of the smoothed round trip falls towards the current value by the
/// elapsed fraction of this time. A drop-tail queue overflows at its fullest, the round
/// trip's peak; a Gilbert-Elliott burst strikes at any height (lab, 5 % in bursts of 4:
/// bitmap signals at 5–7 ms above a 41 ms floor, the full queue being 40 ms above it, with
/// no queue drop in the run). Long against the seconds of a CUBIC cycle on such a path.
pub const RTT_PEAK_DECAY: Duration = Duration::from_secs(10);

/// How far from its floor towards its recent peak the smoothed round trip must be for an
/// NC-ACK's loss bitmap to become a congestion signal under the queue rule (the other uses of
/// the queue evidence take half, [`DeficitRepair::queue_building`]). A drop-tail queue
/// overflows at its fullest; the queue a CUBIC flow keeps below that is no evidence. On
/// Gilbert-Elliott bursts of 8 (5 and 10 %) the queue dropped nothing in most transfers while half
/// the way let 3–11 bitmap signals a transfer through; 3/4 and 9/10 measured alike and better
/// than 1/2 (docs/lab.md, "Burst window, stop 27").
pub const SIGNAL_QUEUE_SHARE: f64 = 0.75;

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
    /// Smoothed round-trip time from a Pid's sending to the NC-ACK echoing it (RFC 6298 gain
    /// 1/8), `None` before the first sample.
    srtt: Option<Duration>,
    /// Smallest smoothed round-trip time so far: the path without a queue (jitter averaged).
    rtt_floor: Option<Duration>,
    /// Largest smoothed round-trip time lately (falling back over [`RTT_PEAK_DECAY`]) and
    /// the time of the sample that last updated it.
    rtt_peak: Option<(Duration, Duration)>,
    /// The path's round-trip floor as the flows of this peer measured it (`path_memory.rs`).
    path_floor: Option<Duration>,
    /// The counters right after the Pid the latest accounted NC-ACK echoed.
    echoed: Option<Sent>,
    /// The latest round-trip sample, unsmoothed.
    last_sample: Option<Duration>,
    /// Mean deviation of the samples from `srtt` (RFC 6298's RTTVAR, gain 1/4): the jitter.
    rtt_deviation: Duration,
    /// The counts right after the newest combination that first included a new packet.
    at_last_source: SentCounts,
    /// Every combination reaches back to the first unseen packet (a dense code): then any
    /// combination in flight covers a reported deficit. Not with a systematic code, whose
    /// uncoded packets cover only themselves and whose coded ones reach W back.
    covering: bool,
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
            srtt: None,
            rtt_floor: None,
            rtt_peak: None,
            path_floor: None,
            echoed: None,
            last_sample: None,
            rtt_deviation: Duration::ZERO,
            at_last_source: SentCounts::default(),
            covering: true,
        }
    }

    /// Whether the combinations sent reach back to the first unseen packet (dense, the
    /// default) or are uncoded packets and W-wide combinations (systematic): then only the
    /// repairs in flight count against a reported deficit.
    pub fn set_covering(&mut self, covering: bool) {
        self.covering = covering;
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
        let sample = now.saturating_sub(at.at);
        self.last_sample = Some(sample);
        self.rtt_deviation = match self.srtt {
            None => sample / 2,
            Some(s) => (self.rtt_deviation * 3 + s.abs_diff(sample)) / 4,
        };
        let srtt = match self.srtt {
            None => sample,
            Some(s) => (s * 7 + sample) / 8,
        };
        self.srtt = Some(srtt);
        self.rtt_floor = Some(self.rtt_floor.map_or(srtt, |f| f.min(srtt)));
        self.rtt_peak = Some((peak_after(self.rtt_peak, srtt, now), now));
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
            let expected = deficit + new_sources - q * in_flight;
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

    /// The smoothed round-trip time of combinations, once measured.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// The mean deviation of the round-trip samples (RFC 6298's RTTVAR; zero before any).
    pub fn rtt_deviation(&self) -> Duration {
        self.rtt_deviation
    }

    /// Whether a queue is building on the path: the smoothed round trip is at least
    /// [`QUEUE_EVIDENCE`] above its floor (the lower of this flow's own and the path's) and
    /// half-way from it to its recent peak (`true` before anything is measured, so that the
    /// loss rule alone applies then).
    pub fn queue_building(&self) -> bool {
        self.queue_within(0.5)
    }

    /// Whether the smoothed round trip is at least [`QUEUE_EVIDENCE`] above its floor and at
    /// least `share` of the way from it to its recent peak (`true` before anything is measured).
    pub fn queue_within(&self, share: f64) -> bool {
        match (self.srtt, self.queue_floor(), self.rtt_peak) {
            (Some(s), Some(f), Some((peak, _))) => {
                let near_peak = peak.saturating_sub(f).mul_f64(share);
                s >= f + queue_evidence(f).max(near_peak)
            }
            _ => true,
        }
    }

    /// Whether the latest round-trip sample, unsmoothed, stands [`QUEUE_EVIDENCE`] and
    /// [`JITTER_DEVIATIONS`] times the path's `jitter` above the floor: a queue at the
    /// bottleneck when that combination crossed it (docs/engine.md, "Flight cap").
    pub fn sample_queued(&self, jitter: Duration) -> bool {
        let Some(floor) = self.queue_floor() else {
            return false;
        };
        let evidence = queue_evidence(floor).max(jitter * JITTER_DEVIATIONS);
        self.last_sample.is_some_and(|s| s >= floor + evidence)
    }

    /// The floor a queue is measured from: this flow's own, or the path's when lower (none
    /// before the flow measured its own).
    fn queue_floor(&self) -> Option<Duration> {
        match (self.rtt_floor, self.path_floor) {
            (Some(own), Some(path)) => Some(own.min(path)),
            (own, _) => own,
        }
    }

    /// This flow's own round-trip floor, once measured.
    pub fn rtt_floor(&self) -> Option<Duration> {
        self.rtt_floor
    }

    /// The path's round-trip floor (`path_memory.rs`), which [`DeficitRepair::queue_building`]
    /// uses when it is lower than this flow's own.
    pub fn set_path_floor(&mut self, floor: Option<Duration>) {
        self.path_floor = floor;
    }
}

/// The smallest excess over a round-trip floor `f` that counts as a queue:
/// f / [`QUEUE_EVIDENCE`], at least [`QUEUE_EVIDENCE_MIN`].
pub fn queue_evidence(f: Duration) -> Duration {
    (f / QUEUE_EVIDENCE).max(QUEUE_EVIDENCE_MIN)
}

/// The recent peak after a new smoothed round trip `srtt` at `now`: `srtt` if higher, else
/// the old peak moved towards `srtt` by the elapsed share of [`RTT_PEAK_DECAY`].
fn peak_after(peak: Option<(Duration, Duration)>, srtt: Duration, now: Duration) -> Duration {
    match peak {
        Some((p, at)) if p > srtt => {
            let share = now.saturating_sub(at).as_secs_f64() / RTT_PEAK_DECAY.as_secs_f64();
            p - (p - srtt).mul_f64(share.min(1.0))
        }
        _ => srtt,
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
    fn a_queue_shows_as_a_round_trip_above_its_floor() {
        let mut r = DeficitRepair::new();
        assert!(r.queue_building(), "nothing measured: the loss rule alone");
        let ms = Duration::from_millis;
        // Steady 40 ms round trips with ±3 ms of jitter: no queue.
        for pid in 0..200u32 {
            let sent = ms(u64::from(pid) * 2);
            r.on_sent(sent, pid, true, false);
            let jitter = ms(u64::from(pid % 7));
            r.on_ack(sent + ms(40) + jitter, &ack(pid, pid, 0), pid + 1, 0.0);
        }
        assert!(!r.queue_building(), "{:?}", r.srtt());
        // The queue fills: round trips climb to 70 ms.
        for pid in 200..260u32 {
            let sent = ms(u64::from(pid) * 2);
            r.on_sent(sent, pid, true, false);
            r.on_ack(sent + ms(70), &ack(pid, pid, 0), pid + 1, 0.0);
        }
        assert!(r.queue_building(), "{:?}", r.srtt());
    }

    /// Sends Pids `pids` 2 ms apart, each echoed after `rtt`.
    fn echo_all(r: &mut DeficitRepair, pids: std::ops::Range<u32>, rtt: Duration) {
        for pid in pids {
            let sent = Duration::from_millis(u64::from(pid) * 2);
            r.on_sent(sent, pid, true, false);
            r.on_ack(sent + rtt, &ack(pid, pid, 0), pid + 1, 0.0);
        }
    }

    #[test]
    fn a_queue_counts_near_its_recent_peak_only() {
        let ms = Duration::from_millis;
        let mut r = DeficitRepair::new();
        echo_all(&mut r, 0..100, ms(40));
        echo_all(&mut r, 100..200, ms(48));
        assert!(r.queue_building(), "the first rise: 8 ms above the floor");
        // A full queue (80 ms), drained again; back at 48 ms (the srtt within 1 ms).
        echo_all(&mut r, 200..300, ms(80));
        echo_all(&mut r, 300..400, ms(40));
        echo_all(&mut r, 400..500, ms(48));
        assert!(!r.queue_building(), "8 of the 40 ms the queue reached");
        echo_all(&mut r, 500..600, ms(65));
        assert!(r.queue_building(), "25 of 40 ms");
        // Ten seconds later the peak has fallen back to the present round trips.
        echo_all(&mut r, 600..5600, ms(40));
        echo_all(&mut r, 5600..5700, ms(48));
        assert!(r.queue_building(), "the old peak forgotten");
    }

    #[test]
    fn jitter_alone_is_no_queue_sample() {
        // 40–80 ms round trips (20 ms of jitter each way): +25 ms is jitter there, a queue calm.
        let (ms, mut x) = (Duration::from_millis, 7u64);
        let (mut jittery, mut calm) = (DeficitRepair::new(), DeficitRepair::new());
        for pid in 0..500u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            jittery.on_sent(ms(u64::from(pid) * 2), pid, true, false);
            let at = ms(u64::from(pid) * 2 + 40 + (x >> 33) % 41);
            jittery.on_ack(at, &ack(pid, pid, 0), pid + 1, 0.0);
        }
        let floor = jittery.queue_floor().unwrap();
        echo_all(&mut calm, 0..500, floor);
        for r in [&mut jittery, &mut calm] {
            r.on_sent(ms(1000), 500, true, false);
            r.on_ack(ms(1000) + floor + ms(25), &ack(500, 500, 0), 501, 0.0);
        }
        let (dev, calm_dev) = (jittery.rtt_deviation(), calm.rtt_deviation());
        assert!(!jittery.sample_queued(dev) && calm.sample_queued(calm_dev));
        assert!(jittery.sample_queued(Duration::ZERO), "no jitter term");
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
