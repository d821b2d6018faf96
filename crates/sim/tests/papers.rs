//! Reduced versions of the Karafillis and Mitsuzumi comparisons (docs/results.md): a few
//! points on the simulator, asserting the direction of each published result, not timings.

use tcpnc_proto::settings::{
    AckPolicy, CongestionControl, LossPosition, PathMode, PathOverrides, PolicyOverrides, Profile,
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

#[test]
fn eot_shortens_sub_megabyte_transfers() {
    // Karafillis §III, Table I: 500 kB, one-way delay 50 ms, 5 % loss before a 50-packet
    // queue, R_a (S 90 %) = 1.08. EOT's burst of N_lp whole-buffer repairs at the FIN saves
    // the end-of-file wait for TCP's timeout when N_lp is not 0 (docs/results.md). With
    // `repair = off` on both sides the runs are the same and the assertion fails.
    let time = |repair, seed| {
        let mut spec = karafillis(repair, 0.05, seed, 500_000);
        spec.profile = Profile::KarafillisEot;
        spec.path.delay_ms = Some(50.0);
        spec.path.queue_packets = Some(50);
        spec.path.loss_position = Some(LossPosition::BeforeQueue);
        spec.policies.redundancy = Some(RedundancyPolicy::Fixed(1.08));
        let r = spec.run().unwrap();
        assert_eq!(r.outcome, SimOutcome::Completed);
        assert!(r.integrity_ok);
        r.completion_s
    };
    let (mut nc_sum, mut eot_sum, mut faster) = (0.0, 0.0, 0);
    for seed in 1..=10 {
        let (nc, eot) = (time(RepairPolicy::Off, seed), time(RepairPolicy::Eot, seed));
        nc_sum += nc;
        eot_sum += eot;
        faster += usize::from(eot < nc);
    }
    assert!(eot_sum < 0.9 * nc_sum, "EOT {eot_sum} s, NC {nc_sum} s");
    assert!(faster >= 3, "EOT faster in {faster} of 10 seeds");
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
fn useless_redundant_acks_in_a_row_cause_fast_retransmits_under_the_original_rule() {
    // Mitsuzumi §III-A, Fig. 3 (an error-free channel): duplicate ACKs of useless redundant
    // combinations make the source TCP fast-retransmit under the original rule, not under
    // Mitsuzumi's. smoltcp (RFC 5681) counts duplicates in a row, and tcpnc sends an arrival's
    // redundant combinations right after its first one, so the effect needs three useless
    // combinations per arrival: R = 4 (at R 1.05-1.2, Figs. 7-10's range, every duplicate sits
    // between two advancing ACKs and none is ever the third; docs/results.md).
    let run = |ack_rule| {
        let spec = RunSpec {
            path: PathOverrides {
                loss: Some(0.0),
                queue_packets: Some(100),
                ..mitsuzumi_spec(PathMode::Nc).path
            },
            buffer_kib: 64,
            policies: PolicyOverrides {
                ack_rule: Some(ack_rule),
                redundancy: Some(RedundancyPolicy::Fixed(4.0)),
                ..PolicyOverrides::default()
            },
            ..mitsuzumi_spec(PathMode::Nc)
        };
        let r = spec.run().unwrap();
        assert!(r.integrity_ok, "{ack_rule:?}");
        (r.tcp.fast_retransmits, r.tcp.dup_ack_runs_at_sender)
    };
    // Goodput is not asserted: over 1 MB it goes either way with the seed (slow start
    // dominates); docs/results.md measures it over 9.6 MB.
    let (every_fr, every_runs) = run(AckPolicy::EveryCombination);
    let (m_fr, m_runs) = run(AckPolicy::SuppressUselessRedundant);
    assert!(
        every_runs >= 100,
        "runs of 3 duplicates, every: {every_runs}"
    );
    assert!(every_fr >= 100, "fast retransmits, every: {every_fr}");
    assert!(
        m_fr * 10 < every_fr,
        "fast retransmits: mitsuzumi {m_fr}, every {every_fr}"
    );
    assert!(
        m_runs * 10 < every_runs,
        "runs: mitsuzumi {m_runs}, every {every_runs}"
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
