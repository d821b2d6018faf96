//! Reordering on the data path (Ha & Tsuru §3.1-3.3): combinations overtaken by later ones are
//! late, not lost. With unordering adaptation the sender neither repairs them nor counts them
//! as loss, and TCP sees no duplicate ACKs; without it, it does both.

mod common;

use common::timed::{Outcome, Transfer, duplicates, engine_pair, timed_outcome};
use tcpnc_proto::config::{CongestionRule, Switch};
use tcpnc_proto::{EngineConfig, Policies, RedundancyPolicy};

const SEG: u32 = 1000;
const ISN: u32 = 77_000;
/// Segments sent, one per millisecond.
const SEGMENTS: u32 = 3000;
/// One-way delay of DATA frames and of NC-ACKs, ms.
const DELAY: u64 = 10;
/// Every `EVERY`-th DATA frame is held `EXTRA` ms longer: overtaken by about `EXTRA` frames.
const EVERY: u64 = 7;
const EXTRA: u64 = 9;

fn config(unordering: Switch) -> EngineConfig {
    let mut c = EngineConfig::new(&Policies::product(), 1472);
    c.policies.redundancy = RedundancyPolicy::Fixed(1.1);
    c.policies.unordering = unordering;
    c.policies.pause_ack = unordering;
    c.policies.congestion = CongestionRule::Loss;
    c
}

/// The frames sent at `now` arrive at `now + DELAY` (+ `EXTRA` for every `EVERY`-th one).
fn run(cfg: EngineConfig) -> Outcome {
    let (mut a, mut b) = engine_pair(&cfg);
    let t = Transfer::steady(ISN, SEGMENTS, SEG, DELAY, 300);
    let mut fate = |sent: u64| Some(if sent.is_multiple_of(EVERY) { EXTRA } else { 0 });
    timed_outcome(&mut a, &mut b, t, &mut fate)
}

#[test]
fn late_combinations_are_neither_repaired_nor_lost() {
    let on = run(config(Switch::On));
    let off = run(config(Switch::Off));
    let end = ISN + SEGMENTS * SEG;
    eprintln!(
        "on: repairs {} signals {} dups {} late {} unordering {} loss {} ppm | off: repairs {} signals {} dups {} loss {} ppm",
        on.flow.repairs_sent,
        on.flow.congestion_signals,
        duplicates(&on.acks),
        on.flow.late_arrivals,
        on.flow.unordering,
        on.flow.loss_rate_estimate_ppm,
        off.flow.repairs_sent,
        off.flow.congestion_signals,
        duplicates(&off.acks),
        off.flow.loss_rate_estimate_ppm
    );
    assert_eq!(*on.acks.last().unwrap(), end);
    assert_eq!(*off.acks.last().unwrap(), end);
    // Nothing is lost: with the mechanism the record knows it.
    assert!(on.flow.unordering >= EXTRA as u16, "{}", on.flow.unordering);
    assert!(on.flow.late_arrivals > 0);
    assert!(
        on.flow.loss_rate_estimate_ppm < 2_000,
        "{}",
        on.flow.loss_rate_estimate_ppm
    );
    assert!(
        off.flow.loss_rate_estimate_ppm > 50_000,
        "{}",
        off.flow.loss_rate_estimate_ppm
    );
    // A late combination stays decodable (`late_floor`): with the mechanism nothing needs a
    // repair but the first late arrivals, before any reordering was seen (32 while the
    // receiver dropped what late combinations referenced).
    assert!(on.flow.repairs_sent <= 8, "{}", on.flow.repairs_sent);
    assert!(off.flow.repairs_sent > 100, "{}", off.flow.repairs_sent);
    assert_eq!(on.flow.congestion_signals, 0);
    // TCP sees (almost) no duplicate ACK with the mechanism, hundreds without it.
    assert!(duplicates(&on.acks) <= 5, "{}", duplicates(&on.acks));
    assert!(duplicates(&off.acks) > 50, "{}", duplicates(&off.acks));
}
