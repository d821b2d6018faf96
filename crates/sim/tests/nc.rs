//! End-to-end simulations with TCP/NC engines on both sides of the link: the headline
//! property (nc delivers several times the goodput of plain TCP at 10 % loss), integrity and
//! determinism.

use std::time::Duration;

use tcpnc_link::LossModel;
use tcpnc_proto::Policies;
use tcpnc_proto::{EngineConfig, RedundancyPolicy};
use tcpnc_sim::{CongestionControl, NcBox, SimConfig, SimOutcome, SimReport, run, run_with_boxes};

fn path(bytes: u64, loss: f64, cc: CongestionControl) -> SimConfig {
    SimConfig::new()
        .with_bytes(bytes)
        .with_seed(7)
        .with_cc(cc)
        .with_rate_bps(10_000_000)
        .with_delay(Duration::from_millis(20))
        .with_forward_loss(LossModel::bernoulli(loss))
        .with_max_sim_time(Duration::from_secs(3600))
}

fn engine(window: usize, redundancy: f64) -> EngineConfig {
    EngineConfig {
        policies: Policies {
            window: u16::try_from(window).unwrap(),
            redundancy: RedundancyPolicy::Fixed(redundancy),
            ..Policies::engine_test()
        },
        tunnel_mtu: 1500 - tcpnc_sim::nc_box::OUTER_HEADER_LEN,
        ..EngineConfig::default()
    }
}

fn run_nc(cfg: &SimConfig, engine_cfg: &EngineConfig) -> SimReport {
    let mut client = NcBox::new(engine_cfg.clone(), 1).unwrap();
    let mut server = NcBox::new(engine_cfg.clone(), 2).unwrap();
    run_with_boxes(cfg, &mut client, &mut server).unwrap()
}

#[test]
fn nc_beats_plain_by_a_wide_margin_at_ten_percent_loss() {
    for cc in [CongestionControl::Reno, CongestionControl::Cubic] {
        let cfg = path(2_000_000, 0.10, cc);
        let plain = run(&cfg).unwrap();
        let nc = run_nc(&cfg, &engine(16, 1.2));
        assert_eq!(plain.outcome, SimOutcome::Completed, "{cc:?}");
        assert_eq!(nc.outcome, SimOutcome::Completed, "{cc:?}");
        assert!(plain.integrity_ok && nc.integrity_ok, "{cc:?}");
        assert_eq!(nc.bytes_delivered, 2_000_000);
        assert!(
            nc.goodput_mbit > 5.0 * plain.goodput_mbit,
            "{cc:?}: nc {} Mbit/s vs plain {} Mbit/s",
            nc.goodput_mbit,
            plain.goodput_mbit
        );
        // The code masked the loss: TCP saw (almost) none of the ~10 % erasures.
        let lost = nc.forward.dropped_loss;
        assert!(lost > 100, "{cc:?}: only {lost} erasures");
        assert!(
            nc.tcp.retransmissions * 10 < lost,
            "{cc:?}: {} TCP retransmissions for {lost} erasures",
            nc.tcp.retransmissions
        );
        // The engines did code: redundant combinations went out, innovative ones came in.
        assert!(nc.client_box["redundant_sent"] > 0);
        assert!(nc.server_box["innovative_received"] > 0);
        assert_eq!(nc.server_box["decode_errors"], 0);
        // The MSS clamp keeps every coded datagram within the tunnel MTU.
        assert_eq!(nc.client_box["oversize_datagrams"], 0);
        assert_eq!(nc.server_box["oversize_datagrams"], 0);
    }
}

#[test]
fn nc_is_deterministic() {
    let cfg = path(500_000, 0.05, CongestionControl::Reno);
    let a = run_nc(&cfg, &engine(8, 1.15));
    let b = run_nc(&cfg, &engine(8, 1.15));
    assert_eq!(a, b);
    assert!(a.integrity_ok);
}

#[test]
fn nc_without_loss_stays_close_to_plain() {
    let cfg = path(1_000_000, 0.0, CongestionControl::Reno);
    let plain = run(&cfg).unwrap();
    let nc = run_nc(&cfg, &engine(4, 1.0));
    assert!(plain.integrity_ok && nc.integrity_ok);
    // Header overhead and the coding buffer's window clamp cost a little, not a lot.
    assert!(
        nc.goodput_mbit > 0.8 * plain.goodput_mbit,
        "nc {} vs plain {}",
        nc.goodput_mbit,
        plain.goodput_mbit
    );
}

#[test]
fn nc_survives_burst_loss_and_reverse_loss() {
    let mut cfg = path(500_000, 0.0, CongestionControl::Cubic);
    cfg = cfg
        .with_forward_loss(LossModel::gilbert_elliott_from_mean(0.05, 4.0).unwrap())
        .with_reverse_loss(LossModel::bernoulli(0.05));
    let nc = run_nc(&cfg, &engine(16, 1.25));
    assert_eq!(nc.outcome, SimOutcome::Completed);
    assert!(nc.integrity_ok);
}
