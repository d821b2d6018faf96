//! The engine's bounded output queues (datagrams for the peer, IP packets for the local TCP,
//! events) together with the counters, so that flow code can emit and count through one
//! `&mut Output`.
//!
//! Buffers: the caller hands every polled datagram and packet back with
//! [`Output::recycle`] once it is done with it (the gateway does, after sealing or writing
//! it); frames, synthesised ACKs and delivered copies are then built into those buffers
//! ([`Output::buffer`]) instead of fresh allocations (issue 14: no per-frame allocation).
//! Nothing else changes: the same bytes are queued either way.

use std::collections::VecDeque;

use tcpnc_wire::{BypassRepr, FlowId, FrameRepr};

use crate::config::Limits;
use crate::event::{DropReason, Event};
use crate::stats::EngineStats;

/// Buffers [`Output`] keeps for reuse at most (a flush's worth of datagrams and packets).
pub const SPARE_BUFFERS: usize = 1024;

/// Queues and counters shared by every flow of an engine.
#[derive(Debug)]
pub struct Output {
    transmit: VecDeque<Vec<u8>>,
    local: VecDeque<Vec<u8>>,
    events: VecDeque<Event>,
    limits: Limits,
    tunnel_mtu: usize,
    /// Empty buffers handed back by the caller, reused by [`Output::buffer`].
    spare: Vec<Vec<u8>>,
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
            spare: Vec::new(),
            stats: EngineStats::default(),
        }
    }

    /// Queues a datagram for the peer; `false` (counted) if the queue is full.
    pub fn transmit(&mut self, datagram: Vec<u8>) -> bool {
        if self.transmit.len() >= self.limits.transmit_queue {
            self.stats.transmit_queue_drops += 1;
            self.recycle(datagram);
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

    /// Emits a frame (into a reused buffer); `false` if it could not be encoded (never for
    /// frames the engine builds) or the queue was full.
    pub fn transmit_frame(&mut self, frame: &FrameRepr<'_>) -> bool {
        let mut v = self.buffer();
        v.resize(frame.buffer_len(), 0);
        match frame.emit(&mut v) {
            Ok(_) => self.transmit(v),
            Err(_) => {
                self.recycle(v);
                false
            }
        }
    }

    /// An empty buffer: one handed back through [`Output::recycle`] when there is one.
    pub fn buffer(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_default()
    }

    /// Takes back a buffer the caller is done with (a polled datagram or packet), for
    /// [`Output::buffer`]; at most [`SPARE_BUFFERS`] are kept.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS && buf.capacity() > 0 {
            buf.clear();
            self.spare.push(buf);
        }
    }

    /// Queues a copy of `packet` for the local TCP (built in a reused buffer); as
    /// [`Output::deliver_local`].
    pub fn deliver_local_copy(&mut self, packet: &[u8], flow: Option<FlowId>) -> bool {
        let mut v = self.buffer();
        v.extend_from_slice(packet);
        self.deliver_local(v, flow)
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
            self.recycle(packet);
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

    /// A buffer handed back is what the next frame is built in (its capacity shows it: a
    /// fresh allocation would be exactly as long as the frame), and a delivered copy reuses
    /// one too. Without [`Output::recycle`] keeping it, both capacities are the frame's length.
    #[test]
    fn frames_and_copies_are_built_in_recycled_buffers() {
        let mut o = Output::new(Limits::default(), 1500);
        o.recycle(Vec::with_capacity(4096));
        let frame = FrameRepr::Keepalive(tcpnc_wire::KeepaliveRepr::probe(7));
        assert!(o.transmit_frame(&frame));
        let sent = o.pop_transmit().unwrap();
        assert_eq!(sent, frame.to_vec().unwrap());
        assert_eq!(sent.capacity(), 4096);
        o.recycle(sent);
        assert!(o.deliver_local_copy(&[0x45; 60], None));
        let copy = o.pop_local().unwrap();
        assert_eq!((copy.len(), copy.capacity()), (60, 4096));
    }

    /// The pool is bounded: buffers beyond [`SPARE_BUFFERS`] are freed.
    #[test]
    fn spare_buffers_are_bounded() {
        let mut o = Output::new(Limits::default(), 1500);
        for _ in 0..SPARE_BUFFERS + 10 {
            o.recycle(vec![0; 8]);
        }
        assert_eq!(o.spare.len(), SPARE_BUFFERS);
    }
}
