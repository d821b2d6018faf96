//! Loss burstiness (Ha & Tsuru §3.1): the judged record of Pids as a two-state Markov chain,
//! fitted as a simple Gilbert model ([`BurstFit`]).

/// Transitions between consecutive judged Pids (`[from][to]`, 0 = received, 1 = lost) and the
/// state of the last one: the counts of a two-state Markov chain (Ha & Tsuru §3.1, "loss
/// burstiness").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct BurstCounts {
    transitions: [[u64; 2]; 2],
    last: Option<bool>,
}

/// The path's loss as a simple Gilbert model (no loss in the good state, every packet lost in
/// the bad one), fitted from the judged record by maximum likelihood: `p` = P(good → bad) per
/// packet, `r` = P(bad → good). Mean loss `p / (p + r)`, mean burst `1 / r` packets: the same
/// parametrisation as the emulator's `--burst` (docs/link.md), so a fit of the lab's
/// Gilbert-Elliott path returns its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstFit {
    /// P(good → bad) per packet.
    pub p: f64,
    /// P(bad → good) per packet.
    pub r: f64,
}

/// The share of loss bursts the coding window covers ([`BurstFit::cover`]).
pub const BURST_COVER_QUANTILE: f64 = 0.99;

/// The widest window [`BurstFit::cover`] asks for: a combination costs the sender and the
/// receiver one multiply-add per packet in its window, and a path whose bursts need more is
/// left to the deficit repair.
pub const BURST_COVER_MAX: u16 = 64;

/// The most consecutive packets [`BurstFit::losses_above`] counts over (an NC-ACK's loss
/// bitmap spans 32 Pids, docs/wire.md).
pub const LOSS_COUNT_SPAN: u32 = 32;

/// The most losses [`BurstFit::lost_at_least`] counts exactly.
pub const MAX_COUNTED: usize = 64;

impl BurstFit {
    /// The mean length of a loss burst, packets.
    pub fn mean_burst(&self) -> f64 {
        1.0 / self.r
    }

    /// The share of the loss that is a burst's first packet, relative to independent loss at
    /// the same rate: `r / (1 − π)` with π = `p / (p + r)` the mean loss, at most 1 (issue 10
    /// mechanism 4, `burst_redundancy`). Independent loss (`r = 1 − π`) gives 1; bursts of mean
    /// 4 at 5 % give 0.26, bursts of mean 8 give 0.13. A burst's first loss is as unforeseeable
    /// as an independent one; the rest of it follows the first and is reported together with it, so
    /// the NC-ACK's deficit repair answers it exactly where redundancy spread over every
    /// window would mostly arrive between bursts, to no use (docs/engine.md "Burst-aware
    /// redundancy").
    pub fn event_share(&self) -> f64 {
        let mean = self.p / (self.p + self.r);
        if !(self.p > 0.0 && self.r > 0.0 && mean < 1.0) {
            return 1.0; // no loss, no burst ended, or nothing but loss: nothing to go by
        }
        (self.r / (1.0 - mean)).min(1.0)
    }

    /// The coding window that keeps the seen-ACK moving through a loss burst (issue 10
    /// mechanism 4). A burst of `L` combinations leaves the receiver `L` degrees of freedom
    /// short; the next combination makes the first unseen packet *seen* (Sundararajan et al.
    /// §IV-A) only if its window reaches back to it, `L` packets before its own, so the window
    /// must be at least `L + 1`. Burst lengths of the simple Gilbert model are geometric,
    /// P(L > n) = (1 − r)ⁿ, so the [`BURST_COVER_QUANTILE`] quantile is
    /// ⌈ln(1 − 0.99) / ln(1 − r)⌉; the cover is that plus one, at most [`BURST_COVER_MAX`].
    /// Independent loss (r near 1) asks for 2; bursts of mean 4 for 18, of mean 8 for 36.
    pub fn cover(&self) -> u16 {
        let stay = 1.0 - self.r;
        let quantile = if stay <= 0.0 {
            1.0
        } else if stay >= 1.0 || stay.is_nan() {
            f64::from(BURST_COVER_MAX)
        } else {
            ((1.0 - BURST_COVER_QUANTILE).ln() / stay.ln())
                .ceil()
                .max(1.0)
        };
        (quantile + 1.0).min(f64::from(BURST_COVER_MAX)) as u16
    }

