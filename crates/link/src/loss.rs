//! Run-time state of a [`LossModel`].

use crate::config::LossModel;
use crate::rng::Rng;

/// A loss model plus its state (Gilbert-Elliott chain state, trace position).
#[derive(Debug, Clone)]
pub struct LossProcess {
    model: LossModel,
    in_bad: bool,
    trace_pos: usize,
}

impl LossProcess {
    /// Starts the process (Gilbert-Elliott in the good state, trace at position 0).
    pub fn new(model: LossModel) -> Self {
        Self {
            model,
            in_bad: false,
            trace_pos: 0,
        }
    }

    /// Decides the fate of the next packet: `true` = drop.
    ///
    /// Randomness consumed per call is fixed per model (0 for none/trace, 1 for
    /// Bernoulli, 2 for Gilbert-Elliott) so streams stay aligned across parameters.
    pub fn next_drop(&mut self, rng: &mut Rng) -> bool {
        match &self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => rng.chance(*p),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                let flip = if self.in_bad {
                    rng.chance(*p_bad_to_good)
                } else {
                    rng.chance(*p_good_to_bad)
                };
                if flip {
                    self.in_bad = !self.in_bad;
                }
                let p = if self.in_bad { *loss_bad } else { *loss_good };
                rng.chance(p)
            }
            LossModel::Trace { drops } => {
                let d = drops[self.trace_pos % drops.len()];
                self.trace_pos = (self.trace_pos + 1) % drops.len();
                d
            }
        }
    }

    /// Whether a Gilbert-Elliott chain is currently in its bad state.
    pub fn in_bad_state(&self) -> bool {
        self.in_bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(model: LossModel, n: usize, seed: u64) -> Vec<bool> {
        let mut rng = Rng::new(seed);
        let mut lp = LossProcess::new(model);
        (0..n).map(|_| lp.next_drop(&mut rng)).collect()
    }

    fn bursts(v: &[bool]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cur = 0;
        for &d in v {
            if d {
                cur += 1;
            } else if cur > 0 {
                out.push(cur);
                cur = 0;
            }
        }
        if cur > 0 {
            out.push(cur);
        }
        out
    }

    #[test]
    fn none_never_drops() {
        assert!(run(LossModel::None, 1000, 1).iter().all(|&d| !d));
    }

    #[test]
    fn bernoulli_rate_matches() {
        for (p, seed) in [(0.01, 1), (0.05, 2), (0.2, 3), (0.5, 4)] {
            let n = 200_000;
            let v = run(LossModel::bernoulli(p), n, seed);
            let rate = v.iter().filter(|&&d| d).count() as f64 / n as f64;
            assert!((rate - p).abs() < 0.1 * p + 0.002, "p={p} rate={rate}");
        }
        assert!(run(LossModel::bernoulli(1.0), 100, 5).iter().all(|&d| d));
        assert!(run(LossModel::bernoulli(0.0), 100, 5).iter().all(|&d| !d));
    }

    #[test]
    fn gilbert_elliott_mean_rate_and_burst_length() {
        for (loss, burst, seed) in [(0.05, 3.0, 11), (0.1, 5.0, 12), (0.2, 2.0, 13)] {
            let m = LossModel::gilbert_elliott_from_mean(loss, burst).unwrap();
            let n = 400_000;
            let v = run(m, n, seed);
            let rate = v.iter().filter(|&&d| d).count() as f64 / n as f64;
            assert!((rate - loss).abs() < 0.15 * loss, "loss={loss} rate={rate}");
            let b = bursts(&v);
            let mean_burst = b.iter().sum::<usize>() as f64 / b.len() as f64;
            assert!(
                (mean_burst - burst).abs() < 0.15 * burst,
                "burst={burst} measured={mean_burst}"
            );
        }
    }

    #[test]
    fn bernoulli_bursts_are_short() {
        // Sanity check that the GE burst test discriminates: Bernoulli(0.1) bursts ≈ 1.11.
        let v = run(LossModel::bernoulli(0.1), 200_000, 9);
        let b = bursts(&v);
        let mean_burst = b.iter().sum::<usize>() as f64 / b.len() as f64;
        assert!(mean_burst < 1.2, "{mean_burst}");
    }

    #[test]
    fn trace_repeats() {
        let t = vec![false, true, true, false, false];
        let v = run(LossModel::Trace { drops: t.clone() }, 12, 0);
        let expect: Vec<bool> = t.iter().cycle().take(12).copied().collect();
        assert_eq!(v, expect);
    }

    #[test]
    fn ge_lossy_good_state() {
        // loss in good state only, never enter bad: behaves like Bernoulli(loss_good).
        let m = LossModel::GilbertElliott {
            p_good_to_bad: 0.0,
            p_bad_to_good: 1.0,
            loss_good: 0.3,
            loss_bad: 1.0,
        };
        let v = run(m, 100_000, 21);
        let rate = v.iter().filter(|&&d| d).count() as f64 / 100_000.0;
        assert!((rate - 0.3).abs() < 0.02, "{rate}");
    }
}
