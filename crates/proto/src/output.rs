//! The engine's bounded output queues (datagrams for the peer, IP packets for the local TCP,
//! events) together with the counters, so that flow code can emit and count through one
//! `&mut Output`.

use std::collections::VecDeque;

use tcpnc_wire::{BypassRepr, FlowId, FrameRepr};

use crate::config::Limits;
use crate::event::{DropReason, Event};
use crate::stats::EngineStats;

/// Queues and counters shared by every flow of an engine.
#[derive(Debug)]
pub struct Output {
    transmit: VecDeque<Vec<u8>>,
    local: VecDeque<Vec<u8>>,
    events: VecDeque<Event>,
    limits: Limits,
    tunnel_mtu: usize,
    /// The engine-wide counters (`flows` stays empty here: each connection keeps its own
    /// counters and [`Engine::stats`](crate::Engine::stats) gathers them on demand).
    pub stats: EngineStats,
}

impl Output {
    /// Empty queues bounded by `limits`.
    pub fn new(limits: Limits, tunnel_mtu: usize) -> Self {
        Output {
            transmit: VecDeque::new(),
            local: VecDeque::new(),
            events: VecDeque::new(),
            limits,
            tunnel_mtu,
            stats: EngineStats::default(),
        }
    }

    /// Queues a datagram for the peer; `false` (counted) if the queue is full.
    pub fn transmit(&mut self, datagram: Vec<u8>) -> bool {
        if self.transmit.len() >= self.limits.transmit_queue {
            self.stats.transmit_queue_drops += 1;
            self.event(Event::Dropped {
                flow: None,
                reason: DropReason::QueueFull,
            });
            return false;
        }
        if datagram.len() > self.tunnel_mtu {
            self.stats.oversize_datagrams += 1;
        }
        self.stats.datagrams_sent += 1;
        self.transmit.push_back(datagram);
        true
    }

    /// Emits a frame; `false` if it could not be encoded (never for frames the engine builds)
    /// or the queue was full.
    pub fn transmit_frame(&mut self, frame: &FrameRepr<'_>) -> bool {
        match frame.to_vec() {
            Ok(v) => self.transmit(v),
            Err(_) => false,
        }
    }

    /// Forwards an IP packet uncoded in a BYPASS frame.
    pub fn bypass(&mut self, ip_packet: &[u8]) -> bool {
        let Ok(b) = BypassRepr::new(ip_packet) else {
            return false;
        };
        if self.transmit_frame(&FrameRepr::Bypass(b)) {
            self.stats.bypass_sent += 1;
            true
        } else {
            false
        }
    }

    /// Queues an IP packet for the local TCP; `false` (counted) if the queue is full.
    pub fn deliver_local(&mut self, packet: Vec<u8>, flow: Option<FlowId>) -> bool {
        if self.local.len() >= self.limits.local_queue {
            self.stats.local_queue_drops += 1;
            self.event(Event::Dropped {
                flow,
                reason: DropReason::QueueFull,
            });
            return false;
        }
        self.stats.local_sent += 1;
        self.local.push_back(packet);
        true
    }

    /// Queues an event (the oldest events are kept; overflow is counted).
    pub fn event(&mut self, event: Event) {
        if self.events.len() >= self.limits.event_queue {
            self.stats.event_queue_drops += 1;
        } else {
            self.events.push_back(event);
        }
    }

    /// Drops the queued DATA and NC-ACK frames (every connection was just reset): sent to a
    /// restarted peer in its new session, a DATA frame would make its fresh engine build a
    /// receiver for the connection mid-stream, which would then swallow the remote TCP's
    /// answer to the provoking ACK (`Engine::reset_flows`). Returns how many were dropped.
    pub fn discard_coded(&mut self) -> usize {
        let before = self.transmit.len();
        self.transmit.retain(|d| {
            !matches!(
                FrameRepr::parse(d),
                Ok(FrameRepr::Data { .. } | FrameRepr::Ack(_))
            )
        });
        before - self.transmit.len()
    }

    /// Next datagram for the peer.
    pub fn pop_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    /// Next IP packet for the local TCP.
    pub fn pop_local(&mut self) -> Option<Vec<u8>> {
        self.local.pop_front()
    }

    /// Next event.
    pub fn pop_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_are_bounded_and_counted() {
        let limits = Limits {
            transmit_queue: 2,
            local_queue: 1,
            event_queue: 1,
            ..Limits::default()
        };
        let mut o = Output::new(limits, 10);
        assert!(o.transmit(vec![0; 4]));
        assert!(o.transmit(vec![0; 40]));
        assert!(!o.transmit(vec![0; 4]));
        assert_eq!(o.stats.transmit_queue_drops, 1);
        assert_eq!(o.stats.oversize_datagrams, 1);
        assert!(o.deliver_local(vec![0x45], None));
        assert!(!o.deliver_local(vec![0x45], None));
        assert_eq!(o.stats.local_queue_drops, 1);
        // Two drop events were raised, one fits.
        assert_eq!(o.stats.event_queue_drops, 1);
        assert!(o.pop_event().is_some());
        assert!(o.pop_event().is_none());
        assert_eq!(o.pop_transmit().map(|v| v.len()), Some(4));
        assert!(!o.bypass(&[0x10]));
    }
}
