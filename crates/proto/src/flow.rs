//! One TCP connection through the engine: a sender half (the local TCP's data, §III) and a
//! receiver half (the peer's data, §IV), the window scales learnt from both SYNs, and the
//! timers that end the flow.

use std::time::Duration;

use tcpnc_wire::FlowId;

use crate::config::EngineConfig;
use crate::receiver::ReceiverHalf;
use crate::sender::SenderHalf;
use crate::stats::FlowStats;
use crate::tcp::effective_window_shift;

/// A connection, oriented local → remote.
#[derive(Debug)]
pub struct Flow {
    /// Local → remote identity (the sender half's data direction).
    pub out_id: FlowId,
    /// The local TCP's data, created at its first data segment.
    pub sender: Option<SenderHalf>,
    /// The peer's data.
    pub receiver: ReceiverHalf,
    /// Window-scale option of the local TCP's SYN (`None`: SYN not seen or no option).
    pub local_wscale: Option<u8>,
    /// Window-scale option of the remote TCP's SYN.
    pub remote_wscale: Option<u8>,
    /// The local TCP's ISN, from its SYN.
    pub local_isn: Option<u32>,
    /// The remote TCP's ISN, from its SYN.
    pub remote_isn: Option<u32>,
    /// Last packet in either direction.
    pub last_activity: Duration,
    /// When both directions were seen finished.
    pub finished_at: Option<Duration>,
    /// Counters.
    pub stats: FlowStats,
}

impl Flow {
    /// A new flow whose local → remote identity is `out_id`.
    pub fn new(out_id: FlowId, now: Duration) -> Self {
        Flow {
            out_id,
            sender: None,
            receiver: ReceiverHalf::new(out_id.reversed()),
            local_wscale: None,
            remote_wscale: None,
            local_isn: None,
            remote_isn: None,
            last_activity: now,
            finished_at: None,
            stats: FlowStats::default(),
        }
    }

    /// The shift the local TCP applies to the windows it advertises (RFC 7323: its own option,
    /// only if both SYNs carried one).
    pub fn local_shift(&self) -> u8 {
        effective_window_shift(self.local_wscale, self.remote_wscale)
    }

    /// The shift the local TCP applies to windows it receives: the remote's option, only if both
    /// SYNs carried one. Synthesised ACKs encode their window with it.
    pub fn remote_shift(&self) -> u8 {
        effective_window_shift(self.remote_wscale, self.local_wscale)
    }

    /// The sender half, created on demand (its stream starts at the local ISN + 1 when known).
    pub fn sender_mut(&mut self, cfg: &EngineConfig) -> &mut SenderHalf {
        let first_seq = self.local_isn.map(|i| i.wrapping_add(1));
        let out_id = self.out_id;
        self.sender
            .get_or_insert_with(|| SenderHalf::new(out_id, first_seq, cfg))
    }

    /// Both directions finished: the local FIN was acknowledged by the peer and the peer's FIN
    /// was acknowledged by the local TCP (a direction that never carried data does not count
    /// as finished).
    pub fn both_finished(&self) -> bool {
        self.sender.as_ref().is_some_and(|s| s.finished()) && self.receiver.finished()
    }

    /// When this flow must be looked at again: idle expiry, linger after finishing, redelivery,
    /// repair probe.
    pub fn deadline(&self, cfg: &EngineConfig) -> Duration {
        let mut d = self.last_activity + cfg.idle_timeout;
        if let Some(f) = self.finished_at {
            d = d.min(f + cfg.closed_linger);
        }
        if let Some(r) = self.receiver.poll_timeout(cfg) {
            d = d.min(r);
        }
        if let Some(s) = self.sender.as_ref().and_then(|s| s.poll_timeout()) {
            d = d.min(s);
        }
        d
    }
}
