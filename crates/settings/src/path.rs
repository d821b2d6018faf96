//! The emulated path a measured transfer crosses: [`PathSpec`] (every setting, with a base set
//! per context) and [`PathOverrides`], the same keys as a user writes them (`tcpnc sim` and
//! `tcpnc lab` flags, experiment plan keys; absent = the context's value).
//!
//! The three contexts start from different paths on purpose, each named here once:
//! [`PathSpec::simulator`] (10 Mbit/s, 20 ms, a 1000-packet queue: the simulator's long-standing
//! defaults, which docs/sim.md's figures use), [`PathSpec::lab`] (20 Mbit/s, 20 ms, 10 % loss,
//! a one-BDP queue: the implementation issue's lab path) and [`PathSpec::paper_experiment`]
//! (6 Mbit/s, 15 ms, a 5-packet queue with the loss element before it: the implementation
//! paper's testbed, §VI). A new path setting is a field of both structs and a `with` line; it
//! then is a flag of both commands, a plan key, a CSV column and a key of every result.

use serde::{Deserialize, Serialize};

use crate::named_enum;

named_enum! {
    /// Where the data direction's loss happens relative to the bottleneck queue.
    pub enum LossPosition {
        /// Lost packets are dropped before they enter the queue (they take no queue space), as
        /// in the implementation paper's testbed (§VI: loss element before a 5-packet queue).
        BeforeQueue = "before_queue",
        /// Lost packets go through the queue and the bottleneck, then are erased (the link
        /// erases what it carried).
        AfterQueue = "after_queue",
    }
}

impl Default for LossPosition {
    /// The link erases what it carried.
    fn default() -> Self {
        LossPosition::AfterQueue
    }
}

/// A path setting out of range: the key and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key} = {value} {why}")]
pub struct PathError {
    /// The key (`rate_mbit`, ...; flags spell it with dashes).
    pub key: &'static str,
    /// The value given.
    pub value: String,
    /// The range it must be in.
    pub why: &'static str,
}

/// Every setting of an emulated path (both directions unless the name says otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PathSpec {
    /// Bottleneck rate in Mbit/s, both directions.
    pub rate_mbit: f64,
    /// One-way propagation delay in ms, both directions.
    pub delay_ms: f64,
    /// Mean loss probability on the data direction (client → server).
    pub loss: f64,
    /// Mean loss burst length in packets on the data direction: above 1 the loss is a
    /// Gilbert-Elliott process with mean `loss` and this mean burst (1: Bernoulli).
    pub burst: f64,
    /// Bernoulli loss probability on the ACK direction (server → client).
    pub reverse_loss: f64,
    /// Uniform extra delay in [0, jitter_ms] per packet, both directions.
    pub jitter_ms: f64,
    /// Let the jitter reorder packets (otherwise each packet waits for its predecessor).
    pub reorder: bool,
    /// Delay switching (Ha & Tsuru §4.2): the one-way delay is redrawn every
    /// `delay_switch_ms` from a normal distribution around `delay_ms` with this standard
    /// deviation in ms, both directions (0: a fixed delay). With `reorder` a fall in the delay
    /// reorders packets.
    pub delay_sd_ms: f64,
    /// δ, the time between delay switches in ms (0: no switching).
    pub delay_switch_ms: f64,
    /// Drop-tail bottleneck queue in packets, both directions (`None`: one bandwidth-delay
    /// product, at least 32 packets: [`PathSpec::queue`]).
    pub queue_packets: Option<usize>,
    /// Where the data direction's loss happens.
    pub loss_position: LossPosition,
}

impl PathSpec {
    /// The keys, in the order of the struct (plan keys, CSV columns, result keys).
    pub const KEYS: [&'static str; 11] = [
        "rate_mbit",
        "delay_ms",
        "loss",
        "burst",
        "reverse_loss",
        "jitter_ms",
        "reorder",
        "delay_sd_ms",
        "delay_switch_ms",
        "queue_packets",
        "loss_position",
    ];

    /// A lossless path of `rate_mbit` and `delay_ms` with a one-BDP queue and nothing else.
    pub const fn clean(rate_mbit: f64, delay_ms: f64) -> PathSpec {
        PathSpec {
            rate_mbit,
            delay_ms,
            loss: 0.0,
            burst: 1.0,
            reverse_loss: 0.0,
            jitter_ms: 0.0,
            reorder: false,
            delay_sd_ms: 0.0,
            delay_switch_ms: 0.0,
            queue_packets: None,
            loss_position: LossPosition::AfterQueue,
        }
    }

    /// `tcpnc sim`'s path: 10 Mbit/s, 20 ms, no loss, a 1000-packet queue.
    pub const fn simulator() -> PathSpec {
        PathSpec {
            queue_packets: Some(1000),
            ..PathSpec::clean(10.0, 20.0)
        }
    }

