//! Frame traces: what a video source writes and when.
//!
//! # The synthetic model ([`TraceModel`])
//!
//! Modelled on the MPEG-4 traces of Reisslein & Fitzek ("MPEG4 and H.263 video traces for
//! network performance evaluation", IEEE Network 2001), the traces Parejiya & Desai use
//! (Table I):
//!
//! * **GOP structure.** A group of pictures of `gop` frames (12) with an anchor every
//!   `anchor` frames (3): `IBBPBBPBBPBB`. Frame `n` is shown at `n / fps`; it is written at
//!   that time, in display order (a live encoder's reordering delay is left out).
//! * **Sizes.** Each type has a mean size in the ratio `i_ratio : p_ratio : 1` (I : P : B),
//!   scaled so that the mean bit rate over a GOP is `mean_bit_rate`. Each frame's size is
//!   its type's mean times a log-normal factor of mean 1 and coefficient of variation `cv`
//!   (scene activity), at least `min_size` bytes.
//! * **Seeded.** Same model and seed, same trace (`tcpnc_link::Rng`, xoshiro256**).
//!
//! The presets ([`Preset`]) are shaped like Table I's two traces (both 25 frames/s):
//! "Silence of the lambs" (low motion: large I frames over small P and B, 0.58 Mbit/s mean) and
//! "Formula 1" (high motion: P and B closer to I, 0.84 Mbit/s mean).
//!
//! # The file format
//!
//! Text, one frame per line: `time_s,size_bytes` (a third field, the frame type `I`/`P`/`B`,
//! is optional and ignored on reading). Empty lines, lines starting with `#` and a header line
//! `time_s,size_bytes[,type]` are skipped. Times are seconds from the stream's start, never
//! decreasing; sizes are 1..=16 MiB bytes. So a real trace (e.g. Reisslein's frame-size lists)
//! is replayed after one `awk` into this form.

use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tcpnc_link::Rng;

/// Largest frame a trace may hold, bytes.
pub const MAX_FRAME: u32 = 16 << 20;

/// Kind of a frame (MPEG GOP position).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FrameType {
    /// Intra-coded.
    I,
    /// Predicted.
    P,
    /// Bidirectionally predicted.
    B,
}

impl FrameType {
    /// The letter written in trace files.
    pub fn letter(self) -> char {
        match self {
            FrameType::I => 'I',
            FrameType::P => 'P',
            FrameType::B => 'B',
        }
    }
}

/// One frame: written at `at` (from the stream's start), `size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// When the source writes it.
    pub at: Duration,
    /// Bytes.
    pub size: u32,
    /// Kind (`None` when read from a file without it).
    pub kind: Option<FrameType>,
}

/// A sequence of frames in writing order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Trace {
    /// The frames.
    pub frames: Vec<Frame>,
}

/// Why a trace or a model was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceError {
    /// A line of a trace file that does not parse.
    #[error("trace line {line}: {why}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// A trace without frames.
    #[error("the trace has no frames")]
    Empty,
    /// A model parameter out of range.
    #[error("stream model: {0}")]
    Model(String),
}

/// What a result records of the trace it ran (`"trace"` in the sim's and the lab's JSON).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TraceSummary {
    /// Frames in the trace.
    pub frames: usize,
    /// Total bytes.
    pub bytes: u64,
    /// Mean bit rate, bit/s ([`Trace::mean_bit_rate`]).
    pub mean_bit_rate: f64,
    /// Largest frame, bytes.
    pub largest_frame: Option<u32>,
}

impl Trace {
    /// The trace's figures for a result.
    pub fn summary(&self) -> TraceSummary {
        TraceSummary {
            frames: self.frames.len(),
            bytes: self.bytes(),
            mean_bit_rate: self.mean_bit_rate(),
            largest_frame: self.frames.iter().map(|f| f.size).max(),
        }
    }

    /// Total bytes.
    pub fn bytes(&self) -> u64 {
        self.frames.iter().map(|f| u64::from(f.size)).sum()
    }

    /// Time of the last frame.
    pub fn duration(&self) -> Duration {
        self.frames.last().map_or(Duration::ZERO, |f| f.at)
    }

    /// Mean bit rate over the trace (frames / duration as written, one frame interval added).
    pub fn mean_bit_rate(&self) -> f64 {
        let n = self.frames.len();
        if n < 2 {
            return 0.0;
        }
        let span = self.duration().as_secs_f64() * n as f64 / (n - 1) as f64;
        self.bytes() as f64 * 8.0 / span
    }

