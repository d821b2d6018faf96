//! One direction of `tcpnc link` as the user writes it (`KEY=VALUE` settings) and its
//! translation into a [`LinkConfig`].

use std::time::Duration;

use tcpnc_link::{LinkConfig, LossModel, LossPosition, QueueLimit};
use thiserror::Error;

/// A rejected setting.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SpecError {
    /// Unknown key.
    #[error("unknown link setting '{0}' (known: {KEYS})")]
    UnknownKey(String),
    /// Not `KEY=VALUE`.
    #[error("'{0}' is not KEY=VALUE")]
    NotKeyValue(String),
    /// A value that does not parse or is out of range.
    #[error("{key}: {reason}")]
    Value {
        /// The key.
        key: String,
        /// Why.
        reason: String,
    },
    /// The link model refused the combination.
    #[error("link model: {0}")]
    Link(#[from] tcpnc_link::LinkError),
}

/// Keys accepted by [`DirectionSpec::set`].
pub const KEYS: &str = "loss, ge, delay-ms, delay-sd-ms, delay-switch-ms, jitter-ms, reorder, rate-mbit, burst-bytes, queue-packets, queue-bytes, dup, corrupt, loss-before-queue";

/// Gilbert-Elliott parameters: `p,r[,loss_bad[,loss_good]]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeSpec {
    /// P(good → bad) per packet.
    pub p: f64,
    /// P(bad → good) per packet.
    pub r: f64,
    /// Loss probability in the bad state (default 1).
    pub loss_bad: f64,
    /// Loss probability in the good state (default 0).
    pub loss_good: f64,
}

/// Settings of one direction; `None` = not set (the link's default: off / zero).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirectionSpec {
    /// Bernoulli loss probability.
    pub loss: Option<f64>,
    /// Gilbert-Elliott loss (overrides `loss` when both are set).
    pub ge: Option<GeSpec>,
    /// One-way delay in ms.
    pub delay_ms: Option<f64>,
    /// Delay switching: standard deviation of the one-way delay in ms (Ha & Tsuru §4.2).
    pub delay_sd_ms: Option<f64>,
    /// Delay switching: time between switches in ms.
    pub delay_switch_ms: Option<f64>,
    /// Uniform jitter bound in ms.
    pub jitter_ms: Option<f64>,
    /// Whether jitter may reorder packets.
    pub reorder: Option<bool>,
    /// Bottleneck rate in Mbit/s.
    pub rate_mbit: Option<f64>,
    /// Token bucket depth in bytes (default 0: a pure serializer).
    pub burst_bytes: Option<u64>,
    /// Drop-tail queue limit in packets.
    pub queue_packets: Option<usize>,
    /// Drop-tail queue limit in bytes.
    pub queue_bytes: Option<usize>,
    /// Duplication probability.
    pub dup: Option<f64>,
    /// Corruption probability.
    pub corrupt: Option<f64>,
    /// Drop lost packets before the queue instead of after it.
    pub loss_before_queue: Option<bool>,
}

fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, SpecError> {
    v.trim().parse::<T>().map_err(|_| SpecError::Value {
        key: key.to_string(),
        reason: format!("'{v}' is not a valid number"),
    })
}

fn non_negative(key: &str, v: &str) -> Result<f64, SpecError> {
    let x: f64 = num(key, v)?;
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(SpecError::Value {
            key: key.to_string(),
            reason: format!("{v} must be a finite number >= 0"),
        })
    }
}

fn boolean(key: &str, v: &str) -> Result<bool, SpecError> {
    match v.trim() {
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(SpecError::Value {
            key: key.to_string(),
            reason: format!("'{v}' is not a boolean"),
        }),
    }
}

