//! TCP counters of a run ([`TcpCounters`]) and the passive observers that fill them:
//! retransmissions, fast retransmits and the flight size on the sender, duplicate ACKs on the
//! receiver. Packets are read with the engine's own parser ([`tcpnc_proto::tcp::TcpPacket`]).
//!
//! smoltcp 0.14 keeps its congestion window private (no accessor; its controllers are a
//! crate-private trait), so cwnd is not reported. What the sender's egress and ingress show is:
//! * **fast retransmits**: smoltcp (`socket/tcp.rs`, `process`/`dispatch`) fast-retransmits
//!   exactly once per run of duplicate ACKs, on the third (a pure ACK repeating the previous ACK
//!   number, below the highest sequence sent, with an unchanged window), by resending the one
//!   segment at that ACK number in its next dispatch; a new ACK in between cancels it. The tap
//!   counts the same third duplicate and then requires the next data segment on the wire to be
//!   that resend, so what is counted is a retransmission that was seen, never inferred;
//! * **the flight size**: bytes sent beyond the highest ACK received (the end of the latest
//!   data segment other than a fast retransmit; smoltcp rewinds to the ACK after a timeout), the
//!   quantity smoltcp's own `flight_size()` holds and cwnd bounds.

use tcpnc_proto::tcp::{TcpFlags, TcpPacket};

/// TCP-level counters derived from the packets each endpoint emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpCounters {
    /// Client segments carrying payload.
    pub data_segments: u64,
    /// Client data segments whose start lay below the highest sequence sent before.
    pub retransmissions: u64,
    /// Payload bytes in those retransmitted segments.
    pub retransmitted_bytes: u64,
    /// Server segments without payload (pure ACKs, SYN/FIN excluded).
    pub acks: u64,
    /// Pure ACKs repeating the previous ACK number.
    pub dup_acks: u64,
    /// Duplicate ACKs the client (the sending TCP) received: in nc mode those its box
    /// synthesised (Mitsuzumi et al. Fig. 7), in plain mode the server's.
    pub dup_acks_at_sender: u64,
    /// Client retransmissions made on a third duplicate ACK (Mitsuzumi et al. Fig. 8).
    pub fast_retransmits: u64,
    /// Runs of three or more duplicate ACKs in a row among the server's pure ACKs: what can
    /// trigger a fast retransmit (a duplicate between two advancing ACKs cannot, RFC 5681 §3.2).
    pub dup_ack_runs: u64,
    /// `dup_ack_runs` among the ACKs the client (the sending TCP) received.
    pub dup_ack_runs_at_sender: u64,
}

/// Watches client egress for retransmissions and the ACKs reaching the client for the
/// duplicates that trigger a fast retransmit (O(1) per packet).
#[derive(Debug, Default)]
pub(crate) struct SenderTap {
    snd_max: Option<u32>,
    /// End of the latest data segment that was not a fast retransmit (smoltcp's snd_nxt).
    snd_nxt: Option<u32>,
    /// Highest ACK number the client received.
    snd_una: Option<u32>,
    /// ACK number and window of the last ACK that was not a duplicate, and the window of the
    /// last segment received.
    last_ack: Option<u32>,
    last_window: Option<u16>,
    dups: u32,
    /// The ACK number whose third duplicate arrived; the next data segment settles it.
    armed: Option<u32>,
}

/// Watches server egress for duplicate ACKs.
#[derive(Debug, Default)]
pub(crate) struct ReceiverTap {
    last_ack: Option<u32>,
    /// Duplicates in a row so far.
    run: u32,
}

/// (seq, ack, payload length, syn, fin) of an IP/TCP packet.
fn parse(pkt: &[u8]) -> Option<(u32, u32, usize, bool, bool)> {
    let p = TcpPacket::parse(pkt).ok()?;
    let flags = p.tcp.flags;
    Some((
        p.tcp.seq,
        p.tcp.ack,
        p.payload().len(),
        flags.contains(TcpFlags::SYN),
        flags.contains(TcpFlags::FIN),
    ))
}

/// Whether `a` is later than `b` (`None` counts as earliest).
fn later(a: u32, b: Option<u32>) -> bool {
    b.is_none_or(|b| seq_lt(b, a))
}

/// `a < b` in 32-bit sequence space.
fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl SenderTap {
    /// A packet the client emitted.
    pub fn observe(&mut self, pkt: &[u8], c: &mut TcpCounters) {
        let Some((seq, _, len, syn, fin)) = parse(pkt) else {
            return;
        };
        let end = seq.wrapping_add(len as u32 + u32::from(syn) + u32::from(fin));
        let mut fast = false;
        if len > 0 {
            c.data_segments += 1;
            if let Some(max) = self.snd_max
                && seq_lt(seq, max)
            {
                c.retransmissions += 1;
                c.retransmitted_bytes += len as u64;
                fast = self.armed == Some(seq);
            }
            c.fast_retransmits += u64::from(fast);
            self.armed = None;
        }
        if !fast && (len > 0 || syn || fin) {
            self.snd_nxt = Some(end);
        }
        if later(end, self.snd_max) {
            self.snd_max = Some(end);
        }
    }

    /// A packet delivered to the client: smoltcp's duplicate-ACK rule (see the module docs).
    pub fn observe_ack(&mut self, pkt: &[u8]) {
        let Ok(p) = TcpPacket::parse(pkt) else {
            return;
        };
        if !p.tcp.flags.contains(TcpFlags::ACK) {
            return;
        }
        let (ack, window) = (p.tcp.ack, p.tcp.window);
        let dup = p.payload().is_empty()
            && self.last_ack == Some(ack)
            && self.snd_max.is_some_and(|m| seq_lt(ack, m))
            && self.last_window == Some(window);
        self.last_window = Some(window);
        if dup {
            self.dups += 1;
            if self.dups == 3 {
                self.armed = Some(ack);
            }
        } else {
            self.dups = 0;
            self.armed = None;
            self.last_ack = Some(ack);
        }
        if later(ack, self.snd_una) {
            self.snd_una = Some(ack);
        }
    }

    /// Bytes sent beyond the highest ACK received.
    pub fn flight_bytes(&self) -> u64 {
        match (self.snd_nxt, self.snd_una) {
            (Some(nxt), Some(una)) if seq_lt(una, nxt) => u64::from(nxt.wrapping_sub(una)),
            _ => 0,
        }
    }
}

