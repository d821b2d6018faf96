//! What the combination round trip says of the bottleneck's queue (issue 10 mechanism 4:
//! congestion inferred from queue build-up, Ha & Tsuru §3 on telling loss from congestion).
//!
//! Every NC-ACK echoes a Pid; the time from sending that combination to the NC-ACK is one
//! round-trip sample (`repair.rs`). From the samples:
//!
//! * the **smoothed** round trip (RFC 6298, gain 1/8) and the mean deviation (RTTVAR, gain
//!   1/4: the path's jitter);
//! * the **floor**: the smallest smoothed round trip, the path without a queue (this flow's
//!   own, or the path's from `path_memory.rs` when lower);
//! * the **recent peak**: the largest smoothed round trip, falling back towards the present
//!   one over [`RTT_PEAK_DECAY`]; a drop-tail queue overflows at its fullest, so congestion
//!   needs the round trip near its peak ([`QueueDelay::queue_building`],
//!   [`QueueDelay::signal_queue`]);
//! * with `queue_depth` the **depth**: the largest excess of the smoothed round trip over
//!   the floor ever seen, the deepest the queue has been. A shallow drop-tail queue (the lab's
//!   10 packets, 6 ms at 20 Mbit/s over a 41 ms floor) overflows below the fixed evidence of
//!   floor/8 (5 ms): its drops were then sampled as random loss, R rose towards 2 and the
//!   doubled load overflowed the queue further (a loss estimate of 81 %, 67 thousand queue drops
//!   in a 20 MB transfer: docs/lab.md, "Issue 10's targets, stop 46"). With the depth known,
//!   the evidence is half the depth when that is less than floor/8, and on a queue under half
//!   a floor deep the flight cap leaves three quarters of the depth for the queue instead of
//!   three quarters of a floor ([`QueueDelay::cap_gain`]).
//!   The depth never falls: the recent peak does, towards a round trip the cap itself holds
//!   down, and a gain drawn from it ratcheted the cap down (112 to 88 segments on a one-BDP
//!   queue, docs/lab.md). And it counts only once the queue has been seen to overflow there
//!   ([`QueueDelay::on_judged`]): a small depth may be only the part of a deep queue a flow
//!   has explored.

use std::time::Duration;

use crate::tail_repair::JITTER_DEVIATIONS;

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
/// the queue evidence take half, [`QueueDelay::queue_building`]). A drop-tail queue
/// overflows at its fullest; the queue a CUBIC flow keeps below that is no evidence. On
/// Gilbert-Elliott bursts of 8 (5 and 10 %) the queue dropped nothing in most transfers while half
/// the way let 3–11 bitmap signals a transfer through; 3/4 and 9/10 measured alike and better
/// than 1/2 (docs/lab.md, "Burst window, stop 27").
pub const SIGNAL_QUEUE_SHARE: f64 = 0.75;

/// With `queue_depth`: the share of the deepest queue seen that counts as queue evidence when
/// it is less than floor/[`QUEUE_EVIDENCE`] (module docs).
pub const DEPTH_EVIDENCE_SHARE: f64 = 0.5;

/// With `queue_depth`: the share of the deepest queue seen that the flight cap leaves for the
/// queue, in floors of round trip (`flight_cap.rs`'s gain is 1 + this × depth / floor, at
/// most its own): the three quarters the gain of 1.75 leaves of a one-BDP queue.
pub const DEPTH_CAP_SHARE: f64 = 0.75;

/// Losses at the queue's top before a depth counts: fewer say little of where losses fall.
pub const OVERFLOW_MIN_LOSSES: u64 = 16;

/// How much likelier a loss must be with a queue than without it for the queue to have
/// overflowed (module docs): twice, and a point more.
pub const OVERFLOW_RATIO: f64 = 2.0;

/// Losses and judged combinations while the latest sample showed a queue at the depth's scale,
/// and while it did not.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct LossSplit {
    queued: (u64, u64),
    clear: (u64, u64),
}

impl LossSplit {
    /// Whether the losses concentrate where a queue stood: the queue overflowed.
    fn overflowed(&self) -> bool {
        let rate = |(lost, total): (u64, u64)| match total {
            0 => 0.0,
            t => lost as f64 / t as f64,
        };
        self.queued.0 >= OVERFLOW_MIN_LOSSES
            && rate(self.queued) > OVERFLOW_RATIO * rate(self.clear) + 0.01
    }
}