    /// Parses the text format (module docs).
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        let mut frames: Vec<Frame> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with("time_s") {
                continue;
            }
            let err = |why: String| TraceError::Line { line: i + 1, why };
            let mut fields = line.split(',').map(str::trim);
            let (Some(t), Some(s)) = (fields.next(), fields.next()) else {
                return Err(err("expected time_s,size_bytes".into()));
            };
            let t: f64 = t
                .parse()
                .map_err(|_| err(format!("time '{t}' is not a number")))?;
            let at = Duration::try_from_secs_f64(t)
                .map_err(|_| err(format!("time {t} is not a non-negative number of seconds")))?;
            let size: u32 = s
                .parse()
                .map_err(|_| err(format!("size '{s}' is not a byte count")))?;
            if !(1..=MAX_FRAME).contains(&size) {
                return Err(err(format!("size {size} outside 1..={MAX_FRAME}")));
            }
            if frames.last().is_some_and(|f| f.at > at) {
                return Err(err(format!("time {t} goes backwards")));
            }
            frames.push(Frame {
                at,
                size,
                kind: None,
            });
        }
        if frames.is_empty() {
            return Err(TraceError::Empty);
        }
        Ok(Trace { frames })
    }

    /// The text format, with the frame type when known.
    pub fn to_text(&self) -> String {
        let mut s = String::from("time_s,size_bytes,type\n");
        for f in &self.frames {
            let kind = f.kind.map_or(String::new(), |k| k.letter().to_string());
            let _ = writeln!(s, "{:.6},{},{kind}", f.at.as_secs_f64(), f.size);
        }
        s
    }
}

/// A named model (`--preset`, plan key `preset`); the default is [`Preset::Target`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// Issue 12's lab target: 4 Mbit/s, 30 frames/s, I:P:B 5:2:1, cv 0.3.
    #[default]
    Target,
    /// Shaped like "Silence of the lambs" (Table I): 0.58 Mbit/s, 25 frames/s, I:P:B 8:2.5:1,
    /// cv 0.45 (low motion, large I frames).
    Lambs,
    /// Shaped like "Formula 1" (Table I): 0.84 Mbit/s, 25 frames/s, I:P:B 3:1.8:1, cv 0.25
    /// (high motion).
    Formula1,
}

/// The synthetic VBR model (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TraceModel {
    /// Frames per second.
    pub fps: f64,
    /// Mean bit rate, bit/s.
    pub mean_bit_rate: f64,
    /// Length of the stream, s.
    pub duration_s: f64,
    /// Frames per group of pictures (one I frame each).
    pub gop: u32,
    /// Distance between anchor (I or P) frames; the frames between are B.
    pub anchor: u32,
    /// Mean I-frame size over mean B-frame size.
    pub i_ratio: f64,
    /// Mean P-frame size over mean B-frame size.
    pub p_ratio: f64,
    /// Coefficient of variation of sizes within a type.
    pub cv: f64,
    /// Smallest frame, bytes.
    pub min_size: u32,
}

impl TraceModel {
    /// A preset's model for `duration_s` seconds.
    pub fn preset(p: Preset, duration_s: f64) -> TraceModel {
        let base = TraceModel {
            fps: 30.0,
            mean_bit_rate: 4e6,
            duration_s,
            gop: 12,
            anchor: 3,
            i_ratio: 5.0,
            p_ratio: 2.0,
            cv: 0.3,
            min_size: 100,
        };
        match p {
            Preset::Target => base,
            Preset::Lambs => TraceModel {
                fps: 25.0,
                mean_bit_rate: 5.8e5,
                i_ratio: 8.0,
                p_ratio: 2.5,
                cv: 0.45,
                ..base
            },
            Preset::Formula1 => TraceModel {
                fps: 25.0,
                mean_bit_rate: 8.4e5,
                i_ratio: 3.0,
                p_ratio: 1.8,
                cv: 0.25,
                ..base
            },
        }
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), TraceError> {
        let bad = |s: &str| Err(TraceError::Model(s.into()));
        if !(self.fps > 0.0 && self.fps <= 1000.0) {
            return bad("fps must be in (0, 1000]");
        }
        if !(self.mean_bit_rate >= 1e3 && self.mean_bit_rate <= 1e10) {
            return bad("mean bit rate must be in [1 kbit/s, 10 Gbit/s]");
        }
        if !(self.duration_s > 0.0 && self.duration_s <= 86_400.0) {
            return bad("duration must be in (0, 86400] s");
        }
        if self.gop == 0 || self.anchor == 0 || self.anchor > self.gop {
            return bad("gop and anchor must be positive, anchor <= gop");
        }
        if !(self.i_ratio >= 1.0 && self.p_ratio >= 1.0 && self.i_ratio.is_finite()) {
            return bad("I and P ratios must be >= 1 (B = 1)");
        }
        if !(0.0..=3.0).contains(&self.cv) {
            return bad("cv must be in [0, 3]");
        }
        Ok(())
    }