    /// The fewest losses among `n` (at most [`LOSS_COUNT_SPAN`]) consecutive packets that
    /// this Gilbert model produces with probability at most `tail`: the smallest `k` with
    /// P[losses ≥ k] ≤ `tail`, the chain started in its stationary state (`n + 1` when even
    /// `n` losses are more likely than that, or for a fit that is not a chain).
    pub fn losses_above(&self, n: u32, tail: f64) -> u32 {
        let n = n.min(LOSS_COUNT_SPAN);
        if !self.is_chain() || n == 0 {
            return n + 1;
        }
        // Counted up to n + 1 losses, which n packets never reach: the whole distribution.
        let (counts, _) = self.loss_counts(n, n as usize + 1);
        let mut above = 0.0;
        for k in (0..=n as usize).rev() {
            above += counts[k];
            if above > tail {
                return k as u32 + 1;
            }
        }
        0
    }

    /// Whether `p` and `r` are probabilities of a chain that ever moves.
    fn is_chain(&self) -> bool {
        let (p, r) = (self.p, self.r);
        (0.0..=1.0).contains(&p) && (0.0..=1.0).contains(&r) && p + r > 0.0
    }

    /// P[at least `m` of `n` consecutive packets lost] under this Gilbert model, the chain
    /// started in its stationary state: the chance that a loss burst takes `m` of a flight's
    /// last `n` combinations (the tail repair's sizing, `tail_repair::needed_in_bursts`).
    /// Exact for `m` ≤ [`MAX_COUNTED`]; a larger `m` is counted as that, an upper bound. A fit
    /// that is not a chain gives 0 (it says nothing beyond the mean loss rate).
    pub fn lost_at_least(&self, n: u32, m: u32) -> f64 {
        let m = (m as usize).min(MAX_COUNTED);
        if m == 0 {
            return 1.0;
        }
        if !self.is_chain() || n < m as u32 {
            return 0.0;
        }
        self.loss_counts(n, m).1.clamp(0.0, 1.0)
    }

    /// The losses among `n` ≥ 1 consecutive packets, following the chain's state and loss
    /// count from its stationary state: P(c losses) for each c < `m` (1 ≤ `m` ≤
    /// [`MAX_COUNTED`]), and P(at least `m`).
    fn loss_counts(&self, n: u32, m: usize) -> ([f64; MAX_COUNTED], f64) {
        let (p, r) = (self.p, self.r);
        // good[c], bad[c]: P(c < m losses so far and the latest packet in that state);
        // `reached`: P(m losses reached).
        let mut good = [0.0; MAX_COUNTED];
        let mut bad = good;
        let first_lost = p / (p + r);
        good[0] = 1.0 - first_lost;
        let mut reached = if m == 1 { first_lost } else { 0.0 };
        if m > 1 {
            bad[1] = first_lost;
        }
        for _ in 1..n {
            let (was_good, was_bad) = (good, bad);
            good = [0.0; MAX_COUNTED];
            bad = good;
            for c in 0..m {
                good[c] += was_good[c] * (1.0 - p) + was_bad[c] * r;
                let lost = was_good[c] * p + was_bad[c] * (1.0 - r);
                if c + 1 < m {
                    bad[c + 1] += lost;
                } else {
                    reached += lost;
                }
            }
        }
        for c in 0..m {
            good[c] += bad[c];
        }
        (good, reached)
    }
}

/// [`BurstFit::losses_above`] over an NC-ACK's bitmap for the latest fit, computed again only
/// when the fit moved by more than [`RECOUNT_SHIFT`] of `p` or `r` (a few thousand operations
/// an NC-ACK otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BitmapLossBound {
    counted: Option<(BurstFit, u32)>,
}

/// Relative change of `p` or `r` after which [`BitmapLossBound`] counts again.
pub const RECOUNT_SHIFT: f64 = 0.05;

/// The share of a random-loss path's loss bitmaps allowed to reach [`BitmapLossBound`]
/// (the binomial rule's "about once in 10^4 bitmaps", `repair::congestion_threshold`).
pub const BITMAP_TAIL: f64 = 1e-4;