/// Round-trip samples of one flow and what they say of the queue (module docs).
#[derive(Debug, Clone, Default)]
pub struct QueueDelay {
    /// Smoothed round-trip time (RFC 6298 gain 1/8), `None` before the first sample.
    srtt: Option<Duration>,
    /// Smallest smoothed round-trip time so far: the path without a queue (jitter averaged).
    rtt_floor: Option<Duration>,
    /// Largest smoothed round-trip time lately (falling back over [`RTT_PEAK_DECAY`]) and
    /// the time of the sample that last updated it.
    rtt_peak: Option<(Duration, Duration)>,
    /// Largest smoothed round-trip time ever: the floor and the deepest queue.
    rtt_max: Option<Duration>,
    /// The path's round-trip floor as the flows of this peer measured it (`path_memory.rs`).
    path_floor: Option<Duration>,
    /// The latest round-trip sample, unsmoothed.
    last_sample: Option<Duration>,
    /// Mean deviation of the samples from `srtt` (RFC 6298's RTTVAR, gain 1/4): the jitter.
    rtt_deviation: Duration,
    /// The `queue_depth` policy: evidence and cap scaled to the deepest queue seen.
    depth_scaled: bool,
    /// The path reorders (the peer reports an unordering length): its round trips spread
    /// with the jitter, and their largest says nothing of a queue's depth.
    reordering: bool,
    /// Where the judged losses fell, until the queue is seen to overflow.
    split: LossSplit,
    /// The queue has overflowed at its depth: losses concentrate where it stood.
    overflowed: bool,
}

impl QueueDelay {
    /// No samples yet; `depth_scaled`: the `queue_depth` policy.
    pub fn new(depth_scaled: bool) -> Self {
        QueueDelay {
            depth_scaled,
            ..QueueDelay::default()
        }
    }

