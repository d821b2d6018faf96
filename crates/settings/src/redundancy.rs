//! The redundancy policy (Sundararajan et al. §II-B, §V-A; Ha & Tsuru §3.1; Karafillis et al.
//! §II Fig. 1): how many combinations each arrival from TCP produces on average. Written as a
//! number (a fixed R), `"auto"` (R follows the loss the NC-ACKs report) or `"ra:S"` (Karafillis'
//! adjusted R_a for a success rate S, from the same loss estimate) in configs, flags, plans and
//! JSON.

use std::fmt;
use std::str::FromStr;

/// Largest accepted R.
pub const MAX_REDUNDANCY: f64 = 16.0;

/// Upper bound of the adaptive R: up to 50 % loss repaired by redundancy alone.
pub const ADAPTIVE_MAX_REDUNDANCY: f64 = 2.0;

/// Packets per block whose delivery the adjusted redundancy R_a secures (Karafillis et al.
/// Fig. 1): the pseudo-block of their PB repair (100 packets, §II), also their smallest file
/// (Table I: 250 packets) scale. The figure's algorithm is not in the paper's text; see
/// [`RedundancyPolicy::for_success_rate`].
pub const RA_BLOCK: u32 = 100;

/// The adaptive policy's margin over 1/(1 − p), as a multiple of p
/// ([`RedundancyPolicy::for_loss`]): 0.1 since wire version 2, whose repairs cover the whole
/// coding buffer (0.4 before; docs/engine.md "Adaptive redundancy").
pub const ADAPTIVE_MARGIN: f64 = 0.1;

/// How many combinations an arrival produces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RedundancyPolicy {
    /// A fixed redundancy factor R ≥ 1 (§V-A: R = 1/(1 − p) in theory, tuned by trial).
    Fixed(f64),
    /// R follows the loss rate the NC-ACKs' loss bitmaps report (Ha & Tsuru §3.1): after every
    /// NC-ACK, R = [`RedundancyPolicy::for_loss`] of the sender's random-loss estimate p̂, at
    /// most `max`. Starts at 1 (no loss known); losses before the estimate catches up are left
    /// to the deficit repair. Written `"auto"` (or `"auto:MAX"` for another bound).
    Adaptive {
        /// Upper bound of R.
        max: f64,
    },
    /// Karafillis et al.'s adjusted redundancy R_a (§II, Fig. 1) for a target success rate `s`:
    /// after every NC-ACK, R = [`RedundancyPolicy::for_success_rate`] of the sender's
    /// random-loss estimate p̂ (as `auto`), at most [`MAX_REDUNDANCY`]. Starts at 1. Written
    /// `"ra:S"`, e.g. `"ra:0.9"` (the paper's default S = 90 %).
    SuccessRate {
        /// Target probability that a block of [`RA_BLOCK`] packets is delivered by its
        /// `R·RA_BLOCK` combinations, in (0, 1).
        s: f64,
    },
}

impl Default for RedundancyPolicy {
    /// `"auto"`: the gateways are not told the loss rate; they measure it (docs/lab.md).
    fn default() -> Self {
        RedundancyPolicy::adaptive()
    }
}

impl RedundancyPolicy {
    /// The adaptive policy with the default bound [`ADAPTIVE_MAX_REDUNDANCY`].
    pub const fn adaptive() -> RedundancyPolicy {
        RedundancyPolicy::Adaptive {
            max: ADAPTIVE_MAX_REDUNDANCY,
        }
    }

    /// The R that bounds the policy: the fixed R, or the adaptive maximum.
    pub fn bound(&self) -> f64 {
        match *self {
            RedundancyPolicy::Fixed(r) => r,
            RedundancyPolicy::Adaptive { max } => max,
            RedundancyPolicy::SuccessRate { .. } => MAX_REDUNDANCY,
        }
    }

    /// Whether R is finite and in `[1, MAX_REDUNDANCY]` (R < 1 would skip "the new packet's"
    /// combination for some arrivals), and a success rate in (0, 1).
    pub fn is_valid(&self) -> bool {
        if let RedundancyPolicy::SuccessRate { s } = *self
            && !(s > 0.0 && s < 1.0)
        {
            return false;
        }
        let r = self.bound();
        r.is_finite() && (1.0..=MAX_REDUNDANCY).contains(&r)
    }

