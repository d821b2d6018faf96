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

impl BurstFit {
    /// The mean length of a loss burst, packets.
    pub fn mean_burst(&self) -> f64 {
        1.0 / self.r
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
}