impl ReceiverTap {
    pub fn observe(&mut self, pkt: &[u8], c: &mut TcpCounters) {
        let Some((_, ack, len, syn, fin)) = parse(pkt) else {
            return;
        };
        if len > 0 || syn || fin {
            return;
        }
        c.acks += 1;
        if self.last_ack == Some(ack) {
            c.dup_acks += 1;
            self.run += 1;
            c.dup_ack_runs += u64::from(self.run == 3);
        } else {
            self.run = 0;
        }
        self.last_ack = Some(ack);
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use tcpnc_proto::tcp::{Endpoint, FlowKey, IpParams, SegmentFields, build_segment};

    use super::*;

    fn flow() -> FlowKey {
        let ep = |last, port| Endpoint::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, last)), port);
        FlowKey::new(ep(1, 50000), ep(2, 5001))
    }

    /// A data segment from the client: `len` bytes at `seq`.
    fn data(seq: u32, len: usize) -> Vec<u8> {
        let f = SegmentFields {
            seq,
            ack: 1,
            flags: TcpFlags::ACK,
            window: 1000,
            urgent: 0,
        };
        build_segment(&flow(), &f, &[], &vec![0; len], &IpParams::default()).unwrap()
    }

    /// A pure ACK reaching the client.
    fn ack(ack: u32, window: u16) -> Vec<u8> {
        let f = SegmentFields {
            seq: 1,
            ack,
            flags: TcpFlags::ACK,
            window,
            urgent: 0,
        };
        build_segment(&flow().reversed(), &f, &[], &[], &IpParams::default()).unwrap()
    }

    /// Sends five 100-byte segments from seq 1000, then the ACKs `acks` (number, window), then
    /// the segment at `resend`; the counters and the flight size.
    fn scenario(acks: &[(u32, u16)], resend: u32) -> (TcpCounters, u64) {
        let (mut tap, mut c) = (SenderTap::default(), TcpCounters::default());
        for i in 0..5 {
            tap.observe(&data(1000 + 100 * i, 100), &mut c);
        }
        for &(a, w) in acks {
            tap.observe_ack(&ack(a, w));
        }
        tap.observe(&data(resend, 100), &mut c);
        (c, tap.flight_bytes())
    }

    #[test]
    fn third_duplicate_then_resend_is_a_fast_retransmit() {
        let dup = (1100, 500);
        let (c, flight) = scenario(&[dup, dup, dup, dup], 1100);
        assert_eq!((c.retransmissions, c.fast_retransmits), (1, 1));
        // The resend does not pull the flight back: 1100..1500 is still out.
        assert_eq!(flight, 400);
    }

    #[test]
    fn two_duplicates_or_a_window_change_are_not_enough() {
        let (c, _) = scenario(&[(1100, 500), (1100, 500), (1100, 500)], 1100);
        assert_eq!((c.retransmissions, c.fast_retransmits), (1, 0));
        let acks = [(1100, 500), (1100, 500), (1100, 400), (1100, 300)];
        let (c, _) = scenario(&acks, 1100);
        assert_eq!(c.fast_retransmits, 0);
    }

    #[test]
    fn a_new_ack_or_another_segment_cancels() {
        let dup = (1100, 500);
        let (c, _) = scenario(&[dup, dup, dup, dup, (1200, 500)], 1100);
        assert_eq!(c.fast_retransmits, 0);
        // A retransmission of some other segment (a timeout's go-back) is not one either.
        let (c, flight) = scenario(&[dup, dup, dup, dup], 1300);
        assert_eq!((c.retransmissions, c.fast_retransmits), (1, 0));
        assert_eq!(flight, 300);
    }

    #[test]
    fn only_three_duplicates_in_a_row_make_a_run() {
        let mut tap = ReceiverTap::default();
        let mut c = TcpCounters::default();
        // Interleaved (a useless redundant combination after each arrival): 3 duplicates, no
        // run; then three in a row: one run, however long it goes on.
        for a in [
            1100, 1100, 1200, 1200, 1300, 1300, 1400, 1400, 1400, 1400, 1400,
        ] {
            tap.observe(&ack(a, 500), &mut c);
        }
        assert_eq!((c.dup_acks, c.dup_ack_runs), (7, 1));
    }
}
