//! Reduced versions of the Karafillis and Mitsuzumi comparisons (docs/results.md): a few
//! points on the simulator, asserting the direction of each published result, not timings.

use tcpnc_proto::settings::{
    AckPolicy, CongestionControl, PathMode, PathOverrides, PolicyOverrides, Profile,
    RedundancyPolicy, RepairPolicy,
};
use tcpnc_sim::SimOutcome;
use tcpnc_sim::run_spec::RunSpec;
use tcpnc_sim::series::SERIES_INTERVAL;

/// Karafillis §III (Figs. 2–3): 5 Mbit/s, RTT 50 ms, 1000-byte packets, 100-packet queue,
/// `loss`, `bytes` of transfer. The paper's "receive window of 100 packets" is ns-2's TCP
/// `window_`, a bound on the sender's flight: here the sending TCP's 100 KiB send buffer, with
/// a large receive buffer so that undecoded data does not close TCP/NC's window (the plan
/// `experiments/karafillis-fig2-3-decoding.toml`, docs/results.md).
fn karafillis(repair: RepairPolicy, loss: f64, seed: u64, bytes: u64) -> RunSpec {
    RunSpec {
        mode: PathMode::Nc,
        profile: Profile::KarafillisPb,
        cc: CongestionControl::Reno,
        path: PathOverrides {
            rate_mbit: Some(5.0),
            delay_ms: Some(25.0),
            loss: Some(loss),
            queue_packets: Some(100),
            ..PathOverrides::default()
        },
        bytes,
        seed,
        mtu: 1040,
        buffer_kib: 4096,
        send_buffer_kib: Some(100),
        ack_delay_ms: 10,
        max_sim_s: 600.0,
        policies: PolicyOverrides {
            repair: Some(repair),
            ..PolicyOverrides::default()
        },
    }
}

#[test]
fn pb_lowers_the_sd_of_the_decoding_throughput() {
    // Karafillis §III: PB's decoding throughput (decoded packets per 0.1 s) has a smaller
    // standard deviation than NC's on the same seed (3 MB, 5 % loss: Fig. 3's setting). With
    // `repair = off` on both sides the two runs are the same run and the assertion fails.
    let sd = |repair, seed| {
        let spec = karafillis(repair, 0.05, seed, 3_000_000);
        let r = spec.run_with_series(Some(SERIES_INTERVAL)).unwrap();
        assert_eq!(r.outcome, SimOutcome::Completed);
        assert!(r.integrity_ok);
        r.series.as_ref().unwrap().decoding_mean_sd().1
    };
    let (mut nc_sum, mut pb_sum) = (0.0, 0.0);
    for seed in [1, 2] {
        let (nc, pb) = (sd(RepairPolicy::Off, seed), sd(RepairPolicy::EotPb, seed));
        assert!(pb < nc, "seed {seed}: decoding sd PB {pb}, NC {nc}");
        nc_sum += nc;
        pb_sum += pb;
    }
    assert!(pb_sum < 0.9 * nc_sum, "PB {pb_sum}, NC {nc_sum}");
}

/// Mitsuzumi §IV's setting on the simulator: 10 Mbit/s, 10 ms, 5 % loss, MSS 1000 (MTU
/// 1040), smoltcp Reno, 1 MB, the `mitsuzumi` profile.
fn mitsuzumi_spec(mode: PathMode) -> RunSpec {
    RunSpec {
        mode,
        profile: Profile::Mitsuzumi,
        cc: CongestionControl::Reno,
        path: PathOverrides {
            rate_mbit: Some(10.0),
            delay_ms: Some(10.0),
            loss: Some(0.05),
            ..PathOverrides::default()
        },
        bytes: 1_000_000,
        seed: 1,
        mtu: 1040,
        buffer_kib: 1024,
        send_buffer_kib: None,
        ack_delay_ms: 10,
        max_sim_s: 600.0,
        policies: PolicyOverrides::default(),
    }
}

#[test]
fn mitsuzumi_rule_gives_fewer_duplicate_acks_at_high_redundancy() {
    // Mitsuzumi §IV: W 5, MSS 1000, NewReno-like, 5 % loss, R = 1.2.
    let run = |ack_rule| {
        let spec = RunSpec {
            policies: PolicyOverrides {
                ack_rule: Some(ack_rule),
                redundancy: Some(RedundancyPolicy::Fixed(1.2)),
                ..PolicyOverrides::default()
            },
            ..mitsuzumi_spec(PathMode::Nc)
        };
        let r = spec.run().unwrap();
        assert!(r.integrity_ok);
        r.tcp.dup_acks_at_sender
    };
    let every = run(AckPolicy::EveryCombination);
    let mitsuzumi = run(AckPolicy::SuppressUselessRedundant);
    assert!(
        mitsuzumi * 10 < every,
        "mitsuzumi {mitsuzumi}, every {every}"
    );
}

#[test]
fn coding_spares_the_fast_retransmits_of_plain_tcp() {
    // Mitsuzumi Fig. 11 at 5 % loss: TCP fast-retransmits over and over, TCP/NC with R = x +
    // 0.05 and the Mitsuzumi rule almost never (smoltcp Reno; 1 MB instead of 9.6 MB).
    let run = |mode| {
        let base = mitsuzumi_spec(mode);
        let spec = RunSpec {
            path: PathOverrides {
                queue_packets: Some(100),
                ..base.path
            },
            seed: 3,
            buffer_kib: 64,
            send_buffer_kib: None,
            policies: PolicyOverrides {
                ack_rule: Some(AckPolicy::SuppressUselessRedundant),
                redundancy: Some(RedundancyPolicy::Fixed(1.1026)),
                ..PolicyOverrides::default()
            },
            ..base
        };
        let r = spec.run().unwrap();
        assert!(r.integrity_ok, "{mode:?}");
        assert!(r.tcp.fast_retransmits <= r.tcp.retransmissions);
        r.tcp.fast_retransmits
    };
    let plain = run(PathMode::Plain);
    let nc = run(PathMode::Nc);
    assert!(plain >= 10, "plain TCP fast retransmits {plain}");
    assert!(nc * 10 < plain, "nc {nc}, plain {plain}");
}
