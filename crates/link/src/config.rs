//! Link configuration: plain data plus [`LinkConfig::validate`].

use std::time::Duration;

use thiserror::Error;

pub use crate::delay_switch::DelaySwitch;

/// Errors reported by [`LinkConfig::validate`] and [`crate::Link::new`].
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LinkError {
    /// A probability was outside `[0, 1]` or not a number.
    #[error("{name} must be a probability in [0, 1], got {value}")]
    Probability {
        /// Which parameter.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// The Gilbert-Elliott mean loss rate must be in `[0, 1)`.
    #[error("mean loss rate must be in [0, 1), got {0}")]
    MeanLossRate(f64),
    /// The Gilbert-Elliott mean burst length must be at least one packet.
    #[error("mean burst length must be >= 1 packet, got {0}")]
    MeanBurstLength(f64),
    /// A trace-driven loss pattern must contain at least one entry.
    #[error("loss trace is empty")]
    EmptyTrace,
    /// A rate limit of zero bits per second can never send anything.
    #[error("rate must be > 0 bits/s")]
    ZeroRate,
    /// A queue limit of zero would drop every packet.
    #[error("queue limit must be > 0")]
    ZeroQueueLimit,
    /// Delay switching needs a positive time between switches.
    #[error("delay switching needs a time between switches > 0")]
    ZeroSwitchInterval,
}

/// Which packets are erased, and how.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LossModel {
    /// Nothing is lost.
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        /// Loss probability per packet.
        p: f64,
    },
    /// Two-state Markov chain (Gilbert-Elliott). Per packet the chain first makes its
    /// transition, then the packet is lost with the loss probability of the new state.
    /// The chain starts in the good state.
    GilbertElliott {
        /// Probability of moving good → bad at a packet.
        p_good_to_bad: f64,
        /// Probability of moving bad → good at a packet.
        p_bad_to_good: f64,
        /// Loss probability while in the good state.
        loss_good: f64,
        /// Loss probability while in the bad state.
        loss_bad: f64,
    },
    /// A repeating pattern: entry `i % len` says whether the i-th packet is dropped
    /// (`true` = drop). Deterministic; consumes no randomness.
    Trace {
        /// Drop bits, cycled.
        drops: Vec<bool>,
    },
}

impl LossModel {
    /// Bernoulli loss with probability `p`.
    pub fn bernoulli(p: f64) -> Self {
        LossModel::Bernoulli { p }
    }

    /// Simple Gilbert model (no loss in good, always lose in bad) with the given
    /// stationary `mean_loss` rate and `mean_burst` length in packets:
    /// `p_bad_to_good = 1 / mean_burst`, `p_good_to_bad = mean_loss · p_bg / (1 − mean_loss)`.
    pub fn gilbert_elliott_from_mean(mean_loss: f64, mean_burst: f64) -> Result<Self, LinkError> {
        if !(0.0..1.0).contains(&mean_loss) {
            return Err(LinkError::MeanLossRate(mean_loss));
        }
        if !(mean_burst >= 1.0 && mean_burst.is_finite()) {
            return Err(LinkError::MeanBurstLength(mean_burst));
        }
        let p_bg = 1.0 / mean_burst;
        let p_gb = (mean_loss * p_bg / (1.0 - mean_loss)).min(1.0);
        Ok(LossModel::GilbertElliott {
            p_good_to_bad: p_gb,
            p_bad_to_good: p_bg,
            loss_good: 0.0,
            loss_bad: 1.0,
        })
    }

    /// Loss with mean rate `mean_loss` in bursts of `mean_burst` packets on average: Bernoulli
    /// for a mean burst of 1, [`LossModel::gilbert_elliott_from_mean`] above (the rule of
    /// `tcpnc sim --burst`, the lab's `--burst` and the plan key `burst`).
    pub fn from_mean(mean_loss: f64, mean_burst: f64) -> Result<Self, LinkError> {
        if mean_burst > 1.0 {
            LossModel::gilbert_elliott_from_mean(mean_loss, mean_burst)
        } else if mean_burst == 1.0 {
            Ok(LossModel::bernoulli(mean_loss))
        } else {
            Err(LinkError::MeanBurstLength(mean_burst))
        }
    }

