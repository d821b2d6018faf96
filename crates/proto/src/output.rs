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
use std::time::Duration;

use tcpnc_wire::{AckPacket, AckRepr, BypassRepr, DataRepr, FlowId, FrameRepr};

use crate::coalesce::{AckMark, AckSlots, PidSpan, Push};
use crate::config::Limits;
use crate::event::{DropReason, Event};
use crate::pacer::Pacer;
use crate::stats::EngineStats;

/// Buffers [`Output`] keeps for reuse at most (a flush's worth of datagrams and packets).
pub const SPARE_BUFFERS: usize = 1024;

/// What became of an ACK handed to [`Output::transmit_ack`] or [`Output::deliver_ack`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Queued at the back.
    Queued,
    /// Took the place of the flow's queued ACK, which will not leave (`coalesce.rs`).
    Coalesced,
    /// Not queued: the queue was full (counted) or the frame could not be encoded.
    Dropped,
}

/// Queues and counters shared by every flow of an engine.
#[derive(Debug)]
pub struct Output {
    transmit: VecDeque<Vec<u8>>,
    /// DATA datagrams not yet due (`pacing`), counted against the transmit queue's bound, each
    /// named by its flow and Pid.
    pacer: Pacer<(FlowId, u32)>,
    /// Paced DATA datagrams that left before their forecast departures, with when they left
    /// ([`Output::take_early_departure`]).
    early: Vec<(FlowId, u32, Duration)>,
    local: VecDeque<Vec<u8>>,
    events: VecDeque<Event>,
    limits: Limits,
    tunnel_mtu: usize,
    /// Empty buffers handed back by the caller, reused by [`Output::buffer`].
    spare: Vec<Vec<u8>>,
    /// The replaceable NC-ACKs in `transmit` and TCP ACKs in `local` (`coalesce.rs`).
    transmit_acks: AckSlots,
    local_acks: AckSlots,
    /// The engine-wide counters (`flows` stays empty here: each connection keeps its own
    /// counters and [`Engine::stats`](crate::Engine::stats) gathers them on demand).
    pub stats: EngineStats,
}

impl Output {
    /// Empty queues bounded by `limits`.
    pub fn new(limits: Limits, tunnel_mtu: usize) -> Self {
        Output {
            transmit: VecDeque::new(),
            pacer: Pacer::default(),
            early: Vec::new(),
            local: VecDeque::new(),
            events: VecDeque::new(),
            limits,
            tunnel_mtu,
            spare: Vec::new(),
            transmit_acks: AckSlots::default(),
            local_acks: AckSlots::default(),
            stats: EngineStats::default(),
        }
    }

    /// Queues a datagram for the peer; `false` (counted) if the queue is full.
    pub fn transmit(&mut self, datagram: Vec<u8>) -> bool {
        self.push_transmit(datagram, Push::Other)
    }

