//! The columns of a run's time series, one vocabulary for `tcpnc sim --series` and
//! `tcpnc lab run --series`: where both measure the same quantity, their CSVs name it alike.
//!
//! Rows are intervals of [`SERIES_INTERVAL`] (Karafillis et al. §II, "Collecting Data": the
//! instantaneous decoding throughput is counted per 0.1 s). Counts are what happened in the
//! interval; gauges (the flight size, cwnd, RTT) are the last value seen in it.

use std::time::Duration;

/// The paper's sampling interval (Karafillis et al. §II, "Collecting Data": 0.1 s).
pub const SERIES_INTERVAL: Duration = Duration::from_millis(100);

/// One column of a time-series CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesColumn {
    /// Start of the interval, seconds from the connect.
    TimeS,
    /// TCP segments with payload handed to the receiving TCP (after decoding, in nc mode).
    DecodedPackets,
    /// `decoded_packets` per second (Karafillis et al.'s decoding throughput, packets/s).
    DecodedPps,
    /// Bytes the receiving application read, as Mbit/s (10⁶ bit/s) over the interval.
    GoodputMbit,
    /// Duplicate ACKs the sending TCP received (Mitsuzumi et al. Fig. 7).
    DupAcks,
    /// Segments the sending TCP sent again (any cause).
    Retransmissions,
    /// Retransmissions the sending TCP made on three duplicate ACKs (Mitsuzumi et al. Fig. 8).
    FastRetransmits,
    /// Bytes the sending TCP had sent and not had acknowledged, seen on its egress (≤ cwnd).
    FlightBytes,
    /// The sending TCP's congestion window in segments (Linux `tcpi_snd_cwnd`).
    CwndSegments,
    /// The sending TCP's smoothed RTT, ms (Linux `tcpi_rtt`).
    RttMs,
}

impl SeriesColumn {
    /// The CSV header word.
    pub const fn name(self) -> &'static str {
        match self {
            SeriesColumn::TimeS => "t_s",
            SeriesColumn::DecodedPackets => "decoded_packets",
            SeriesColumn::DecodedPps => "decoded_pps",
            SeriesColumn::GoodputMbit => "goodput_mbit",
            SeriesColumn::DupAcks => "dup_acks",
            SeriesColumn::Retransmissions => "retransmissions",
            SeriesColumn::FastRetransmits => "fast_retransmits",
            SeriesColumn::FlightBytes => "flight_bytes",
            SeriesColumn::CwndSegments => "cwnd_segments",
            SeriesColumn::RttMs => "rtt_ms",
        }
    }

    /// The CSV header line (with its newline) of `columns`.
    pub fn header(columns: &[SeriesColumn]) -> String {
        let mut s = columns
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(",");
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_joins_names() {
        let h = SeriesColumn::header(&[SeriesColumn::TimeS, SeriesColumn::GoodputMbit]);
        assert_eq!(h, "t_s,goodput_mbit\n");
    }
}
