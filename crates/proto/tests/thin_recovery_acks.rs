//! A signal's recovery, few partial ACKs (`thin_recovery_acks`, `sender/recovery.rs`,
//! docs/engine.md "A signal's recovery, few partial ACKs").
//!
//! A congestion signal puts the local TCP, without SACK, into NewReno recovery, where every
//! ACK that advances below its recovery point is a partial ACK and draws a retransmission
//! (RFC 6582 §3.2). A bulk flow of one segment a millisecond over a 100 ms round trip has a
//! hundred segments in flight when signalled; the seen-ACK then advances a segment at a time,
//! and the TCP would retransmit nearly all of them. With the rule the ACKs that advance reach
//! it at most [`RECOVERY_ACKS`] to a round trip until its ack reaches the point.

mod common;

use common::timed::{Transfer, engine_pair, timed_transfer_at};
use common::*;
use tcpnc_proto::config::{BurstSignal, CongestionRule, Switch};
use tcpnc_proto::sender::RECOVERY_ACKS;
use tcpnc_proto::tcp::seq_lt;
use tcpnc_proto::{EngineConfig, FlowStats, Policies};

const ISN: u32 = 7_000;
const SEGMENTS: u32 = 8000;
const SEG: u32 = 1000;

/// What one transfer showed: the partial ACKs after each signal, the flow's counters and the
/// last ack given.
struct Recoveries {
    partial: Vec<usize>,
    flow: FlowStats,
    last_ack: u32,
}

/// One steady flow through Gilbert loss (10 % in bursts of 8, which the binomial threshold
/// calls congestion: the `loss` rule and no fitted threshold, so the bursts are signalled).
fn run(thin: Switch, seed: u64) -> Recoveries {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.congestion = CongestionRule::Loss;
    cfg.policies.burst_signal = BurstSignal::Off;
    cfg.policies.tail_burst = Switch::Off;
    cfg.policies.thin_recovery_acks = thin;
    let (mut a, mut b) = engine_pair(&cfg);
    let t = Transfer::steady(ISN, SEGMENTS, SEG, 50, 3000);
    let mut path = Gilbert::new(0.1, 8.0, TestRng(seed));
    let acks = timed_transfer_at(&mut a, &mut b, t, &mut |_| (!path.lost()).then_some(0));
    Recoveries {
        partial: partial_acks(&acks),
        flow: a.stats().flows.values().next().unwrap().clone(),
        last_ack: acks.last().map_or(0, |&(_, ack)| ack),
    }
}

/// For each signal (three duplicates of the ACK before, given in one millisecond), the ACKs that advanced but
/// stayed below the recovery point: what the local TCP had sent by then (one segment a
/// millisecond; it never retransmits here).
fn partial_acks(acks: &[(u64, u32)]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 1;
    while i + 3 <= acks.len() {
        let (t, ack) = acks[i];
        let signal = acks[i - 1].1 == ack && acks[i..i + 3].iter().all(|&x| x == (t, ack));
        if !signal {
            i += 1;
            continue;
        }
        let point = ISN + (t as u32 + 1).min(SEGMENTS) * SEG;
        let mut last = ack;
        let mut count = 0;
        for &(_, a) in &acks[i + 3..] {
            if !seq_lt(a, point) {
                break;
            }
            if seq_lt(last, a) {
                count += 1;
                last = a;
            }
        }
        out.push(count);
        i += 3;
    }
    out
}

fn mean(v: &[usize]) -> f64 {
    v.iter().sum::<usize>() as f64 / v.len().max(1) as f64
}

#[test]
fn a_signals_recovery_gets_few_partial_acks() {
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for seed in [3, 5, 7] {
        let on = run(Switch::On, seed);
        let off = run(Switch::Off, seed);
        eprintln!(
            "seed {seed}: on {} signals, partial {:?}, withheld {}; off {} signals, partial {:?}",
            on.flow.congestion_signals,
            on.partial,
            on.flow.recovery_acks_withheld,
            off.flow.congestion_signals,
            off.partial
        );
        for r in [&on, &off] {
            assert_eq!(r.last_ack, ISN + SEGMENTS * SEG, "every byte acknowledged");
            assert!(
                r.flow.congestion_signals >= 3,
                "{}",
                r.flow.congestion_signals
            );
            assert_eq!(r.partial.len() as u64, r.flow.congestion_signals);
        }
        with.extend(on.partial);
        without.extend(off.partial);
    }
    let (with, without) = (mean(&with), mean(&without));
    eprintln!("partial ACKs a signal: {with:.1} with the rule, {without:.1} without");
    assert!(without >= 40.0, "{without}");
    assert!(with <= f64::from(2 * RECOVERY_ACKS), "{with}");
}
