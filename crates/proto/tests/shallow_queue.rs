//! A shallow queue (`queue_depth`, issue 10 mechanism 4; docs/engine.md "A shallow queue"): a
//! drop-tail queue whose whole depth is less than the fixed queue evidence (floor/8) overflows
//! without the round trip ever showing a queue. Its drops are then sampled as random loss, R
//! rises with them, and the extra datagrams overflow the queue further. With the evidence and
//! the flight cap scaled to the deepest queue seen, the drops count as congestion and the cap
//! keeps the flight within what the path holds, R follows the random loss alone, and the
//! paced datagrams (`pacing`) leave the TCP's bursts at the gateway instead of in the queue.
//!
//! The path: a drop-tail queue of 6 datagrams (6 ms) served at one datagram per millisecond,
//! then 20 ms one way and 2 % random loss; NC-ACKs back in 20 ms: a 41 ms floor, whose eighth
//! (5.1 ms) the full queue does not reach. The local TCP slow-starts from 10 segments and then
//! keeps its whole window (64 kB, 64 segments) in flight whatever it loses, the 47 datagrams
//! the path holds and more, and resends its first unacknowledged segment after a second
//! without progress.

mod common;

use common::TestRng;
use common::bottleneck::Bottleneck;
use common::greedy::{Greedy, GreedyTcp};
use common::timed::acknowledge_delivered;
use tcpnc_proto::config::EngineConfig;
use tcpnc_proto::config::{Policies, Switch};
use tcpnc_proto::{Engine, FlowStats};

const SEGMENTS: u32 = 8_000;
const DELAY_MS: u64 = 20;
const QUEUE: usize = 6;
const LOSS: f64 = 0.02;
/// The first windows, sent before anything is measured, meet the queue alone.
const WARM_UP_MS: u64 = 1_000;

/// What one transfer did.
struct Run {
    delivered_all: bool,
    /// When the last segment was acknowledged (ms), or the time limit.
    finished_ms: u64,
    late_drops: u64,
    datagrams: u64,
    flow: FlowStats,
}

/// The product's policies with `queue_depth` and `pacing` as given.
fn engine((queue_depth, pacing): (Switch, Switch), seed: u64) -> Engine {
    let mut policies = Policies::product();
    policies.queue_depth = queue_depth;
    policies.pacing = pacing;
    let cfg = EngineConfig::new(&policies, 1472);
    Engine::new(cfg, seed).unwrap()
}

/// Runs the transfer for at most 30 s of virtual time.
fn transfer(switches: (Switch, Switch), seed: u64) -> Run {
    let (mut a, mut b) = (engine(switches, seed), engine(switches, seed ^ 0x5EED));
    let mut rng = TestRng(seed | 1);
    let mut link = Bottleneck::new(QUEUE, LOSS, DELAY_MS, WARM_UP_MS);
    let how = Greedy {
        slow_start: true,
        rto: true,
    };
    let mut tcp = GreedyTcp::new(SEGMENTS, how);
    let (mut delivered_all, mut finished_ms) = (false, 30_000);
    for now in 0..30_000u64 {
        link.deliver_to_a(&mut a, now);
        tcp.read_acks(&mut a);
        if tcp.done() {
            (delivered_all, finished_ms) = (true, now);
            break;
        }
        tcp.send(&mut a, now);
        link.carry_to_b(&mut a, &mut b, now, &mut rng);
        acknowledge_delivered(&mut b, now);
        link.carry_back(&mut b, now);
    }
    Run {
        delivered_all,
        finished_ms,
        late_drops: link.late_drops,
        datagrams: link.datagrams,
        flow: a.stats().flows.values().next().unwrap().clone(),
    }
}

#[test]
fn a_shallow_queues_drops_are_congestion_not_random_loss() {
    for seed in [1, 3, 5] {
        let full = transfer((Switch::On, Switch::On), seed);
        let unpaced = transfer((Switch::On, Switch::Off), seed);
        let off = transfer((Switch::Off, Switch::Off), seed);
        for (name, r) in [("on", &full), ("without pacing", &unpaced), ("off", &off)] {
            eprintln!(
                "seed {seed}: queue_depth {name}: {} queue drops after 1 s of {} datagrams, \
                 loss estimate {} ppm, R {}‰, cap {}, all delivered {} at {} ms",
                r.late_drops,
                r.datagrams,
                r.flow.loss_rate_estimate_ppm,
                r.flow.redundancy_permille,
                r.flow.flight_cap,
                r.delivered_all,
                r.finished_ms
            );
        }
        assert!(full.delivered_all, "seed {seed}: the transfer finishes");
        // R follows the random loss floor: 2 % (R about 1.03) with the drops left out of it,
        // paced or not.
        for r in [&full, &unpaced] {
            assert!(
                r.flow.redundancy_permille <= 1_100,
                "seed {seed}: R {}‰ against 2 % random loss",
                r.flow.redundancy_permille
            );
        }
        assert!(
            off.flow.redundancy_permille >= 1_500,
            "seed {seed}: without queue_depth R stays at {}‰",
            off.flow.redundancy_permille
        );
        // Without it the sender floods the path: more than twice the datagrams for the same
        // segments, most of them dropped.
        assert!(
            off.datagrams > 2 * full.datagrams && off.late_drops > 5 * full.late_drops,
            "seed {seed}: {} datagrams and {} drops without queue_depth, {} and {} with it",
            off.datagrams,
            off.late_drops,
            full.datagrams,
            full.late_drops
        );
        // Paced, the TCP's bursts wait at the gateway instead of overflowing the queue.
        assert!(
            full.late_drops * 20 < full.datagrams && unpaced.late_drops > 4 * full.late_drops,
            "seed {seed}: {} queue drops of {} datagrams paced, {} unpaced",
            full.late_drops,
            full.datagrams,
            unpaced.late_drops
        );
        assert!(
            full.finished_ms * 5 < off.finished_ms * 3,
            "seed {seed}: done at {} ms, {} ms without queue_depth",
            full.finished_ms,
            off.finished_ms
        );
    }
}