    /// Long-run fraction of packets this model drops.
    pub fn mean_loss(&self) -> f64 {
        match self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => *p,
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                let denom = p_good_to_bad + p_bad_to_good;
                if denom == 0.0 {
                    return *loss_good;
                }
                let pi_bad = p_good_to_bad / denom;
                pi_bad * loss_bad + (1.0 - pi_bad) * loss_good
            }
            LossModel::Trace { drops } => {
                if drops.is_empty() {
                    0.0
                } else {
                    drops.iter().filter(|&&d| d).count() as f64 / drops.len() as f64
                }
            }
        }
    }

    fn validate(&self) -> Result<(), LinkError> {
        match self {
            LossModel::None => Ok(()),
            LossModel::Bernoulli { p } => check_prob("loss p", *p),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                check_prob("p_good_to_bad", *p_good_to_bad)?;
                check_prob("p_bad_to_good", *p_bad_to_good)?;
                check_prob("loss_good", *loss_good)?;
                check_prob("loss_bad", *loss_bad)
            }
            LossModel::Trace { drops } if drops.is_empty() => Err(LinkError::EmptyTrace),
            LossModel::Trace { .. } => Ok(()),
        }
    }
}

/// Where the loss element sits relative to the rate limiter's queue: the shared setting
/// (`tcpnc_settings::LossPosition`, plan key and flag `loss_position`).
pub use tcpnc_settings::LossPosition;

/// Random extra delay added to each packet: uniform in `[0, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Jitter {
    /// Upper bound of the uniform extra delay (zero disables jitter).
    pub max: Duration,
    /// If `true`, packets may overtake one another; if `false`, a packet never departs
    /// the link before the one sent ahead of it (its delivery time is raised as needed).
    pub allow_reordering: bool,
}

/// Token-bucket rate limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Token fill rate in bits per second.
    pub bits_per_sec: u64,
    /// Bucket depth in bytes: a burst of this size leaves without serialization delay.
    /// Zero gives a pure serializer (each packet takes `size · 8 / rate`).
    pub bucket_bytes: u64,
}

/// Drop-tail queue limit in front of the rate limiter (counts the packet in service).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueLimit {
    /// No limit.
    #[default]
    Unlimited,
    /// At most this many packets waiting or in service.
    Packets(usize),
    /// At most this many bytes waiting or in service.
    Bytes(usize),
}

/// The whole configuration of one link direction.
///
/// Processing order for a sent packet: duplication → loss (if [`LossPosition::BeforeQueue`])
/// → drop-tail queue + token bucket → loss (if [`LossPosition::AfterQueue`]) → corruption →
/// one-way delay (switched, if [`LinkConfig::delay_switch`]) + jitter → delivery.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinkConfig {
    /// Loss model.
    pub loss: LossModel,
    /// Position of the loss element relative to the queue.
    pub loss_position: LossPosition,
    /// Fixed one-way propagation delay.
    pub delay: Duration,
    /// Random extra delay.
    pub jitter: Jitter,
    /// Delay switching: the propagation delay redrawn every δ around `delay` (`None`: fixed).
    pub delay_switch: Option<DelaySwitch>,
    /// Bottleneck rate; `None` = infinitely fast (no queueing).
    pub rate: Option<RateLimit>,
    /// Queue limit (only meaningful with a rate).
    pub queue: QueueLimit,
    /// Probability that a sent packet is duplicated (the copy follows the same path).
    pub duplicate_prob: f64,
    /// Probability that a delivered packet has one random bit flipped.
    pub corrupt_prob: f64,
}

impl LinkConfig {
    /// A perfect link: no loss, no delay, infinite rate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the loss model.
    pub fn with_loss(mut self, loss: LossModel) -> Self {
        self.loss = loss;
        self
    }

    /// Sets where loss is applied.
    pub fn with_loss_position(mut self, pos: LossPosition) -> Self {
        self.loss_position = pos;
        self
    }

