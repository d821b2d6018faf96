//! The driver's two ends of each flow, as far as the gateway can tell them from TCP: the
//! sending TCP behind the gateway's TUN ([`SendingTcp`]) and the receiving TCP behind the
//! remote peer ([`ReceivingTcp`]). Segments are built with `tcpnc_proto::tcp` and checked with
//! its parser (checksums included).
//!
//! The sender keeps at most `inflight` unacknowledged bytes (and no more than the window the
//! ACKs advertise), sends MSS-sized segments of a known byte pattern, and after
//! [`RETRANSMIT_TIMEOUT`] without an advancing ACK goes back to the first unacknowledged byte
//! (go-back-N). No congestion control, no SACK, no FIN. The receiver accepts the next in-order
//! segment only (one out of order is counted and dropped, as a TCP without an out-of-order
//! queue would), compares every byte with the pattern, and ACKs every second segment and at
//! the end of each batch the peer engine delivered.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use tcpnc_proto::tcp::{
    Endpoint, FlowKey, IpParams, SegmentFields, TcpError, TcpFlags, TcpPacket, build_segment_into,
    effective_window_shift, scan_options,
};

/// Window scale both ends announce in their SYNs.
pub(super) const WINDOW_SHIFT: u8 = 7;
/// The receiving TCP's advertised window, bytes.
pub(super) const RECEIVE_WINDOW: u32 = 4 << 20;
/// Largest segment payload the driver sends or can check.
pub const MAX_MSS: u16 = 1460;
/// Smallest `mss` accepted (the IPv4 default MSS).
pub const MIN_MSS: u16 = 536;
/// How long the sender waits for an advancing ACK before it resends from the first
/// unacknowledged byte.
pub const RETRANSMIT_TIMEOUT: Duration = Duration::from_millis(500);
/// The local (sending) host, behind the gateway's TUN.
pub(super) const LOCAL: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// The remote (receiving) host, behind the peer.
pub(super) const REMOTE: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);
/// The receiving TCP's port; flow k sends from port `FIRST_PORT + k`.
const REMOTE_PORT: u16 = 5001;
const FIRST_PORT: u16 = 40_000;

/// Length of the byte pattern (a prime, so that segments of one MSS start at every phase).
const PATTERN_LEN: usize = 65_521;
/// Offset between the flows' patterns.
const FLOW_PHASE: u64 = 4_099;

/// The bytes every flow sends: flow `f`'s byte at stream offset `o` is
/// `pattern[(o + f * FLOW_PHASE) mod PATTERN_LEN]` (xorshift bytes), so a byte out of place,
/// from another flow or altered does not match.
pub(super) struct Pattern(Vec<u8>);

impl Pattern {
    pub(super) fn new() -> Pattern {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let bytes = (0..PATTERN_LEN + usize::from(MAX_MSS))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        Pattern(bytes)
    }

    /// Flow `flow`'s `len` bytes (at most [`MAX_MSS`]) from stream offset `offset`.
    pub(super) fn bytes(&self, flow: usize, offset: u64, len: usize) -> &[u8] {
        let phase = offset.wrapping_add((flow as u64).wrapping_mul(FLOW_PHASE));
        let i = (phase % PATTERN_LEN as u64) as usize;
        &self.0[i..i + len.min(usize::from(MAX_MSS))]
    }
}

/// The flow's port on the sending side.
pub(super) fn local_port(flow: usize) -> u16 {
    FIRST_PORT.wrapping_add(flow as u16)
}

/// Flow index of a port on the sending side.
pub(super) fn flow_of_port(port: u16) -> usize {
    usize::from(port.wrapping_sub(FIRST_PORT))
}

fn endpoints(flow: usize) -> (Endpoint, Endpoint) {
    (
        Endpoint::new(IpAddr::V4(LOCAL), local_port(flow)),
        Endpoint::new(IpAddr::V4(REMOTE), REMOTE_PORT),
    )
}

/// SYN options: MSS, NOP, window scale.
fn syn_options(mss: u16) -> [u8; 8] {
    let m = mss.to_be_bytes();
    [2, 4, m[0], m[1], 1, 3, 3, WINDOW_SHIFT]
}

