//! What a lab run is configured with: the emulated path, the coding, the transfer.

use serde::{Deserialize, Serialize};

use crate::error::{LabError, Result};

/// Kernel congestion controls the lab accepts.
pub const CONGESTION_CONTROLS: [&str; 3] = ["reno", "cubic", "bbr"];

/// The emulated path (the relay in the emulator namespace).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PathSettings {
    /// Bottleneck rate in Mbit/s, both directions.
    pub rate_mbit: f64,
    /// One-way delay in ms, applied in both directions.
    pub delay_ms: f64,
    /// Bernoulli loss probability on the data direction (client → server).
    pub loss: f64,
    /// Drop-tail queue in packets, both directions (`None`: one bandwidth-delay product,
    /// at least 32 packets).
    pub queue_packets: Option<usize>,
    /// Seed of the relay's loss model.
    pub seed: u64,
}

impl PathSettings {
    /// Checks ranges.
    pub fn validate(&self) -> Result<()> {
        if !(self.rate_mbit.is_finite() && self.rate_mbit > 0.0) {
            return Err(LabError::Invalid("--rate-mbit must be > 0".into()));
        }
        if !(self.delay_ms.is_finite() && self.delay_ms >= 0.0) {
            return Err(LabError::Invalid("--delay-ms must be >= 0".into()));
        }
        if !(0.0..1.0).contains(&self.loss) {
            return Err(LabError::Invalid("--loss must be in [0, 1)".into()));
        }
        Ok(())
    }

    /// The queue limit in packets actually used.
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

/// How traffic crosses the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Through the gateways' tunnel with coding off (`[coding] mode = "off"`): the baseline.
    Plain,
    /// Through the gateways' tunnel with TCP/NC.
    Nc,
    /// Routed directly through the emulator namespace, no tunnel and no impairment.
    Direct,
}

impl Mode {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Nc => "nc",
            Mode::Direct => "direct",
        }
    }
}

/// The lab's default coding window W.
///
/// W = 12: on the path (20 Mbit/s, 20 ms, 10 % loss, deficit repair, seeded
/// coefficients, so the header does not grow with W) ten runs gave a median of 16.0 Mbit/s with
/// W = 12 against 15.2 with W = 8, whose smaller window lets random-loss excursions stall the
/// NC ack (a TCP window cut each) 4–6 times per 20 MB instead of 2–4; W = 16 hides more queue
/// drops from TCP, which then overfills the queue (docs/lab.md).
pub const DEFAULT_WINDOW: u16 = 12;

/// Gateway coding settings for [`Mode::Nc`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CodingSettings {
    /// Coding window W.
    pub window: u16,
    /// Redundancy R (`None`: `"auto"`, the gateways follow their own loss estimate).
    pub redundancy: Option<f64>,
    /// `"systematic"` or `"dense"` (`None`: the gateway's default).
    pub scheme: Option<String>,
    /// `"deficit"` or `"off"` (`None`: the gateway's default, deficit).
    #[serde(default)]
    pub repair: Option<String>,
}

impl Default for CodingSettings {
    fn default() -> Self {
        CodingSettings {
            window: DEFAULT_WINDOW,
            redundancy: None,
            scheme: None,
            repair: None,
        }
    }
}

impl CodingSettings {
    /// The `coding.redundancy` value of the gateway config: R, or `"auto"` (the default: R
    /// follows the gateway's loss estimate, 1/(1 − p̂) + 0.4·p̂, docs/engine.md), so the
    /// gateways are not told the emulated loss rate.
    pub fn redundancy_toml(&self) -> String {
        match self.redundancy {
            Some(r) => r.to_string(),
            None => "\"auto\"".to_string(),
        }
    }
}

/// One transfer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TransferSettings {
    /// Bytes to send.
    pub bytes: u64,
    /// Sender's congestion control.
    pub cc: String,
    /// Data seed.
    pub seed: u64,
    /// Bound on the whole transfer (and on each wait inside it), seconds.
    pub timeout_s: f64,
}

impl TransferSettings {
    /// Checks the congestion control and sizes.
    pub fn validate(&self) -> Result<()> {
        if !CONGESTION_CONTROLS.contains(&self.cc.as_str()) {
            return Err(LabError::Invalid(format!(
                "--cc {} (expected one of {})",
                self.cc,
                CONGESTION_CONTROLS.join(", ")
            )));
        }
        if self.bytes == 0 {
            return Err(LabError::Invalid("--bytes must be > 0".into()));
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return Err(LabError::Invalid("--timeout-s must be > 0".into()));
        }
        Ok(())
    }
}

/// Parses sizes like `20MB`, `512k`, `1MiB`, `1000000` (decimal units: k = 1000,
/// M = 10^6, G = 10^9; binary with an `i`: KiB, MiB, GiB).
pub fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.parse().map_err(|_| format!("'{s}' is not a size"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "ki" | "kib" => 1024.0,
        "mi" | "mib" => 1024.0 * 1024.0,
        "gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
        u => return Err(format!("unknown size unit '{u}' in '{s}'")),
    };
    let v = (x * mult).round();
    if !(1.0..1e15).contains(&v) {
        return Err(format!("size '{s}' out of range"));
    }
    Ok(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("20MB"), Ok(20_000_000));
        assert_eq!(parse_bytes("1MiB"), Ok(1 << 20));
        assert_eq!(parse_bytes("512k"), Ok(512_000));
        assert_eq!(parse_bytes("1234"), Ok(1234));
        assert!(parse_bytes("x").is_err());
        assert!(parse_bytes("3 parsecs").is_err());
    }

    #[test]
    fn defaults_follow_the_path() {
        let p = PathSettings {
            rate_mbit: 20.0,
            delay_ms: 20.0,
            loss: 0.1,
            queue_packets: None,
            seed: 1,
        };
        assert_eq!(p.queue(), 67);
        assert!((p.limit_mbit() - 18.0).abs() < 1e-9);
        let mut c = CodingSettings::default();
        assert_eq!(c.redundancy_toml(), "\"auto\"");
        c.redundancy = Some(1.15);
        assert_eq!(c.redundancy_toml(), "1.15");
    }
}
