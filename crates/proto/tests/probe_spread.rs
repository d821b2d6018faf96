//! A probe's repairs spread out (`probe_spread`, `sender/probe.rs`, docs/engine.md "A probe's
//! repairs spread out"): sixty local TCPs behind engine A, each keeping up to 8 segments in
//! flight as far as the flight cap lets it, share one bottleneck whose drop-tail queue holds
//! 40 datagrams, behind 10 % random loss; the first writes [`LAST`] segments and closes, the
//! others are bulk senders. They keep the queue full, as a hundred short flows do on the lab,
//! so the ending flow's last flight and its repairs meet drops; when its NC-ACKs stop, only
//! its repair probes can finish it (the test's TCPs never retransmit).
//!
//! With the rule a probe beside busy flows sends its first repair at once and the rest one at
//! a time over a round trip, and a probe after one that drew no NC-ACK sends enough to carry
//! the missing DoFs with probability 0.99 at the flow's whole loss record; without it the
//! repairs arrive at the full queue together, and all but the first are dropped. Over seeds
//! 1, 3, …, 19 the ending flow's data reached the peer's TCP 4.3 s after its last segment was
//! written in all with the rule, 10.4 s without; the test asserts at most half, and fails with
//! the rule off. (Where the flight cap keeps the queue from filling, 30 flows of 64 segments,
//! or the flows' windows are so small that a probe asks for one repair, 100 flows of 4, the
//! two are level within the toy's spread.)
//!
//! The path: the queue is served at one datagram per millisecond, then 20 ms one way and 10 %
//! random loss; NC-ACKs back in 20 ms.

mod common;

use common::TestRng;
use common::bottleneck::Bottleneck;
use common::flows::{FIRST_PORT, FlowTcp};
use tcpnc_proto::Engine;
use tcpnc_proto::config::{EngineConfig, Policies, Switch};

const FLOWS: usize = 60;
const SEG: u32 = 1_000;
const CWND: u32 = 8;
const DELAY_MS: u64 = 20;
const QUEUE: usize = 40;
const LOSS: f64 = 0.1;
/// Segments of the transfer that ends.
const LAST: u32 = 100;
/// The longest the run goes on, ms.
const RUN_MS: u64 = 30_000;

fn engine(rule: Switch, seed: u64) -> Engine {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.probe_spread = rule;
    Engine::new(cfg, seed).unwrap()
}

/// What the ending flow did: ms from its last segment's write to the peer's TCP having all its
/// bytes (`None`: not within [`RUN_MS`]), its repair probes and its spread repairs.
struct Ending {
    wait_ms: Option<u64>,
    probes: u64,
    spread: u64,
}

fn run(rule: Switch, seed: u64) -> Ending {
    let (mut a, mut b) = (engine(rule, seed), engine(rule, seed ^ 0x5EED));
    let mut rng = TestRng(seed | 1);
    let mut tcps = [FlowTcp::START; FLOWS];
    tcps[0].written = LAST;
    let mut link = Bottleneck::new(QUEUE, LOSS, DELAY_MS, 0);
    let mut written_at = None;
    let mut wait_ms = None;
    for now in 0..RUN_MS {
        link.step_window_flows((&mut a, &mut b), &mut tcps, (SEG, CWND), now, &mut rng);
        if written_at.is_none() && tcps[0].next == LAST {
            written_at = Some(now);
        }
        let delivered = |b: &Engine| {
            b.stats()
                .flows
                .iter()
                .find(|(id, _)| id.dst_port == FIRST_PORT)
                .map_or(0, |(_, f)| f.bytes_delivered)
        };
        if let Some(at) = written_at
            && now % 10 == 0
            && delivered(&b) >= u64::from(LAST * SEG)
        {
            wait_ms = Some(now - at);
            break;
        }
    }
    let flow = a
        .stats()
        .flows
        .into_iter()
        .find(|(id, _)| id.src_port == FIRST_PORT)
        .map(|(_, f)| f)
        .expect("the ending flow");
    Ending {
        wait_ms,
        probes: flow.repair_probes,
        spread: flow.spread_repairs,
    }
}

#[test]
fn a_probe_beside_busy_flows_spreads_its_repairs() {
    let (mut on_sum, mut off_sum, mut spread) = (0, 0, 0);
    for seed in (1..=20).step_by(2) {
        let on = run(Switch::On, seed);
        let off = run(Switch::Off, seed);
        eprintln!(
            "seed {seed}: with the rule {:?} ms after the last write, {} probes, {} spread \
             repairs; without {:?} ms, {} probes",
            on.wait_ms, on.probes, on.spread, off.wait_ms, off.probes
        );
        assert_eq!(off.spread, 0, "seed {seed}");
        on_sum += on.wait_ms.unwrap_or(RUN_MS);
        off_sum += off.wait_ms.unwrap_or(RUN_MS);
        spread += on.spread;
    }
    assert!(spread > 0, "no spread repairs in ten seeds");
    assert!(
        on_sum * 2 <= off_sum,
        "seeds 1-19: {on_sum} ms to finish after the last write with the rule, {off_sum} without"
    );
}
