//! The burst-aware congestion signal (`burst_signal`, issue 10 mechanism 4): an NC-ACK's loss
//! bitmap is congestion only when it shows more losses than the path's random loss explains.
//! The binomial threshold (`repair::congestion_threshold`) assumes independent loss, so on a
//! Gilbert-Elliott path a single burst crosses it and TCP cuts its window for a loss the
//! coding repairs. With the mechanism the threshold is what the fitted Gilbert model reaches
//! in one bitmap of 10^4; on an independent-loss path the fit changes nothing, so a queue
//! that overflows still cuts TCP's window.
//!
//! With `paused` (the product's) the fitted threshold applies only while the local TCP is
//! application-limited: a sender that writes frames with pauses between them gets it, a
//! steady one keeps the binomial threshold.
//!
//! The tests take the congestion rule `loss` (no queue evidence asked for), so every bitmap
//! above its threshold is a signal: the paths below have no queue, and every signal is one
//! the rule under test let through.

mod common;

use common::timed::{Outcome, Transfer, timed_outcome};
use common::*;
use tcpnc_proto::config::{BurstSignal, CongestionRule, Switch};
use tcpnc_proto::{Engine, EngineConfig, Policies};

const ISN: u32 = 91_000;
/// Segments sent, one per millisecond.
const SEGMENTS: u32 = 8000;

fn config(burst_signal: BurstSignal) -> EngineConfig {
    let mut c = EngineConfig::new(&Policies::product(), 1472);
    c.policies.congestion = CongestionRule::Loss;
    c.policies.bitmap_signal = Switch::On;
    c.policies.burst_signal = burst_signal;
    // The tail repair's burst-sized extras (`tail_burst`) change which datagrams the seeded
    // Gilbert path takes; off, so that the runs differ in the signal's threshold alone.
    c.policies.tail_burst = Switch::Off;
    c
}

/// One steady flow of [`SEGMENTS`] whose n-th datagram `lost(n)` decides.
fn one_flow(burst_signal: BurstSignal, lost: &mut dyn FnMut(u64) -> bool) -> Outcome {
    one_flow_with(config(burst_signal), 1, lost)
}

/// One flow of [`SEGMENTS`] with `cfg`, written `frame` segments every `frame` ms.
fn one_flow_with(cfg: EngineConfig, frame: u64, lost: &mut dyn FnMut(u64) -> bool) -> Outcome {
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let t = Transfer {
        isn: ISN,
        segments: SEGMENTS,
        seg: 1000,
        delay: 10,
        tail: 2000,
        frame,
    };
    timed_outcome(&mut a, &mut b, t, &mut |n| (!lost(n)).then_some(0))
}

/// The Gilbert path (`common::Gilbert`) as a loss decision per datagram.
fn gilbert(loss: f64, burst: f64, seed: u64) -> impl FnMut(u64) -> bool {
    let mut path = Gilbert::new(loss, burst, TestRng(seed));
    move |_| path.lost()
}

/// 10 % in bursts of 8: the binomial threshold (13 of 32) calls bursts congestion; the
/// fitted model explains them all, so the mechanism lets no signal through, and every byte
/// still arrives.
#[test]
fn a_burst_the_random_loss_explains_is_no_signal() {
    let seed = 0x5eed_0b17;
    let on = one_flow(BurstSignal::On, &mut gilbert(0.1, 8.0, seed));
    let off = one_flow(BurstSignal::Off, &mut gilbert(0.1, 8.0, seed));
    eprintln!(
        "signals on {} off {} | burst {} / {}",
        on.flow.congestion_signals,
        off.flow.congestion_signals,
        on.flow.loss_burst_milli,
        off.flow.loss_burst_milli
    );
    let end = ISN + SEGMENTS * 1000;
    assert_eq!(*on.acks.last().unwrap(), end);
    assert_eq!(*off.acks.last().unwrap(), end);
    assert!(
        off.flow.congestion_signals >= 5,
        "{}",
        off.flow.congestion_signals
    );
    assert!(
        on.flow.congestion_signals <= 1,
        "{}",
        on.flow.congestion_signals
    );
}

/// Independent 5 % loss, and every 500th DATA datagram starts a run of 16 drops (a queue that
/// overflows): the fit stays near independent (mean burst 1.7), the threshold stays binomial,
/// and the overflows are signalled as often as without the mechanism. (W 32 and no repair
/// budget: this harness's TCP sends one segment a millisecond whatever its ACKs say, so the
/// product's W 12 would stall at every run of 16 and the test would measure that instead.)
#[test]
fn an_overflow_on_a_random_loss_path_is_still_a_signal() {
    let overflow = |seed: u64| {
        let (mut rng, mut sent) = (TestRng(seed), 0u64);
        move |_| {
            sent += 1;
            sent % 500 < 16 || rng.chance(0.05)
        }
    };
    let wide = |burst_signal| {
        let mut c = config(burst_signal);
        c.policies.window = 32;
        c.policies.repair_budget = Switch::Off;
        c
    };
    let on = one_flow_with(wide(BurstSignal::On), 1, &mut overflow(7));
    let off = one_flow_with(wide(BurstSignal::Off), 1, &mut overflow(7));
    eprintln!(
        "signals on {} off {}",
        on.flow.congestion_signals, off.flow.congestion_signals
    );
    assert!(
        off.flow.congestion_signals >= 5,
        "{}",
        off.flow.congestion_signals
    );
    assert_eq!(on.flow.congestion_signals, off.flow.congestion_signals);
}

/// `paused`: the same path as the first test. A sender that writes 40 segments every 40 ms
/// (a stream's frames: it pauses between them) gets the fitted threshold, a steady one the
/// binomial threshold, so its bursts are signalled as with the mechanism off.
#[test]
fn only_an_application_limited_flow_takes_the_fitted_threshold() {
    let seed = 0x5eed_0b17;
    let run = |burst_signal, frame| {
        let o = one_flow_with(config(burst_signal), frame, &mut gilbert(0.1, 8.0, seed));
        assert_eq!(*o.acks.last().unwrap(), ISN + SEGMENTS * 1000);
        o.flow.congestion_signals
    };
    let (framed_paused, framed_off) = (run(BurstSignal::Paused, 40), run(BurstSignal::Off, 40));
    let (steady_paused, steady_off) = (run(BurstSignal::Paused, 1), run(BurstSignal::Off, 1));
    eprintln!(
        "framed: paused {framed_paused} off {framed_off} | steady: paused {steady_paused} off {steady_off}"
    );
    assert!(framed_off >= 5, "{framed_off}");
    // A tenth of the signals at most (1 of 29 with the adaptive margin 0.4·p̂, 2 with 0.1·p̂).
    assert!(
        framed_paused * 10 <= framed_off,
        "{framed_paused} {framed_off}"
    );
    assert!(steady_off >= 5, "{steady_off}");
    assert_eq!(steady_paused, steady_off);
}
