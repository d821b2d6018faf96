//! No tail repair while a queue stands (`tail_queue`, docs/engine.md deficit repair part 10):
//! eight local TCPs, each holding a fixed window of 16 segments in flight (a loss-based TCP
//! whose losses the coding hides), share one shallow bottleneck. Each flow gets an eighth of
//! the link, so its ACK clock, and with it its segments, come about 8 ms apart: longer than
//! the pause gap (an eighth of the round trip, 6 ms here). Every segment then looked like the
//! end of a flight, and the tail repair sent its repairs for it, sized for the loss rate that
//! the queue's drops inflate: on the lab's 10-packet queue with eight flows at 5 % loss,
//! 25–128 thousand tail repairs for 120 thousand segments, and goodput 10–16 Mbit/s (docs/lab.md,
//! "Tail repairs into a standing queue, stop 50"). With the rule a pause whose latest round
//! trip shows a queue sends none. The test asserts, in each of seeds 1–10, tail repairs for
//! under 2 % of the segments with the rule and under a tenth of those without (0.2–1.1 %
//! against 9–57 %), over 5 % without, and over the ten seeds together at least 90 % as many
//! segments acknowledged with the rule as without (95 %; 91–100 % per seed: since the repair
//! probes of a TCP that sends nothing new go beyond the repair budget, stop 54, the flows
//! without the rule come out of their stalls sooner). This toy's TCPs keep their window
//! whatever the loss, and the lab's flood does not build here; the few percent the rule may
//! cost are the lab's 8 flows on a one-BDP queue (docs/engine.md, deficit repair
//! part 10).
//!
//! The path: a drop-tail queue of 10 datagrams served at one datagram per millisecond, then
//! 20 ms one way and 5 % random loss; NC-ACKs back in 20 ms. Up to 128 segments in flight over
//! a path that holds about fifty, as far as the flight cap lets them: the queue stands.

mod common;

use common::TestRng;
use common::bottleneck::Bottleneck;
use common::flows::FlowTcp;
use tcpnc_proto::Engine;
use tcpnc_proto::config::{EngineConfig, Switch};

const FLOWS: u16 = 8;
const SEG: u32 = 1_000;
/// Each local TCP's own window, segments.
const CWND: u32 = 16;
const DELAY_MS: u64 = 20;
const QUEUE: usize = 10;
const LOSS: f64 = 0.05;
const RUN_MS: u64 = 15_000;

/// What the run did.
struct Run {
    /// Segments acknowledged, all flows.
    acked: u64,
    /// Segments first sent, and tail repairs, all flows.
    segments: u64,
    tail_repairs: u64,
}

/// With `redundancy_when_alone` off: since stop 55 that rule sends no tail repairs at the
/// pauses of a TCP beside busy flows, queue or not (with it on, seed 1 sent 23 tail repairs
/// for 13 thousand segments without `tail_queue`), and this test is about `tail_queue`.
fn engine(tail_queue: Switch, seed: u64) -> Engine {
    let mut cfg = EngineConfig::default();
    cfg.policies.tail_queue = tail_queue;
    cfg.policies.redundancy_when_alone = Switch::Off;
    Engine::new(cfg, seed).unwrap()
}

/// The eight flows for [`RUN_MS`] of virtual time.
fn run(tail_queue: Switch, seed: u64) -> Run {
    let (mut a, mut b) = (engine(tail_queue, seed), engine(tail_queue, seed ^ 0x5EED));
    let mut rng = TestRng(seed | 1);
    let mut tcps = [FlowTcp::START; FLOWS as usize];
    let mut link = Bottleneck::new(QUEUE, LOSS, DELAY_MS, 0);
    for now in 0..RUN_MS {
        link.step_window_flows((&mut a, &mut b), &mut tcps, (SEG, CWND), now, &mut rng);
    }
    let flows = a.stats().flows;
    Run {
        acked: tcps.iter().map(|t| u64::from(t.acked)).sum(),
        segments: tcps.iter().map(|t| u64::from(t.next)).sum(),
        tail_repairs: flows.values().map(|f| f.tail_repairs).sum(),
    }
}

#[test]
fn a_standing_queue_draws_no_tail_repairs() {
    let (mut on_acked, mut off_acked) = (0, 0);
    for seed in 1..=10 {
        let on = run(Switch::On, seed);
        let off = run(Switch::Off, seed);
        eprintln!(
            "seed {seed}: tail repairs {} for {} segments ({} acknowledged) with the rule, \
             {} for {} ({}) without",
            on.tail_repairs, on.segments, on.acked, off.tail_repairs, off.segments, off.acked
        );
        assert!(
            on.tail_repairs * 50 < on.segments && on.tail_repairs * 10 < off.tail_repairs,
            "seed {seed}: {} tail repairs for {} segments into a standing queue ({} without)",
            on.tail_repairs,
            on.segments,
            off.tail_repairs
        );
        assert!(
            off.tail_repairs * 20 > off.segments,
            "seed {seed}: without the rule only {} tail repairs for {} segments",
            off.tail_repairs,
            off.segments
        );
        on_acked += on.acked;
        off_acked += off.acked;
    }
    assert!(
        on_acked * 100 >= off_acked * 90,
        "seeds 1-10: {on_acked} segments acknowledged with the rule, {off_acked} without"
    );
}
