//! The per-peer repair budget (`repair_budget`, issue 10 mechanism 5): many flows to one peer
//! on a path that drops most combinations (a queue overflowing) cannot flood it with repairs;
//! one flow on a randomly lossy path is not held back.

mod common;

use common::flows::*;
use common::*;
use tcpnc_proto::config::Switch;
use tcpnc_proto::repair_budget::{BUDGET_DEPTH, REPAIR_SHARE};
use tcpnc_proto::{Engine, EngineConfig, Policies};

const SEG: u32 = 1000;
/// DATA frames sent before the path starts to overflow.
const QUIET_FRAMES: u64 = 1500;

fn data(port: u16, i: u32) -> Vec<u8> {
    client_data(port, i, SEG)
}

/// A fixed pseudo-random percentile of frame `k` (Knuth's multiplicative hash), so that the
/// drops fall on every flow alike.
fn scatter(k: u64) -> u64 {
    (k.wrapping_mul(2_654_435_761) >> 7) % 100
}

/// What a run sent and delivered.
struct Run {
    repairs: u64,
    delivered: u64,
    over_budget: u64,
}

/// `flows` flows of `segments` each, sent round-robin (segment i of every flow, then i + 1),
/// through a path that delivers the DATA frames for which `deliver(k)` holds (k counts every
/// DATA frame A sent); each NC-ACK comes back at once.
fn run(budget: Switch, flows: u16, segments: u32, deliver: impl Fn(u64) -> bool) -> Run {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.repair_budget = budget;
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let (mut sent, mut delivered) = (0u64, 0u64);
    for i in 0..segments {
        for f in 0..flows {
            let port = 41_000 + f;
            let now = ms(u64::from(i) * 10 + u64::from(f) / 10);
            a.handle_local(now, &data(port, i));
            while let Some(d) = a.poll_transmit() {
                sent += 1;
                if deliver(sent) {
                    delivered += 1;
                    b.handle_datagram(now, &d);
                }
            }
            acknowledge_at_once(&mut a, &mut b, port, now);
        }
    }
    let stats = a.stats();
    Run {
        repairs: stats.flows.values().map(|f| f.repairs_sent).sum(),
        delivered,
        over_budget: stats.repairs_over_budget,
    }
}

/// Forty flows on a path that first loses 10 % at random and then delivers one DATA frame in
/// four (a queue overflowing): each flow's NC-ACKs report the drops and ask for repairs. With the budget the repairs stay within the
/// share of what was delivered (plus the bucket's depth); without it they are a multiple.
#[test]
fn many_flows_into_an_overflowing_path_repair_within_the_budget() {
    let path = |k: u64| match k < QUIET_FRAMES {
        true => scatter(k) >= 10,
        false => scatter(k) < 25,
    };
    let with = run(Switch::On, 40, 60, path);
    let without = run(Switch::Off, 40, 60, path);
    // No flow completes an estimation window, so the random floor is not known: the share
    // only, doubled because a receiver also counts the Pids before the first it heard as
    // received.
    let bound = 2.0 * REPAIR_SHARE * with.delivered as f64 + BUDGET_DEPTH;
    assert!(
        (with.repairs as f64) <= bound,
        "{} repairs for {} delivered",
        with.repairs,
        with.delivered
    );
    assert!(with.over_budget > 0);
    assert!(
        without.repairs > 2 * with.repairs,
        "without the budget: {} repairs, with it {}",
        without.repairs,
        with.repairs
    );
    assert_eq!(without.over_budget, 0);
}

/// One flow at 10 % random loss: the budget never refuses a repair, and the run is the same
/// with it or without it.
#[test]
fn one_flow_at_random_loss_is_not_held_back() {
    let random = |k: u64| scatter(k) >= 10;
    let with = run(Switch::On, 1, 2000, random);
    let without = run(Switch::Off, 1, 2000, random);
    assert_eq!(with.over_budget, 0);
    assert_eq!(with.repairs, without.repairs);
    assert!(with.repairs > 0, "the deficit repair answered the losses");
}
