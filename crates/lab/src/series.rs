//! `tcpnc lab run --series FILE`: the transfer as a time series, one row per
//! [`SERIES_INTERVAL`] from the source's `connect()` (t = 0, as in `tcpnc sim --series`), with
//! the column names of [`tcpnc_settings::SeriesColumn`].
//!
//! The source polls its socket's `TCP_INFO` and its namespace's `TcpExt` counters every
//! interval ([`SourceSample`]); the sink notes its received byte count at most once per
//! interval as it reads ([`SinkSample`]). Both stamp `CLOCK_MONOTONIC`, which all namespaces
//! share, so the samples bin together. Counters become per-interval differences; gauges
//! (cwnd, the flight size, the RTT) are the interval's last sample, carried into intervals
//! without one. Decoded packets are not a column: the gateways' engine counters are read
//! once per session (`gateways` in the JSON), not sampled.

use std::fmt::Write as _;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
pub use tcpnc_settings::SERIES_INTERVAL;
use tcpnc_settings::SeriesColumn as C;

use crate::netstat::parse_tcp_ext;
use crate::tcpinfo::{mono_ns, tcp_info};

/// The lab's series columns, in CSV order.
pub const LAB_SERIES_COLUMNS: [C; 7] = [
    C::TimeS,
    C::GoodputMbit,
    C::Retransmissions,
    C::FastRetransmits,
    C::CwndSegments,
    C::FlightBytes,
    C::RttMs,
];

/// One poll of the sender's kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceSample {
    /// `CLOCK_MONOTONIC` ns of the poll.
    pub t_ns: u64,
    /// `tcpi_snd_cwnd` (segments).
    pub cwnd_segments: u32,
    /// `tcpi_unacked × tcpi_snd_mss`: segments in flight counted as full-sized.
    pub flight_bytes: u64,
    /// `tcpi_total_retrans` so far.
    pub total_retrans: u32,
    /// `TcpExt: TCPFastRetrans` of the sender's namespace so far (one connection in it).
    pub fast_retrans: u64,
    /// `tcpi_rtt`, ms.
    pub rtt_ms: f64,
}

/// The sink's received byte count at a time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SinkSample {
    /// `CLOCK_MONOTONIC` ns.
    pub t_ns: u64,
    /// Bytes received so far.
    pub bytes: u64,
}

/// One interval of the series.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LabRow {
    /// Bytes the sink received in the interval.
    pub goodput_bytes: u64,
    /// Retransmissions in the interval.
    pub retransmissions: u64,
    /// Fast retransmits in the interval.
    pub fast_retransmits: u64,
    /// Last cwnd seen, segments.
    pub cwnd_segments: u32,
    /// Last flight size seen, bytes.
    pub flight_bytes: u64,
    /// Last smoothed RTT seen, ms.
    pub rtt_ms: f64,
}

/// A transfer's series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabSeries {
    /// One row per interval from t = 0.
    pub rows: Vec<LabRow>,
}

fn bin(t_ns: u64, t0_ns: u64) -> usize {
    (t_ns.saturating_sub(t0_ns) / SERIES_INTERVAL.as_nanos() as u64) as usize
}

impl LabSeries {
    /// Bins the samples of a transfer whose source connected at `t0_ns`.
    pub fn build(t0_ns: u64, source: &[SourceSample], sink: &[SinkSample]) -> LabSeries {
        let last = |t: u64| bin(t, t0_ns);
        let n = source
            .iter()
            .map(|s| last(s.t_ns))
            .chain(sink.iter().map(|s| last(s.t_ns)))
            .max()
            .map_or(0, |b| b + 1);
        let mut rows = vec![LabRow::default(); n];
        let mut prev = SourceSample::default();
        let mut filled = 0;
        for s in source {
            let b = last(s.t_ns);
            for r in &mut rows[filled.min(b)..b] {
                (r.cwnd_segments, r.flight_bytes, r.rtt_ms) =
                    (prev.cwnd_segments, prev.flight_bytes, prev.rtt_ms);
            }
            let r = &mut rows[b];
            r.retransmissions += u64::from(s.total_retrans.saturating_sub(prev.total_retrans));
            r.fast_retransmits += s.fast_retrans.saturating_sub(prev.fast_retrans);
            (r.cwnd_segments, r.flight_bytes, r.rtt_ms) =
                (s.cwnd_segments, s.flight_bytes, s.rtt_ms);
            filled = b;
            prev = *s;
        }
        for r in rows.iter_mut().skip(filled + 1) {
            (r.cwnd_segments, r.flight_bytes, r.rtt_ms) =
                (prev.cwnd_segments, prev.flight_bytes, prev.rtt_ms);
        }
        let mut got = 0;
        for s in sink {
            rows[last(s.t_ns)].goodput_bytes += s.bytes.saturating_sub(got);
            got = got.max(s.bytes);
        }
        LabSeries { rows }
    }

