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

impl BurstFit {
    /// The mean length of a loss burst, packets.
    pub fn mean_burst(&self) -> f64 {
        1.0 / self.r
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
