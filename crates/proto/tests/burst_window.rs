//! The burst window (`burst_window`, issue 10 mechanism 4): on a path that loses combinations in
//! Gilbert-Elliott bursts longer than the coding window, the seen-ACK stalls at each such burst
//! (the combinations after it no longer reach back to the first unseen packet) and TCP sees
//! duplicate ACKs until a repair arrives. With the mechanism the sender fits the bursts, widens
//! its window to cover 99 % of them and the ACK keeps moving; a new flow starts from the cover
//! the path already showed.

mod common;

use common::flows::client_data;
use common::timed::{Outcome, Transfer, duplicates, timed_outcome};
use common::*;
use tcpnc_proto::config::{CongestionRule, Switch};
use tcpnc_proto::{Engine, EngineConfig, Policies, RedundancyPolicy};
use tcpnc_wire::FrameRepr;

const SEG: u32 = 1000;
const ISN: u32 = 77_000;
/// Segments sent, one per millisecond.
const SEGMENTS: u32 = 6000;
/// One-way delay of DATA frames and of NC-ACKs, ms.
const DELAY: u64 = 10;
/// The path: 5 % of the DATA direction's frames lost, in bursts of 8 on average.
const LOSS: f64 = 0.05;
const MEAN_BURST: f64 = 8.0;

/// The seen-ACK's stall is what the burst window prevents, so the DoF ACK (which masks it
/// another way, `dof_ack.rs`) is off unless a test says otherwise.
fn config(burst_window: Switch) -> EngineConfig {
    let mut c = EngineConfig::new(&Policies::product(), 1472);
    c.policies.redundancy = RedundancyPolicy::Fixed(1.1);
    c.policies.congestion = CongestionRule::Loss;
    c.policies.bitmap_signal = Switch::Off;
    c.policies.burst_window = burst_window;
    c.policies.dof_ack = Switch::Off;
    c
}

/// One flow of `SEGMENTS` through `a` (sender) and `b`; frames sent at `now` arrive at
/// `now + DELAY` unless the Gilbert model loses them.
fn run(a: &mut Engine, b: &mut Engine, isn: u32) -> Outcome {
    let mut path = Gilbert::new(
        LOSS,
        MEAN_BURST,
        TestRng(0x9e37_79b9_7f4a_7c15 ^ u64::from(isn)),
    );
    let t = Transfer {
        isn,
        segments: SEGMENTS,
        seg: SEG,
        delay: DELAY,
        tail: 2000,
        frame: 1,
    };
    timed_outcome(a, b, t, &mut |_| (!path.lost()).then_some(0))
}

fn one_flow(burst_window: Switch) -> Outcome {
    one_flow_with(config(burst_window))
}

fn one_flow_with(cfg: EngineConfig) -> Outcome {
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    run(&mut a, &mut b, ISN)
}

#[test]
fn a_window_that_covers_the_bursts_keeps_the_seen_ack_moving() {
    let on = one_flow(Switch::On);
    let off = one_flow(Switch::Off);
    eprintln!(
        "on: window {} burst {} dups {} repairs {} | off: window {} dups {} repairs {}",
        on.flow.burst_window,
        on.flow.loss_burst_milli,
        duplicates(&on.acks),
        on.flow.repairs_sent,
        off.flow.burst_window,
        duplicates(&off.acks),
        off.flow.repairs_sent,
    );
    let end = ISN + SEGMENTS * SEG;
    assert_eq!(*on.acks.last().unwrap(), end);
    assert_eq!(*off.acks.last().unwrap(), end);
    // The fit finds bursts of about 8: a cover of 36 (30..=45 for the sample's spread).
    assert!(
        (30..=45).contains(&on.flow.burst_window),
        "{}",
        on.flow.burst_window
    );
    assert_eq!(off.flow.burst_window, 0);
    // Bursts longer than 11 stall a window of 12: TCP sees their duplicate ACKs.
    assert!(duplicates(&off.acks) >= 20, "{}", duplicates(&off.acks));
    assert!(
        duplicates(&on.acks) * 4 <= duplicates(&off.acks),
        "{} vs {}",
        duplicates(&on.acks),
        duplicates(&off.acks)
    );
    // The DoF ACK alone masks the same bursts: the local TCP's ack counts the DoFs the peer
    // holds past the stalled seen-ACK.
    let mut dof = config(Switch::Off);
    dof.policies.dof_ack = Switch::On;
    let dof = one_flow_with(dof);
    assert_eq!(*dof.acks.last().unwrap(), end);
    assert!(
        duplicates(&dof.acks) * 4 <= duplicates(&off.acks),
        "{} vs {}",
        duplicates(&dof.acks),
        duplicates(&off.acks)
    );
}

/// The widest combination of a second flow's first `n` segments (no NC-ACK for it yet), sent
/// by `a` after a first flow of `SEGMENTS` over the bursty path.
fn second_flow_widest(memory: Switch) -> (u16, usize) {
    let mut cfg = config(Switch::On);
    cfg.policies.path_memory = memory;
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let first = run(&mut a, &mut b, ISN);
    let mut widest = 0;
    for i in 0..48 {
        a.handle_local(ms(20_000 + u64::from(i)), &client_data(42_000, i, SEG));
        while let Some(d) = a.poll_transmit() {
            if let Ok(FrameRepr::Data { header, .. }) = FrameRepr::parse(&d) {
                widest = widest.max(header.ranges.len());
            }
        }
    }
    (first.flow.burst_window, widest)
}

/// Path memory: a second flow over the same engines codes over the first flow's cover from its
/// first segments; without path memory it starts from the configured window.
#[test]
fn a_new_flow_starts_from_the_paths_burst_cover() {
    let (cover, widest) = second_flow_widest(Switch::On);
    assert!(cover >= 30, "{cover}");
    assert_eq!(widest, usize::from(cover));
    let (_, widest) = second_flow_widest(Switch::Off);
    assert_eq!(widest, usize::from(Policies::product().window));
}
