//! Path memory (`path_memory`, issue 10): a flow that starts on a path an earlier flow has
//! measured codes with the known loss floor from its first segment, and judges its queue
//! against the round-trip floor the earlier flow measured; its receiver knows the path's
//! reordering before its own first late arrival.

mod common;

use std::collections::{BTreeMap, VecDeque};

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

/// The product's policies with `path_memory` as given.
fn product(memory: Switch) -> EngineConfig {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.path_memory = memory;
    cfg
}

/// Engines A and B with `cfg`.
fn engines(cfg: EngineConfig) -> (Engine, Engine) {
    (
        Engine::new(cfg.clone(), 1).unwrap(),
        Engine::new(cfg, 2).unwrap(),
    )
}

/// DATA frames sent for the first 50 segments of a second flow, after a first flow of 3000
/// segments at 10 % loss.
fn second_flow_frames(memory: Switch) -> u64 {
    let (mut a, mut b) = engines(product(memory));
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
    let mut cfg = product(memory);
    // The scripted sender does not slow down: repairs must carry the queue's drops too.
    cfg.policies.repair_budget = Switch::Off;
    let (mut a, mut b) = engines(cfg);
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

/// The flow from `port`: `segments` segments, one per millisecond from `t0` ms, each DATA frame
/// 10 ms on the way and every seventh 9 ms more (overtaken by about nine); NC-ACKs 10 ms back.
/// Returns the flow's counters.
fn reordered_transfer(
    a: &mut Engine,
    b: &mut Engine,
    port: u16,
    segments: u32,
    t0: u64,
) -> FlowStats {
    let flow = client_flow(port);
    let back = FlowKey::new(flow.dst, flow.src);
    let mut to_b: BTreeMap<(u64, u64), Vec<u8>> = BTreeMap::new();
    let mut to_a: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let mut sent = 0u64;
    for now in t0..t0 + u64::from(segments) + 300 {
        while to_a.front().is_some_and(|(t, _)| *t <= now) {
            a.handle_datagram(ms(now), &to_a.pop_front().unwrap().1);
        }
        if a.poll_timeout().is_some_and(|t| t <= ms(now)) {
            a.handle_timeout(ms(now));
        }
        if now < t0 + u64::from(segments) {
            a.handle_local(ms(now), &data(port, (now - t0) as u32));
        }
        while let Some(d) = a.poll_transmit() {
            sent += 1;
            let extra = if sent.is_multiple_of(7) { 9 } else { 0 };
            to_b.insert((now + 10 + extra, sent), d);
        }
        let later = to_b.split_off(&(now + 1, 0));
        for d in std::mem::replace(&mut to_b, later).into_values() {
            b.handle_datagram(ms(now), &d);
        }
        let mut end = None;
        while let Some(p) = b.poll_local() {
            end = TcpPacket::parse(&p).ok().map(|t| t.end_seq()).or(end);
        }
        if let Some(e) = end {
            let ack = segment(&back, 1, e, TcpFlags::ACK, 65535, &[], &[]);
            b.handle_local(ms(now), &ack);
        }
        while let Some(d) = b.poll_transmit() {
            to_a.push_back((now + 10, d));
        }
        while a.poll_local().is_some() {}
    }
    let stats = a.stats();
    stats
        .flows
        .iter()
        .find(|(id, _)| id.src_port == port)
        .unwrap()
        .1
        .clone()
}

/// Repairs of a second flow over a path that reorders, after a first flow measured it.
fn second_flow_on_a_reordering_path(memory: Switch) -> FlowStats {
    let (mut a, mut b) = engines(product(memory));
    reordered_transfer(&mut a, &mut b, 41_000, 2000, 0);
    reordered_transfer(&mut a, &mut b, 42_000, 2000, 3_000)
}

#[test]
fn a_new_flow_knows_the_paths_reordering() {
    // Nothing is lost: every repair answers a late combination reported lost. On its own the
    // second flow's receiver calls its first late arrivals lost; with the path's reordering
    // it waits for them from its first combination.
    let with = second_flow_on_a_reordering_path(Switch::On);
    let without = second_flow_on_a_reordering_path(Switch::Off);
    eprintln!(
        "with: repairs {} unordering {} | without: repairs {} unordering {}",
        with.repairs_sent, with.unordering, without.repairs_sent, without.unordering
    );
    assert!(with.unordering > 0 && without.unordering > 0);
    assert_eq!(with.repairs_sent, 0, "{with:?}");
    assert!(without.repairs_sent >= 1, "{without:?}");
}
