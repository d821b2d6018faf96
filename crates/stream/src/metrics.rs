//! What a player sees of a stream: per-frame records and their summary.
//!
//! * **Latency** of a frame: from the time the source wrote it to the time the sink read its
//!   last byte (Parejiya & Desai §III-B-1: application to application, before decoding).
//! * **Jitter**: Parejiya & Desai §III-B-2 (after Claypool & Tanner) define it as "the average
//!   difference in the video frame arrival observed at the receiver's playback buffer". Here,
//!   per delivered frame after the first, `|(a_i − a_{i−1}) − (s_i − s_{i−1})|` — how much the
//!   gap between two arrivals differs from the gap between their sending (for a constant frame
//!   rate, the inter-arrival time's deviation from the frame interval); the summary is its mean.
//! * **Stalls**: frames later than the playout deadline (or never delivered).
//! * **Goodput**: frame bytes delivered over the time from the first frame's writing to the
//!   last frame's arrival.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

/// One frame as the sink saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FrameRecord {
    /// Frame number.
    pub index: usize,
    /// Bytes.
    pub size: u32,
    /// When the source wrote it, s.
    pub sent_s: f64,
    /// When the sink read its last byte, s (`None`: never).
    pub arrived_s: Option<f64>,
    /// Whether its bytes arrived unchanged (per-frame digest).
    pub intact: bool,
}

impl FrameRecord {
    /// A frame written at `sent`, read completely at `arrived`.
    pub fn new(index: usize, size: u32, sent: Duration, arrived: Option<Duration>) -> Self {
        FrameRecord {
            index,
            size,
            sent_s: sent.as_secs_f64(),
            arrived_s: arrived.map(|a| a.as_secs_f64()),
            intact: false,
        }
    }

    /// One-way latency, ms.
    pub fn latency_ms(&self) -> Option<f64> {
        self.arrived_s.map(|a| (a - self.sent_s) * 1e3)
    }
}

/// The summary of one stream run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StreamSummary {
    /// Frames in the trace.
    pub frames: usize,
    /// Frames whose last byte arrived.
    pub delivered: usize,
    /// Frames delivered with their bytes unchanged.
    pub intact: usize,
    /// Latency, ms.
    pub latency_mean_ms: f64,
    /// Median latency, ms.
    pub latency_p50_ms: f64,
    /// 95th-percentile latency, ms.
    pub latency_p95_ms: f64,
    /// 99th-percentile latency, ms.
    pub latency_p99_ms: f64,
    /// Largest latency, ms.
    pub latency_max_ms: f64,
    /// Mean jitter, ms (module docs).
    pub jitter_mean_ms: f64,
    /// The playout deadline, ms.
    pub deadline_ms: f64,
    /// Frames later than the deadline or never delivered.
    pub stalls: usize,
    /// Frame bytes delivered per second, Mbit/s.
    pub goodput_mbit: f64,
}

impl StreamSummary {
    /// Column names of [`StreamSummary::table_row`], for a terminal table.
    pub fn table_header() -> String {
        format!(
            "{:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6} {:>9} {:>7}",
            "mean ms", "p50", "p95", "p99", "max", "jitter", "stalls", "intact", "Mbit/s"
        )
    }

    /// The summary as one line of a terminal table (columns of [`StreamSummary::table_header`]).
    pub fn table_row(&self) -> String {
        format!(
            "{:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8.2} {:>6} {:>9} {:>7.3}",
            self.latency_mean_ms,
            self.latency_p50_ms,
            self.latency_p95_ms,
            self.latency_p99_ms,
            self.latency_max_ms,
            self.jitter_mean_ms,
            self.stalls,
            format!("{}/{}", self.intact, self.frames),
            self.goodput_mbit,
        )
    }
}

/// Nearest-rank percentile of sorted values (`q` in (0, 1]).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Per-frame jitter (module docs): `None` for the first delivered frame and undelivered ones.
pub fn jitters(records: &[FrameRecord]) -> Vec<Option<f64>> {
    let mut prev: Option<(f64, f64)> = None;
    records
        .iter()
        .map(|r| {
            let a = r.arrived_s?;
            let j = prev.map(|(s, p)| ((a - p) - (r.sent_s - s)).abs() * 1e3);
            prev = Some((r.sent_s, a));
            j
        })
        .collect()
}

/// Summarises `records` against a playout `deadline`.
pub fn summarize(records: &[FrameRecord], deadline: Duration) -> StreamSummary {
    let mut lat: Vec<f64> = records.iter().filter_map(FrameRecord::latency_ms).collect();
    lat.sort_by(f64::total_cmp);
    let deadline_ms = deadline.as_secs_f64() * 1e3;
    let js: Vec<f64> = jitters(records).into_iter().flatten().collect();
    let mean = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let first = records.first().map_or(0.0, |r| r.sent_s);
    let last = records
        .iter()
        .filter_map(|r| r.arrived_s)
        .fold(first, f64::max);
    let bytes: u64 = records
        .iter()
        .filter(|r| r.arrived_s.is_some())
        .map(|r| u64::from(r.size))
        .sum();
    StreamSummary {
        frames: records.len(),
        delivered: lat.len(),
        intact: records.iter().filter(|r| r.intact).count(),
        latency_mean_ms: mean(&lat),
        latency_p50_ms: percentile(&lat, 0.50),
        latency_p95_ms: percentile(&lat, 0.95),
        latency_p99_ms: percentile(&lat, 0.99),
        latency_max_ms: lat.last().copied().unwrap_or(0.0),
        jitter_mean_ms: mean(&js),
        deadline_ms,
        stalls: records
            .iter()
            .filter(|r| r.latency_ms().is_none_or(|l| l > deadline_ms))
            .count(),
        goodput_mbit: if last > first {
            bytes as f64 * 8.0 / (last - first) / 1e6
        } else {
            0.0
        },
    }
}