    /// Sets the one-way delay.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sets uniform jitter in `[0, max]`, with or without reordering.
    pub fn with_jitter(mut self, max: Duration, allow_reordering: bool) -> Self {
        self.jitter = Jitter {
            max,
            allow_reordering,
        };
        self
    }

    /// Redraws the propagation delay every `every` from a normal distribution around the
    /// configured delay with standard deviation `sd` (Ha & Tsuru §4.2; [`DelaySwitch`]).
    pub fn with_delay_switch(mut self, every: Duration, sd: Duration) -> Self {
        self.delay_switch = Some(DelaySwitch { every, sd });
        self
    }

    /// Sets a token-bucket rate limit.
    pub fn with_rate(mut self, bits_per_sec: u64, bucket_bytes: u64) -> Self {
        self.rate = Some(RateLimit {
            bits_per_sec,
            bucket_bytes,
        });
        self
    }

    /// Sets the drop-tail queue limit.
    pub fn with_queue(mut self, queue: QueueLimit) -> Self {
        self.queue = queue;
        self
    }

    /// Sets the duplication probability.
    pub fn with_duplicate_prob(mut self, p: f64) -> Self {
        self.duplicate_prob = p;
        self
    }

    /// Sets the corruption probability.
    pub fn with_corrupt_prob(mut self, p: f64) -> Self {
        self.corrupt_prob = p;
        self
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), LinkError> {
        self.loss.validate()?;
        check_prob("duplicate_prob", self.duplicate_prob)?;
        check_prob("corrupt_prob", self.corrupt_prob)?;
        if let Some(r) = self.rate
            && r.bits_per_sec == 0
        {
            return Err(LinkError::ZeroRate);
        }
        if let Some(d) = self.delay_switch
            && d.every.is_zero()
        {
            return Err(LinkError::ZeroSwitchInterval);
        }
        match self.queue {
            QueueLimit::Packets(0) | QueueLimit::Bytes(0) => Err(LinkError::ZeroQueueLimit),
            _ => Ok(()),
        }
    }
}

fn check_prob(name: &'static str, value: f64) -> Result<(), LinkError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(LinkError::Probability { name, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_rejects_bad_values() {
        assert!(LinkConfig::new().validate().is_ok());
        let bad = LinkConfig::new().with_loss(LossModel::bernoulli(1.5));
        assert!(matches!(bad.validate(), Err(LinkError::Probability { .. })));
        let nan = LinkConfig::new().with_corrupt_prob(f64::NAN);
        assert!(nan.validate().is_err());
        assert_eq!(
            LinkConfig::new().with_rate(0, 0).validate(),
            Err(LinkError::ZeroRate)
        );
        assert_eq!(
            LinkConfig::new()
                .with_queue(QueueLimit::Packets(0))
                .validate(),
            Err(LinkError::ZeroQueueLimit)
        );
        let trace = LinkConfig::new().with_loss(LossModel::Trace { drops: vec![] });
        assert_eq!(trace.validate(), Err(LinkError::EmptyTrace));
    }

    #[test]
    fn loss_from_mean_and_burst() {
        assert_eq!(
            LossModel::from_mean(0.1, 1.0),
            Ok(LossModel::bernoulli(0.1))
        );
        let ge = LossModel::from_mean(0.1, 3.0).unwrap();
        assert!(matches!(ge, LossModel::GilbertElliott { .. }));
        assert!((ge.mean_loss() - 0.1).abs() < 1e-12);
        assert!(LossModel::from_mean(0.1, 0.5).is_err());
        assert!(LossModel::from_mean(0.1, f64::NAN).is_err());
    }

    #[test]
    fn ge_from_mean_parameters() {
        let m = LossModel::gilbert_elliott_from_mean(0.1, 4.0).unwrap();
        assert!((m.mean_loss() - 0.1).abs() < 1e-12);
        match m {
            LossModel::GilbertElliott { p_bad_to_good, .. } => {
                assert!((p_bad_to_good - 0.25).abs() < 1e-12)
            }
            _ => unreachable!(),
        }
        assert!(LossModel::gilbert_elliott_from_mean(1.0, 2.0).is_err());
        assert!(LossModel::gilbert_elliott_from_mean(0.1, 0.5).is_err());
    }
}