impl BitmapLossBound {
    /// The fewest losses among [`LOSS_COUNT_SPAN`] Pids that the path's random loss, fitted
    /// as `fit`, reaches in at most [`BITMAP_TAIL`] of the bitmaps.
    pub fn losses(&mut self, fit: BurstFit) -> u32 {
        let moved = |a: f64, b: f64| (a - b).abs() > RECOUNT_SHIFT * b;
        match self.counted {
            Some((at, losses)) if !moved(fit.p, at.p) && !moved(fit.r, at.r) => losses,
            _ => {
                let losses = fit.losses_above(LOSS_COUNT_SPAN, BITMAP_TAIL);
                self.counted = Some((fit, losses));
                losses
            }
        }
    }
}

impl BurstCounts {
    /// Counts the next judged Pid.
    pub(crate) fn record(&mut self, lost: bool) {
        if let Some(prev) = self.last {
            self.transitions[usize::from(prev)][usize::from(lost)] += 1;
        }
        self.last = Some(lost);
    }

    /// Loss bursts that ended (a lost Pid followed by a received one).
    pub(crate) fn bursts_ended(&self) -> u64 {
        self.transitions[1][0]
    }

    /// The next Pid recorded does not follow the last one (Pids were skipped).
    pub(crate) fn break_run(&mut self) {
        self.last = None;
    }