/// Parses `p,r[,loss_bad[,loss_good]]` (`:` also separates).
pub fn parse_ge(v: &str) -> Result<GeSpec, SpecError> {
    let parts: Vec<&str> = v.split([',', ':']).collect();
    if !(2..=4).contains(&parts.len()) {
        return Err(SpecError::Value {
            key: "ge".into(),
            reason: format!("'{v}' is not p,r[,loss_bad[,loss_good]]"),
        });
    }
    let get = |i: usize, default: f64| -> Result<f64, SpecError> {
        parts.get(i).map_or(Ok(default), |s| non_negative("ge", s))
    };
    Ok(GeSpec {
        p: get(0, 0.0)?,
        r: get(1, 0.0)?,
        loss_bad: get(2, 1.0)?,
        loss_good: get(3, 0.0)?,
    })
}

impl DirectionSpec {
    /// Sets one key (see [`KEYS`]).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SpecError> {
        match key {
            "loss" => self.loss = Some(non_negative(key, value)?),
            "ge" => self.ge = Some(parse_ge(value)?),
            "delay-ms" => self.delay_ms = Some(non_negative(key, value)?),
            "delay-sd-ms" => self.delay_sd_ms = Some(non_negative(key, value)?),
            "delay-switch-ms" => self.delay_switch_ms = Some(non_negative(key, value)?),
            "jitter-ms" => self.jitter_ms = Some(non_negative(key, value)?),
            "reorder" => self.reorder = Some(boolean(key, value)?),
            "rate-mbit" => self.rate_mbit = Some(non_negative(key, value)?),
            "burst-bytes" => self.burst_bytes = Some(num(key, value)?),
            "queue-packets" => self.queue_packets = Some(num(key, value)?),
            "queue-bytes" => self.queue_bytes = Some(num(key, value)?),
            "dup" => self.dup = Some(non_negative(key, value)?),
            "corrupt" => self.corrupt = Some(non_negative(key, value)?),
            "loss-before-queue" => self.loss_before_queue = Some(boolean(key, value)?),
            _ => return Err(SpecError::UnknownKey(key.to_string())),
        }
        Ok(())
    }

    /// Sets `KEY=VALUE` (a bare `KEY` means `KEY=true`, for the boolean keys).
    pub fn set_pair(&mut self, pair: &str) -> Result<(), SpecError> {
        match pair.split_once('=') {
            Some((k, v)) => self.set(k.trim(), v),
            None if matches!(pair.trim(), "reorder" | "loss-before-queue") => {
                self.set(pair.trim(), "true")
            }
            None => Err(SpecError::NotKeyValue(pair.to_string())),
        }
    }

    /// `self` with every key set in `over` replaced.
    pub fn overlay(&self, over: &DirectionSpec) -> DirectionSpec {
        DirectionSpec {
            loss: over.loss.or(self.loss),
            ge: over.ge.or(self.ge),
            delay_ms: over.delay_ms.or(self.delay_ms),
            delay_sd_ms: over.delay_sd_ms.or(self.delay_sd_ms),
            delay_switch_ms: over.delay_switch_ms.or(self.delay_switch_ms),
            jitter_ms: over.jitter_ms.or(self.jitter_ms),
            reorder: over.reorder.or(self.reorder),
            rate_mbit: over.rate_mbit.or(self.rate_mbit),
            burst_bytes: over.burst_bytes.or(self.burst_bytes),
            queue_packets: over.queue_packets.or(self.queue_packets),
            queue_bytes: over.queue_bytes.or(self.queue_bytes),
            dup: over.dup.or(self.dup),
            corrupt: over.corrupt.or(self.corrupt),
            loss_before_queue: over.loss_before_queue.or(self.loss_before_queue),
        }
    }

    /// The link model configuration (validated).
    pub fn to_link_config(&self) -> Result<LinkConfig, SpecError> {
        let ms = |x: f64| Duration::from_secs_f64(x / 1000.0);
        let loss = match (self.ge, self.loss) {
            (Some(g), _) => LossModel::GilbertElliott {
                p_good_to_bad: g.p,
                p_bad_to_good: g.r,
                loss_good: g.loss_good,
                loss_bad: g.loss_bad,
            },
            (None, Some(p)) if p > 0.0 => LossModel::bernoulli(p),
            (None, _) => LossModel::None,
        };
        let mut cfg = LinkConfig::new()
            .with_loss(loss)
            .with_delay(ms(self.delay_ms.unwrap_or(0.0)))
            .with_jitter(
                ms(self.jitter_ms.unwrap_or(0.0)),
                self.reorder.unwrap_or(false),
            )
            .with_duplicate_prob(self.dup.unwrap_or(0.0))
            .with_corrupt_prob(self.corrupt.unwrap_or(0.0));
        match (self.delay_switch_ms, self.delay_sd_ms) {
            (Some(every), sd) if every > 0.0 => {
                cfg = cfg.with_delay_switch(ms(every), ms(sd.unwrap_or(0.0)));
            }
            (_, Some(sd)) if sd > 0.0 => {
                return Err(SpecError::Value {
                    key: "delay-sd-ms".into(),
                    reason: "needs delay-switch-ms > 0 (the time between delay switches)".into(),
                });
            }
            _ => {}
        }
        if self.loss_before_queue.unwrap_or(false) {
            cfg = cfg.with_loss_position(LossPosition::BeforeQueue);
        }
        if let Some(mbit) = self.rate_mbit {
            let bps = (mbit * 1e6).round() as u64;
            cfg = cfg.with_rate(bps, self.burst_bytes.unwrap_or(0));
        }
        cfg = match (self.queue_packets, self.queue_bytes) {
            (Some(_), Some(_)) => {
                return Err(SpecError::Value {
                    key: "queue-packets".into(),
                    reason: "give queue-packets or queue-bytes, not both".into(),
                });
            }
            (Some(n), None) => cfg.with_queue(QueueLimit::Packets(n)),
            (None, Some(n)) => cfg.with_queue(QueueLimit::Bytes(n)),
            (None, None) => cfg,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_overlay() {
        let mut both = DirectionSpec::default();
        both.set("delay-ms", "10").unwrap();
        both.set("rate-mbit", "2.5").unwrap();
        let mut ab = DirectionSpec::default();
        ab.set_pair("loss=0.1").unwrap();
        ab.set_pair("reorder").unwrap();
        let eff = both.overlay(&ab);
        let cfg = eff.to_link_config().unwrap();
        assert_eq!(cfg.delay, Duration::from_millis(10));
        assert_eq!(cfg.rate.unwrap().bits_per_sec, 2_500_000);
        assert_eq!(cfg.loss, LossModel::bernoulli(0.1));
        assert!(cfg.jitter.allow_reordering);
        let plain = both.to_link_config().unwrap();
        assert_eq!(plain.loss, LossModel::None);
    }

    #[test]
    fn ge_parsing() {
        let g = parse_ge("0.01,0.3").unwrap();
        assert_eq!((g.loss_bad, g.loss_good), (1.0, 0.0));
        let g = parse_ge("0.01:0.3:0.9:0.001").unwrap();
        assert_eq!(g.loss_good, 0.001);
        assert!(parse_ge("0.1").is_err());
        assert!(parse_ge("a,b").is_err());
        let mut s = DirectionSpec::default();
        s.set("ge", "0.01,0.3").unwrap();
        assert!(matches!(
            s.to_link_config().unwrap().loss,
            LossModel::GilbertElliott { .. }
        ));
    }

    #[test]
    fn rejections() {
        let mut s = DirectionSpec::default();
        assert!(matches!(s.set("lose", "1"), Err(SpecError::UnknownKey(_))));
        assert!(matches!(s.set_pair("loss"), Err(SpecError::NotKeyValue(_))));
        assert!(s.set("delay-ms", "-1").is_err());
        assert!(s.set("reorder", "maybe").is_err());
        s.set("loss", "1.5").unwrap();
        assert!(matches!(s.to_link_config(), Err(SpecError::Link(_))));
        let mut q = DirectionSpec::default();
        q.set("queue-packets", "5").unwrap();
        q.set("queue-bytes", "5000").unwrap();
        assert!(q.to_link_config().is_err());
    }
}
