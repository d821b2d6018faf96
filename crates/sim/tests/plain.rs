//! End-to-end simulations in plain mode (small transfers to keep test time low).

use std::time::Duration;

use tcpnc_link::{LossModel, LossPosition, QueueLimit};
use tcpnc_proto::testing::Hold;
use tcpnc_sim::{CongestionControl, PassThrough, SimConfig, SimOutcome, run, run_with_boxes};

fn path(bytes: u64, delay_ms: u64) -> SimConfig {
    SimConfig::new()
        .with_bytes(bytes)
        .with_rate_bps(10_000_000)
        .with_delay(Duration::from_millis(delay_ms))
}

#[test]
fn zero_loss_delivers_near_link_rate() {
    let r = run(&path(2_000_000, 10)).unwrap();
    assert_eq!(r.outcome, SimOutcome::Completed);
    assert!(r.integrity_ok);
    assert_eq!(r.bytes_delivered, 2_000_000);
    assert_eq!(r.sha256_sent, r.sha256_received);
    assert!(r.goodput_mbit > 5.0, "goodput {}", r.goodput_mbit);
    assert!(
        r.goodput_mbit < 10.0,
        "goodput {} above link rate",
        r.goodput_mbit
    );
    assert_eq!(r.forward.dropped_loss, 0);
    // Every data segment crossed the link: at least bytes / MSS of them.
    assert!(r.tcp.data_segments >= 2_000_000 / 1460);
    assert_eq!(r.client_box["local_in"], r.forward.sent);
}

#[test]
fn five_percent_loss_completes_much_slower() {
    let clean = run(&path(300_000, 10)).unwrap();
    let lossy = run(&path(300_000, 10).with_forward_loss(LossModel::bernoulli(0.05))).unwrap();
    assert_eq!(lossy.outcome, SimOutcome::Completed);
    assert!(lossy.integrity_ok);
    assert!(lossy.forward.dropped_loss > 0);
    assert!(lossy.tcp.retransmissions > 0);
    assert!(
        lossy.goodput_mbit < 0.5 * clean.goodput_mbit,
        "lossy {} vs clean {}",
        lossy.goodput_mbit,
        clean.goodput_mbit
    );
}

#[test]
fn same_seed_same_report_and_seed_matters() {
    let cfg = path(200_000, 5)
        .with_forward_loss(LossModel::bernoulli(0.03))
        .with_reverse_loss(LossModel::bernoulli(0.01))
        .with_seed(42);
    let a = run(&cfg).unwrap();
    let b = run(&cfg).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.goodput_mbit.to_bits(), b.goodput_mbit.to_bits());
    let c = run(&cfg.clone().with_seed(43)).unwrap();
    assert_ne!(a, c);
    assert!(c.integrity_ok && a.integrity_ok);
}

#[test]
fn unfinishable_transfer_hits_the_time_limit() {
    let cfg = path(100_000, 5)
        .with_forward_loss(LossModel::bernoulli(1.0))
        .with_max_sim_time(Duration::from_secs(5));
    let r = run(&cfg).unwrap();
    assert_eq!(r.outcome, SimOutcome::TimeLimit);
    assert!(!r.integrity_ok);
    assert_eq!(r.completion, Duration::from_secs(5));
    assert_eq!(r.bytes_delivered, 0);
    assert_eq!(r.goodput_mbit, 0.0);
}

#[test]
fn bursty_and_reverse_loss_with_cubic_keep_integrity() {
    let cfg = path(300_000, 5)
        .with_cc(CongestionControl::Cubic)
        .with_forward_loss(LossModel::gilbert_elliott_from_mean(0.02, 3.0).unwrap())
        .with_reverse_loss(LossModel::bernoulli(0.02));
    let r = run(&cfg).unwrap();
    assert_eq!(r.outcome, SimOutcome::Completed);
    assert!(r.integrity_ok);
    assert!(r.reverse.dropped_loss > 0);
}

#[test]
fn shallow_queue_with_loss_before_it_keeps_integrity() {
    let cfg = path(200_000, 10)
        .with_queue(QueueLimit::Packets(5))
        .with_loss_position(LossPosition::BeforeQueue)
        .with_forward_loss(LossModel::bernoulli(0.01));
    let r = run(&cfg).unwrap();
    assert_eq!(r.outcome, SimOutcome::Completed);
    assert!(r.integrity_ok);
    assert!(r.forward.max_queue_packets <= 5);
}

#[test]
fn corrupted_packets_are_caught_by_tcp_checksums() {
    let mut cfg = path(200_000, 5);
    cfg.forward.corrupt_prob = 0.02;
    let r = run(&cfg).unwrap();
    assert_eq!(r.outcome, SimOutcome::Completed);
    assert!(r.forward.corrupted > 0);
    assert!(r.integrity_ok);
}

#[test]
fn box_timers_drive_the_loop() {
    let cfg = path(100_000, 5);
    // The testing fake holds every packet for a fixed time and releases it on its timer,
    // exercising the box timer path of the event loop.
    let mut hold = Hold::new(Duration::from_millis(30));
    let held = run_with_boxes(&cfg, &mut hold, &mut PassThrough::raw()).unwrap();
    let plain = run(&cfg).unwrap();
    assert_eq!(held.outcome, SimOutcome::Completed);
    assert!(held.integrity_ok);
    assert!(held.client_box["fired"] > 0);
    // 30 ms more one-way delay on every data segment: the handshake alone costs 30 ms more.
    assert!(held.completion >= plain.completion + Duration::from_millis(30));
}
