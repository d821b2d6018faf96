//! Unordering estimation at the sink (Ha & Tsuru §3.2).
//!
//! A combination whose Pid is below the newest Pid already received arrived out of order; its
//! *displacement* is how many Pids it was overtaken by (`newest − pid`). The paper's unordering
//! length L_u is the run of packets that arrive out of order; measured per period and averaged
//! with a simple moving average (SMA) so that it does not jump. Choices where the paper leaves
//! the detail open (docs/engine.md, "Reordering"):
//!
//! * L_u of a period is the largest number of Pids that could still be late at any arrival in
//!   it: the depth the sender must code around and the receiver must wait before calling a
//!   missing Pid lost. That is the largest displacement seen, and — because a displacement in
//!   Pids grows with the sending rate while the reordering itself is a delay (RFC 8985 §6.2
//!   measures its reordering window in time) — the Pids reached within the reordering delay
//!   (`PidTracker::depth_within`). Without the second, every doubling of the rate in slow
//!   start outgrew the length learned at the rate before, and the late Pids beyond it were
//!   reported lost and repaired (15–32 repairs a 20 MB run at 0 % loss and 10 ms of jitter,
//!   all in the first 0.7 s).
//! * The reordering delay of a period is the longest a late arrival waited after the first
//!   Pid beyond it arrived; it is averaged like L_u.
//! * The paper's period is 5 s; transfers of a few seconds would then never adapt, so the
//!   period here is [`PERIOD`] (1 s), and the SMA runs over the last [`PERIODS_KEPT`] periods.
//! * The reported length (`unordering` field of every NC-ACK, U flag when it changes) is the
//!   larger of the SMA and the current period's L_u, so that the onset of reordering is
//!   reported within the period it starts in, and its end after the SMA has decayed; the
//!   delay likewise. After reordering stops, the Pids within the delay keep L_u up until the
//!   delay's average has decayed too: the length falls to 0 within about twice
//!   [`PERIODS_KEPT`] periods.
//! * A displacement beyond the loss bitmap's reach (32 Pids) cannot be told from a loss by the
//!   sender and is counted at 32.

use std::collections::VecDeque;
use std::time::Duration;

use crate::pid_tracker::Late;

/// Length of one measurement period.
pub const PERIOD: Duration = Duration::from_secs(1);

/// Completed periods in the moving average.
pub const PERIODS_KEPT: usize = 4;

/// Largest displacement counted (the loss bitmap's reach).
pub const MAX_DISPLACEMENT: u32 = tcpnc_wire::AckRepr::BITMAP_PIDS;

/// What one period measured; also what a meter reports ([`ReorderMeter::estimate`]) and
/// starts from on a path that earlier flows measured (`path_memory.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Period {
    /// L_u, Pids.
    pub length: u32,
    /// Longest reordering delay.
    pub delay: Duration,
}

/// The sink's unordering-length meter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReorderMeter {
    /// Start of the current period.
    period_start: Option<Duration>,
    /// The current period so far.
    current: Period,
    /// The last completed periods, newest last.
    kept: VecDeque<Period>,
    /// Their simple moving average (L_u rounded up), kept with them: every arrival reads it.
    average: Period,
    /// Late arrivals seen.
    late: u64,
}

impl ReorderMeter {
    /// No reordering seen.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts from what earlier flows measured on the path (`path_memory`): `prior` counts as
    /// one completed period, so it reports at once and leaves the average as this flow's own
    /// periods come in. Nothing changes for a prior without reordering.
    pub fn start_from(&mut self, prior: Period) {
        if prior.length > 0 && self.kept.is_empty() && self.period_start.is_none() {
            self.kept.push_back(Period {
                length: prior.length.min(MAX_DISPLACEMENT),
                delay: prior.delay,
            });
            self.average = average(&self.kept);
        }
    }

    /// The length and delay it reports now ([`Self::length`], [`Self::delay`]).
    pub fn estimate(&self) -> Period {
        Period {
            length: u32::from(self.length()),
            delay: self.delay(),
        }
    }

    /// Closes the periods that ended before `now`.
    fn roll(&mut self, now: Duration) {
        let start = *self.period_start.get_or_insert(now);
        if now.saturating_sub(start) < PERIOD {
            return;
        }
        let ended = (now.saturating_sub(start).as_nanos() / PERIOD.as_nanos()) as usize;
        // The current period, then `ended − 1` periods without any late arrival.
        for value in std::iter::once(self.current)
            .chain(std::iter::repeat_n(Period::default(), ended - 1))
            .take(PERIODS_KEPT)
        {
            if self.kept.len() == PERIODS_KEPT {
                self.kept.pop_front();
            }
            self.kept.push_back(value);
        }
        self.average = average(&self.kept);
        self.current = Period::default();
        self.period_start = Some(start + PERIOD * ended as u32);
    }

