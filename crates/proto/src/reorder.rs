//! Unordering estimation at the sink (Ha & Tsuru §3.2).
//!
//! A combination whose Pid is below the newest Pid already received arrived out of order; its
//! *displacement* is how many Pids it was overtaken by (`newest − pid`). The paper's unordering
//! length L_u is the run of packets that arrive out of order; measured per period and averaged
//! with a simple moving average (SMA) so that it does not jump. Choices where the paper leaves
//! the detail open (docs/engine.md, "Reordering"):
//!
//! * L_u of a period is the largest displacement seen in it: the depth the sender must code
//!   around and the receiver must wait before calling a missing Pid lost. The paper's period is
//!   5 s; transfers of a few seconds would then never adapt, so the period here is
//!   [`PERIOD`] (1 s), and the SMA runs over the last [`PERIODS_KEPT`] periods.
//! * The reported length (`unordering` field of every NC-ACK, U flag when it changes) is the
//!   larger of the SMA and the current period's L_u, so that the onset of reordering is
//!   reported within the period it starts in, and its end after the SMA has decayed.
//! * A displacement beyond the loss bitmap's reach (32 Pids) cannot be told from a loss by the
//!   sender and is counted at 32.

use std::collections::VecDeque;
use std::time::Duration;

/// Length of one measurement period.
pub const PERIOD: Duration = Duration::from_secs(1);

/// Completed periods in the moving average.
pub const PERIODS_KEPT: usize = 4;

/// Largest displacement counted (the loss bitmap's reach).
pub const MAX_DISPLACEMENT: u32 = tcpnc_wire::AckRepr::BITMAP_PIDS;

/// The sink's unordering-length meter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReorderMeter {
    /// Start of the current period.
    period_start: Option<Duration>,
    /// L_u of the current period so far.
    current: u32,
    /// L_u of the last completed periods, newest last.
    kept: VecDeque<u32>,
    /// Late arrivals seen.
    late: u64,
}

impl ReorderMeter {
    /// No reordering seen.
    pub fn new() -> Self {
        Self::default()
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
            .chain(std::iter::repeat_n(0, ended - 1))
            .take(PERIODS_KEPT)
        {
            if self.kept.len() == PERIODS_KEPT {
                self.kept.pop_front();
            }
            self.kept.push_back(value);
        }
        self.current = 0;
        self.period_start = Some(start + PERIOD * ended as u32);
    }

    /// Records one arrival at `now`: `displacement` is `Some(newest − pid)` for a combination
    /// that arrived after a newer one, `None` for one in order.
    pub fn on_arrival(&mut self, now: Duration, displacement: Option<u32>) {
        self.roll(now);
        if let Some(d) = displacement {
            self.late += 1;
            self.current = self.current.max(d.min(MAX_DISPLACEMENT));
        }
    }

    /// The unordering length to report (Pids): `ceil` of the SMA of the kept periods' L_u, or
    /// the current period's L_u when larger.
    pub fn length(&self) -> u16 {
        let sum: u32 = self.kept.iter().sum();
        let sma = if self.kept.is_empty() {
            0
        } else {
            sum.div_ceil(self.kept.len() as u32)
        };
        sma.max(self.current) as u16
    }

    /// Late arrivals seen so far.
    pub fn late_arrivals(&self) -> u64 {
        self.late
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn in_order_traffic_has_no_unordering() {
        let mut m = ReorderMeter::new();
        for t in 0..5000 {
            m.on_arrival(ms(t), None);
        }
        assert_eq!(m.length(), 0);
        assert_eq!(m.late_arrivals(), 0);
    }

    #[test]
    fn onset_is_reported_at_once_and_decays_with_the_average() {
        let mut m = ReorderMeter::new();
        m.on_arrival(ms(0), None);
        m.on_arrival(ms(10), Some(6));
        m.on_arrival(ms(20), Some(3));
        assert_eq!(m.length(), 6, "the current period's largest displacement");
        // Four quiet periods later the period with 6 has left the average.
        m.on_arrival(ms(1500), None);
        assert_eq!(m.length(), 6);
        m.on_arrival(ms(2500), None);
        assert_eq!(m.length(), 3, "ceil((6 + 0) / 2)");
        m.on_arrival(ms(9000), None);
        assert_eq!(m.length(), 0);
        assert_eq!(m.late_arrivals(), 2);
    }

    #[test]
    fn displacement_is_capped_at_the_bitmap_reach() {
        let mut m = ReorderMeter::new();
        m.on_arrival(ms(0), Some(500));
        assert_eq!(m.length(), MAX_DISPLACEMENT as u16);
    }
}