    /// Takes one round-trip `sample` measured at `now`.
    pub fn on_sample(&mut self, now: Duration, sample: Duration) {
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
        self.rtt_max = Some(self.rtt_max.map_or(srtt, |m| m.max(srtt)));
        self.rtt_peak = Some((peak_after(self.rtt_peak, srtt, now), now));
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
    /// floor/[`QUEUE_EVIDENCE`] above its floor (the lower of this flow's own and the path's)
    /// and half-way from it to its recent peak (`true` before anything is measured, so that
    /// the loss rule alone applies then). What withheld duplicates and the rescue of a TCP
    /// that resends only ask for, whatever the queue's depth: a queue scaled to the little
    /// the round trip has risen early in a transfer let a reordering path's duplicates
    /// through at a window of 10 (docs/lab.md, "A shallow queue").
    pub fn queue_building(&self) -> bool {
        self.queue_within(0.5, self.queue_floor().map(queue_evidence))
    }

    /// Whether the losses an NC-ACK reports may be the queue's drops, so that the random loss
    /// floor must not sample them: [`QueueDelay::queue_building`] with the queue evidence
    /// scaled to a shallow queue (`queue_depth`), or on a shallow queue the latest sample,
    /// unsmoothed, showing a queue ([`QueueDelay::sample_queued`]): such a queue fills and
    /// drains within a few datagrams' time, too fast for the smoothed round trip, and drops
    /// at its fullest, when the datagram after the drop meets it full.
    pub fn congested(&self, jitter: Duration) -> bool {
        let floor = self.queue_floor();
        self.queue_within(0.5, floor.map(|f| self.evidence(f)))
            || (self.shallow() && self.sample_queued(jitter))
    }

    /// Whether the deepest queue seen is shallow, with `queue_depth` on a path that does not
    /// reorder, once it overflowed: its [`DEPTH_EVIDENCE_SHARE`] less than
    /// floor/[`QUEUE_EVIDENCE`] (not clamped to [`QUEUE_EVIDENCE_MIN`]). Hardly ever over a
    /// floor of a few milliseconds (a LAN, a host's own loop): a host's scheduling alone lifts
    /// such a round trip by more than a depth under a quarter of the floor, and pacing there
    /// would wake the gateway for every datagram at a gigabit.
    pub fn shallow(&self) -> bool {
        match (self.depth(), self.queue_floor()) {
            (Some(d), Some(f)) => {
                self.scales() && d.mul_f64(DEPTH_EVIDENCE_SHARE) < f / QUEUE_EVIDENCE
            }
            _ => false,
        }
    }

    /// Whether the evidence and the cap scale to the deepest queue: `queue_depth`, on a path
    /// that does not reorder, once the queue has been seen to overflow.
    fn scales(&self) -> bool {
        self.depth_scaled && !self.reordering && self.overflowed
    }

    /// Counts the Pids an NC-ACK judged (`lost` of them lost, `received` arrived) by whether
    /// the latest round-trip sample showed a queue at the depth's scale (the NC-ACK before gave
    /// it: an NC-ACK's own is taken after its losses are judged), until the losses are seen to
    /// concentrate there ([`OVERFLOW_RATIO`]): only then is the depth the queue's, not the
    /// little a flow has explored of a deep queue (a flow capped at one BDP early never fills
    /// it; scaled anyway, its cap collapsed on Gilbert-Elliott bursts, docs/lab.md).
    pub fn on_judged(&mut self, jitter: Duration, lost: u64, received: u64) {
        if self.overflowed || !self.depth_scaled || self.reordering {
            return;
        }
        let (Some(floor), Some(sample), Some(depth)) =
            (self.queue_floor(), self.last_sample, self.depth())
        else {
            return;
        };
        let evidence = Self::scaled(floor, depth).max(jitter * JITTER_DEVIATIONS);
        let side = match sample >= floor + evidence {
            true => &mut self.split.queued,
            false => &mut self.split.clear,
        };
        side.0 += lost;
        side.1 += lost + received;
        self.overflowed = self.split.overflowed();
    }

    /// Whether the queue has been seen to overflow ([`QueueDelay::on_judged`]).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Tells whether the path reorders (the peer reports an unordering length, Ha & Tsuru
    /// §3.2): then nothing is scaled to the depth.
    pub fn set_reordering(&mut self, reordering: bool) {
        self.reordering = reordering;
    }

    /// Whether the smoothed round trip is [`SIGNAL_QUEUE_SHARE`] of the way from its floor to
    /// its recent peak and at least floor/[`QUEUE_EVIDENCE`] above the floor, whatever the
    /// queue's depth: what a congestion signal needs under the queue rule (`true` before
    /// anything is measured). On a shallow queue the flight cap, not TCP's cuts, keeps the
    /// queue from overflowing: scaled evidence here cut kernel CUBIC's goodput on the lab's
    /// 10-packet queue by a fifth (docs/lab.md, "A shallow queue").
    pub fn signal_queue(&self) -> bool {
        let floor = self.queue_floor();
        self.queue_within(SIGNAL_QUEUE_SHARE, floor.map(queue_evidence))
    }

    /// Whether the smoothed round trip is `evidence` above its floor and at least `share` of
    /// the way from it to its recent peak (`true` before anything is measured).
    fn queue_within(&self, share: f64, evidence: Option<Duration>) -> bool {
        match (self.srtt, self.queue_floor(), self.rtt_peak, evidence) {
            (Some(s), Some(f), Some((peak, _)), Some(e)) => {
                let near_peak = peak.saturating_sub(f).mul_f64(share);
                s >= f + e.max(near_peak)
            }
            _ => true,
        }
    }

    /// Whether the latest round-trip sample, unsmoothed, stands the queue evidence and
    /// [`JITTER_DEVIATIONS`] times the path's `jitter` above the floor: a queue at the
    /// bottleneck when that combination crossed it (docs/engine.md, "Flight cap").
    pub fn sample_queued(&self, jitter: Duration) -> bool {
        let Some(floor) = self.queue_floor() else {
            return false;
        };
        let evidence = self.evidence(floor).max(jitter * JITTER_DEVIATIONS);
        self.last_sample.is_some_and(|s| s >= floor + evidence)
    }

    /// The excess over `floor` that counts as a queue: floor/[`QUEUE_EVIDENCE`], or with
    /// `queue_depth` [`DEPTH_EVIDENCE_SHARE`] of the deepest queue seen when less; at least
    /// [`QUEUE_EVIDENCE_MIN`].
    fn evidence(&self, floor: Duration) -> Duration {
        match self.depth() {
            Some(d) if self.scales() => Self::scaled(floor, d),
            _ => queue_evidence(floor),
        }
    }

    /// floor/[`QUEUE_EVIDENCE`], or [`DEPTH_EVIDENCE_SHARE`] of `depth` when less; at least
    /// [`QUEUE_EVIDENCE_MIN`].
    fn scaled(floor: Duration, depth: Duration) -> Duration {
        (floor / QUEUE_EVIDENCE)
            .min(depth.mul_f64(DEPTH_EVIDENCE_SHARE))
            .max(QUEUE_EVIDENCE_MIN)
    }

    /// The deepest queue seen: the largest smoothed round trip over the floor.
    pub fn depth(&self) -> Option<Duration> {
        Some(self.rtt_max?.saturating_sub(self.queue_floor()?))
    }

    /// The flight cap's gain for this flow (`flight_cap.rs`): `gain`, or once the queue
    /// overflowed at a depth under half the floor 1 + [`DEPTH_CAP_SHARE`] × the depth over
    /// this flow's floor when less. Not on a deeper queue: there the flows of one path, each
    /// with its own verdict of overflow, shared the path unequally (`tests/flight_share.rs`).
    pub fn cap_gain(&self, gain: f64) -> f64 {
        match (self.depth(), self.rtt_floor) {
            (Some(d), Some(f)) if self.scales() && d < f / 2 && !f.is_zero() => {
                gain.min(1.0 + DEPTH_CAP_SHARE * d.as_secs_f64() / f.as_secs_f64())
            }
            _ => gain,
        }
    }

    /// The floor a queue is measured from: this flow's own, or the path's when lower (none
    /// before the flow measured its own).
    pub fn queue_floor(&self) -> Option<Duration> {
        match (self.rtt_floor, self.path_floor) {
            (Some(own), Some(path)) => Some(own.min(path)),
            (own, _) => own,
        }
    }

    /// This flow's own round-trip floor, once measured.
    pub fn rtt_floor(&self) -> Option<Duration> {
        self.rtt_floor
    }

    /// The path's round-trip floor (`path_memory.rs`), which the queue evidence uses when it
    /// is lower than this flow's own.
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

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Samples `n` round trips of `rtt` 2 ms apart from `from` ms; returns the time reached.
    fn samples(d: &mut QueueDelay, from: u64, n: u64, rtt: Duration) -> u64 {
        for k in 0..n {
            d.on_sample(ms(from + 2 * k), rtt);
        }
        from + 2 * n
    }

    #[test]
    fn a_queue_shows_as_a_round_trip_above_its_floor() {
        let mut d = QueueDelay::new(false);
        assert!(d.queue_building(), "nothing measured: the loss rule alone");
        // Steady 40 ms round trips with 0–6 ms of jitter: no queue.
        for k in 0..200u64 {
            d.on_sample(ms(2 * k), ms(40 + k % 7));
        }
        assert!(!d.queue_building(), "{:?}", d.srtt());
        // The queue fills: round trips climb to 70 ms.
        samples(&mut d, 400, 60, ms(70));
        assert!(d.queue_building(), "{:?}", d.srtt());
    }

    #[test]
    fn a_queue_counts_near_its_recent_peak_only() {
        let mut d = QueueDelay::new(false);
        let t = samples(&mut d, 0, 100, ms(40));
        let t = samples(&mut d, t, 100, ms(48));
        assert!(d.queue_building(), "the first rise: 8 ms above the floor");
        // A full queue (80 ms), drained again; back at 48 ms (the srtt within 1 ms).
        let t = samples(&mut d, t, 100, ms(80));
        let t = samples(&mut d, t, 100, ms(40));
        let t = samples(&mut d, t, 100, ms(48));
        assert!(!d.queue_building(), "8 of the 40 ms the queue reached");
        let t = samples(&mut d, t, 100, ms(65));
        assert!(d.queue_building(), "25 of 40 ms");
        // Ten seconds later the peak has fallen back to the present round trips.
        let t = samples(&mut d, t, 5000, ms(40));
        samples(&mut d, t, 100, ms(48));
        assert!(d.queue_building(), "the old peak forgotten");
    }

    #[test]
    fn jitter_alone_is_no_queue_sample() {
        // 40–80 ms round trips (20 ms of jitter each way): +25 ms is jitter there, a queue calm.
        let mut x = 7u64;
        let (mut jittery, mut calm) = (QueueDelay::new(false), QueueDelay::new(false));
        for k in 0..500u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            jittery.on_sample(ms(2 * k), ms(40 + (x >> 33) % 41));
        }
        let floor = jittery.queue_floor().unwrap();
        samples(&mut calm, 0, 500, floor);
        for d in [&mut jittery, &mut calm] {
            d.on_sample(ms(1000), floor + ms(25));
        }
        let (dev, calm_dev) = (jittery.rtt_deviation(), calm.rtt_deviation());
        assert!(!jittery.sample_queued(dev) && calm.sample_queued(calm_dev));
        assert!(jittery.sample_queued(Duration::ZERO), "no jitter term");
    }