    /// The type of frame `n`.
    pub fn kind(&self, n: u64) -> FrameType {
        let pos = n % u64::from(self.gop);
        if pos == 0 {
            FrameType::I
        } else if pos.is_multiple_of(u64::from(self.anchor)) {
            FrameType::P
        } else {
            FrameType::B
        }
    }

    /// Mean B-frame size, bytes: the GOP's mean frame equals mean_bit_rate / 8 / fps.
    fn b_mean(&self) -> f64 {
        let gop: f64 = (0..u64::from(self.gop))
            .map(|n| match self.kind(n) {
                FrameType::I => self.i_ratio,
                FrameType::P => self.p_ratio,
                FrameType::B => 1.0,
            })
            .sum();
        self.mean_bit_rate / 8.0 / self.fps * f64::from(self.gop) / gop
    }

    /// The trace for `seed`.
    pub fn generate(&self, seed: u64) -> Result<Trace, TraceError> {
        self.validate()?;
        let mut rng = Rng::new(seed);
        let b = self.b_mean();
        let sigma = (1.0 + self.cv * self.cv).ln().sqrt();
        let count = (self.duration_s * self.fps).round().max(1.0) as u64;
        let frames = (0..count)
            .map(|n| {
                let kind = self.kind(n);
                let mean = b * match kind {
                    FrameType::I => self.i_ratio,
                    FrameType::P => self.p_ratio,
                    FrameType::B => 1.0,
                };
                let factor = (sigma * normal(&mut rng) - sigma * sigma / 2.0).exp();
                let size = (mean * factor).round().clamp(f64::from(self.min_size), 1e9) as u32;
                Frame {
                    at: Duration::from_secs_f64(n as f64 / self.fps),
                    size: size.clamp(1, MAX_FRAME),
                    kind: Some(kind),
                }
            })
            .collect();
        Ok(Trace { frames })
    }
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = rng.next_f64().max(f64::MIN_POSITIVE);
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_meets_its_mean_rate_and_gop() {
        let m = TraceModel::preset(Preset::Target, 60.0);
        let t = m.generate(7).unwrap();
        assert_eq!(t.frames.len(), 1800);
        let rate = t.mean_bit_rate();
        assert!((rate / 4e6 - 1.0).abs() < 0.05, "rate {rate}");
        let kinds: String = t.frames[..12]
            .iter()
            .map(|f| f.kind.unwrap().letter())
            .collect();
        assert_eq!(kinds, "IBBPBBPBBPBB");
        assert_eq!(t, m.generate(7).unwrap(), "seeded");
        assert_ne!(t, m.generate(8).unwrap());
    }

    #[test]
    fn presets_match_table_one_means() {
        for (p, rate, frame) in [
            (Preset::Lambs, 5.8e5, 2.9e3),
            (Preset::Formula1, 8.4e5, 4.2e3),
        ] {
            let t = TraceModel::preset(p, 100.0).generate(1).unwrap();
            let mean = t.bytes() as f64 / t.frames.len() as f64;
            assert!((t.mean_bit_rate() / rate - 1.0).abs() < 0.06, "{p:?}");
            assert!((mean / frame - 1.0).abs() < 0.06, "{p:?} {mean}");
        }
    }

    #[test]
    fn file_format_round_trips_and_refuses_bad_lines() {
        let t = TraceModel::preset(Preset::Formula1, 2.0)
            .generate(3)
            .unwrap();
        let back = Trace::parse(&t.to_text()).unwrap();
        assert_eq!(back.frames.len(), t.frames.len());
        for (a, b) in t.frames.iter().zip(&back.frames) {
            assert_eq!(a.size, b.size);
            assert!(a.at.abs_diff(b.at) < Duration::from_micros(1));
        }
        let ok = Trace::parse("# c\n\n0,100\n0.04, 200 ,P\n").unwrap();
        assert_eq!(ok.frames.len(), 2);
        for bad in ["0,x", "0", "-1,5", "1,5\n0.5,5", "0,0", "nan,3"] {
            assert!(
                matches!(Trace::parse(bad), Err(TraceError::Line { .. })),
                "{bad}"
            );
        }
        assert_eq!(Trace::parse("# nothing\n"), Err(TraceError::Empty));
        let mut m = TraceModel::preset(Preset::Target, 1.0);
        m.anchor = 20;
        assert!(m.generate(1).is_err());
    }
}