/// Builds one segment of `key` into `out`.
fn segment(
    out: &mut Vec<u8>,
    key: &FlowKey,
    ident: &mut u16,
    fields: SegmentFields,
    options: &[u8],
    payload: &[u8],
) -> Result<(), TcpError> {
    *ident = ident.wrapping_add(1);
    let ip = IpParams {
        ident: *ident,
        ..IpParams::default()
    };
    build_segment_into(out, key, &fields, options, payload, &ip)
}

fn fields(seq: u32, ack: u32, flags: TcpFlags, window: u16) -> SegmentFields {
    SegmentFields {
        seq,
        ack,
        flags,
        window,
        urgent: 0,
    }
}

/// The window field for `RECEIVE_WINDOW` under `shift`.
fn window_field(shift: u8) -> u16 {
    (RECEIVE_WINDOW >> shift).min(65_535) as u16
}

/// The sending TCP of one flow (behind the gateway's TUN).
pub(super) struct SendingTcp {
    flow: usize,
    key: FlowKey,
    isn: u32,
    total: u64,
    /// First unacknowledged byte (stream offset).
    una: u64,
    /// Next byte to send.
    nxt: u64,
    /// One past the highest byte ever sent.
    high: u64,
    mss: u16,
    /// Window advertised by the last ACK, bytes.
    peer_window: u64,
    /// Shift of the window field of the ACKs (the receiver's scale, both SYNs carried one).
    shift: u8,
    /// The receiver's ISN, once its SYN-ACK arrived.
    peer_isn: Option<u32>,
    ident: u16,
    /// Since when the oldest unacknowledged byte waits.
    timer_since: Duration,
    /// Segments sent again (below `high`).
    pub retransmitted: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Packets from the gateway with a bad TCP checksum (dropped).
    pub checksum_errors: u64,
}

impl SendingTcp {
    pub(super) fn new(flow: usize, total: u64, mss: u16) -> SendingTcp {
        let (src, dst) = endpoints(flow);
        SendingTcp {
            flow,
            key: FlowKey::new(src, dst),
            isn: 0x1000_0000u32.wrapping_add((flow as u32).wrapping_mul(0x0100_0193)),
            total,
            una: 0,
            nxt: 0,
            high: 0,
            mss,
            peer_window: 0,
            shift: 0,
            peer_isn: None,
            ident: 0,
            timer_since: Duration::ZERO,
            retransmitted: 0,
            timeouts: 0,
            checksum_errors: 0,
        }
    }

    fn seq(&self, offset: u64) -> u32 {
        self.isn.wrapping_add(1).wrapping_add(offset as u32)
    }

    /// The SYN.
    pub(super) fn syn(&mut self) -> Result<Vec<u8>, TcpError> {
        let mut out = Vec::new();
        let f = fields(self.isn, 0, TcpFlags::SYN, 65_535);
        let options = syn_options(self.mss);
        segment(&mut out, &self.key, &mut self.ident, f, &options, &[])?;
        Ok(out)
    }

    /// The receiver's SYN-ACK arrived.
    pub(super) fn established(&self) -> bool {
        self.peer_isn.is_some()
    }

    /// Every byte acknowledged.
    pub(super) fn done(&self) -> bool {
        self.una >= self.total
    }

    /// Bytes acknowledged.
    pub(super) fn acked(&self) -> u64 {
        self.una
    }

    /// The MSS in use (the smaller of ours and the SYN-ACK's).
    pub(super) fn mss(&self) -> u16 {
        self.mss
    }

