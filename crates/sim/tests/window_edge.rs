//! The local TCP at the edge of the window the gateway gave it: its tail repairs go only if
//! they cross the bottleneck within a pause gap (`sender/tail.rs`, `edge_allowance`). (The
//! window's bound by the coding buffer's packet slots: `tests/nc.rs`.)

use tcpnc_proto::settings::{
    CongestionControl, LossPosition, PathMode, PathOverrides, PolicyOverrides, Profile, Switch,
};
use tcpnc_sim::run_spec::RunSpec;
use tcpnc_sim::{SimOutcome, SimReport};

/// Ha & Tsuru's Fig. 5 path (1 Mbit/s, 20 ms each way, a 100-packet queue, 576-byte MTU,
/// 128 KiB buffers, smoltcp Reno), 10 % loss after the queue, the product's policies with
/// `tail_repair` as given: 1 MB.
fn fig5_path(tail_repair: Switch, seed: u64) -> RunSpec {
    RunSpec {
        mode: PathMode::Nc,
        profile: Profile::Default,
        cc: CongestionControl::Reno,
        path: PathOverrides {
            rate_mbit: Some(1.0),
            delay_ms: Some(20.0),
            loss: Some(0.1),
            loss_position: Some(LossPosition::AfterQueue),
            queue_packets: Some(100),
            ..PathOverrides::default()
        },
        bytes: 1_000_000,
        seed,
        mtu: 576,
        buffer_kib: 128,
        send_buffer_kib: None,
        ack_delay_ms: 10,
        max_sim_s: 600.0,
        policies: PolicyOverrides {
            tail_repair: Some(tail_repair),
            ..PolicyOverrides::default()
        },
    }
}

fn checked(r: SimReport) -> SimReport {
    assert_eq!(r.outcome, SimOutcome::Completed);
    assert!(r.integrity_ok);
    r
}

/// A bulk transfer held at the flight cap's edge on a slow path: the tail repair costs it
/// nothing. Before, each flight ended in a silence over the pause gap (12 ms, srtt/8) and drew
/// 4–5 repairs, which took 18–23 ms to cross the 1 Mbit/s link after it and held the
/// seen-ACK still as long, so the next flight paused too; a third of the datagrams were
/// repairs and the goodput fell to 0.52–0.56 Mbit/s against 0.69–0.71 without the tail repair.
#[test]
fn the_tail_repair_leaves_a_window_limited_transfer_alone() {
    for seed in [1, 2] {
        let on = checked(fig5_path(Switch::On, seed).run().unwrap());
        let off = checked(fig5_path(Switch::Off, seed).run().unwrap());
        let sent = |r: &SimReport| r.client_box["data_sent"];
        assert!(
            on.goodput_mbit >= 0.95 * off.goodput_mbit,
            "seed {seed}: {} Mbit/s with the tail repair, {} without",
            on.goodput_mbit,
            off.goodput_mbit
        );
        assert!(
            sent(&on) * 100 <= sent(&off) * 105,
            "seed {seed}: {} datagrams with the tail repair, {} without",
            sent(&on),
            sent(&off)
        );
    }
}