    /// Whether R follows the sender's loss estimate (`auto`, `ra:S`).
    pub fn adapts(&self) -> bool {
        !matches!(self, RedundancyPolicy::Fixed(_))
    }

    /// R for an estimated loss rate `p`: the fixed R, or [`RedundancyPolicy::for_loss`]
    /// bounded by `max`.
    pub fn factor_for(&self, p: f64) -> f64 {
        match *self {
            RedundancyPolicy::Fixed(r) => r,
            RedundancyPolicy::Adaptive { max } => {
                RedundancyPolicy::for_loss(p).factor().min(max).max(1.0)
            }
            RedundancyPolicy::SuccessRate { s } => RedundancyPolicy::for_success_rate(p, s),
        }
    }

    /// Karafillis et al.'s adjusted redundancy R_a (§II, Fig. 1) for loss rate `p` and target
    /// success rate `s`: the smallest R = n / [`RA_BLOCK`] such that `n` combinations, each
    /// lost independently with probability `p`, deliver at least [`RA_BLOCK`] of them with
    /// probability ≥ `s` (a binomial tail, P[Bin(n, 1 − p) ≥ B] ≥ S), at most
    /// [`MAX_REDUNDANCY`]; 1 without loss. The paper gives the theoretical R = 1/(1 − p) as its
    /// mean and R_a as the value that reaches S; Fig. 1's pseudocode is not in the text we
    /// have, so this is the reading of its definition ("an adjusted redundancy factor R_a that
    /// is calculated to achieve a transmission success rate S"): at p = 10 %, S = 90 %,
    /// R_a = 1.16 against 1/(1 − p) = 1.11 (the margin the adaptive `auto` adds as 0.1·p̂ is
    /// here the binomial quantile).
    pub fn for_success_rate(p: f64, s: f64) -> f64 {
        let p = if p.is_finite() {
            p.clamp(0.0, 0.9)
        } else {
            0.0
        };
        if p == 0.0 {
            return 1.0;
        }
        let s = if s.is_finite() {
            s.clamp(0.0, 0.999_999)
        } else {
            0.9
        };
        // With B = RA_BLOCK, q = 1 − p: tail(n) = P[Bin(n, q) ≥ B] and
        // m(n) = P[Bin(n, q) = B − 1], from n = B: tail(n + 1) = tail(n) + q·m(n),
        // m(n + 1) = m(n)·p·(n + 1)/(n + 2 − B). O(16·B) steps, no allocation.
        let b = f64::from(RA_BLOCK);
        let q = 1.0 - p;
        let mut tail = q.powf(b);
        let mut m = b * q.powf(b - 1.0) * p;
        let mut n = b;
        while n <= MAX_REDUNDANCY * b {
            if tail >= s {
                return n / b;
            }
            tail += q * m;
            m *= p * (n + 1.0) / (n + 2.0 - b);
            n += 1.0;
        }
        MAX_REDUNDANCY
    }

    /// R for a path with random loss rate `p` when the deficit repair is on: 1/(1 − p), the
    /// rate at which innovative combinations just keep up with new packets (§V-A), plus a
    /// margin of [`ADAPTIVE_MARGIN`]·p for the variance of the loss process (the deficit
    /// repair, a round trip later, takes the rest), rounded to 0.01; `p` is clamped to
    /// `[0, 0.9]`. Without loss R = 1: queue drops are the repair's job, not a standing
    /// overhead. Measured in `docs/lab.md` (R = 1.12 at 10 %, 1.06 at 5 %, 1.27 at 20 %).
    pub fn for_loss(p: f64) -> RedundancyPolicy {
        let p = if p.is_finite() {
            p.clamp(0.0, 0.9)
        } else {
            0.0
        };
        let r = 1.0 / (1.0 - p) + ADAPTIVE_MARGIN * p;
        RedundancyPolicy::Fixed(((r * 100.0).round() / 100.0).clamp(1.0, MAX_REDUNDANCY))
    }