    /// A packet the gateway wrote to its TUN for this flow: the SYN-ACK (answered with the
    /// handshake's ACK, returned) or an ACK.
    pub(super) fn on_packet(
        &mut self,
        now: Duration,
        pkt: &TcpPacket<'_>,
    ) -> Result<Option<Vec<u8>>, TcpError> {
        if !pkt.checksum_ok() {
            self.checksum_errors += 1;
            return Ok(None);
        }
        let flags = pkt.tcp.flags;
        if flags.contains(TcpFlags::SYN | TcpFlags::ACK) {
            let o = scan_options(pkt.options()).unwrap_or_default();
            self.shift = effective_window_shift(o.window_scale, Some(WINDOW_SHIFT));
            if let Some(m) = o.mss {
                self.mss = self.mss.min(m.max(MIN_MSS));
            }
            self.peer_isn = Some(pkt.tcp.seq);
            self.peer_window = u64::from(pkt.tcp.window);
            let ack = pkt.tcp.seq.wrapping_add(1);
            let f = fields(self.seq(0), ack, TcpFlags::ACK, window_field(WINDOW_SHIFT));
            let mut out = Vec::new();
            segment(&mut out, &self.key, &mut self.ident, f, &[], &[])?;
            return Ok(Some(out));
        }
        if flags.contains(TcpFlags::ACK) {
            self.on_ack(now, pkt.tcp.ack, pkt.tcp.window);
        }
        Ok(None)
    }

    fn on_ack(&mut self, now: Duration, ack: u32, window: u16) {
        let advance = u64::from(ack.wrapping_sub(self.seq(self.una)));
        if advance > self.high - self.una {
            return; // old or beyond what was sent
        }
        if advance > 0 {
            self.una += advance;
            self.nxt = self.nxt.max(self.una);
            self.timer_since = now;
        }
        self.peer_window = u64::from(window) << self.shift;
    }

    /// Sends what the window allows (at most `budget` segments) into `out`: full segments
    /// while they fit in min(`inflight`, the advertised window), one smaller segment when
    /// nothing is in flight and only that fits, the stream's last (short) segment.
    pub(super) fn fill(
        &mut self,
        now: Duration,
        inflight: u64,
        budget: usize,
        pattern: &Pattern,
        out: &mut Vec<Vec<u8>>,
    ) -> Result<usize, TcpError> {
        let Some(peer_isn) = self.peer_isn else {
            return Ok(0);
        };
        let limit = inflight.min(self.peer_window);
        let mut sent = 0;
        while sent < budget && self.nxt < self.total {
            let flight = self.nxt - self.una;
            let mut len = (self.total - self.nxt).min(u64::from(self.mss));
            if flight + len > limit {
                if flight > 0 || limit == 0 {
                    break;
                }
                len = limit;
            }
            if flight == 0 {
                self.timer_since = now;
            }
            let payload = pattern.bytes(self.flow, self.nxt, len as usize);
            let window = window_field(WINDOW_SHIFT);
            let flags = TcpFlags::ACK | TcpFlags::PSH;
            let f = fields(self.seq(self.nxt), peer_isn.wrapping_add(1), flags, window);
            let mut seg = Vec::new();
            segment(&mut seg, &self.key, &mut self.ident, f, &[], payload)?;
            out.push(seg);
            if self.nxt < self.high {
                self.retransmitted += 1;
            }
            self.nxt += len;
            self.high = self.high.max(self.nxt);
            sent += 1;
        }
        Ok(sent)
    }

    /// Go-back-N after [`RETRANSMIT_TIMEOUT`] without an advancing ACK.
    pub(super) fn on_timer(&mut self, now: Duration) {
        if self.una < self.nxt && now.saturating_sub(self.timer_since) >= RETRANSMIT_TIMEOUT {
            self.nxt = self.una;
            self.timer_since = now;
            self.timeouts += 1;
        }
    }
}

/// The receiving TCP of one flow (behind the peer).
pub(super) struct ReceivingTcp {
    flow: usize,
    /// Receiver to sender (the ACKs' direction).
    key: FlowKey,
    isn: u32,
    /// The sender's ISN, from its SYN.
    peer_isn: Option<u32>,
    /// Shift of our window field (ours, both SYNs carried one).
    shift: u8,
    /// Bytes received in order (and checked).
    nxt: u64,
    total: u64,
    /// `nxt` when the last ACK was sent.
    acked: u64,
    /// In-order segments since the last ACK.
    unacked_segments: u32,
    ident: u16,
    /// Segments taken in order.
    pub segments: u64,
    /// Bytes that differed from the pattern (or beyond the stream's end).
    pub mismatched_bytes: u64,
    /// Segments ahead of the next expected byte (dropped).
    pub out_of_order: u64,
    /// Segments wholly below the next expected byte (dropped).
    pub duplicates: u64,
    /// Packets with a bad TCP checksum (dropped).
    pub checksum_errors: u64,
}

