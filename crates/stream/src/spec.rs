//! The stream's settings as a user gives them (`tcpnc sim --workload stream` and
//! `tcpnc lab stream` flags): the synthetic model's preset and overrides, and the playout
//! deadline. One definition for both commands; only the default length differs by context
//! ([`SIM_DURATION_S`], [`LAB_DURATION_S`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::trace::{Preset, TraceModel};

/// What the client application does: `tcpnc sim --workload`, plan key `workload`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// `--bytes` (plan key `bytes`) as fast as TCP takes them.
    #[default]
    Bulk,
    /// Video frames written at their times (a synthetic trace, or `--trace FILE`).
    Stream,
}

/// Default length of a synthetic stream in the simulator, s (short: virtual time is cheap but
/// a CI run should stay small).
pub const SIM_DURATION_S: f64 = 20.0;

/// Default length of a synthetic stream on the lab, s: issue 12's target ("a 4 Mbit/s stream
/// of 30 frames/s for 60 s").
pub const LAB_DURATION_S: f64 = 60.0;

/// Default playout deadline, ms: a frame later than a second is a stall.
pub const DEFAULT_DEADLINE_MS: f64 = 1000.0;

/// The stream's flags (the path, TCP and policies are the command's own).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct StreamSpec {
    /// Synthetic trace model (without a trace file): target = 4 Mbit/s at 30 frames/s
    /// (issue 12); lambs and formula1 are shaped like Parejiya's Table I.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = Preset::default()))]
    pub preset: Preset,
    /// Length of the synthetic stream, s (default: 20 in `tcpnc sim`, 60 in `tcpnc lab stream`).
    #[cfg_attr(feature = "clap", arg(long))]
    pub duration_s: Option<f64>,
    /// Mean bit rate of the synthetic stream, Mbit/s (default: the preset's).
    #[cfg_attr(feature = "clap", arg(long))]
    pub stream_mbit: Option<f64>,
    /// Frames per second of the synthetic stream (default: the preset's).
    #[cfg_attr(feature = "clap", arg(long))]
    pub fps: Option<f64>,
    /// Playout deadline, ms: a frame later than this is a stall.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = DEFAULT_DEADLINE_MS))]
    pub deadline_ms: f64,
}

impl Default for StreamSpec {
    /// The flags' defaults: the `target` preset at its rate and frame rate, the context's
    /// length, a [`DEFAULT_DEADLINE_MS`] deadline.
    fn default() -> Self {
        StreamSpec {
            preset: Preset::default(),
            duration_s: None,
            stream_mbit: None,
            fps: None,
            deadline_ms: DEFAULT_DEADLINE_MS,
        }
    }
}

impl StreamSpec {
    /// This spec with the length filled in from the context's default `duration_s` when not
    /// given (what a result records).
    pub fn resolved(&self, duration_s: f64) -> StreamSpec {
        StreamSpec {
            duration_s: Some(self.duration_s.unwrap_or(duration_s)),
            ..self.clone()
        }
    }

    /// The synthetic model: the preset with the given overrides, `duration_s` unless the spec
    /// gives a length.
    pub fn model(&self, duration_s: f64) -> TraceModel {
        let mut m = TraceModel::preset(self.preset, self.duration_s.unwrap_or(duration_s));
        if let Some(r) = self.stream_mbit {
            m.mean_bit_rate = r * 1e6;
        }
        if let Some(f) = self.fps {
            m.fps = f;
        }
        m
    }

    /// The playout deadline; `None` when `deadline_ms` is negative or not a number.
    pub fn deadline(&self) -> Option<Duration> {
        Duration::try_from_secs_f64(self.deadline_ms / 1e3).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_by_context_and_overrides() {
        let s = StreamSpec {
            preset: Preset::Target,
            duration_s: None,
            stream_mbit: Some(2.0),
            fps: None,
            deadline_ms: 500.0,
        };
        let m = s.model(LAB_DURATION_S);
        assert_eq!(m.duration_s, 60.0);
        assert_eq!(m.mean_bit_rate, 2e6);
        assert_eq!(m.fps, 30.0);
        assert_eq!(s.resolved(SIM_DURATION_S).duration_s, Some(20.0));
        assert_eq!(s.deadline(), Some(Duration::from_millis(500)));
        let bad = StreamSpec {
            deadline_ms: -1.0,
            ..s
        };
        assert_eq!(bad.deadline(), None);
    }
}
