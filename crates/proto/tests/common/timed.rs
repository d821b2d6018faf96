//! A bulk flow on a millisecond clock: one segment per millisecond through engine A to engine
//! B, whose TCP acknowledges what it was delivered at once, and B's NC-ACKs back to A after a
//! fixed delay. The DATA direction's fate (delay or loss) is the test's (`reordering.rs`,
//! `burst_window.rs`); its queue and receiving-TCP steps serve other clocked loops too
//! (`vbnc.rs`).

use std::collections::BTreeMap;

use tcpnc_proto::tcp::{TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig, FlowStats};

use super::{bulk_segment, ms, segment, server_to_client};

/// The flow: `segments` segments of `seg` bytes from ISN `isn`, `delay` ms one way, and `tail`
/// more milliseconds after the last segment for repairs to finish. The segments are written
/// `frame` at a time every `frame` ms (1: one per millisecond, a steady sender; more: frames
/// with pauses between them, an application-limited one), one per millisecond on average.
#[derive(Debug, Clone, Copy)]
pub struct Transfer {
    pub isn: u32,
    pub segments: u32,
    pub seg: u32,
    pub delay: u64,
    pub tail: u64,
    pub frame: u64,
}

impl Transfer {
    /// A steady sender: one segment a millisecond.
    pub fn steady(isn: u32, segments: u32, seg: u32, delay: u64, tail: u64) -> Transfer {
        Transfer {
            isn,
            segments,
            seg,
            delay,
            tail,
            frame: 1,
        }
    }
}

/// Engines A (seed 1) and B (seed 2) with `cfg`.
pub fn engine_pair(cfg: &EngineConfig) -> (Engine, Engine) {
    let a = Engine::new(cfg.clone(), 1).unwrap();
    let b = Engine::new(cfg.clone(), 2).unwrap();
    (a, b)
}

/// What a transfer left: the TCP ACKs A gave its local TCP and the sender's flow counters.
pub struct Outcome {
    pub acks: Vec<u32>,
    pub flow: FlowStats,
}

/// Runs `t` (as [`timed_transfer`]) and returns the ACKs with the flow's counters at A.
pub fn timed_outcome(
    a: &mut Engine,
    b: &mut Engine,
    t: Transfer,
    fate: &mut dyn FnMut(u64) -> Option<u64>,
) -> Outcome {
    let acks = timed_transfer(a, b, t, fate);
    let flow = a.stats().flows.values().next().unwrap().clone();
    Outcome { acks, flow }
}

/// Runs `t` and returns the ack numbers of the TCP ACKs A gave its local TCP, in order.
/// `fate(n)` decides the n-th datagram sent (both directions counted from 1) when A sends it:
/// `None` loses it, `Some(extra)` delivers it `delay + extra` ms later. NC-ACKs are never lost.
pub fn timed_transfer(
    a: &mut Engine,
    b: &mut Engine,
    t: Transfer,
    fate: &mut dyn FnMut(u64) -> Option<u64>,
) -> Vec<u32> {
    let acks = timed_transfer_at(a, b, t, fate);
    acks.into_iter().map(|(_, ack)| ack).collect()
}

/// As [`timed_transfer`], each ACK with the millisecond A gave it.
pub fn timed_transfer_at(
    a: &mut Engine,
    b: &mut Engine,
    t: Transfer,
    fate: &mut dyn FnMut(u64) -> Option<u64>,
) -> Vec<(u64, u32)> {
    let mut to_b: BTreeMap<(u64, u64), Vec<u8>> = BTreeMap::new();
    let mut to_a: BTreeMap<(u64, u64), Vec<u8>> = BTreeMap::new();
    let (mut sent, mut acks) = (0u64, Vec::new());
    for now in 0..u64::from(t.segments) + t.tail {
        for d in take_due(&mut to_a, now) {
            a.handle_datagram(ms(now), &d);
        }
        if a.poll_timeout().is_some_and(|x| x <= ms(now)) {
            a.handle_timeout(ms(now));
        }
        if now < u64::from(t.segments) && now % t.frame.max(1) == 0 {
            for i in now..(now + t.frame.max(1)).min(u64::from(t.segments)) {
                a.handle_local(ms(now), &bulk_segment(t.isn, i as u32, t.seg));
            }
        }
        while let Some(d) = a.poll_transmit() {
            sent += 1;
            if let Some(extra) = fate(sent) {
                to_b.insert((now + t.delay + extra, sent), d);
            }
        }
        for d in take_due(&mut to_b, now) {
            b.handle_datagram(ms(now), &d);
        }
        if b.poll_timeout().is_some_and(|x| x <= ms(now)) {
            b.handle_timeout(ms(now));
        }
        acknowledge_delivered(b, now);
        while let Some(d) = b.poll_transmit() {
            sent += 1;
            to_a.insert((now + t.delay, sent), d);
        }
        while let Some(p) = a.poll_local() {
            acks.push((now, TcpPacket::parse(&p).unwrap().tcp.ack));
        }
    }
    acks
}

/// Removes and returns the datagrams due by `now` from a queue keyed by (arrival ms, send
/// order).
pub fn take_due(q: &mut BTreeMap<(u64, u64), Vec<u8>>, now: u64) -> Vec<Vec<u8>> {
    let later = q.split_off(&(now + 1, 0));
    std::mem::replace(q, later).into_values().collect()
}

/// B's local TCP takes what B delivered at `now` (ms) and acknowledges the last of it at once.
pub fn acknowledge_delivered(b: &mut Engine, now: u64) {
    let mut delivered_to = None;
    while let Some(p) = b.poll_local() {
        delivered_to = Some(TcpPacket::parse(&p).unwrap().end_seq());
    }
    if let Some(end) = delivered_to {
        let ack = segment(&server_to_client(), 1, end, TcpFlags::ACK, 65535, &[], &[]);
        b.handle_local(ms(now), &ack);
    }
}

/// Duplicate ACKs in a sequence of ack numbers: the losses TCP sees.
pub fn duplicates(acks: &[u32]) -> usize {
    acks.windows(2).filter(|p| p[0] == p[1]).count()
}
