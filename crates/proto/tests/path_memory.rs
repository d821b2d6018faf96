//! Path memory (`path_memory`, issue 10): a flow that starts on a path an earlier flow has
//! measured codes with the known loss floor from its first segment, and judges its queue
//! against the round-trip floor the earlier flow measured.

mod common;

use std::collections::VecDeque;

use common::flows::*;
use common::*;
use tcpnc_proto::config::Switch;
use tcpnc_proto::tcp::{FlowKey, TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig, FlowStats, Policies};
use tcpnc_wire::FrameRepr;

const SEG: u32 = 1000;

fn data(port: u16, i: u32) -> Vec<u8> {
    client_data(port, i, SEG)
}

/// Runs `segments` of the flow from `port` through A → B, losing every tenth DATA frame, each
/// NC-ACK back at once; returns the DATA frames A sent.
fn transfer(a: &mut Engine, b: &mut Engine, port: u16, segments: u32, t0: u64) -> u64 {
    let mut frames = 0u64;
    for i in 0..segments {
        let now = ms(t0 + u64::from(i));
        a.handle_local(now, &data(port, i));
        while let Some(d) = a.poll_transmit() {
            frames += 1;
            if !frames.is_multiple_of(10) {
                b.handle_datagram(now, &d);
            }
        }
        acknowledge_at_once(a, b, port, now);
    }
    frames
}

/// DATA frames sent for the first 50 segments of a second flow, after a first flow of 3000
/// segments at 10 % loss.
fn second_flow_frames(memory: Switch) -> u64 {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.path_memory = memory;
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    transfer(&mut a, &mut b, 41_000, 3000, 0);
    // The second flow's first 50 segments, with no NC-ACK yet (they are all lost).
    let mut frames = 0;
    for i in 0..50 {
        a.handle_local(ms(10_000 + u64::from(i)), &data(42_000, i));
        while a.poll_transmit().is_some() {
            frames += 1;
        }
    }
    frames
}

#[test]
fn a_new_flow_starts_with_the_paths_redundancy() {
    let with = second_flow_frames(Switch::On);
    let without = second_flow_frames(Switch::Off);
    // R = 1/(1 − p) + 0.1 p ≈ 1.12 at p = 0.1 (adaptive R): about 56 frames for 50 segments;
    // without the memory R starts at 1.
    assert!(with >= 55, "{with}");
    assert_eq!(without, 50);
}

/// The flow from `port`: `segments` segments, one every 5 ms from `t0` ms; the segment's own
/// DATA frame is lost when `lost(i)` (repairs and redundant combinations are not); NC-ACKs take
/// `rtt` ms. Returns the flow's counters.
fn delayed_transfer(
    a: &mut Engine,
    b: &mut Engine,
    port: u16,
    (segments, t0, rtt): (u32, u64, u64),
    lost: impl Fn(u32) -> bool,
) -> FlowStats {
    let flow = client_flow(port);
    let back = FlowKey::new(flow.dst, flow.src);
    let mut acks: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    for step in 0..segments + 40 {
        let now = t0 + u64::from(step) * 5;
        while acks.front().is_some_and(|(t, _)| *t <= now) {
            a.handle_datagram(ms(now), &acks.pop_front().unwrap().1);
        }
        if a.poll_timeout().is_some_and(|t| t <= ms(now)) {
            a.handle_timeout(ms(now));
        }
        if step < segments {
            a.handle_local(ms(now), &data(port, step));
        }
        while let Some(d) = a.poll_transmit() {
            let own = matches!(FrameRepr::parse(&d),
                Ok(FrameRepr::Data { header, .. }) if !header.redundant && !header.flush);
            if !(step < segments && own && lost(step)) {
                b.handle_datagram(ms(now), &d);
            }
        }
        let mut end = None;
        while let Some(p) = b.poll_local() {
            end = TcpPacket::parse(&p).ok().map(|t| t.end_seq()).or(end);
        }
        if let Some(e) = end {
            b.handle_local(
                ms(now),
                &segment(&back, 1, e, TcpFlags::ACK, 65535, &[], &[]),
            );
        }
        while let Some(d) = b.poll_transmit() {
            acks.push_back((now + rtt, d));
        }
        while a.poll_local().is_some() {}
    }
    let stats = a.stats();
    let (_, f) = stats
        .flows
        .iter()
        .find(|(id, _)| id.src_port == port)
        .unwrap();
    f.clone()
}

/// R of a flow that starts behind a full queue (its round trip three times the path's from its
/// first combination) and loses one in 20 of its frames at random and one more in 3 to the
/// queue, after a first flow measured the path empty and lossless.
fn r_behind_a_full_queue(memory: Switch) -> FlowStats {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.path_memory = memory;
    // The scripted sender does not slow down: repairs must carry the queue's drops too.
    cfg.policies.repair_budget = Switch::Off;
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    delayed_transfer(&mut a, &mut b, 41_000, (400, 0, 20), |_| false);
    let lost = |i: u32| i % 20 == 7 || i % 3 == 1;
    delayed_transfer(&mut a, &mut b, 42_000, (5000, 5_000, 60), lost)
}

#[test]
fn a_flow_behind_a_full_queue_knows_it_from_the_paths_round_trip() {
    // With the path's round-trip floor the second flow sees a queue and keeps the queue's drops
    // out of its random loss floor (R stays near the first flow's 1.0); on its own it takes
    // 60 ms for the empty path and the drops for random loss (lab, 100 flows).
    let with = r_behind_a_full_queue(Switch::On);
    assert!(with.redundancy_permille <= 1100, "{with:?}");
    let without = r_behind_a_full_queue(Switch::Off);
    assert!(without.redundancy_permille >= 1250, "{without:?}");
}
