//! Burst-aware redundancy (`burst_redundancy`, issue 10 mechanism 4; docs/engine.md
//! "Burst-aware redundancy"): on a path that loses combinations in Gilbert-Elliott bursts, R
//! and the deficit repair's expectation of the flight's losses cover only a burst's first
//! loss; the NC-ACKs report the rest of each burst and the deficit repair answers it then.
//! Redundancy spread over every window would mostly arrive between the bursts, where the peer
//! misses nothing, and be thrown away. On independent loss the share is 1 and nothing changes.

mod common;

use common::timed::{Transfer, timed_outcome};
use common::*;
use tcpnc_proto::config::Switch;
use tcpnc_proto::{Engine, EngineConfig, FlowStats, Policies};

const SEG: u32 = 1000;
const ISN: u32 = 91_000;
/// Segments sent, one per millisecond.
const SEGMENTS: u32 = 8000;
/// One-way delay of DATA frames and of NC-ACKs, ms.
const DELAY: u64 = 10;
/// Mean loss of the DATA direction.
const LOSS: f64 = 0.05;

/// What one transfer left: the sender's flow counters, the peer's non-innovative arrivals,
/// and whether the local TCP's ack reached the end.
struct Run {
    flow: FlowStats,
    wasted: u64,
    complete: bool,
}

/// The product's policies with `burst_redundancy` as given, over a path losing `LOSS` in
/// bursts of `mean_burst` on average (`1 / (1 − LOSS)`: independent loss).
fn run(burst_redundancy: Switch, mean_burst: f64, seed: u64) -> Run {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.burst_redundancy = burst_redundancy;
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let mut path = Gilbert::new(LOSS, mean_burst, TestRng(0x51_7cc1_b727_220a ^ seed));
    let t = Transfer {
        isn: ISN,
        segments: SEGMENTS,
        seg: SEG,
        delay: DELAY,
        tail: 2000,
        frame: 1,
    };
    let out = timed_outcome(&mut a, &mut b, t, &mut |_| (!path.lost()).then_some(0));
    Run {
        complete: out.acks.last() == Some(&(ISN + SEGMENTS * SEG)),
        flow: out.flow,
        wasted: b.stats().flows.values().next().unwrap().non_innovative,
    }
}

/// Bursts of 4 at 5 %: the share falls to about a quarter, R below its value without the
/// policy and the datagrams the peer throws away to less than half, every segment still
/// delivered (seeds 1 and 2: 94 and 101 against 298 and 267).
#[test]
fn bursts_are_repaired_when_reported_not_covered_in_advance() {
    for seed in [1, 2] {
        let on = run(Switch::On, 4.0, seed);
        let off = run(Switch::Off, 4.0, seed);
        eprintln!(
            "seed {seed}: on: share {}‰ R {}‰ redundant {} wasted {} | off: share {}‰ R {}‰ \
             redundant {} wasted {}",
            on.flow.event_share_permille,
            on.flow.redundancy_permille,
            on.flow.redundant_sent,
            on.wasted,
            off.flow.event_share_permille,
            off.flow.redundancy_permille,
            off.flow.redundant_sent,
            off.wasted,
        );
        assert!(
            on.complete && off.complete,
            "seed {seed}: not all delivered"
        );
        assert!(
            (150..=400).contains(&on.flow.event_share_permille),
            "seed {seed}: share {}‰",
            on.flow.event_share_permille
        );
        assert_eq!(off.flow.event_share_permille, 1000);
        assert!(
            on.flow.redundancy_permille < off.flow.redundancy_permille,
            "seed {seed}: R {}‰ against {}‰",
            on.flow.redundancy_permille,
            off.flow.redundancy_permille
        );
        assert!(
            on.wasted * 2 <= off.wasted,
            "seed {seed}: {} non-innovative arrivals against {}",
            on.wasted,
            off.wasted
        );
    }
}

/// Independent loss at 5 %: the fit's share stays near 1 and R where it was.
#[test]
fn independent_loss_keeps_its_redundancy() {
    let on = run(Switch::On, 1.0 / (1.0 - LOSS), 3);
    let off = run(Switch::Off, 1.0 / (1.0 - LOSS), 3);
    eprintln!(
        "on: share {}‰ R {}‰ wasted {} | off: R {}‰ wasted {}",
        on.flow.event_share_permille,
        on.flow.redundancy_permille,
        on.wasted,
        off.flow.redundancy_permille,
        off.wasted
    );
    assert!(on.complete && off.complete);
    assert!(
        on.flow.event_share_permille >= 900,
        "{}",
        on.flow.event_share_permille
    );
    assert!(
        on.flow.redundancy_permille + 10 >= off.flow.redundancy_permille,
        "R {}‰ against {}‰",
        on.flow.redundancy_permille,
        off.flow.redundancy_permille
    );
}