    /// R for a simulated path whose loss rate `loss` the run knows in advance (the
    /// simulator's and experiment plans' default): 1/(1 − p) (§V-A) plus a margin of
    /// 0.03 + 0.3·p for the variance of the loss process at a finite W (the paper's experiment
    /// also found its best R above 1/(1 − p), §VI); R = 1 without loss. Measured in docs/sim.md
    /// (10 Mbit/s, 20 ms, W = 16): below about 1/(1 − p) + 0.04 the code stops masking the loss
    /// and goodput collapses; above it, each extra 0.05 of R costs ~4 %.
    pub fn for_known_loss(loss: f64) -> f64 {
        let p = loss.clamp(0.0, 0.9);
        if p == 0.0 {
            return 1.0;
        }
        (1.0 / (1.0 - p) + 0.03 + 0.3 * p).clamp(1.0, MAX_REDUNDANCY)
    }

    /// The nominal R (the starting R, 1, for the adaptive policy).
    pub fn factor(&self) -> f64 {
        match *self {
            RedundancyPolicy::Fixed(r) => r,
            RedundancyPolicy::Adaptive { .. } | RedundancyPolicy::SuccessRate { .. } => 1.0,
        }
    }
}

impl fmt::Display for RedundancyPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RedundancyPolicy::Fixed(r) => write!(f, "{r}"),
            RedundancyPolicy::Adaptive { max } if max == ADAPTIVE_MAX_REDUNDANCY => {
                f.write_str("auto")
            }
            RedundancyPolicy::Adaptive { max } => write!(f, "auto:{max}"),
            RedundancyPolicy::SuccessRate { s } => write!(f, "ra:{s}"),
        }
    }
}

/// Why a redundancy could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RedundancyError {
    /// Neither a number nor `auto` nor `ra:S`.
    #[error("'{0}' is neither a number nor \"auto\" nor \"ra:S\" (S a success rate in (0, 1))")]
    NotRedundancy(String),
    /// A number outside `[1, 16]`.
    #[error(
        "{0} is outside [1, {MAX_REDUNDANCY}] (R is coded packets sent per new packet; R < 1 can never repair a loss)"
    )]
    OutOfRange(f64),
}

impl FromStr for RedundancyPolicy {
    type Err = RedundancyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let number = |t: &str| {
            t.parse::<f64>()
                .map_err(|_| RedundancyError::NotRedundancy(s.to_string()))
        };
        if let Some(rate) = s.strip_prefix("ra:") {
            let policy = RedundancyPolicy::SuccessRate { s: number(rate)? };
            return match policy.is_valid() {
                true => Ok(policy),
                false => Err(RedundancyError::NotRedundancy(s.to_string())),
            };
        }
        let policy = match s.strip_prefix("auto") {
            Some("") => RedundancyPolicy::adaptive(),
            Some(rest) => match rest.strip_prefix(':') {
                Some(max) => RedundancyPolicy::Adaptive { max: number(max)? },
                None => return Err(RedundancyError::NotRedundancy(s.to_string())),
            },
            None => RedundancyPolicy::Fixed(number(s)?),
        };
        if policy.is_valid() {
            Ok(policy)
        } else {
            Err(RedundancyError::OutOfRange(policy.bound()))
        }
    }
}

