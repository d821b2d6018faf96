//! Path memory (`path_memory`, issue 10): a flow that starts on a path an earlier flow has
//! measured codes with the known loss floor from its first segment.

mod common;

use common::flows::*;
use common::*;
use tcpnc_proto::config::Switch;
use tcpnc_proto::{Engine, EngineConfig, Policies};

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
    // R = 1/(1 − p) + 0.4 p ≈ 1.15 at p = 0.1 (adaptive R): about 57 frames for 50 segments;
    // without the memory R starts at 1.
    assert!(with >= 55, "{with}");
    assert_eq!(without, 50);
}