    fn push_transmit(&mut self, datagram: Vec<u8>, push: Push) -> bool {
        if self.transmit.len() + self.pacer.len() >= self.limits.transmit_queue {
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
        self.transmit_acks.pushed(push);
        true
    }

    /// Emits a frame (into a reused buffer); `false` if it could not be encoded (never for
    /// frames the engine builds) or the queue was full.
    pub fn transmit_frame(&mut self, frame: &FrameRepr<'_>) -> bool {
        self.encode(frame)
            .is_some_and(|v| self.push_transmit(v, Push::Other))
    }

    /// Emits a DATA frame at `now` whose payload `payload` appends straight after the header
    /// (the sender combines into the frame, not into a scratch copied over). `None`, with
    /// nothing queued, when the header cannot be encoded or `payload` fails; otherwise whether
    /// the queue took it (it may wait for the pacer first, `pacer.rs`).
    pub fn transmit_data(
        &mut self,
        now: Duration,
        header: &DataRepr,
        payload: impl FnOnce(&mut Vec<u8>) -> bool,
    ) -> Option<bool> {
        let mut v = self.buffer();
        if header.encode_header_into(&mut v).is_err() || !payload(&mut v) {
            self.recycle(v);
            return None;
        }
        if !self.pacer.is_pacing() && self.pacer.is_empty() {
            return Some(self.push_transmit(v, Push::Other));
        }
        if self.transmit.len() + self.pacer.len() >= self.limits.transmit_queue {
            return Some(self.push_transmit(v, Push::Other)); // counted as a full queue's drop
        }
        self.release(now);
        match self.pacer.admit(now, (header.flow, header.pid), v) {
            Some(v) => Some(self.push_transmit(v, Push::Other)),
            None => {
                self.stats.paced_datagrams += 1;
                Some(true)
            }
        }
    }

    /// Paces DATA datagrams at `pace` (datagrams per second, burst) from `now` on, or not
    /// (`None`; `pacer.rs`).
    pub fn set_pacing(&mut self, now: Duration, pace: Option<(f64, f64)>) {
        self.pacer.set_rate(now, pace);
    }

    /// Queues for the peer the DATA datagrams due by `now` (`pacer.rs`).
    pub fn release(&mut self, now: Duration) {
        if self.pacer.is_empty() {
            return;
        }
        let mut pacer = std::mem::take(&mut self.pacer);
        pacer.release(now, |d, early| {
            self.push_transmit(d, Push::Other);
            if let Some((flow, pid)) = early {
                self.early.push((flow, pid, now));
            }
        });
        self.pacer = pacer;
    }

    /// A paced DATA datagram that left before the departure forecast for it (a rate set higher
    /// or lapsed since, `pacer.rs`): its flow, Pid and when it left. The engine moves its
    /// departure there before it reads the next NC-ACK, so that its round trip does not read
    /// short.
    pub fn take_early_departure(&mut self) -> Option<(FlowId, u32, Duration)> {
        self.early.pop()
    }

    /// When the DATA datagram queued last leaves: `now`, or later when it waits for the pacer.
    pub fn departure(&self, now: Duration) -> Duration {
        self.pacer.newest_departure().map_or(now, |t| t.max(now))
    }

    /// When the next paced datagram is due (`None` when none waits).
    pub fn next_release(&self) -> Option<Duration> {
        self.pacer.next_release()
    }

    /// `frame` encoded into a reused buffer (`None` only for a frame that cannot be encoded).
    fn encode(&mut self, frame: &FrameRepr<'_>) -> Option<Vec<u8>> {
        let mut v = self.buffer();
        match frame.encode_into(&mut v) {
            Ok(_) => Some(v),
            Err(_) => {
                self.recycle(v);
                None
            }
        }
    }

    /// Emits an NC-ACK. `replaceable`: `Some(echo)` when the caller judges that a newer
    /// NC-ACK of the flow may take its place and it may take an older one's (it advances the
    /// ack and carries no DEPENDENT, PAUSE or U flag; `coalesce.rs`), with the Pid echo of the
    /// flow's NC-ACK before it; the Pid reach is checked here.
    pub fn transmit_ack(&mut self, ack: &AckRepr, replaceable: Option<u32>) -> Queued {
        // Encoded on the stack first: a replacing NC-ACK is then written over the queued one
        // it replaces (a buffer just written, so warm), not into a spare buffer swapped in.
        let mut scratch = [0u8; AckRepr::MAX_LEN];
        let Some(bytes) = scratch.get_mut(..ack.buffer_len()) else {
            return Queued::Dropped;
        };
        if ack
            .emit(&mut AckPacket::new_unchecked(&mut *bytes))
            .is_err()
        {
            return Queued::Dropped;
        }
        let push = match replaceable {
            Some(before) => Push::Replaceable(
                ack.flow,
                AckMark {
                    ack: ack.ack,
                    pids: Some(PidSpan {
                        echo: ack.pid_echo,
                        from: before.wrapping_add(1),
                    }),
                },
            ),
            None => Push::Barrier(ack.flow),
        };
        if let Push::Replaceable(flow, mark) = push
            && let Some(i) = self.transmit_acks.replace(flow, mark)
        {
            let queued = &mut self.transmit[i];
            queued.clear();
            queued.extend_from_slice(bytes);
            return Queued::Coalesced;
        }
        let mut v = self.buffer();
        v.extend_from_slice(bytes);
        match self.push_transmit(v, push) {
            true => Queued::Queued,
            false => Queued::Dropped,
        }
    }

    /// Queues a TCP ACK synthesised for the local TCP of `flow` (the data direction's
    /// identity). `replaceable`: `Some(ack)` when it advances the ack over the previous one
    /// synthesised (`coalesce.rs`); it then replaces the flow's queued ACK if that one was
    /// replaceable too and is still queued.
    pub fn deliver_ack(
        &mut self,
        packet: Vec<u8>,
        flow: FlowId,
        replaceable: Option<u32>,
    ) -> Queued {
        let push = match replaceable {
            Some(ack) => Push::Replaceable(flow, AckMark { ack, pids: None }),
            None => Push::Barrier(flow),
        };
        if let Push::Replaceable(_, mark) = push
            && let Some(i) = self.local_acks.replace(flow, mark)
        {
            let old = std::mem::replace(&mut self.local[i], packet);
            self.recycle(old);
            return Queued::Coalesced;
        }
        match self.push_local(packet, Some(flow), push) {
            true => Queued::Queued,
            false => Queued::Dropped,
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
        self.push_local(packet, flow, Push::Other)
    }

    fn push_local(&mut self, packet: Vec<u8>, flow: Option<FlowId>, push: Push) -> bool {
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
        self.local_acks.pushed(push);
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
        self.transmit_acks.reset(self.transmit.len());
        let paced = self.pacer.retain(|_| false); // DATA frames only
        before - self.transmit.len() + paced
    }

    /// Next datagram for the peer.
    pub fn pop_transmit(&mut self) -> Option<Vec<u8>> {
        let d = self.transmit.pop_front()?;
        self.transmit_acks.popped();
        Some(d)
    }

    /// Next IP packet for the local TCP.
    pub fn pop_local(&mut self) -> Option<Vec<u8>> {
        let p = self.local.pop_front()?;
        self.local_acks.popped();
        Some(p)
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
