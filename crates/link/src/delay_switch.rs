//! Delay switching: the propagation delay of a path that changes every δ (Ha & Tsuru §4.2,
//! after their reference [8]). Every interval `[kδ, (k+1)δ)` has its own one-way delay drawn
//! from a normal distribution around the link's configured delay with standard deviation σ,
//! clipped at zero; a packet leaving the bottleneck in an interval takes that interval's delay.
//! When the delay falls at a switch, packets sent after it overtake those sent before (if the
//! link allows reordering, [`crate::Jitter::allow_reordering`]).
//!
//! The paper's setting is a mean of 200τ + 50 ms with σ = 200τ/3 ms, τ ∈ [0, 2], and
//! δ ∈ {50, 250, 500, 1000} ms.

use std::time::Duration;

use crate::rng::Rng;

/// The delay-switching model of one link direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelaySwitch {
    /// δ, the time between switches (must be > 0).
    pub every: Duration,
    /// σ, the standard deviation of each interval's delay around the configured delay.
    pub sd: Duration,
}

/// The delay of the current interval, drawn lazily when a packet first needs it.
#[derive(Debug, Clone, Default)]
pub(crate) struct SwitchedDelay {
    /// Index of the interval `delay` belongs to.
    slot: Option<u128>,
    delay: Duration,
}

impl SwitchedDelay {
    /// The one-way delay of a packet leaving at `t`. Intervals in which no packet left draw
    /// nothing (each interval's delay is independent, so skipping them changes no
    /// distribution), which keeps the cost per packet constant after idle periods.
    pub(crate) fn at(
        &mut self,
        t: Duration,
        mean: Duration,
        model: &DelaySwitch,
        rng: &mut Rng,
    ) -> Duration {
        let slot = t.as_nanos() / model.every.as_nanos().max(1);
        if self.slot != Some(slot) {
            let secs = mean.as_secs_f64() + model.sd.as_secs_f64() * standard_normal(rng);
            self.delay = Duration::from_secs_f64(secs.max(0.0));
            self.slot = Some(slot);
        }
        self.delay
    }
}

/// One standard normal draw (Box–Muller, two uniforms, the cosine branch).
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64(); // (0, 1]: ln is finite
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn normal_draws_have_the_right_moments() {
        let mut rng = Rng::new(7);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| standard_normal(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02, "mean {mean}");
        assert!((var - 1.0).abs() < 0.03, "variance {var}");
    }

    /// One delay per interval, a new one after each switch; the long-run mean and spread are
    /// the configured ones (τ = 1: mean 250 ms, σ 66.7 ms: clipping at zero is negligible).
    #[test]
    fn one_delay_per_interval_with_the_configured_spread() {
        let model = DelaySwitch {
            every: ms(50),
            sd: Duration::from_secs_f64(0.2 / 3.0),
        };
        let mut rng = Rng::new(3);
        let mut d = SwitchedDelay::default();
        let first = d.at(ms(0), ms(250), &model, &mut rng);
        assert_eq!(d.at(ms(49), ms(250), &model, &mut rng), first);
        assert_ne!(d.at(ms(50), ms(250), &model, &mut rng), first);
        let draws: Vec<f64> = (1..20_000u64)
            .map(|k| d.at(ms(50 * k), ms(250), &model, &mut rng).as_secs_f64())
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd =
            (draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        assert!((mean - 0.25).abs() < 0.003, "mean {mean}");
        assert!((sd - 0.2 / 3.0).abs() < 0.003, "sd {sd}");
    }

    #[test]
    fn delays_are_clipped_at_zero() {
        let model = DelaySwitch {
            every: ms(1),
            sd: ms(100),
        };
        let mut rng = Rng::new(1);
        let mut d = SwitchedDelay::default();
        let zeros = (0..1000u64)
            .filter(|&k| d.at(ms(k), ms(10), &model, &mut rng).is_zero())
            .count();
        assert!(zeros > 300, "{zeros} of 1000 clipped"); // P(N(10,100) < 0) ≈ 0.46
    }
}
