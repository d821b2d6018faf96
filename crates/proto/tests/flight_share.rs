//! The flight cap shared between flows (`flight_share`, docs/engine.md "Flight cap shared
//! between flows"): three local TCPs that each keep their whole window in flight and ignore
//! loss (as a loss-based TCP does when the DoF ACK masks a queue's drops) cross one
//! bottleneck. With the share, their flights together stay near what the path holds: after
//! the first two seconds the queue drops 0.5–13.2 % of the datagrams over ten seeds (6.1 % in
//! all), against 1 820–2 620 drops a seed with each flow allowed the path's whole cap (the
//! three then keep about three times what the path holds in flight). The test asserts under
//! 14 % on each seed and 7 % over all, and a half and a quarter of the whole-cap drops. The
//! spread between seeds is the toy's: greedy TCPs that ignore loss, in lockstep. (Stop 45's
//! one cap for all divides the largest of the flows' estimates, a larger total than each
//! flow's own estimate gave these flows: 0.4–9.9 % a seed, 3.6 % over all before it, when the
//! bounds were 12 % and 5 %. On the lab the queue's drops stayed level, docs/lab.md. With
//! tail repairs at every silence of a TCP at its window's edge, as before stop 44: 2.8–16.8 %
//! a seed, 8.3 % over all.)
//!
//! The path is that of `tests/flight_cap.rs` with twice its round trip (so that a third of the
//! cap is above the 10-segment least cap): a drop-tail queue of one BDP (40 datagrams) served
//! at one datagram per millisecond, then 20 ms one way and 2 % random loss; NC-ACKs back in
//! 20 ms.

mod common;

use common::bottleneck::Bottleneck;
use common::flows::{FIRST_PORT, FlowTcp, acknowledge_flows, client_data, take_flow_acks};
use common::{TestRng, ms};
use tcpnc_proto::Engine;
use tcpnc_proto::config::{EngineConfig, Switch};

const FLOWS: u16 = 3;
const SEG: u32 = 1_000;
const SEGMENTS: u32 = 2_000;
const DELAY_MS: u64 = 20;
const QUEUE: usize = 40;
const LOSS: f64 = 0.02;
/// Before the cap is known, the flows' first windows meet the queue uncapped (and their right
/// edges are held, not moved back, while the shares take over).
const WARM_UP_MS: u64 = 2_000;
/// Path seeds.
const SEEDS: u64 = 10;

/// What the transfer did.
struct Run {
    finished: usize,
    datagrams: u64,
    late_drops: u64,
    /// Segments each flow had acknowledged at each of the plan's two sample times.
    acked_at: [[u32; FLOWS as usize]; 2],
}

/// When each flow starts (ms), how many segments each sends, and when the flows' progress is
/// sampled (ms).
struct Plan {
    starts: [u64; FLOWS as usize],
    segments: u32,
    samples: [u64; 2],
    /// The engines' `redundancy_when_alone`.
    alone_rule: Switch,
}

/// The three flows start together.
const TOGETHER: Plan = Plan {
    starts: [0; FLOWS as usize],
    segments: SEGMENTS,
    samples: [0, 0],
    alone_rule: Switch::On,
};

fn engine(flight_share: Switch, seed: u64, alone_rule: Switch) -> Engine {
    let mut cfg = EngineConfig::default();
    cfg.policies.flight_share = flight_share;
    cfg.policies.redundancy_when_alone = alone_rule;
    Engine::new(cfg, seed).unwrap()
}

/// Runs the three transfers of `plan` for at most 30 s of virtual time.
fn transfer(flight_share: Switch, seed: u64, plan: &Plan) -> Run {
    let (mut a, mut b) = (
        engine(flight_share, seed, plan.alone_rule),
        engine(flight_share, seed ^ 0x5EED, plan.alone_rule),
    );
    let mut rng = TestRng(seed | 1);
    // Greedy local TCPs: every segment their last window allows.
    let mut tcps = [FlowTcp::START; FLOWS as usize];
    let mut link = Bottleneck::new(QUEUE, LOSS, DELAY_MS, WARM_UP_MS);
    let mut acked_at = [[0; FLOWS as usize]; 2];
    for now in 0..30_000u64 {
        link.deliver_to_a(&mut a, now);
        take_flow_acks(&mut a, SEG, &mut tcps);
        for (at, sample) in plan.samples.iter().zip(acked_at.iter_mut()) {
            if now == *at {
                *sample = tcps.map(|g| g.acked);
            }
        }
        if tcps.iter().all(|g| g.acked == plan.segments) {
            break;
        }
        for (i, g) in tcps.iter_mut().enumerate() {
            if now < plan.starts[i] {
                continue;
            }
            while g.next < plan.segments && (g.next - g.acked) * SEG < g.window {
                let port = FIRST_PORT + i as u16;
                a.handle_local(ms(now), &client_data(port, g.next, SEG));
                g.next += 1;
            }
        }
        link.carry_to_b(&mut a, &mut b, now, &mut rng);
        acknowledge_flows(&mut b, now);
        link.carry_back(&mut b, now);
    }
    Run {
        finished: tcps.iter().filter(|g| g.acked == plan.segments).count(),
        datagrams: link.datagrams,
        late_drops: link.late_drops,
        acked_at,
    }
}

