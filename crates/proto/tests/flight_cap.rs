//! Flight cap (`flight_cap`, issue 10 mechanism 7; docs/engine.md "Flight cap"): a local TCP
//! that sends whatever its window allows and ignores loss (the way kernel BBR treats the
//! losses a bottleneck queue makes when its bandwidth estimate runs high) is held to what the
//! path carries.
//!
//! The path: a drop-tail queue of one BDP (20 datagrams) served at one datagram per
//! millisecond, then 10 ms one way and 2 % random loss; NC-ACKs back in 10 ms. The TCP keeps
//! its whole window (64 kB, 64 segments) in flight. With the cap, its flight stays near 1.75
//! floor-BDPs of datagrams over R, and after its first window (sent before the cap is known)
//! the queue drops nothing. Without it, the window keeps about twice what the path holds in
//! flight, and the queue drops thousands of datagrams.

mod common;

use common::TestRng;
use common::bottleneck::Bottleneck;
use common::greedy::{Greedy, GreedyTcp};
use common::timed::acknowledge_delivered;
use tcpnc_proto::config::EngineConfig;
use tcpnc_proto::config::Switch;
use tcpnc_proto::{Engine, FlowStats};

const SEGMENTS: u32 = 6_000;
const DELAY_MS: u64 = 10;
const QUEUE: usize = 20;
const LOSS: f64 = 0.02;
/// Before the cap is known (two rounds), the greedy TCP's first window meets the queue alone.
const WARM_UP_MS: u64 = 1_000;

/// What one transfer did.
struct Run {
    delivered_all: bool,
    queue_drops: u64,
    late_drops: u64,
    datagrams: u64,
    largest_flight: u32,
    flow: FlowStats,
}

fn engine(flight_cap: Switch, seed: u64) -> Engine {
    let mut cfg = EngineConfig::default();
    cfg.policies.flight_cap = flight_cap;
    Engine::new(cfg, seed).unwrap()
}

/// Runs the transfer for at most 20 s of virtual time.
fn transfer(flight_cap: Switch, seed: u64) -> Run {
    let (mut a, mut b) = (engine(flight_cap, seed), engine(flight_cap, seed ^ 0x5EED));
    let mut rng = TestRng(seed | 1);
    let mut link = Bottleneck::new(QUEUE, LOSS, DELAY_MS, WARM_UP_MS);
    let how = Greedy {
        slow_start: false,
        rto: false,
    };
    let mut tcp = GreedyTcp::new(SEGMENTS, how);
    let mut largest_flight = 0u32;
    for now in 0..20_000u64 {
        link.deliver_to_a(&mut a, now);
        tcp.read_acks(&mut a);
        if tcp.done() {
            return finish(true, &a, &link, largest_flight);
        }
        tcp.send(&mut a, now);
        largest_flight = largest_flight.max(tcp.flight());
        link.carry_to_b(&mut a, &mut b, now, &mut rng);
        acknowledge_delivered(&mut b, now);
        link.carry_back(&mut b, now);
    }
    finish(false, &a, &link, largest_flight)
}

fn finish(delivered_all: bool, a: &Engine, link: &Bottleneck, flight: u32) -> Run {
    Run {
        delivered_all,
        queue_drops: link.drops,
        late_drops: link.late_drops,
        datagrams: link.datagrams,
        largest_flight: flight,
        flow: a.stats().flows.values().next().unwrap().clone(),
    }
}

#[test]
fn the_cap_keeps_a_greedy_tcp_within_what_the_path_holds() {
    for seed in [1, 2, 3] {
        let on = transfer(Switch::On, seed);
        let off = transfer(Switch::Off, seed);
        eprintln!(
            "seed {seed}: cap on: {} queue drops ({} after 1 s) of {} datagrams, largest flight {}, cap {}; \
             off: {} ({}) of {}, largest flight {}",
            on.queue_drops,
            on.late_drops,
            on.datagrams,
            on.largest_flight,
            on.flow.flight_cap,
            off.queue_drops,
            off.late_drops,
            off.datagrams,
            off.largest_flight
        );
        assert!(
            on.delivered_all,
            "seed {seed}: the capped transfer finishes"
        );
        // 1.75 floor-BDPs (1.75 × 21 datagrams) over R ≈ 1.1–1.3: about 28–33 segments.
        assert!(
            (20..=35).contains(&on.flow.flight_cap),
            "seed {seed}: cap {}",
            on.flow.flight_cap
        );
        assert!(
            on.late_drops * 100 < on.datagrams,
            "seed {seed}: the capped TCP overfills the queue ({} of {})",
            on.late_drops,
            on.datagrams
        );
        assert!(
            off.late_drops > 10 * on.late_drops.max(10),
            "seed {seed}: without the cap the queue drops {} (with it {})",
            off.late_drops,
            on.late_drops
        );
        assert_eq!(off.flow.flight_cap, 0);
    }
}