    /// A 10-packet queue at 20 Mbit/s: 6 ms over a 40 ms floor, filled and drained.
    /// `overflow`: whether the queue drops at its top (2 of 10 judged there, none below);
    /// random loss alone otherwise (1 in 10 at either height).
    fn filled(depth_scaled: bool, overflow: bool) -> QueueDelay {
        let mut d = QueueDelay::new(depth_scaled);
        let mut t = 0;
        for _ in 0..5 {
            for (rtt, lost) in [(40, u64::from(!overflow)), (46, 1 + u64::from(overflow))] {
                for _ in 0..10 {
                    t = samples(&mut d, t, 10, ms(rtt));
                    d.on_judged(Duration::ZERO, lost, 10 - lost);
                }
            }
        }
        samples(&mut d, t, 100, ms(44));
        d
    }

    fn shallow(depth_scaled: bool) -> QueueDelay {
        filled(depth_scaled, true)
    }

    #[test]
    fn a_depth_counts_once_the_queue_overflowed_there() {
        let (random, overflowing) = (filled(true, false), filled(true, true));
        assert!(!random.overflowed() && overflowing.overflowed());
        assert!(!random.shallow() && overflowing.shallow());
        assert_eq!(
            random.cap_gain(1.75),
            1.75,
            "an unexplored depth leaves the gain"
        );
        assert!(!random.congested(Duration::ZERO) && overflowing.congested(Duration::ZERO));
    }