#[test]
fn flows_sharing_the_cap_keep_within_what_the_path_holds() {
    let (mut drops, mut datagrams, mut whole_cap_drops) = (0, 0, 0);
    for seed in 1..=SEEDS {
        let on = transfer(Switch::On, seed, &TOGETHER);
        let off = transfer(Switch::Off, seed, &TOGETHER);
        eprintln!(
            "seed {seed}: shared: {} of {} finished, {} queue drops after 2 s of {} datagrams; \
             whole cap each: {} finished, {} of {}",
            on.finished,
            FLOWS,
            on.late_drops,
            on.datagrams,
            off.finished,
            off.late_drops,
            off.datagrams
        );
        assert_eq!(on.finished, usize::from(FLOWS), "seed {seed}");
        assert!(
            on.late_drops * 100 < 14 * on.datagrams,
            "seed {seed}: shared, the flows overfill the queue ({} of {})",
            on.late_drops,
            on.datagrams
        );
        assert!(
            off.late_drops > 2 * on.late_drops.max(10),
            "seed {seed}: with the whole cap each the queue drops {} (shared {})",
            off.late_drops,
            on.late_drops
        );
        drops += on.late_drops;
        datagrams += on.datagrams;
        whole_cap_drops += off.late_drops;
    }
    assert!(
        drops * 100 < 7 * datagrams,
        "shared, the flows overfill the queue: {drops} of {datagrams} over the seeds"
    );
    assert!(
        whole_cap_drops > 4 * drops,
        "with the whole cap each the queue drops {whole_cap_drops} over the seeds (shared {drops})"
    );
}

/// Jain's fairness index of `x`: 1 when all are equal, 1/n when one has everything.
fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    sum * sum / (x.len() as f64 * squares)
}

/// Flows that start one after another measure their round-trip floors behind the queue the
/// earlier ones built, and so estimate the path's cap higher: the last one's estimate is the
/// largest. Each flow's share is taken out of the path's one cap (the largest estimate), so
/// while all three run they progress alike; shared out of each flow's own estimate, "what the
/// others leave" went to the last flow (docs/lab.md, "Many flows, stop 45": one flow of eight
/// carried a quarter to a half of the lab's link).
///
/// With `redundancy_when_alone` off: with it, these greedy TCPs, which never cut their
/// windows, progress unequally in two seeds of three (Jain 0.91, one flow at half the others'
/// pace) once their pauses beside busy flows get no tail repairs (stop 55), which is not the
/// share's doing; on the lab 8 × 20 MB kept Jain 0.999–1.000 and 100 flows 0.87 (docs/engine.md,
/// known limits).
///
/// The toy is chaotic: one probe more or less early on (`probe_spread`, stop 56) moves the
/// flows' 4–8 s progress by a third in single seeds, with either setting of any rule. So the
/// test takes eight seeds (1, 3, …, 15; the harness's generator makes seeds 2k and 2k + 1
/// alike) and asserts their mean: 0.977 shared out of the largest estimate (0.892–1.000),
/// 0.896 out of each flow's own (0.651–0.999); 0.984 with `probe_spread` off.
#[test]
fn flows_that_measured_different_floors_share_alike() {
    let staggered = Plan {
        starts: [0, 1_000, 2_000],
        segments: 8_000,
        samples: [4_000, 8_000],
        alone_rule: Switch::Off,
    };
    let mut indices = Vec::new();
    for seed in (1..=15).step_by(2) {
        let run = transfer(Switch::On, seed, &staggered);
        let [at_start, at_end] = run.acked_at;
        let progress: Vec<f64> = (0..FLOWS as usize)
            .map(|i| f64::from(at_end[i] - at_start[i]))
            .collect();
        let index = jain(&progress);
        eprintln!(
            "seed {seed}: segments acknowledged from 4 s to 8 s {progress:?}, Jain {index:.3}"
        );
        assert!(
            progress.iter().all(|p| *p > 0.0),
            "seed {seed}: a flow stood still"
        );
        indices.push(index);
    }
    let mean = indices.iter().sum::<f64>() / indices.len() as f64;
    assert!(mean > 0.95, "the flows share unequally: Jain {indices:?}");
}
