//! The redundancy accumulator (Sundararajan et al. §II-B, §V-A; Karafillis et al. §II
//! "Redundancy"): for every arrival from TCP, N += R and floor(N) combinations are sent, N keeping
//! the fractional part, so that R combinations are sent per arrival on average.
//!
//! The accumulator is kept in 16.16 fixed point so that a given R produces the same sequence of
//! counts on every platform (R = 1.25 is exact: 1, 1, 1, 2, 1, 1, 1, 2, ...).

use crate::config::ConfigError;

/// Largest accepted R.
pub const MAX_REDUNDANCY: f64 = 16.0;

const ONE: u64 = 1 << 16;

/// How many combinations an arrival produces.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum RedundancyPolicy {
    /// A fixed redundancy factor R ≥ 1 (§V-A: R = 1/(1 − p) in theory, tuned by trial).
    Fixed(f64),
    /// R follows the loss rate the NC-ACKs' loss bitmaps report (Ha & Tsuru §3.1; DESIGN
    /// "adaptive from the loss bitmap"): after every NC-ACK, R = [`RedundancyPolicy::for_loss`]
    /// of the sender's estimate p̂ ([`LossEstimator::random_loss_rate`]), at most `max`. Starts
    /// at 1 (no loss known); losses before the estimate catches up are left to the deficit
    /// repair.
    ///
    /// [`LossEstimator::random_loss_rate`]: crate::loss_tracker::LossEstimator::random_loss_rate
    Adaptive {
        /// Upper bound of R.
        max: f64,
    },
}

impl RedundancyPolicy {
    /// Checks that R is finite and in `[1, MAX_REDUNDANCY]` (R < 1 would skip "the new
    /// packet's" combination for some arrivals).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let r = match *self {
            RedundancyPolicy::Fixed(r) => r,
            RedundancyPolicy::Adaptive { max } => max,
        };
        if r.is_finite() && (1.0..=MAX_REDUNDANCY).contains(&r) {
            Ok(())
        } else {
            Err(ConfigError::Redundancy(r))
        }
    }

    /// The adaptive policy with the default bound (R ≤ 2, i.e. up to 50 % loss repaired by
    /// redundancy alone).
    pub const fn adaptive() -> RedundancyPolicy {
        RedundancyPolicy::Adaptive { max: 2.0 }
    }

    /// R for an estimated loss rate `p`: the fixed R, or [`RedundancyPolicy::for_loss`] bounded
    /// by `max`.
    pub fn factor_for(&self, p: f64) -> f64 {
        match *self {
            RedundancyPolicy::Fixed(r) => r,
            RedundancyPolicy::Adaptive { max } => {
                RedundancyPolicy::for_loss(p).factor().min(max).max(1.0)
            }
        }
    }

    /// R for a path with random loss rate `p` when deficit repair is on
    /// ([`RepairPolicy::Deficit`](crate::RepairPolicy::Deficit)): 1/(1 − p), the rate at which
    /// innovative combinations just keep up with new packets (§V-A), plus a margin of 0.4·p for
    /// the variance of the loss process (so that few deficits are left for the repair), rounded
    /// to 0.01; `p` is clamped to `[0, 0.9]`. Without loss R = 1: queue drops are the repair's
    /// job, not a standing overhead. Measured in `docs/lab.md` (R = 1.15 at 10 %, 1.07 at 5 %).
    pub fn for_loss(p: f64) -> RedundancyPolicy {
        let p = if p.is_finite() {
            p.clamp(0.0, 0.9)
        } else {
            0.0
        };
        let r = 1.0 / (1.0 - p) + 0.4 * p;
        RedundancyPolicy::Fixed(((r * 100.0).round() / 100.0).clamp(1.0, MAX_REDUNDANCY))
    }

    /// The nominal R (the starting R, 1, for the adaptive policy).
    pub fn factor(&self) -> f64 {
        match *self {
            RedundancyPolicy::Fixed(r) => r,
            RedundancyPolicy::Adaptive { .. } => 1.0,
        }
    }
}

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
    fn long_run_average_matches_r() {
        for r in [1.0, 1.06, 1.1, 1.5, 2.0, 3.3] {
            let mut a = RedundancyAccumulator::new(&RedundancyPolicy::Fixed(r));
            let total: u64 = (0..10_000).map(|_| u64::from(a.on_arrival())).sum();
            let avg = total as f64 / 10_000.0;
            assert!((avg - r).abs() < 1e-3, "r={r} avg={avg}");
            assert!(a.pending() < 1.0);
        }
    }

    #[test]
    fn r_for_loss() {
        let r = |p: f64| RedundancyPolicy::for_loss(p).factor();
        assert_eq!(r(0.0), 1.0);
        assert_eq!(r(0.05), 1.07);
        assert_eq!(r(0.1), 1.15);
        assert_eq!(r(0.2), 1.33);
        assert_eq!(r(-1.0), 1.0);
        assert_eq!(r(f64::NAN), 1.0);
        assert!(RedundancyPolicy::for_loss(0.95).validate().is_ok());
    }

    #[test]
    fn adaptive_follows_the_estimate_within_bounds() {
        let a = RedundancyPolicy::adaptive();
        assert_eq!(a.factor(), 1.0);
        assert_eq!(a.factor_for(0.0), 1.0);
        assert_eq!(a.factor_for(0.1), 1.15);
        assert_eq!(a.factor_for(0.8), 2.0);
        assert_eq!(RedundancyPolicy::Fixed(1.3).factor_for(0.5), 1.3);
        assert!(RedundancyPolicy::Adaptive { max: 0.5 }.validate().is_err());
        assert!(a.validate().is_ok());
        let mut acc = RedundancyAccumulator::new(&a);
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
    fn validation() {
        assert!(RedundancyPolicy::Fixed(1.0).validate().is_ok());
        assert!(RedundancyPolicy::Fixed(0.99).validate().is_err());
        assert!(RedundancyPolicy::Fixed(f64::INFINITY).validate().is_err());
        assert!(RedundancyPolicy::Fixed(17.0).validate().is_err());
    }
}
