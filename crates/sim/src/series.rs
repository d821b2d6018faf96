//! Time series of a run ([`Series`]): per interval of virtual time (0.1 s, as Karafillis et
//! al. §II sample the "instantaneous decoding throughput"), the decoded packets handed to the
//! receiving TCP, the bytes its application read, the duplicate ACKs the sending TCP received,
//! the sender's retransmissions and fast retransmits, and its flight size at the end of the
//! interval. `tcpnc sim --series FILE` writes them as CSV with the column names of
//! [`tcpnc_settings::SeriesColumn`] (shared with `tcpnc lab run --series`).
//!
//! A decoded packet is a TCP segment with payload that the server-side box hands to the
//! server's TCP (in plain mode: every data segment that arrives), so NC and plain runs are
//! counted alike. smoltcp does not expose its congestion window, so there is no cwnd column;
//! `flight_bytes` (sent and not acknowledged, ≤ cwnd) is what the wire shows of it
//! ([`crate::tcp_counters`]).

use std::fmt::Write as _;
use std::time::Duration;

pub use tcpnc_settings::SERIES_INTERVAL;
use tcpnc_settings::SeriesColumn as C;

/// The simulator's series columns, in CSV order.
pub const SIM_SERIES_COLUMNS: [C; 8] = [
    C::TimeS,
    C::DecodedPackets,
    C::DecodedPps,
    C::GoodputMbit,
    C::DupAcks,
    C::Retransmissions,
    C::FastRetransmits,
    C::FlightBytes,
];

/// One interval's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeriesRow {
    /// Decoded segments handed to the receiving TCP.
    pub decoded_packets: u64,
    /// Bytes the receiving application read.
    pub goodput_bytes: u64,
    /// Duplicate ACKs the sending TCP received.
    pub dup_acks: u64,
    /// The sender's TCP retransmissions.
    pub retransmissions: u64,
    /// The sender's fast retransmits.
    pub fast_retransmits: u64,
    /// The sender's flight size at the interval's last instant (a gauge, not a count).
    pub flight_bytes: u64,
}

/// The series of one run: one row per interval from t = 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    interval: Duration,
    rows: Vec<SeriesRow>,
    last: SeriesRow,
}

impl Series {
    /// An empty series sampled every `interval` (at least 1 ms).
    pub fn new(interval: Duration) -> Self {
        Series {
            interval: interval.max(Duration::from_millis(1)),
            rows: Vec::new(),
            last: SeriesRow::default(),
        }
    }

    /// The sampling interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The rows, one per interval (intervals with nothing are zero rows).
    pub fn rows(&self) -> &[SeriesRow] {
        &self.rows
    }

    /// Adds what the totals gained since the last call to the interval holding `now`; the
    /// gauge (`flight_bytes`) is set, and carried into intervals with no instant.
    pub fn observe(&mut self, now: Duration, totals: SeriesRow) {
        let bin = (now.as_nanos() / self.interval.as_nanos()) as usize;
        if self.rows.len() <= bin {
            let carried = SeriesRow {
                flight_bytes: self.last.flight_bytes,
                ..SeriesRow::default()
            };
            self.rows.resize(bin + 1, carried);
        }
        let r = &mut self.rows[bin];
        r.fast_retransmits += totals.fast_retransmits - self.last.fast_retransmits;
        r.flight_bytes = totals.flight_bytes;
        r.decoded_packets += totals.decoded_packets - self.last.decoded_packets;
        r.goodput_bytes += totals.goodput_bytes - self.last.goodput_bytes;
        r.dup_acks += totals.dup_acks - self.last.dup_acks;
        r.retransmissions += totals.retransmissions - self.last.retransmissions;
        self.last = totals;
    }

    /// Mean and standard deviation of the decoding throughput in packets per second over
    /// every interval up to the last one (the paper's "standard deviation of the average
    /// throughput", §III: 121.53 packets/s for NC, 48.08 for PB).
    pub fn decoding_mean_sd(&self) -> (f64, f64) {
        let n = self.rows.len();
        if n == 0 {
            return (0.0, 0.0);
        }
        let per_s = 1.0 / self.interval.as_secs_f64();
        let v: Vec<f64> = self
            .rows
            .iter()
            .map(|r| r.decoded_packets as f64 * per_s)
            .collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        (mean, var.sqrt())
    }

    /// The series as CSV ([`SIM_SERIES_COLUMNS`]): `t_s` (the interval's start), the counts,
    /// goodput in Mbit/s, the flight size.
    pub fn to_csv(&self) -> String {
        let mut s = C::header(&SIM_SERIES_COLUMNS);
        let dt = self.interval.as_secs_f64();
        for (i, r) in self.rows.iter().enumerate() {
            let _ = writeln!(
                s,
                "{:.3},{},{},{:.6},{},{},{},{}",
                i as f64 * dt,
                r.decoded_packets,
                r.decoded_packets as f64 / dt,
                r.goodput_bytes as f64 * 8.0 / dt / 1e6,
                r.dup_acks,
                r.retransmissions,
                r.fast_retransmits,
                r.flight_bytes
            );
        }
        s
    }

    /// Mean of the flight-size gauge over the intervals, bytes.
    pub fn flight_mean_bytes(&self) -> f64 {
        if self.rows.is_empty() {
            return 0.0;
        }
        self.rows.iter().map(|r| r.flight_bytes as f64).sum::<f64>() / self.rows.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_land_in_their_interval() {
        let mut s = Series::new(SERIES_INTERVAL);
        let row = |d, g| SeriesRow {
            decoded_packets: d,
            goodput_bytes: g,
            ..SeriesRow::default()
        };
        s.observe(Duration::from_millis(50), row(2, 2000));
        s.observe(Duration::from_millis(99), row(3, 3000));
        s.observe(Duration::from_millis(350), row(7, 7000));
        let d: Vec<u64> = s.rows().iter().map(|r| r.decoded_packets).collect();
        assert_eq!(d, [3, 0, 0, 4]);
        let (mean, sd) = s.decoding_mean_sd();
        assert!((mean - 17.5).abs() < 1e-9, "{mean}");
        assert!(sd > 10.0);
        let csv = s.to_csv();
        assert_eq!(csv.lines().count(), 5);
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("0.000,3,30,0.240000,0,0,0,0")
        );
    }
}