    #[test]
    fn a_shallow_queue_near_full_is_evidence_with_queue_depth_only() {
        let (fixed, scaled) = (shallow(false), shallow(true));
        let depth = scaled.depth().unwrap().as_secs_f64();
        assert!((depth - 0.006).abs() < 1e-5, "{depth}");
        // 4 of the 6 ms: below floor/8 (5 ms), above half the depth.
        assert!(scaled.congested(Duration::ZERO) && scaled.sample_queued(Duration::ZERO));
        assert!(!fixed.congested(Duration::ZERO) && !fixed.sample_queued(Duration::ZERO));
        // Withheld duplicates keep the fixed evidence.
        assert!(!scaled.queue_building());
        // On a path that reorders nothing scales.
        let mut reordering = scaled.clone();
        reordering.set_reordering(true);
        assert!(!reordering.shallow() && !reordering.congested(Duration::ZERO));
        assert_eq!(reordering.cap_gain(1.5), 1.5);
        // The signal keeps the fixed evidence: 4 ms above the floor is not 5.
        assert!(!scaled.signal_queue());
    }

    #[test]
    fn on_a_shallow_queue_one_queued_sample_is_congestion() {
        let (mut fixed, mut scaled) = (shallow(false), shallow(true));
        for d in [&mut fixed, &mut scaled] {
            samples(d, 3000, 100, ms(40));
            d.on_sample(ms(3200), ms(45));
        }
        assert!(scaled.shallow() && !fixed.shallow());
        assert!(
            !scaled.queue_building(),
            "the smoothed round trip is at its floor"
        );
        assert!(scaled.congested(Duration::ZERO) && !fixed.congested(Duration::ZERO));
        assert!(
            !scaled.congested(ms(2)),
            "5 ms is within three deviations of 2 ms"
        );
        // A one-BDP queue is not shallow: a single sample does not count there.
        let mut deep = QueueDelay::new(true);
        let t = samples(&mut deep, 0, 100, ms(40));
        let t = samples(&mut deep, t, 100, ms(80));
        let t = samples(&mut deep, t, 100, ms(40));
        deep.on_sample(ms(t), ms(60));
        assert!(!deep.shallow() && !deep.congested(Duration::ZERO));
    }

    #[test]
    fn the_cap_leaves_three_quarters_of_the_deepest_queue() {
        let (fixed, scaled) = (shallow(false), shallow(true));
        assert_eq!(fixed.cap_gain(1.75), 1.75);
        assert!((scaled.cap_gain(1.75) - (1.0 + 0.75 * 6.0 / 40.0)).abs() < 1e-3);
        // The depth never falls: ten seconds at the floor keep the gain.
        let mut held = scaled.clone();
        samples(&mut held, 2000, 6000, ms(41));
        assert_eq!(held.cap_gain(1.75), scaled.cap_gain(1.75));
        // A one-BDP queue (40 ms) leaves the gain at its own.
        let mut deep = QueueDelay::new(true);
        let t = samples(&mut deep, 0, 100, ms(40));
        samples(&mut deep, t, 100, ms(80));
        assert!(deep.cap_gain(1.75) > 1.749);
    }
}