impl ReceivingTcp {
    pub(super) fn new(flow: usize, total: u64) -> ReceivingTcp {
        let (src, dst) = endpoints(flow);
        ReceivingTcp {
            flow,
            key: FlowKey::new(dst, src),
            isn: 0x5000_0000u32.wrapping_add((flow as u32).wrapping_mul(0x0100_0193)),
            peer_isn: None,
            shift: 0,
            nxt: 0,
            total,
            acked: 0,
            unacked_segments: 0,
            ident: 0,
            segments: 0,
            mismatched_bytes: 0,
            out_of_order: 0,
            duplicates: 0,
            checksum_errors: 0,
        }
    }

    /// Bytes received in order.
    pub(super) fn received(&self) -> u64 {
        self.nxt
    }

    /// Every byte received.
    pub(super) fn done(&self) -> bool {
        self.nxt >= self.total
    }

    /// A packet the peer engine delivered: a SYN (answered with the SYN-ACK) or a segment
    /// (checked; an ACK every second in-order segment, at once for one out of order). `true`
    /// when `out` holds a packet for the peer engine.
    pub(super) fn on_packet(
        &mut self,
        pkt: &TcpPacket<'_>,
        pattern: &Pattern,
        out: &mut Vec<u8>,
    ) -> Result<bool, TcpError> {
        if !pkt.checksum_ok() {
            self.checksum_errors += 1;
            return Ok(false);
        }
        let flags = pkt.tcp.flags;
        if flags.contains(TcpFlags::SYN) {
            let o = scan_options(pkt.options()).unwrap_or_default();
            self.shift = effective_window_shift(Some(WINDOW_SHIFT), o.window_scale);
            self.peer_isn = Some(pkt.tcp.seq);
            let f = fields(
                self.isn,
                pkt.tcp.seq.wrapping_add(1),
                TcpFlags::SYN | TcpFlags::ACK,
                65_535,
            );
            let options = syn_options(MAX_MSS);
            segment(out, &self.key, &mut self.ident, f, &options, &[])?;
            return Ok(true);
        }
        let payload = pkt.payload();
        let Some(peer_isn) = self.peer_isn else {
            return Ok(false);
        };
        if payload.is_empty() {
            return Ok(false); // the handshake's ACK
        }
        let expected = peer_isn.wrapping_add(1).wrapping_add(self.nxt as u32);
        let ahead = pkt.tcp.seq.wrapping_sub(expected) as i32;
        if ahead != 0 {
            match ahead > 0 {
                true => self.out_of_order += 1,
                false => self.duplicates += 1,
            }
            self.ack(out)?;
            return Ok(true);
        }
        self.check(payload, pattern);
        self.unacked_segments += 1;
        if self.unacked_segments >= 2 {
            self.ack(out)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Compares the next in-order bytes with the pattern and takes them.
    fn check(&mut self, payload: &[u8], pattern: &Pattern) {
        let len = payload.len() as u64;
        let beyond = (self.nxt + len).saturating_sub(self.total);
        self.mismatched_bytes += beyond;
        let want = pattern.bytes(self.flow, self.nxt, payload.len());
        if want != payload {
            let differ = want.iter().zip(payload).filter(|(a, b)| a != b).count();
            let missing = payload.len() - want.len();
            self.mismatched_bytes += (differ + missing) as u64;
        }
        self.nxt += len;
        self.segments += 1;
    }

    /// An ACK of everything received, into `out`, if some bytes are not acknowledged yet.
    pub(super) fn flush(&mut self, out: &mut Vec<u8>) -> Result<bool, TcpError> {
        if self.peer_isn.is_none() || self.nxt == self.acked {
            return Ok(false);
        }
        self.ack(out)?;
        Ok(true)
    }

    fn ack(&mut self, out: &mut Vec<u8>) -> Result<(), TcpError> {
        let peer_isn = self.peer_isn.unwrap_or(0);
        let ack = peer_isn.wrapping_add(1).wrapping_add(self.nxt as u32);
        let f = fields(
            self.isn.wrapping_add(1),
            ack,
            TcpFlags::ACK,
            window_field(self.shift),
        );
        segment(out, &self.key, &mut self.ident, f, &[], &[])?;
        self.acked = self.nxt;
        self.unacked_segments = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One flow end to end without a gateway: handshake, the window, ACKs, a corrupted byte.
    #[test]
    fn sender_and_receiver_talk_tcp() {
        let pattern = Pattern::new();
        let mut s = SendingTcp::new(3, 5000, 1360);
        let mut r = ReceivingTcp::new(3, 5000);
        let now = Duration::ZERO;
        let syn = s.syn().unwrap();
        let mut buf = Vec::new();
        assert!(
            r.on_packet(&TcpPacket::parse(&syn).unwrap(), &pattern, &mut buf)
                .unwrap()
        );
        let syn_ack = TcpPacket::parse(&buf).unwrap();
        let ack = s.on_packet(now, &syn_ack).unwrap().unwrap();
        assert!(s.established());
        assert!(
            !r.on_packet(&TcpPacket::parse(&ack).unwrap(), &pattern, &mut buf)
                .unwrap()
        );
        // The SYN-ACK's unscaled window (65535) and `inflight` 3000 allow two full segments.
        let mut segs = Vec::new();
        assert_eq!(s.fill(now, 3000, 10, &pattern, &mut segs).unwrap(), 2);
        assert!(
            !r.on_packet(&TcpPacket::parse(&segs[0]).unwrap(), &pattern, &mut buf)
                .unwrap()
        );
        assert!(
            r.on_packet(&TcpPacket::parse(&segs[1]).unwrap(), &pattern, &mut buf)
                .unwrap()
        );
        assert_eq!(r.received(), 2720);
        s.on_packet(now, &TcpPacket::parse(&buf).unwrap()).unwrap();
        assert_eq!(s.acked(), 2720);
        // The rest (1360 + 920 bytes), the last with one byte altered.
        segs.clear();
        assert_eq!(s.fill(now, 1 << 20, 10, &pattern, &mut segs).unwrap(), 2);
        let mut last = segs[1].clone();
        let n = last.len();
        last[n - 1] ^= 1;
        // Altered in flight: the checksum no longer holds, so the receiver drops it.
        assert!(
            !r.on_packet(&TcpPacket::parse(&segs[0]).unwrap(), &pattern, &mut buf)
                .unwrap()
        );
        assert!(
            !r.on_packet(&TcpPacket::parse(&last).unwrap(), &pattern, &mut buf)
                .unwrap()
        );
        assert_eq!(r.checksum_errors, 1);
        assert!(
            r.on_packet(&TcpPacket::parse(&segs[1]).unwrap(), &pattern, &mut buf)
                .unwrap()
        );
        assert!(r.done() && r.mismatched_bytes == 0);
        // A segment seen twice is a duplicate; the sender resends after the timeout.
        assert!(
            r.on_packet(&TcpPacket::parse(&segs[1]).unwrap(), &pattern, &mut buf)
                .unwrap()
        );
        assert_eq!(r.duplicates, 1);
        s.on_timer(RETRANSMIT_TIMEOUT);
        assert_eq!(s.timeouts, 1);
        segs.clear();
        assert_eq!(s.fill(now, 1 << 20, 10, &pattern, &mut segs).unwrap(), 2);
        assert_eq!(s.retransmitted, 2);
    }

    #[test]
    fn the_pattern_differs_between_flows_and_offsets() {
        let p = Pattern::new();
        assert_ne!(p.bytes(0, 0, 64), p.bytes(1, 0, 64));
        assert_ne!(p.bytes(0, 0, 64), p.bytes(0, 1360, 64));
        assert_eq!(p.bytes(2, 70_000, 1460).len(), 1460);
        assert_eq!(p.bytes(0, u64::MAX, 5000).len(), usize::from(MAX_MSS));
    }
}
