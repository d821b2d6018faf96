//! The redundancy accumulator (Sundararajan et al. §II-B, §V-A; Karafillis et al. §II
//! "Redundancy"): for every arrival from TCP, N += R and floor(N) combinations are sent, N keeping
//! the fractional part, so that R combinations are sent per arrival on average.
//!
//! The accumulator is kept in 16.16 fixed point so that a given R produces the same sequence of
//! counts on every platform (R = 1.25 is exact: 1, 1, 1, 2, 1, 1, 1, 2, ...).

pub use tcpnc_settings::{MAX_REDUNDANCY, RedundancyPolicy};

const ONE: u64 = 1 << 16;

/// Per-flow accumulator N.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedundancyAccumulator {
    /// R in 16.16 fixed point.
    step: u64,
    /// N in 16.16 fixed point (always < 1 between arrivals).
    acc: u64,
}

impl RedundancyAccumulator {
    /// An accumulator for `policy` with N = 0.
    pub fn new(policy: &RedundancyPolicy) -> Self {
        let r = policy.factor().clamp(1.0, MAX_REDUNDANCY);
        RedundancyAccumulator {
            step: (r * ONE as f64).round() as u64,
            acc: 0,
        }
    }

    /// Changes R for the following arrivals (the fraction N already accumulated is kept).
    pub fn set_factor(&mut self, r: f64) {
        let r = if r.is_finite() {
            r.clamp(1.0, MAX_REDUNDANCY)
        } else {
            1.0
        };
        self.step = (r * ONE as f64).round() as u64;
    }

    /// The current R.
    pub fn factor(&self) -> f64 {
        self.step as f64 / ONE as f64
    }

    /// One arrival: N += R, returns floor(N) and keeps N − floor(N). Always ≥ 1 since R ≥ 1.
    pub fn on_arrival(&mut self) -> u32 {
        self.acc += self.step;
        let n = self.acc / ONE;
        self.acc -= n * ONE;
        n as u32
    }

    /// The fractional part of N, for inspection.
    pub fn pending(&self) -> f64 {
        self.acc as f64 / ONE as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_one_sends_exactly_one() {
        let mut a = RedundancyAccumulator::new(&RedundancyPolicy::Fixed(1.0));
        for _ in 0..100 {
            assert_eq!(a.on_arrival(), 1);
        }
    }

    #[test]
    fn quarter_redundancy_pattern() {
        let mut a = RedundancyAccumulator::new(&RedundancyPolicy::Fixed(1.25));
        let v: Vec<u32> = (0..8).map(|_| a.on_arrival()).collect();
        assert_eq!(v, [1, 1, 1, 2, 1, 1, 1, 2]);
    }

    #[test]
    fn adaptive_starts_at_one_and_follows_set_factor() {
        let mut acc = RedundancyAccumulator::new(&RedundancyPolicy::adaptive());
        assert_eq!(acc.factor(), 1.0);
        assert_eq!(acc.on_arrival(), 1);
        acc.set_factor(1.5);
        assert_eq!(acc.factor(), 1.5);
        let total: u32 = (0..100).map(|_| acc.on_arrival()).sum();
        assert!((149..=151).contains(&total), "{total}");
        acc.set_factor(f64::NAN);
        assert_eq!(acc.factor(), 1.0);
    }

    #[test]
    fn long_run_average_matches_r() {
        for r in [1.0, 1.06, 1.1, 1.5, 2.0, 3.3] {
            let mut a = RedundancyAccumulator::new(&RedundancyPolicy::Fixed(r));
            let total: u64 = (0..10_000).map(|_| u64::from(a.on_arrival())).sum();
            let avg = total as f64 / 10_000.0;
            assert!((avg - r).abs() < 1e-3, "r={r} avg={avg}");
            assert!(a.pending() < 1.0);
        }
    }
}