    /// `tcpnc lab`'s path: 20 Mbit/s, 20 ms, 10 % independent loss, a one-BDP queue.
    pub const fn lab() -> PathSpec {
        PathSpec {
            loss: 0.1,
            ..PathSpec::clean(20.0, 20.0)
        }
    }

    /// The implementation paper's testbed (§VI), experiment plans' default: 6 Mbit/s, 15 ms,
    /// a 5-packet queue with the loss element before it, no loss.
    pub const fn paper_experiment() -> PathSpec {
        PathSpec {
            queue_packets: Some(5),
            loss_position: LossPosition::BeforeQueue,
            ..PathSpec::clean(6.0, 15.0)
        }
    }

    /// This path with the keys `o` gives replaced.
    pub fn with(self, o: &PathOverrides) -> PathSpec {
        PathSpec {
            rate_mbit: o.rate_mbit.unwrap_or(self.rate_mbit),
            delay_ms: o.delay_ms.unwrap_or(self.delay_ms),
            loss: o.loss.unwrap_or(self.loss),
            burst: o.burst.unwrap_or(self.burst),
            reverse_loss: o.reverse_loss.unwrap_or(self.reverse_loss),
            jitter_ms: o.jitter_ms.unwrap_or(self.jitter_ms),
            reorder: o.reorder.unwrap_or(self.reorder),
            delay_sd_ms: o.delay_sd_ms.unwrap_or(self.delay_sd_ms),
            delay_switch_ms: o.delay_switch_ms.unwrap_or(self.delay_switch_ms),
            queue_packets: o.queue_packets.or(self.queue_packets),
            loss_position: o.loss_position.unwrap_or(self.loss_position),
        }
    }

    /// Checks every range; the error names the key.
    pub fn validate(&self) -> Result<(), PathError> {
        let err = |key, value: f64, why| {
            Err(PathError {
                key,
                value: value.to_string(),
                why,
            })
        };
        if !(self.rate_mbit.is_finite() && self.rate_mbit > 0.0) {
            return err("rate_mbit", self.rate_mbit, "must be > 0");
        }
        for (key, v) in [
            ("delay_ms", self.delay_ms),
            ("jitter_ms", self.jitter_ms),
            ("delay_sd_ms", self.delay_sd_ms),
            ("delay_switch_ms", self.delay_switch_ms),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return err(key, v, "must be >= 0");
            }
        }
        if self.delay_sd_ms > 0.0 && self.delay_switch_ms == 0.0 {
            return err(
                "delay_switch_ms",
                0.0,
                "must be > 0 when delay_sd_ms is set (the time between delay switches)",
            );
        }
        for (key, v) in [("loss", self.loss), ("reverse_loss", self.reverse_loss)] {
            if !(0.0..1.0).contains(&v) {
                return err(key, v, "must be in [0, 1)");
            }
        }
        if !(self.burst.is_finite() && self.burst >= 1.0) {
            return err("burst", self.burst, "must be >= 1 (packets)");
        }
        if self.queue_packets == Some(0) {
            return err("queue_packets", 0.0, "must be > 0");
        }
        Ok(())
    }

    /// The queue limit in packets actually used: the given one, or one bandwidth-delay
    /// product of 1500-byte packets, at least 32.
    pub fn queue(&self) -> usize {
        self.queue_packets.unwrap_or_else(|| {
            let bdp_bytes = self.rate_mbit * 1e6 / 8.0 * (2.0 * self.delay_ms / 1000.0);
            ((bdp_bytes / 1500.0).ceil() as usize).max(32)
        })
    }

    /// The ideal goodput limit C·(1−p) in Mbit/s (before header overhead).
    pub fn limit_mbit(&self) -> f64 {
        self.rate_mbit * (1.0 - self.loss)
    }
}

