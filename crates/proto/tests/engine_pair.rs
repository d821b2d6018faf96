//! Engine-pair property test: a scripted TCP-like sender and receiver talk through two engines
//! joined by a channel with random loss, duplication and reordering in both directions. The
//! receiver must get exactly the byte stream (and the FIN), every delivered segment passing its
//! end-to-end TCP checksum.

mod common;

use common::*;
use proptest::prelude::*;
use tcpnc_proto::Policies;
use tcpnc_proto::{CodingScheme, CoefficientTransport, EngineConfig, RedundancyPolicy};

fn config(w: usize, r: f64, systematic: bool, seeded: bool) -> EngineConfig {
    EngineConfig {
        policies: Policies {
            window: u16::try_from(w).unwrap(),
            redundancy: RedundancyPolicy::Fixed(r),
            scheme: if systematic {
                CodingScheme::Systematic
            } else {
                CodingScheme::Dense
            },
            coefficients: if seeded {
                CoefficientTransport::Seeded
            } else {
                CoefficientTransport::Explicit
            },
            ..Policies::engine_test()
        },
        ..EngineConfig::default()
    }
}

fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut r = TestRng(seed | 1);
    (0..len).map(|_| r.next() as u8).collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    #[test]
    fn delivers_exactly_the_stream(
        len in 1usize..200_000,
        w in 1usize..8,
        r_extra in 0u32..60,
        systematic in any::<bool>(),
        seeded in any::<bool>(),
        loss in 0.0f64..0.15,
        ack_loss in 0.0f64..0.15,
        dup in 0.0f64..0.05,
        jitter in 0u64..30,
        seed in any::<u64>(),
    ) {
        let case = Case { len, w, r_extra, systematic, seeded, loss, ack_loss, dup, jitter, seed };
        run_case(case).map_err(TestCaseError::fail)?;
    }
}

/// One transfer: its length, the coding settings, the two directions' impairments and the
/// seed.
#[derive(Debug, Clone, Copy)]
struct Case {
    len: usize,
    w: usize,
    r_extra: u32,
    systematic: bool,
    seeded: bool,
    loss: f64,
    ack_loss: f64,
    dup: f64,
    jitter: u64,
    seed: u64,
}

fn run_case(case: Case) -> Result<(), String> {
    let Case {
        len,
        w,
        r_extra,
        systematic,
        seeded,
        loss,
        ack_loss,
        dup,
        jitter,
        seed,
    } = case;
    let cfg = config(w, 1.0 + f64::from(r_extra) / 100.0, systematic, seeded);
    let fwd = ChannelParams {
        loss,
        dup,
        delay_ms: 10,
        jitter_ms: jitter,
    };
    let rev = ChannelParams {
        loss: ack_loss,
        dup,
        delay_ms: 10,
        jitter_ms: jitter,
    };
    let payload = data(len, seed);
    let mut pair = Pair::new(cfg, payload.clone(), fwd, rev, seed);
    let finished = pair.run(ms(600_000));
    if !finished {
        return Err(format!(
            "transfer did not finish: sender una {} of {}, receiver got {}; a={:?} b={:?}",
            pair.sender.snd_una,
            len,
            pair.receiver.received.len(),
            pair.a.stats(),
            pair.b.stats()
        ));
    }
    if pair.receiver.received != payload {
        return Err("byte stream differs".into());
    }
    Ok(())
}

/// Regression: R below 1/(1 − p) lets the decoding deficit grow past W; recovery goes through
/// TCP retransmissions and ack-triggered redelivery (a segment whose timer-driven redeliveries
/// ran out must still be delivered when the local TCP asks for it).
#[test]
fn regression_low_redundancy_high_loss() {
    run_case(Case {
        len: 121_529,
        w: 7,
        r_extra: 3,
        systematic: false,
        seeded: false,
        loss: 0.0666,
        ack_loss: 0.1137,
        dup: 0.0155,
        jitter: 15,
        seed: 39_817_606_645_558_566,
    })
    .unwrap();
}

#[test]
fn lossless_transfer_has_no_dup_acks() {
    let payload = data(100_000, 3);
    let mut pair = Pair::new(
        config(4, 1.0, false, false),
        payload.clone(),
        ChannelParams {
            delay_ms: 5,
            ..ChannelParams::default()
        },
        ChannelParams {
            delay_ms: 5,
            ..ChannelParams::default()
        },
        3,
    );
    assert!(pair.run(ms(60_000)));
    assert_eq!(pair.receiver.received, payload);
    assert_eq!(pair.sender.dup_acks_seen, 0);
    assert_eq!(pair.sender.timeouts, 0);
    let sa = pair.a.stats();
    let sb = pair.b.stats();
    assert!(sa.data_sent > 0 && sb.acks_sent > 0);
    assert_eq!(sb.redeliveries, 0);
    // The receiver's pure ACKs were suppressed once coded data flowed.
    assert!(sb.pure_acks_suppressed > 0);
    // MSS clamp reached the receiver's SYN view.
    assert!(pair.receiver.syn_mss_seen.unwrap() <= 1400);
}

#[test]
fn coding_masks_random_loss() {
    // 5% forward loss, R = 1.25, W = 4: most losses are masked (few dup ACKs, no timeouts
    // needed in most runs); the stream arrives intact.
    let payload = data(200_000, 9);
    let mut pair = Pair::new(
        config(4, 1.25, false, false),
        payload.clone(),
        ChannelParams {
            loss: 0.05,
            delay_ms: 10,
            ..ChannelParams::default()
        },
        ChannelParams {
            delay_ms: 10,
            ..ChannelParams::default()
        },
        9,
    );
    assert!(pair.run(ms(120_000)));
    assert_eq!(pair.receiver.received, payload);
    let b = pair.b.stats();
    assert!(b.flows.values().all(|f| f.innovative > 0));
}

/// Regression: systematic mode, the FIN's segment delivered before the last data (out of order).
#[test]
fn regression_fin_delivered_out_of_order() {
    run_case(Case {
        len: 14_464,
        w: 4,
        r_extra: 28,
        systematic: true,
        seeded: false,
        loss: 0.014459090953601197,
        ack_loss: 0.0,
        dup: 0.0,
        jitter: 1,
        seed: 2_340_959_177_375_803_770,
    })
    .unwrap();
}
