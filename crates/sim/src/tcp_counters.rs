//! TCP counters of a run ([`TcpCounters`]) and the passive observers that fill them:
//! retransmissions on the sender, duplicate ACKs on the receiver. Packets are read with the
//! engine's own parser ([`tcpnc_proto::tcp::TcpPacket`]).

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
}

/// Watches client egress for retransmissions (O(1) per packet).
#[derive(Debug, Default)]
pub(crate) struct SenderTap {
    snd_max: Option<u32>,
}

/// Watches server egress for duplicate ACKs.
#[derive(Debug, Default)]
pub(crate) struct ReceiverTap {
    last_ack: Option<u32>,
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

/// `a < b` in 32-bit sequence space.
fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl SenderTap {
    pub fn observe(&mut self, pkt: &[u8], c: &mut TcpCounters) {
        let Some((seq, _, len, syn, fin)) = parse(pkt) else {
            return;
        };
        if len > 0 {
            c.data_segments += 1;
            if let Some(max) = self.snd_max
                && seq_lt(seq, max)
            {
                c.retransmissions += 1;
                c.retransmitted_bytes += len as u64;
            }
        }
        let end = seq.wrapping_add(len as u32 + u32::from(syn) + u32::from(fin));
        self.snd_max = match self.snd_max {
            Some(m) if !seq_lt(m, end) => Some(m),
            _ => Some(end),
        };
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
        }
        self.last_ack = Some(ack);
    }
}
