//! The streaming workload in the simulator (issue 12's CI target): a short 4 Mbit/s, 30
//! frames/s stream over 20 Mbit/s, 20 ms one way and 10 % random loss, plain TCP (smoltcp
//! Reno, no SACK), nc with a fixed W = 16 and nc with VBNC (at most 16), same seeds.
//!
//! Asserted: every frame arrives intact with both nc schemes (and every frame plain TCP
//! delivers in the time limit is intact); both nc schemes' 95th-percentile frame latency is far
//! below plain TCP's (a frame plain TCP never delivered counts as later than any); and VBNC's
//! p95 is no worse than the fixed window's (within 1 ms).
//!
//! Not asserted, because it does not hold: the "VBNC's p95 below fixed-window nc's".
//! tcpnc's sliding-window code never waits to fill a block, and a fixed W already spans only
//! the packets in flight, so the two give the same latency here to within microseconds
//! (docs/streaming.md, docs/engine.md "Variable coding window"). The VBNC bound is checked to
//! bite: with the window stuck at 1 (growth rule disabled) its p95 rises above the fixed one's.

use std::time::Duration;

use tcpnc_proto::settings::{
    CongestionControl, PathMode, PathOverrides, PolicyOverrides, Profile, Switch,
};
use tcpnc_sim::run_spec::RunSpec;
use tcpnc_sim::stream_run::{SchemeResult, run_stream};
use tcpnc_stream::{Preset, TraceModel};

fn spec(seed: u64) -> RunSpec {
    RunSpec {
        mode: PathMode::Nc,
        profile: Profile::Simulator,
        cc: CongestionControl::Reno,
        path: PathOverrides {
            rate_mbit: Some(20.0),
            delay_ms: Some(20.0),
            loss: Some(0.10),
            ..PathOverrides::default()
        },
        bytes: 1,
        seed,
        mtu: 1500,
        buffer_kib: 1024,
        send_buffer_kib: None,
        ack_delay_ms: 10,
        max_sim_s: 120.0,
        policies: PolicyOverrides::default(),
    }
}

fn run(seed: u64) -> Vec<SchemeResult> {
    run_with(spec(seed))
}

fn run_with(spec: RunSpec) -> Vec<SchemeResult> {
    let trace = TraceModel::preset(Preset::Target, 10.0)
        .generate(spec.seed)
        .unwrap();
    run_stream(&spec, &trace, Duration::from_secs(1)).unwrap()
}

/// The 95th-percentile latency in ms counting undelivered frames as infinitely late.
fn p95_all(r: &SchemeResult) -> f64 {
    let mut l: Vec<f64> = r
        .records
        .iter()
        .map(|f| f.latency_ms().unwrap_or(f64::INFINITY))
        .collect();
    l.sort_by(f64::total_cmp);
    l[(l.len() * 95).div_ceil(100) - 1]
}

#[test]
fn nc_tail_latency_at_ten_percent_loss_vbnc_no_worse_than_fixed() {
    for seed in [1, 2] {
        let rs = run(seed);
        let [plain, fixed, vbnc] = [&rs[0], &rs[1], &rs[2]];
        assert_eq!(
            [&*plain.scheme, &*fixed.scheme, &*vbnc.scheme],
            ["plain-reno", "nc-fixed", "nc-vbnc"]
        );
        for r in &rs {
            eprintln!(
                "seed {seed} {:<11} p95 {:.1} ms (all frames {:.1}) delivered {}/{}",
                r.scheme,
                r.summary.latency_p95_ms,
                p95_all(r),
                r.summary.delivered,
                r.summary.frames
            );
            assert_eq!(r.summary.intact, r.summary.delivered, "{}", r.scheme);
        }
        for nc in [fixed, vbnc] {
            assert!(nc.report.integrity_ok, "{}", nc.scheme);
            assert_eq!(nc.summary.intact, nc.summary.frames, "{}", nc.scheme);
            assert!(p95_all(nc) * 10.0 < p95_all(plain), "{}", nc.scheme);
        }
        assert!(
            p95_all(vbnc) <= p95_all(fixed) + 1.0,
            "seed {seed}: vbnc {} fixed {}",
            p95_all(vbnc),
            p95_all(fixed)
        );
    }
}

/// The tail repair (docs/engine.md, deficit repair part 7): a frame whose last combinations
/// are lost is repaired at the pause after it instead of by the frames that follow, so the
/// tail of the latency distribution shrinks (p95 93–98 ms without, 47–55 ms with, in 20 s
/// runs at 5–10 %). Asserted with a margin: p95 at most 3/4 of the one without, every frame
/// intact either way.
#[test]
fn tail_repair_shortens_the_latency_tail() {
    for seed in [1, 2] {
        let with = run(seed);
        let without = run_with(RunSpec {
            policies: PolicyOverrides {
                tail_repair: Some(Switch::Off),
                ..PolicyOverrides::default()
            },
            ..spec(seed)
        });
        let (on, off) = (&with[1], &without[1]);
        assert_eq!((&*on.scheme, &*off.scheme), ("nc-fixed", "nc-fixed"));
        eprintln!(
            "seed {seed}: p95 {:.1} ms with the tail repair, {:.1} without",
            p95_all(on),
            p95_all(off)
        );
        for r in [on, off] {
            assert_eq!(r.summary.intact, r.summary.frames);
        }
        assert!(p95_all(on) < 0.75 * p95_all(off), "seed {seed}");
    }
}
