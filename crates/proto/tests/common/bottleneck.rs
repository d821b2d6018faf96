//! One bottleneck between engines A and B (the flight cap's tests): a drop-tail queue served
//! at one datagram per millisecond, random loss after it, a fixed delay each way; B's NC-ACKs
//! come back over the same delay without loss.

use std::collections::{BTreeMap, VecDeque};

use tcpnc_proto::Engine;
use tcpnc_proto::tcp::TcpFlags;

use super::flows::{FIRST_PORT, FlowTcp, acknowledge_flows, client_segment, take_flow_acks};
use super::timed::take_due;
use super::{TestRng, ms};

/// The path and what it did.
pub struct Bottleneck {
    capacity: usize,
    loss: f64,
    delay_ms: u64,
    /// Drops from this time on (ms) count as late: the first windows meet no cap yet.
    warm_up_ms: u64,
    queue: VecDeque<Vec<u8>>,
    to_b: BTreeMap<(u64, u64), Vec<u8>>,
    to_a: BTreeMap<(u64, u64), Vec<u8>>,
    order: u64,
    /// Datagrams A sent.
    pub datagrams: u64,
    /// Datagrams the queue dropped, and of them the late ones.
    pub drops: u64,
    pub late_drops: u64,
}

impl Bottleneck {
    /// A queue of `capacity` datagrams, `loss` after it, `delay_ms` each way.
    pub fn new(capacity: usize, loss: f64, delay_ms: u64, warm_up_ms: u64) -> Self {
        Bottleneck {
            capacity,
            loss,
            delay_ms,
            warm_up_ms,
            queue: VecDeque::new(),
            to_b: BTreeMap::new(),
            to_a: BTreeMap::new(),
            order: 0,
            datagrams: 0,
            drops: 0,
            late_drops: 0,
        }
    }

    /// What reaches A at `now` (ms), then A's timers.
    pub fn deliver_to_a(&mut self, a: &mut Engine, now: u64) {
        for d in take_due(&mut self.to_a, now) {
            a.handle_datagram(ms(now), &d);
        }
        if a.poll_timeout().is_some_and(|t| t <= ms(now)) {
            a.handle_timeout(ms(now));
        }
    }

    /// A's datagrams enter the queue, or are dropped when it is full; one datagram leaves it
    /// (lost with probability `loss`); what is due reaches B, then B's timers.
    pub fn carry_to_b(&mut self, a: &mut Engine, b: &mut Engine, now: u64, rng: &mut TestRng) {
        while let Some(d) = a.poll_transmit() {
            self.datagrams += 1;
            if self.queue.len() < self.capacity {
                self.queue.push_back(d);
            } else {
                self.drops += 1;
                self.late_drops += u64::from(now >= self.warm_up_ms);
            }
        }
        if let Some(d) = self.queue.pop_front()
            && !rng.chance(self.loss)
        {
            self.order += 1;
            self.to_b.insert((now + self.delay_ms, self.order), d);
        }
        for d in take_due(&mut self.to_b, now) {
            b.handle_datagram(ms(now), &d);
        }
        if b.poll_timeout().is_some_and(|t| t <= ms(now)) {
            b.handle_timeout(ms(now));
        }
    }

    /// B's datagrams go back towards A.
    pub fn carry_back(&mut self, b: &mut Engine, now: u64) {
        while let Some(d) = b.poll_transmit() {
            self.order += 1;
            self.to_a.insert((now + self.delay_ms, self.order), d);
        }
    }
}

impl Bottleneck {
    /// Millisecond `now` of local TCPs behind A that each keep up to `cwnd` segments of `seg`
    /// bytes in flight, as far as the window A last gave them allows (a loss-based TCP whose
    /// losses the coding hides): A takes the NC-ACKs due and its TCP ACKs reach their flows,
    /// the flows send, the queue serves B, whose local TCPs acknowledge what it delivered.
    pub fn step_window_flows(
        &mut self,
        (a, b): (&mut Engine, &mut Engine),
        tcps: &mut [FlowTcp],
        (seg, cwnd): (u32, u32),
        now: u64,
        rng: &mut TestRng,
    ) {
        self.deliver_to_a(a, now);
        take_flow_acks(a, seg, tcps);
        for (i, t) in tcps.iter_mut().enumerate() {
            let window = t.window.min(cwnd * seg);
            while t.next < t.written && (t.next - t.acked) * seg < window {
                let port = FIRST_PORT + i as u16;
                let flags = match t.next + 1 == t.written {
                    true => TcpFlags::ACK | TcpFlags::FIN,
                    false => TcpFlags::ACK,
                };
                a.handle_local(ms(now), &client_segment(port, t.next, seg, flags));
                t.next += 1;
            }
        }
        self.carry_to_b(a, b, now, rng);
        acknowledge_flows(b, now);
        self.carry_back(b, now);
    }
}