    /// The maximum-likelihood fit, once a loss burst has ended (`None` before).
    pub(crate) fn fit(&self) -> Option<BurstFit> {
        let [[gg, gb], [bg, bb]] = self.transitions;
        if bg == 0 || gg + gb == 0 {
            return None;
        }
        Some(BurstFit {
            p: gb as f64 / (gg + gb) as f64,
            r: bg as f64 / (bg + bb) as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_share_is_one_for_independent_loss_and_falls_with_the_burst() {
        // Independent loss at 5 %: P(bad → good) = 0.95.
        let iid = BurstFit { p: 0.05, r: 0.95 };
        assert!((iid.event_share() - 1.0).abs() < 1e-12);
        // The lab's Gilbert-Elliott 5 %, bursts of 4 and 8: p = π·r / (1 − π).
        let ge = |pi: f64, burst: f64| {
            let r = 1.0 / burst;
            BurstFit {
                p: pi * r / (1.0 - pi),
                r,
            }
        };
        assert!((ge(0.05, 4.0).event_share() - 0.25 / 0.95).abs() < 1e-9);
        assert!((ge(0.05, 8.0).event_share() - 0.125 / 0.95).abs() < 1e-9);
        // A fit noisier than independent loss (shorter runs than chance) stays at 1, and a
        // fit with no burst ended (r = 0) or no good state gives 1.
        assert_eq!(BurstFit { p: 0.1, r: 0.99 }.event_share(), 1.0);
        assert_eq!(BurstFit { p: 0.1, r: 0.0 }.event_share(), 1.0);
        assert_eq!(BurstFit { p: 0.0, r: 0.5 }.event_share(), 1.0);
    }

    /// The cover is the 99th percentile of the geometric burst length plus one, bounded.
    #[test]
    fn the_cover_reaches_past_ninety_nine_bursts_in_a_hundred() {
        let cover = |mean: f64| {
            BurstFit {
                p: 0.01,
                r: 1.0 / mean,
            }
            .cover()
        };
        assert_eq!(cover(1.0), 2);
        assert_eq!(cover(1.1), 3);
        assert_eq!(cover(4.0), 18);
        assert_eq!(cover(8.0), 36);
        assert_eq!(cover(100.0), BURST_COVER_MAX);
        for mean in [2.0, 4.0, 8.0, 12.0] {
            let stay = 1.0 - 1.0 / mean;
            let l = f64::from(cover(mean) - 1);
            // P(L > cover − 1) ≤ 1 %, and one packet less would not do.
            assert!(stay.powf(l) <= 0.01 + 1e-12, "{mean}");
            assert!(stay.powf(l - 1.0) > 0.01, "{mean}");
        }
        assert_eq!(BurstFit { p: 0.0, r: 0.0 }.cover(), BURST_COVER_MAX);
        assert_eq!(
            BurstFit {
                p: 0.0,
                r: f64::NAN
            }
            .cover(),
            BURST_COVER_MAX
        );
    }

    /// Independent loss (p + r = 1) counts as a binomial; bursts of the same mean loss make
    /// long runs of losses in 32 Pids far more likely.
    #[test]
    fn losses_above_follows_the_binomial_and_the_bursts() {
        let binomial_tail = |n: u32, q: f64, k: u32| -> f64 {
            let mut total = 0.0;
            for j in k..=n {
                let mut c = 1.0;
                for i in 0..j {
                    c *= f64::from(n - i) / f64::from(i + 1);
                }
                total += c * q.powi(j as i32) * (1.0 - q).powi((n - j) as i32);
            }
            total
        };
        for q in [0.01, 0.05, 0.1, 0.2] {
            let k = BurstFit { p: q, r: 1.0 - q }.losses_above(32, 1e-4);
            assert!(binomial_tail(32, q, k) <= 1e-4, "{q} {k}");
            assert!(binomial_tail(32, q, k - 1) > 1e-4, "{q} {k}");
        }
        // 10 % in bursts of mean 8: a whole bitmap lost is more likely than 1e-4.
        let bursty = BurstFit {
            p: 0.1 / 0.9 / 8.0,
            r: 1.0 / 8.0,
        };
        assert_eq!(bursty.losses_above(32, 1e-4), 33);
        // 5 % in bursts of 4 sits between.
        let k = BurstFit {
            p: 0.05 / 0.95 / 4.0,
            r: 0.25,
        }
        .losses_above(32, 1e-4);
        assert!((20..=32).contains(&k), "{k}");
        assert_eq!(BurstFit { p: 0.0, r: 0.0 }.losses_above(32, 1e-4), 33);
        assert_eq!(BurstFit { p: 0.0, r: 1.0 }.losses_above(32, 1e-4), 1);
        assert_eq!(
            BurstFit {
                p: f64::NAN,
                r: 1.0
            }
            .losses_above(32, 1e-4),
            33
        );
    }

    /// The bound is counted once per fit and again only when the fit moves by more than
    /// `RECOUNT_SHIFT`.
    #[test]
    fn the_bitmap_bound_follows_the_fit() {
        let mut bound = BitmapLossBound::default();
        let bursty = BurstFit { p: 0.0066, r: 0.25 };
        let k = bound.losses(bursty);
        assert_eq!(k, bursty.losses_above(LOSS_COUNT_SPAN, BITMAP_TAIL));
        // A small move keeps the count; a large one recounts.
        assert_eq!(bound.losses(BurstFit { p: 0.0068, r: 0.25 }), k);
        let independent = BurstFit { p: 0.05, r: 0.95 };
        assert_eq!(
            bound.losses(independent),
            independent.losses_above(LOSS_COUNT_SPAN, BITMAP_TAIL)
        );
        assert!(bound.losses(independent) < k);
    }

    /// `lost_at_least` against every loss pattern of up to 10 packets weighed by the chain
    /// (a naive oracle), and against the binomial when the chain forgets its state (p + r = 1).
    #[test]
    fn lost_at_least_matches_enumeration() {
        let oracle = |fit: BurstFit, n: u32, m: u32| -> f64 {
            let start = fit.p / (fit.p + fit.r);
            let mut total = 0.0;
            for pattern in 0u32..(1 << n) {
                let lost = |i: u32| pattern >> i & 1 == 1;
                let mut prob = if lost(0) { start } else { 1.0 - start };
                for i in 1..n {
                    let stay_bad = if lost(i) { 1.0 - fit.r } else { fit.r };
                    let from_good = if lost(i) { fit.p } else { 1.0 - fit.p };
                    prob *= if lost(i - 1) { stay_bad } else { from_good };
                }
                if pattern.count_ones() >= m {
                    total += prob;
                }
            }
            total
        };
        for fit in [
            BurstFit { p: 0.0132, r: 0.25 },
            BurstFit { p: 0.05, r: 0.95 },
            BurstFit { p: 0.3, r: 0.1 },
        ] {
            for n in 1..=10 {
                for m in 0..=n + 1 {
                    let (got, want) = (fit.lost_at_least(n, m), oracle(fit, n, m));
                    assert!((got - want).abs() < 1e-12, "{fit:?} {n} {m}: {got} {want}");
                }
            }
        }
        // Independent loss: P[Binomial(12, 0.1) ≥ 3] = 0.110870.
        let independent = BurstFit { p: 0.1, r: 0.9 };
        assert!((independent.lost_at_least(12, 3) - 0.110_870).abs() < 1e-6);
        assert_eq!(BurstFit { p: 0.0, r: 0.0 }.lost_at_least(12, 3), 0.0);
        assert_eq!(independent.lost_at_least(12, 0), 1.0);
    }
}
