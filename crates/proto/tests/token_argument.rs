//! Sundararajan et al. §V-B, the token argument, as a deterministic test: with R = 1 every
//! arrival sends exactly one combination of the last W packets. Each lost combination leaves the
//! receiver one equation short (a token used up). While the deficit stays below W the decoder
//! still sees one new packet per received combination, so the seen-ACK advances every time and
//! the loss is masked: no duplicate ACK reaches the local sender. When the deficit reaches W, the
//! first unseen packet leaves every later coding window: the ACK stops advancing and every
//! further combination produces a duplicate ACK — the loss becomes visible to TCP.
//!
//! These are the paper's rules alone, so the deficit repair (`repair.rs`), the DoF ACK
//! (`dof_ack`, which counts the DoFs past the stall) and the uncoded packets of a clean flow
//! (`systematic_when_clean`) are off; the last test
//! turns it on and checks that it refills the deficit the token argument leaves.

mod common;

use common::*;
use tcpnc_proto::Policies;
use tcpnc_proto::tcp::TcpPacket;
use tcpnc_proto::{AckPolicy, Engine, EngineConfig, RedundancyPolicy, RepairPolicy};

const SEG: u32 = 100;
const ISN: u32 = 5_000;

struct Run {
    /// Ack numbers of the TCP ACKs engine A synthesised, in order.
    acks: Vec<u32>,
    dup_acks_stat: u64,
}

/// Sends `k` segments of `SEG` bytes through A → B, dropping the DATA frames whose (0-based)
/// numbers are in `drops`; returns the ACKs the local sender saw.
fn run(w: usize, k: u32, drops: &[u32]) -> Run {
    run_with(RepairPolicy::Off, w, k, drops)
}

fn run_with(repair: RepairPolicy, w: usize, k: u32, drops: &[u32]) -> Run {
    let cfg = EngineConfig {
        policies: Policies {
            window: u16::try_from(w).unwrap(),
            redundancy: RedundancyPolicy::Fixed(1.0),
            ack_rule: AckPolicy::InnovativeOnly,
            repair,
            // The paper's seen-ACK: the DoF ACK would mask the deficit reaching W.
            dof_ack: tcpnc_proto::config::Switch::Off,
            systematic_when_clean: tcpnc_proto::config::Switch::Off,
            ..Policies::engine_test()
        },
        ..EngineConfig::default()
    };
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let now = ms(0);
    let mut acks = Vec::new();
    let mut frame_no = 0;
    for i in 0..k {
        a.handle_local(now, &bulk_segment(ISN, i, SEG));
        while let Some(d) = a.poll_transmit() {
            let dropped = drops.contains(&frame_no);
            frame_no += 1;
            if !dropped {
                b.handle_datagram(now, &d);
            }
        }
        while b.poll_local().is_some() {}
        while let Some(d) = b.poll_transmit() {
            a.handle_datagram(now, &d);
        }
        while let Some(p) = a.poll_local() {
            let pkt = TcpPacket::parse(&p).unwrap();
            assert!(pkt.checksum_ok());
            assert_eq!(pkt.flow(), server_to_client());
            acks.push(pkt.tcp.ack);
        }
    }
    Run {
        acks,
        dup_acks_stat: a.stats().dup_acks_synthesized,
    }
}

fn dup_count(acks: &[u32]) -> usize {
    acks.windows(2).filter(|p| p[0] == p[1]).count()
}

#[test]
fn no_loss_acks_every_packet() {
    let r = run(3, 30, &[]);
    assert_eq!(r.acks.len(), 30);
    for (i, a) in r.acks.iter().enumerate() {
        assert_eq!(*a, ISN + (i as u32 + 1) * SEG);
    }
    assert_eq!(r.dup_acks_stat, 0);
}

#[test]
fn deficit_below_w_is_masked() {
    // W = 3: two losses (scattered, then a burst of two) leave a deficit of 2 < W.
    for drops in [&[5u32, 17][..], &[9, 10]] {
        let r = run(3, 30, drops);
        assert_eq!(
            r.acks.len(),
            28,
            "one ACK per received (innovative) combination"
        );
        assert_eq!(dup_count(&r.acks), 0, "losses masked: {:?}", r.acks);
        assert_eq!(r.dup_acks_stat, 0);
        assert!(
            r.acks.windows(2).all(|p| p[1] > p[0]),
            "ACK advances every time"
        );
        // The deficit of two packets is carried: the last ACK requests packet 28 (0-based).
        assert_eq!(*r.acks.last().unwrap(), ISN + 28 * SEG);
    }
}

#[test]
fn deficit_reaching_w_becomes_visible() {
    // Third loss brings the deficit to W = 3: from then on the first unseen packet is in no
    // coding window and every combination yields a duplicate ACK.
    for drops in [&[5u32, 10, 15][..], &[9, 10, 11]] {
        let r = run(3, 30, drops);
        let third = *drops.last().unwrap();
        let dups = dup_count(&r.acks);
        assert!(dups > 0, "loss visible: {:?}", r.acks);
        // ACKs before the third loss never repeat.
        let before = (third - 2) as usize; // ACKs produced by frames 0..third, minus 2 losses
        assert_eq!(dup_count(&r.acks[..before]), 0);
        // From the first combination after it: stuck at the first packet no longer covered by
        // any coding window, every ACK a duplicate.
        let stuck = r.acks[before - 1];
        assert!(r.acks[before..].iter().all(|&a| a == stuck));
        assert_eq!(dups, r.acks.len() - before);
        assert_eq!(r.dup_acks_stat as usize, dups);
    }
}

#[test]
fn larger_window_masks_longer_bursts() {
    // The same burst of three is masked with W = 4.
    let r = run(4, 30, &[9, 10, 11]);
    assert_eq!(dup_count(&r.acks), 0, "{:?}", r.acks);
    // ... and a burst of four is not.
    let r = run(4, 30, &[9, 10, 11, 12]);
    assert!(dup_count(&r.acks) > 0);
}

#[test]
fn deficit_repair_refills_what_the_window_cannot() {
    // The bursts that stall the ACK with W = 3 above: the NC-ACKs report the missing DoFs
    // (N_lp), nothing is in flight in this lock-step exchange, so the sender answers with
    // whole-buffer repairs and every packet ends up seen. The NC-ACK that reports a burst of W
    // losses is itself already stalled, so at most that one duplicate reaches TCP: fewer than
    // the three of a fast retransmit.
    for drops in [&[5u32, 10, 15][..], &[9, 10, 11], &[9, 10, 11, 12, 13]] {
        let r = run_with(RepairPolicy::Deficit, 3, 30, drops);
        assert!(dup_count(&r.acks) <= 1, "{drops:?}: {:?}", r.acks);
        assert_eq!(*r.acks.last().unwrap(), ISN + 30 * SEG, "{drops:?}");
    }
}