impl serde::Serialize for RedundancyPolicy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            RedundancyPolicy::Fixed(r) => s.serialize_f64(r),
            RedundancyPolicy::Adaptive { .. } | RedundancyPolicy::SuccessRate { .. } => {
                s.collect_str(self)
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for RedundancyPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = RedundancyPolicy;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a redundancy R in [1, 16], \"auto\" or \"ra:S\"")
            }
            fn visit_f64<E: serde::de::Error>(self, r: f64) -> Result<Self::Value, E> {
                let p = RedundancyPolicy::Fixed(r);
                if p.is_valid() {
                    Ok(p)
                } else {
                    Err(E::custom(RedundancyError::OutOfRange(r)))
                }
            }
            fn visit_i64<E: serde::de::Error>(self, r: i64) -> Result<Self::Value, E> {
                self.visit_f64(r as f64)
            }
            fn visit_u64<E: serde::de::Error>(self, r: u64) -> Result<Self::Value, E> {
                self.visit_f64(r as f64)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                s.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_for_loss() {
        let r = |p: f64| RedundancyPolicy::for_loss(p).factor();
        assert_eq!(r(0.0), 1.0);
        assert_eq!(r(0.05), 1.06);
        assert_eq!(r(0.1), 1.12);
        assert_eq!(r(0.2), 1.27);
        assert_eq!(r(-1.0), 1.0);
        assert_eq!(r(f64::NAN), 1.0);
        assert!(RedundancyPolicy::for_loss(0.95).is_valid());
    }

    #[test]
    fn r_for_known_loss() {
        assert_eq!(RedundancyPolicy::for_known_loss(0.0), 1.0);
        let r = RedundancyPolicy::for_known_loss(0.1);
        assert!((r - (1.0 / 0.9 + 0.06)).abs() < 1e-12, "{r}");
    }

    #[test]
    fn adaptive_follows_the_estimate_within_bounds() {
        let a = RedundancyPolicy::adaptive();
        assert_eq!(a.factor(), 1.0);
        assert_eq!(a.factor_for(0.0), 1.0);
        assert_eq!(a.factor_for(0.1), 1.12);
        assert_eq!(a.factor_for(0.8), 2.0);
        assert_eq!(RedundancyPolicy::Fixed(1.3).factor_for(0.5), 1.3);
        assert!(!RedundancyPolicy::Adaptive { max: 0.5 }.is_valid());
        assert!(a.is_valid());
    }

    #[test]
    fn adjusted_redundancy_for_a_success_rate() {
        let ra = RedundancyPolicy::for_success_rate;
        assert_eq!(ra(0.0, 0.9), 1.0);
        // Above the theoretical 1/(1 − p), rising with S.
        for p in [0.01, 0.05, 0.1, 0.15, 0.3] {
            let r = ra(p, 0.9);
            assert!(r > 1.0 / (1.0 - p), "p {p}: {r}");
            assert!(ra(p, 0.99) > r, "p {p}");
            assert!(ra(p, 0.5) <= r, "p {p}");
        }
        // 10 %, S = 90 %: 116 combinations deliver 100 with probability 0.930, 115 with 0.890.
        assert_eq!(ra(0.1, 0.9), 1.16);
        assert_eq!(ra(0.05, 0.9), 1.08);
        let p = RedundancyPolicy::SuccessRate { s: 0.9 };
        assert!(p.adapts() && p.is_valid());
        assert_eq!(p.factor(), 1.0);
        assert_eq!(p.factor_for(0.1), 1.16);
        assert!(!RedundancyPolicy::SuccessRate { s: 1.0 }.is_valid());
        assert!(!RedundancyPolicy::Fixed(1.2).adapts());
    }

    #[test]
    fn validation() {
        assert!(RedundancyPolicy::Fixed(1.0).is_valid());
        assert!(!RedundancyPolicy::Fixed(0.99).is_valid());
        assert!(!RedundancyPolicy::Fixed(f64::INFINITY).is_valid());
        assert!(!RedundancyPolicy::Fixed(17.0).is_valid());
    }

    #[test]
    fn words_and_numbers() {
        assert_eq!("auto".parse(), Ok(RedundancyPolicy::adaptive()));
        assert_eq!(
            "auto:1.5".parse(),
            Ok(RedundancyPolicy::Adaptive { max: 1.5 })
        );
        assert_eq!("1.15".parse(), Ok(RedundancyPolicy::Fixed(1.15)));
        assert!(matches!(
            "0.5".parse::<RedundancyPolicy>(),
            Err(RedundancyError::OutOfRange(_))
        ));
        assert!("fast".parse::<RedundancyPolicy>().is_err());
        assert!("autox".parse::<RedundancyPolicy>().is_err());
        assert_eq!(
            "ra:0.9".parse(),
            Ok(RedundancyPolicy::SuccessRate { s: 0.9 })
        );
        assert!("ra:1.5".parse::<RedundancyPolicy>().is_err());
        assert!("ra:x".parse::<RedundancyPolicy>().is_err());
        for p in [
            RedundancyPolicy::SuccessRate { s: 0.99 },
            RedundancyPolicy::adaptive(),
            RedundancyPolicy::Adaptive { max: 1.5 },
            RedundancyPolicy::Fixed(1.25),
        ] {
            assert_eq!(p.to_string().parse(), Ok(p));
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<RedundancyPolicy>(&json).unwrap(), p);
        }
        assert_eq!(
            serde_json::to_string(&RedundancyPolicy::Fixed(1.2)).unwrap(),
            "1.2"
        );
        assert_eq!(
            serde_json::from_str::<RedundancyPolicy>("2").unwrap(),
            RedundancyPolicy::Fixed(2.0)
        );
        assert!(serde_json::from_str::<RedundancyPolicy>("0.2").is_err());
    }
}
