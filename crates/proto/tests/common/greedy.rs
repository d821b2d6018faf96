//! A local TCP that keeps all its window allows in flight and ignores loss (the way kernel BBR
//! treats a queue's drops when its bandwidth estimate runs high): the local sender of the
//! flight cap's and the shallow queue's tests, behind engine A.

use tcpnc_proto::Engine;
use tcpnc_proto::tcp::{TcpPacket, seq_diff};

use super::{bulk_segment, ms};

/// The first sequence number's predecessor.
pub const ISN: u32 = 1_000;
/// Bytes per segment.
pub const SEG: u32 = 1_000;

/// How the greedy TCP starts and recovers.
#[derive(Debug, Clone, Copy)]
pub struct Greedy {
    /// Slow start from RFC 6928's 10 segments, one more per segment acknowledged (else the
    /// whole window at once).
    pub slow_start: bool,
    /// Resend the first unacknowledged segment after a second without progress (RFC 6298's
    /// least retransmission timeout).
    pub rto: bool,
}

/// The sender's state: segments sent and acknowledged, the window last advertised.
pub struct GreedyTcp {
    how: Greedy,
    segments: u32,
    pub next: u32,
    pub acked: u32,
    window: u32,
    /// Segments acknowledged at the last progress, and when (ms).
    progress: (u32, u64),
}

impl GreedyTcp {
    /// `segments` to send, `how`.
    pub fn new(segments: u32, how: Greedy) -> Self {
        GreedyTcp {
            how,
            segments,
            next: 0,
            acked: 0,
            window: 65_535,
            progress: (0, 0),
        }
    }

    /// Takes the ACKs engine A has for the local TCP.
    pub fn read_acks(&mut self, a: &mut Engine) {
        while let Some(p) = a.poll_local() {
            let tcp = TcpPacket::parse(&p).unwrap().tcp;
            let offset = seq_diff(tcp.ack, ISN);
            if offset >= 0 {
                self.acked = self.acked.max(offset as u32 / SEG);
                self.window = u32::from(tcp.window);
            }
        }
    }

    /// Whether every segment is acknowledged.
    pub fn done(&self) -> bool {
        self.acked == self.segments
    }

    /// Sends at `now` (ms) what the window allows, after a retransmission if one is due.
    pub fn send(&mut self, a: &mut Engine, now: u64) {
        if self.acked > self.progress.0 {
            self.progress = (self.acked, now);
        } else if self.how.rto && now - self.progress.1 >= 1_000 {
            a.handle_local(ms(now), &bulk_segment(ISN, self.acked, SEG));
            self.progress.1 = now;
        }
        let window = match self.how.slow_start {
            true => self.window.min((10 + self.acked) * SEG),
            false => self.window,
        };
        while self.next < self.segments && (self.next - self.acked) * SEG < window {
            a.handle_local(ms(now), &bulk_segment(ISN, self.next, SEG));
            self.next += 1;
        }
    }

    /// Segments in flight.
    pub fn flight(&self) -> u32 {
        self.next - self.acked
    }
}