    /// Records one arrival at `now`: `late` for a combination that arrived after a newer one,
    /// `None` for one in order; `depth(delay)` is how many Pids were reached within `delay`
    /// (`PidTracker::depth_within`).
    pub fn on_arrival(
        &mut self,
        now: Duration,
        late: Option<Late>,
        depth: impl FnOnce(Duration) -> u32,
    ) {
        self.roll(now);
        if let Some(l) = late {
            self.late += 1;
            self.current.length = self.current.length.max(l.by);
            self.current.delay = self.current.delay.max(l.after);
        }
        let delay = self.delay();
        if !delay.is_zero() {
            self.current.length = self.current.length.max(depth(delay));
        }
        self.current.length = self.current.length.min(MAX_DISPLACEMENT);
    }

    /// The unordering length to report (Pids): `ceil` of the SMA of the kept periods' L_u, or
    /// the current period's L_u when larger.
    pub fn length(&self) -> u16 {
        self.average.length.max(self.current.length) as u16
    }

    /// The reordering delay: the SMA of the kept periods' delays, or the current period's
    /// when longer; zero while no combination arrived late.
    pub fn delay(&self) -> Duration {
        self.average.delay.max(self.current.delay)
    }

    /// Late arrivals seen so far.
    pub fn late_arrivals(&self) -> u64 {
        self.late
    }
}

/// The SMA of `kept`: L_u rounded up, the delay exact; zero when empty.
fn average(kept: &VecDeque<Period>) -> Period {
    match kept.len() as u32 {
        0 => Period::default(),
        n => Period {
            length: kept.iter().map(|p| p.length).sum::<u32>().div_ceil(n),
            delay: kept.iter().map(|p| p.delay).sum::<Duration>() / n,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn late(by: u32, after: u64) -> Option<Late> {
        Some(Late {
            by,
            after: ms(after),
        })
    }

    fn none(_: Duration) -> u32 {
        0
    }

    #[test]
    fn in_order_traffic_has_no_unordering() {
        let mut m = ReorderMeter::new();
        for t in 0..5000 {
            m.on_arrival(ms(t), None, |_| panic!("no delay, no depth"));
        }
        assert_eq!(m.length(), 0);
        assert_eq!(m.delay(), Duration::ZERO);
        assert_eq!(m.late_arrivals(), 0);
    }

    #[test]
    fn onset_is_reported_at_once_and_decays_with_the_average() {
        let mut m = ReorderMeter::new();
        m.on_arrival(ms(0), None, none);
        m.on_arrival(ms(10), late(6, 4), none);
        m.on_arrival(ms(20), late(3, 2), none);
        assert_eq!(m.length(), 6, "the current period's largest displacement");
        assert_eq!(m.delay(), ms(4));
        // Four quiet periods later the period with 6 has left the average.
        m.on_arrival(ms(1500), None, none);
        assert_eq!(m.length(), 6);
        m.on_arrival(ms(2500), None, none);
        assert_eq!(m.length(), 3, "ceil((6 + 0) / 2)");
        assert_eq!(m.delay(), ms(2), "(4 + 0) / 2");
        m.on_arrival(ms(9000), None, none);
        assert_eq!(m.length(), 0);
        assert_eq!(m.delay(), Duration::ZERO);
        assert_eq!(m.late_arrivals(), 2);
    }

    /// A delay learned at one rate covers more Pids at a higher one: the length follows the
    /// Pids reached within the delay, not only the displacements seen.
    #[test]
    fn the_length_grows_with_the_pids_within_the_delay() {
        let mut m = ReorderMeter::new();
        m.on_arrival(ms(0), late(4, 5), |d| {
            assert_eq!(d, ms(5));
            4
        });
        assert_eq!(m.length(), 4);
        // The rate doubled: 9 Pids within 5 ms, with no late arrival at all.
        m.on_arrival(ms(100), None, |_| 9);
        assert_eq!(m.length(), 9);
        m.on_arrival(ms(200), None, |_| 500);
        assert_eq!(
            m.length(),
            MAX_DISPLACEMENT as u16,
            "capped at the bitmap's reach"
        );
    }

    #[test]
    fn a_prior_counts_as_one_period() {
        let mut m = ReorderMeter::new();
        let prior = Period {
            length: 12,
            delay: ms(8),
        };
        m.start_from(prior);
        assert_eq!(m.estimate(), prior, "reported before any arrival");
        m.on_arrival(ms(0), None, |d| {
            assert_eq!(d, ms(8));
            3
        });
        assert_eq!(m.length(), 12);
        // One quiet period of its own: the average of the prior and 3 (the depth it saw).
        m.on_arrival(ms(1000), None, |_| 0);
        assert_eq!(m.estimate().length, 8, "ceil((12 + 3) / 2)");
        let mut fresh = ReorderMeter::new();
        fresh.start_from(Period::default());
        assert_eq!(
            fresh,
            ReorderMeter::new(),
            "no reordering known: nothing changes"
        );
    }

    #[test]
    fn displacement_is_capped_at_the_bitmap_reach() {
        let mut m = ReorderMeter::new();
        m.on_arrival(ms(0), late(500, 0), none);
        assert_eq!(m.length(), MAX_DISPLACEMENT as u16);
    }
}