    /// The series as CSV ([`LAB_SERIES_COLUMNS`]).
    pub fn to_csv(&self) -> String {
        let mut s = C::header(&LAB_SERIES_COLUMNS);
        let dt = SERIES_INTERVAL.as_secs_f64();
        for (i, r) in self.rows.iter().enumerate() {
            let _ = writeln!(
                s,
                "{:.3},{:.6},{},{},{},{},{:.3}",
                i as f64 * dt,
                r.goodput_bytes as f64 * 8.0 / dt / 1e6,
                r.retransmissions,
                r.fast_retransmits,
                r.cwnd_segments,
                r.flight_bytes,
                r.rtt_ms
            );
        }
        s
    }
}

/// Polls `fd`'s `TCP_INFO` and this namespace's `TCPFastRetrans` now (errors read as zeros:
/// a sample must not end the transfer).
pub fn poll_source(fd: RawFd) -> SourceSample {
    let t_ns = mono_ns();
    let info = tcp_info(fd).unwrap_or_default();
    let fast_retrans = std::fs::read_to_string("/proc/thread-self/net/netstat")
        .ok()
        .and_then(|t| parse_tcp_ext(&t).get("TCPFastRetrans").copied())
        .unwrap_or(0);
    SourceSample {
        t_ns,
        cwnd_segments: info.snd_cwnd,
        flight_bytes: u64::from(info.unacked) * u64::from(info.snd_mss),
        total_retrans: info.total_retrans,
        fast_retrans,
        rtt_ms: info.rtt_ms,
    }
}

/// A thread that calls `emit` with [`poll_source`] of `fd` every [`SERIES_INTERVAL`] until
/// `stop` is set (then once more). `fd` must stay open until the thread is joined.
pub fn spawn_source_sampler(
    fd: RawFd,
    stop: Arc<AtomicBool>,
    emit: impl Fn(SourceSample) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        loop {
            let done = stop.load(Ordering::Relaxed);
            emit(poll_source(fd));
            if done {
                return;
            }
            std::thread::sleep(SERIES_INTERVAL);
        }
    })
}

/// Notes the sink's byte count at most once per interval.
#[derive(Debug, Default)]
pub struct SinkSampler {
    next_ns: u64,
}

impl SinkSampler {
    /// A sample of `bytes` if an interval has passed since the last one.
    pub fn note(&mut self, bytes: u64) -> Option<SinkSample> {
        let t_ns = mono_ns();
        if t_ns < self.next_ns {
            return None;
        }
        self.next_ns = t_ns + SERIES_INTERVAL.as_nanos() as u64;
        Some(SinkSample { t_ns, bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_bin_into_deltas_and_gauges() {
        let ms = 1_000_000u64;
        let src = |t, cwnd, retrans| SourceSample {
            t_ns: 1000 * ms + t * ms,
            cwnd_segments: cwnd,
            total_retrans: retrans,
            ..SourceSample::default()
        };
        let source = [src(50, 10, 0), src(150, 20, 2), src(420, 5, 3)];
        let sink = [
            SinkSample {
                t_ns: 1000 * ms + 120 * ms,
                bytes: 1000,
            },
            SinkSample {
                t_ns: 1000 * ms + 330 * ms,
                bytes: 3000,
            },
            SinkSample {
                t_ns: 1000 * ms + 610 * ms,
                bytes: 3500,
            },
        ];
        let s = LabSeries::build(1000 * ms, &source, &sink);
        let cwnd: Vec<u32> = s.rows.iter().map(|r| r.cwnd_segments).collect();
        assert_eq!(cwnd, [10, 20, 20, 20, 5, 5, 5]);
        let re: Vec<u64> = s.rows.iter().map(|r| r.retransmissions).collect();
        assert_eq!(re, [0, 2, 0, 0, 1, 0, 0]);
        let g: Vec<u64> = s.rows.iter().map(|r| r.goodput_bytes).collect();
        assert_eq!(g, [0, 1000, 0, 2000, 0, 0, 500]);
        let csv = s.to_csv();
        assert!(csv.starts_with("t_s,goodput_mbit,retransmissions,fast_retransmits,"));
        assert_eq!(csv.lines().count(), 8);
    }
}