/// The path keys as a user writes them: `tcpnc sim` / `tcpnc lab` flags and experiment plan
/// keys. Every key is optional; absent keys keep the context's path ([`PathSpec::with`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct PathOverrides {
    /// Bottleneck rate in Mbit/s, both directions [default: 10 in tcpnc sim, 20 in tcpnc lab].
    #[cfg_attr(feature = "clap", arg(long, value_name = "MBIT"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbit: Option<f64>,
    /// One-way delay in ms, both directions [default: 20].
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<f64>,
    /// Mean loss probability on the data direction, e.g. 0.1 [default: 0 in tcpnc sim, 0.1
    /// in tcpnc lab].
    #[cfg_attr(feature = "clap", arg(long, value_name = "P"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Mean loss burst length in packets: above 1, Gilbert-Elliott loss with mean --loss
    /// [default: 1 = independent loss].
    #[cfg_attr(feature = "clap", arg(long, value_name = "PACKETS"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<f64>,
    /// Bernoulli loss probability on the ACK direction [default: 0].
    #[cfg_attr(feature = "clap", arg(long, value_name = "P"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<f64>,
    /// Uniform extra delay in [0, MS] per packet, both directions [default: 0].
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    /// Let the jitter reorder packets (`--reorder` or `--reorder=false`) [default: false].
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true",
            require_equals = true)
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<bool>,
    /// Delay switching (Ha & Tsuru §4.2): standard deviation in ms of the one-way delay,
    /// redrawn around --delay-ms every --delay-switch-ms [default: 0 = fixed delay].
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_sd_ms: Option<f64>,
    /// Delay switching: time between switches in ms (δ; the paper uses 50-1000) [default: 0 =
    /// no switching].
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_switch_ms: Option<f64>,
    /// Drop-tail queue in packets, both directions [default: 1000 in tcpnc sim; one
    /// bandwidth-delay product, at least 32, in tcpnc lab].
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_packets: Option<usize>,
    /// Where the data direction's loss happens [default: after_queue; before_queue in plans,
    /// as the paper's testbed].
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_position: Option<LossPosition>,
}

impl From<PathSpec> for PathOverrides {
    /// Every key given: applied to any context's path, gives `p`.
    fn from(p: PathSpec) -> Self {
        PathOverrides {
            rate_mbit: Some(p.rate_mbit),
            delay_ms: Some(p.delay_ms),
            loss: Some(p.loss),
            burst: Some(p.burst),
            reverse_loss: Some(p.reverse_loss),
            jitter_ms: Some(p.jitter_ms),
            reorder: Some(p.reorder),
            delay_sd_ms: Some(p.delay_sd_ms),
            delay_switch_ms: Some(p.delay_switch_ms),
            queue_packets: p.queue_packets,
            loss_position: Some(p.loss_position),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_only_their_keys() {
        let o = PathOverrides {
            loss: Some(0.05),
            reorder: Some(true),
            ..PathOverrides::default()
        };
        let p = PathSpec::lab().with(&o);
        assert_eq!((p.loss, p.reorder), (0.05, true));
        assert_eq!(p.rate_mbit, PathSpec::lab().rate_mbit);
        assert_eq!(
            PathSpec::simulator().with(&PathOverrides::default()),
            PathSpec::simulator()
        );
        let every = PathOverrides::from(PathSpec::paper_experiment());
        assert_eq!(PathSpec::lab().with(&every), PathSpec::paper_experiment());
    }

    #[test]
    fn queue_defaults_to_one_bdp() {
        let p = PathSpec::lab();
        assert_eq!(p.queue(), 67);
        assert!((p.limit_mbit() - 18.0).abs() < 1e-9);
        assert_eq!(PathSpec::clean(1.0, 1.0).queue(), 32);
        assert_eq!(PathSpec::paper_experiment().queue(), 5);
    }

    #[test]
    fn validation_names_the_key() {
        assert!(PathSpec::lab().validate().is_ok());
        let bad = |o: PathOverrides| PathSpec::lab().with(&o).validate().unwrap_err().key;
        let o = PathOverrides::default();
        assert_eq!(
            bad(PathOverrides {
                loss: Some(1.0),
                ..o
            }),
            "loss"
        );
        assert_eq!(
            bad(PathOverrides {
                rate_mbit: Some(0.0),
                ..o
            }),
            "rate_mbit"
        );
        assert_eq!(
            bad(PathOverrides {
                burst: Some(0.5),
                ..o
            }),
            "burst"
        );
        assert_eq!(
            bad(PathOverrides {
                jitter_ms: Some(f64::NAN),
                ..o
            }),
            "jitter_ms"
        );
        assert_eq!(
            bad(PathOverrides {
                queue_packets: Some(0),
                ..o
            }),
            "queue_packets"
        );
        assert_eq!(
            bad(PathOverrides {
                reverse_loss: Some(-0.1),
                ..o
            }),
            "reverse_loss"
        );
        assert_eq!(
            bad(PathOverrides {
                delay_sd_ms: Some(10.0),
                ..o
            }),
            "delay_switch_ms"
        );
    }

    #[test]
    fn keys_are_the_serialized_fields() {
        let json = serde_json::to_value(PathSpec::paper_experiment()).unwrap();
        let mut got: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut want = PathSpec::KEYS.to_vec();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(json["loss_position"], "before_queue");
        let o: PathOverrides =
            toml::from_str("loss = 0.1\nloss_position = \"after_queue\"").unwrap();
        assert_eq!(o.loss_position, Some(LossPosition::AfterQueue));
    }
}
