//! What several rounds of `tcpnc lab speed` say together: each case's median, lowest and
//! highest goodput and CPU per GB, and each nc case's goodput over mode `off`'s **of the same
//! round** (the cases of a round run one after the other, so the ratio of a round compares
//! runs made under the same machine load; DEVELOPERS.md: medians over runs, with the spread).

use serde::Serialize;
use serde_json::{Value, json};

use tcpnc_settings::PathMode;

use crate::speed::SpeedResult;

/// The median of `v` (the mean of the two middle values for an even count; 0 when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Each result as JSON with its round (`round`, from 1): the `results` of `tcpnc lab speed`
/// and `tcpnc bench gateway` with `--rounds`.
pub fn with_rounds<T: Serialize>(rounds: &[(usize, T)]) -> Vec<Value> {
    rounds
        .iter()
        .map(|(round, r)| {
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            v["round"] = json!(round);
            v
        })
        .collect()
}

/// Median, lowest and highest of some runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The lowest.
    pub min: f64,
    /// The highest.
    pub max: f64,
}

impl Spread {
    /// The spread of `v`, or `None` when it is empty.
    pub fn of(v: Vec<f64>) -> Option<Spread> {
        let min = v.iter().copied().reduce(f64::min)?;
        let max = v.iter().copied().reduce(f64::max)?;
        Some(Spread {
            median: median(v),
            min,
            max,
        })
    }
}

/// One case over the rounds (`summary` in `tcpnc lab speed --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseSummary {
    /// The case's label (`off`, `nc W12 R1.0`, ...).
    pub case: String,
    /// Runs of the case.
    pub runs: usize,
    /// Goodput, Mbit/s.
    pub goodput_mbit: Spread,
    /// CPU seconds of the gateway pair per GB.
    pub cpu_s_per_gb: Spread,
    /// An nc case's goodput over mode `off`'s in the same round, over the rounds that ran both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_off: Option<Spread>,
}

/// Each case of `results` (`(round, result)`, in any order), in the order the cases first
/// appear.
pub fn summarize(results: &[(usize, SpeedResult)]) -> Vec<CaseSummary> {
    let mut labels: Vec<String> = Vec::new();
    for (_, r) in results {
        let label = r.case.label();
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    let off_of = |round: usize| {
        results
            .iter()
            .find(|(n, r)| *n == round && r.case.mode != PathMode::Nc)
            .map(|(_, r)| r.goodput_mbit)
    };
    labels
        .into_iter()
        .filter_map(|label| {
            let runs: Vec<&(usize, SpeedResult)> = results
                .iter()
                .filter(|(_, r)| r.case.label() == label)
                .collect();
            let nc = runs.iter().any(|(_, r)| r.case.mode == PathMode::Nc);
            let ratios: Vec<f64> = runs
                .iter()
                .filter_map(|(n, r)| off_of(*n).filter(|o| *o > 0.0).map(|o| r.goodput_mbit / o))
                .collect();
            Some(CaseSummary {
                runs: runs.len(),
                goodput_mbit: Spread::of(runs.iter().map(|(_, r)| r.goodput_mbit).collect())?,
                cpu_s_per_gb: Spread::of(runs.iter().map(|(_, r)| r.cpu_s_per_gb).collect())?,
                over_off: if nc { Spread::of(ratios) } else { None },
                case: label,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use tcpnc_settings::{CodingScheme, Switch};

    use super::*;
    use crate::speed::SpeedCase;

    fn result(case: &SpeedCase, goodput_mbit: f64, cpu_s_per_gb: f64) -> SpeedResult {
        SpeedResult::for_test(*case, goodput_mbit, cpu_s_per_gb)
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
        assert_eq!(Spread::of(Vec::new()), None);
    }

    /// Each nc run is divided by mode off's run of its own round, not by off's median: the
    /// ratios here are 0.5, 0.75 and 0.8 although off's median is 200.
    #[test]
    fn ratios_are_per_round() {
        let cases = SpeedCase::set(true, &[12], &[1.0], &[CodingScheme::Dense], &[Switch::On]);
        let (off, nc) = (&cases[0], &cases[1]);
        let rounds = [(1, 100.0, 50.0), (2, 200.0, 150.0), (3, 250.0, 200.0)];
        let mut results = Vec::new();
        for (round, o, n) in rounds {
            results.push((round, result(off, o, 3.0)));
            results.push((round, result(nc, n, f64::from(round as u32))));
        }
        let s = summarize(&results);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].case.as_str(), s[0].runs, s[0].over_off),
            ("off", 3, None)
        );
        assert_eq!(
            s[0].goodput_mbit,
            Spread {
                median: 200.0,
                min: 100.0,
                max: 250.0
            }
        );
        assert_eq!(s[1].case, "nc W12 R1.0");
        assert_eq!(
            s[1].cpu_s_per_gb,
            Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0
            }
        );
        assert_eq!(
            s[1].over_off,
            Some(Spread {
                median: 0.75,
                min: 0.5,
                max: 0.8
            })
        );
        // Without an off run there is no ratio.
        let nc_only: Vec<_> = results.into_iter().filter(|(_, r)| r.case == *nc).collect();
        assert_eq!(summarize(&nc_only)[0].over_off, None);
    }
}
