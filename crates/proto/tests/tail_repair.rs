//! The tail repair (`tail_repair.rs`, `tail_repair` switch): when the local TCP pauses after a
//! burst — here a video frame — the sender adds repairs sized from the loss estimate, so a
//! frame whose last combinations were lost decodes within the pause instead of waiting for the
//! next frame or a round trip. And what follows a pause when a burst took the tail repairs too
//! (`tail_recovery`, `sender/tail.rs`): the tail probe and the deficit repair while paused.
//! And the tail repair sized for the path's loss bursts (`tail_burst`).

mod common;

use common::TestRng;
use common::frames::{Emitted, FRAMES, Outcome, frame_len, run_frames};
use tcpnc_proto::settings::Switch;
use tcpnc_proto::{AckPolicy, EngineConfig, Policies, RedundancyPolicy};

/// A frame every 33 ms (30 frames/s).
const FRAME_MS: u64 = 33;
/// Frames before this one lose 10 % of their DATA frames (the loss estimate learns a rate).
const LEARN: u64 = 20;
/// The frame whose last two combinations are dropped.
const PROBE_FRAME: u64 = 25;

fn config(tail: Switch) -> EngineConfig {
    recovery_config(tail, Switch::On)
}

fn recovery_config(tail: Switch, recovery: Switch) -> EngineConfig {
    EngineConfig {
        policies: Policies {
            window: 8,
            redundancy: RedundancyPolicy::Fixed(1.25),
            ack_rule: AckPolicy::InnovativeOnly,
            tail_repair: tail,
            tail_recovery: recovery,
            ..Policies::engine_test()
        },
        ..EngineConfig::default()
    }
}

/// With `lossy`, frames before [`LEARN`] lose 10 % of R's combinations and [`PROBE_FRAME`]
/// its last two; without, nothing is lost. Repairs are never lost.
fn run(tail: Switch, lossy: bool) -> Outcome {
    let mut rng = TestRng(0x7a11);
    run_frames(config(tail), FRAME_MS, |e: &Emitted| {
        lossy
            && !e.repair
            && ((e.frame < LEARN && rng.chance(0.1))
                || (e.frame == PROBE_FRAME && e.now.is_multiple_of(FRAME_MS) && e.nth + 2 > e.of))
    })
}

#[test]
fn a_frames_lost_tail_is_repaired_within_the_pause() {
    let on = run(Switch::On, true);
    let off = run(Switch::Off, true);
    for o in [&on, &off] {
        assert_eq!(
            o.delivered,
            FRAMES as u32 * frame_len(&config(Switch::On)),
            "every frame, in order"
        );
    }
    let probe = PROBE_FRAME as usize;
    let (with, without) = (on.latency[probe].unwrap(), off.latency[probe].unwrap());
    // With the tail repair the frame is complete one data delay after the pause (a few ms
    // after the frame), before the next frame is even sent; without it the sink learns of the
    // missing packets only from the next frame's combinations.
    eprintln!("latency of the frame: {with} ms with, {without} ms without");
    assert!(with < FRAME_MS, "with the tail repair: {with} ms");
    assert!(without >= FRAME_MS, "without: {without} ms");
    assert!(on.flow.tail_repairs > 0);
    assert_eq!(off.flow.tail_repairs, 0);
}

#[test]
fn without_loss_a_pause_sends_nothing() {
    let on = run(Switch::On, false);
    let off = run(Switch::Off, false);
    assert_eq!(on.delivered, FRAMES as u32 * frame_len(&config(Switch::On)));
    // q = 1: every pause finds the burst decodable as it is.
    assert_eq!(on.flow.tail_repairs, 0);
    assert_eq!(on.flow.data_sent, off.flow.data_sent);
    assert_eq!(on.latency, off.latency);
}

/// Frames slower than the round trip (60 ms), as a request/response or a low-rate stream: the
/// next frame cannot rescue the previous one within a frame interval.
const SLOW_FRAME_MS: u64 = 120;

/// `tail_recovery` on or off; the frames before [`LEARN`] lose 10 % of R's combinations,
/// [`PROBE_FRAME`] loses the combinations `lost` names (by position among its 10) and every
/// repair sent within 30 ms of it (its tail repairs: a burst that outlasts the frame).
fn run_slow(recovery: Switch, lost: &[usize]) -> Outcome {
    let mut rng = TestRng(0x7a11);
    let start = PROBE_FRAME * SLOW_FRAME_MS;
    run_frames(
        recovery_config(Switch::On, recovery),
        SLOW_FRAME_MS,
        |e: &Emitted| {
            if e.frame < LEARN {
                return !e.repair && rng.chance(0.1);
            }
            let burst = (start..start + 30).contains(&e.now);
            burst && (e.repair || (e.now == start && lost.contains(&e.nth)))
        },
    )
}