/// The per-frame series as CSV, one `scheme` column so several runs share a file:
/// `scheme,frame,size,sent_s,arrived_s,latency_ms,jitter_ms,intact`.
pub fn series_csv(scheme: &str, records: &[FrameRecord], header: bool) -> String {
    let mut s = String::new();
    if header {
        s.push_str(SERIES_HEADER);
        s.push('\n');
    }
    let opt = |v: Option<f64>, digits: usize| v.map_or(String::new(), |x| format!("{x:.digits$}"));
    for (r, j) in records.iter().zip(jitters(records)) {
        let _ = writeln!(
            s,
            "{scheme},{},{},{:.6},{},{},{},{}",
            r.index,
            r.size,
            r.sent_s,
            opt(r.arrived_s, 6),
            opt(r.latency_ms(), 3),
            opt(j, 3),
            r.intact
        );
    }
    s
}

/// The header of [`series_csv`].
const SERIES_HEADER: &str = "scheme,frame,size,sent_s,arrived_s,latency_ms,jitter_ms,intact";

/// A per-frame CSV that [`parse_series_csv`] cannot read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("frame series line {line}: {why}")]
pub struct SeriesError {
    /// The line (1 = the header).
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

/// Reads what [`series_csv`] wrote back into (scheme, frame) pairs; the derived columns
/// (latency, jitter) are not read, and times keep the file's microseconds.
pub fn parse_series_csv(text: &str) -> Result<Vec<(String, FrameRecord)>, SeriesError> {
    let mut lines = text.lines().enumerate();
    if lines.next().map(|(_, h)| h) != Some(SERIES_HEADER) {
        return Err(SeriesError {
            line: 1,
            why: format!("the header is not `{SERIES_HEADER}`"),
        });
    }
    lines
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            let bad = |why: &str| SeriesError {
                line: i + 1,
                why: why.to_string(),
            };
            let c: Vec<&str> = l.split(',').collect();
            if c.len() != 8 {
                return Err(bad("expected 8 cells"));
            }
            let arrived_s = match c[4] {
                "" => None,
                a => Some(a.parse().map_err(|_| bad("arrived_s is not a number"))?),
            };
            let record = FrameRecord {
                index: c[1].parse().map_err(|_| bad("frame is not a number"))?,
                size: c[2].parse().map_err(|_| bad("size is not a number"))?,
                sent_s: c[3].parse().map_err(|_| bad("sent_s is not a number"))?,
                arrived_s,
                intact: c[7] == "true",
            };
            Ok((c[0].to_string(), record))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: usize, sent_ms: u64, arrived_ms: Option<u64>) -> FrameRecord {
        let mut r = FrameRecord::new(
            i,
            1000,
            Duration::from_millis(sent_ms),
            arrived_ms.map(Duration::from_millis),
        );
        r.intact = arrived_ms.is_some();
        r
    }

    #[test]
    fn latency_jitter_stalls() {
        // Sent every 40 ms; latencies 50, 50, 130, 60 ms, the fifth frame never arrives.
        let rs = [
            rec(0, 0, Some(50)),
            rec(1, 40, Some(90)),
            rec(2, 80, Some(210)),
            rec(3, 120, Some(180)),
            rec(4, 160, None),
        ];
        let s = summarize(&rs, Duration::from_millis(100));
        assert_eq!((s.frames, s.delivered, s.intact), (5, 4, 4));
        assert!((s.latency_mean_ms - 72.5).abs() < 1e-9);
        assert_eq!(s.latency_p50_ms, 50.0);
        assert_eq!(s.latency_max_ms, 130.0);
        assert_eq!(s.latency_p95_ms, 130.0);
        // Jitter: |50-40| - 0 = 0, |120-40| = 80, |(-30)-40| = 70 → mean 50.
        assert!(
            (s.jitter_mean_ms - 50.0).abs() < 1e-9,
            "{}",
            s.jitter_mean_ms
        );
        assert_eq!(s.stalls, 2);
        // 4000 bytes over 0.21 s.
        assert!((s.goodput_mbit - 4000.0 * 8.0 / 0.21 / 1e6).abs() < 1e-9);
        let csv = series_csv("plain", &rs, true);
        assert_eq!(csv.lines().count(), 6);
        assert!(
            csv.lines()
                .nth(3)
                .unwrap()
                .starts_with("plain,2,1000,0.080000,0.210000,130.000,80.000,true")
        );
        assert!(csv.lines().nth(5).unwrap().ends_with(",,,false"));
        let back = parse_series_csv(&csv).unwrap();
        assert_eq!(back.len(), 5);
        assert!(back.iter().all(|(s, _)| s == "plain"));
        let again: Vec<FrameRecord> = back.into_iter().map(|(_, r)| r).collect();
        assert_eq!(again, rs, "every field written is read back");
        let e = parse_series_csv("scheme,frame\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse_series_csv(&csv.replace("0.210000", "soon")).unwrap_err();
        assert_eq!(e.line, 4, "{e}");
    }
}