fn slow_latency(lost: &[usize]) -> (u64, u64, Outcome) {
    let on = run_slow(Switch::On, lost);
    let off = run_slow(Switch::Off, lost);
    let len = frame_len(&recovery_config(Switch::On, Switch::On));
    for o in [&on, &off] {
        assert_eq!(o.delivered, FRAMES as u32 * len, "every frame, in order");
    }
    let probe = PROBE_FRAME as usize;
    let (with, without) = (on.latency[probe].unwrap(), off.latency[probe].unwrap());
    eprintln!("latency of the frame: {with} ms with tail_recovery, {without} ms without");
    (with, without, on)
}

#[test]
fn a_tail_lost_with_its_repairs_is_probed_a_round_trip_later() {
    // The frame's last two combinations (its last two new packets) and its tail repairs are
    // lost: the sink never hears of those packets, its NC-ACKs report nothing missing. The
    // tail probe repairs them one round trip after the pause (the frame complete about
    // 100 ms after it was sent); without it they wait for the next frame's combinations.
    let (with, without, on) = slow_latency(&[9, 10]);
    assert!(with < SLOW_FRAME_MS, "with the tail probe: {with} ms");
    assert!(without > SLOW_FRAME_MS, "without: {without} ms");
    assert!(on.flow.tail_probes > 0);
}

#[test]
fn a_deficit_while_paused_is_repaired_beyond_the_mean() {
    // Five combinations in the middle of the frame and its tail repairs are lost: the NC-ACKs
    // of the frame's last combinations report three or four missing DoFs while the local TCP is
    // paused. The deficit repair alone counts the tail repairs in flight at the mean delivery
    // rate and sends too few, so the frame waits another round trip; sized at 0.99 the repairs
    // complete it in one.
    let (with, without, on) = slow_latency(&[3, 4, 5, 6, 7]);
    assert!(
        with + 40 <= without,
        "with: {with} ms, without: {without} ms"
    );
    assert!(on.flow.pause_repairs > 0);
    assert_eq!(
        on.flow.tail_probes, 0,
        "the frame's last combination was echoed"
    );
}

/// `tail_burst` on or off, the rest as [`config`]'s. Frames before [`LEARN`] lose a burst of
/// three of R's combinations every other frame (the fitted Gilbert model: bursts of 3, 15 %);
/// [`PROBE_FRAME`] loses its last two combinations and the first four repairs after them (one
/// burst of six). Nothing else is lost.
fn run_burst(bursts: Switch) -> Outcome {
    let mut cfg = config(Switch::On);
    cfg.policies.tail_burst = bursts;
    let probe_start = PROBE_FRAME * FRAME_MS;
    let mut repairs_to_drop = 4;
    run_frames(cfg, FRAME_MS, |e: &Emitted| {
        let frame_start = e.now.is_multiple_of(FRAME_MS);
        if e.frame < LEARN {
            return !e.repair && frame_start && e.frame % 2 == 1 && (4..=6).contains(&e.nth);
        }
        if e.frame != PROBE_FRAME {
            return false;
        }
        if !e.repair {
            return e.now == probe_start && e.nth + 2 > e.of;
        }
        let drop = e.now > probe_start && repairs_to_drop > 0;
        repairs_to_drop -= u32::from(drop);
        drop
    })
}

#[test]
fn a_burst_that_takes_a_frames_tail_and_its_first_repairs_is_covered() {
    let on = run_burst(Switch::On);
    let off = run_burst(Switch::Off);
    let len = frame_len(&config(Switch::On));
    for o in [&on, &off] {
        assert_eq!(o.delivered, FRAMES as u32 * len, "every frame, in order");
    }
    let probe = PROBE_FRAME as usize;
    let (with, without) = (on.latency[probe].unwrap(), off.latency[probe].unwrap());
    eprintln!(
        "latency of the frame: {with} ms with tail_burst, {without} ms without; tail repairs {} / {}",
        on.flow.tail_repairs, off.flow.tail_repairs
    );
    // Sized for the mean loss rate, the tail repairs are too few to outlast a burst that takes
    // the frame's last combinations: the frame waits for the next frame's combinations or the
    // tail probe. Sized for the fitted bursts, enough survive to complete it within the pause.
    assert!(with < FRAME_MS, "with tail_burst: {with} ms");
    assert!(without >= FRAME_MS, "without: {without} ms");
    assert!(on.flow.tail_repairs > off.flow.tail_repairs);
    assert!(on.flow.burst_repairs > 0);
    assert_eq!(off.flow.burst_repairs, 0);
}
