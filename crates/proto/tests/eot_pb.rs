//! Karafillis et al.'s EOT and PB repair bursts (§II; `sender/burst.rs`): N_lp from the
//! latest NC-ACK, a burst of that many whole-buffer combinations (FLUSH) on the local TCP's
//! FIN (EOT) and after every `pb_block` non-redundant combinations (PB). Each test fails with
//! its mechanism off: the lost packets are then never repaired (R = 1, no TCP retransmission).

mod common;

use std::collections::VecDeque;

use common::*;
use tcpnc_proto::tcp::{TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig, Policies, RedundancyPolicy, RepairPolicy};
use tcpnc_wire::FrameRepr;

const SEG: u32 = 100;
const ISN: u32 = 5_000;
/// Time between two segments of the scripted sender, ms.
const STEP: u64 = 5;
/// Return-path delay of the NC-ACKs, ms.
const ACK_DELAY: u64 = 20;

/// The paper's rules with W 20, R = 1 (so nothing but a burst repairs a loss) and `repair`.
fn config(repair: RepairPolicy, pb_block: u32) -> EngineConfig {
    let p = Policies {
        window: 20,
        redundancy: RedundancyPolicy::Fixed(1.0),
        repair,
        pb_block,
        ..Policies::paper(0.0)
    };
    EngineConfig::new(&p, 1472)
}

/// The `i`-th segment; the last of `k` carries FIN.
fn data_segment(i: u32, k: u32) -> Vec<u8> {
    let mut flags = TcpFlags::ACK;
    if i + 1 == k {
        flags = flags | TcpFlags::FIN;
    }
    let payload = vec![i as u8; SEG as usize];
    segment(
        &client_to_server(),
        ISN + i * SEG,
        1,
        flags,
        1000,
        &[],
        &payload,
    )
}

fn is_burst(datagram: &[u8]) -> bool {
    matches!(FrameRepr::parse(datagram), Ok(FrameRepr::Data { header, .. }) if header.flush)
}

struct Outcome {
    /// (step, count) of the burst frames A sent, per step.
    bursts: Vec<(u32, usize)>,
    /// Payload bytes B delivered to its TCP.
    delivered: u64,
}

/// `k` segments A → B, one per STEP ms, the last with FIN; the first frame of each segment
/// in `lost` is dropped (bursts never are); NC-ACKs take ACK_DELAY ms back.
fn run(cfg: EngineConfig, k: u32, lost: &[u32]) -> Outcome {
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let mut acks: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let mut out = Outcome {
        bursts: Vec::new(),
        delivered: 0,
    };
    for step in 0..k + 20 {
        let now = u64::from(step) * STEP;
        while acks.front().is_some_and(|(t, _)| *t <= now) {
            a.handle_datagram(ms(now), &acks.pop_front().unwrap().1);
        }
        if step < k {
            a.handle_local(ms(now), &data_segment(step, k));
        }
        let mut burst = 0;
        while let Some(d) = a.poll_transmit() {
            burst += usize::from(is_burst(&d));
            if is_burst(&d) || !(step < k && lost.contains(&step)) {
                b.handle_datagram(ms(now), &d);
            }
        }
        if burst > 0 {
            out.bursts.push((step, burst));
        }
        while let Some(p) = b.poll_local() {
            out.delivered += TcpPacket::parse(&p).unwrap().payload().len() as u64;
        }
        while let Some(d) = b.poll_transmit() {
            acks.push_back((now + ACK_DELAY, d));
        }
        while a.poll_local().is_some() {}
    }
    out
}

#[test]
fn eot_covers_the_outstanding_losses_on_fin() {
    // Segments 3 and 4 lost: from the NC-ACK of segment 5 (at A at 45 ms) N_lp = 2. The FIN
    // rides on segment 11 (55 ms): EOT sends two whole-buffer combinations with it.
    let eot = run(config(RepairPolicy::Eot, 100), 12, &[3, 4]);
    assert_eq!(eot.bursts, [(11, 2)]);
    assert_eq!(eot.delivered, u64::from(12 * SEG));
    // Without a repair the two DoFs never come: nothing after segment 2 is decoded.
    let nc = run(config(RepairPolicy::Off, 100), 12, &[3, 4]);
    assert!(nc.bursts.is_empty());
    assert_eq!(nc.delivered, u64::from(3 * SEG));
    // PB alone (no EOT part) with a block longer than the transfer sends nothing on FIN.
    let pb = run(config(RepairPolicy::Pb, 100), 12, &[3, 4]);
    assert!(pb.bursts.is_empty());
}

#[test]
fn pb_repairs_every_block() {
    // B = 10: bursts after the 10th, 20th, 30th non-redundant combination (steps 9, 19, 29).
    // At step 9 the NC-ACK of segment 5 reported N_lp = 2: two repairs, and decoding resumes
    // at once, 20 segments before the end; later blocks find nothing missing.
    let pb = run(config(RepairPolicy::Pb, 10), 40, &[3, 4]);
    assert_eq!(pb.bursts, [(9, 2)]);
    assert_eq!(pb.delivered, u64::from(40 * SEG));
    // A second loss after the first burst is repaired by the next block's burst.
    let pb = run(config(RepairPolicy::Pb, 10), 40, &[3, 4, 22]);
    assert_eq!(pb.bursts, [(9, 2), (29, 1)]);
    assert_eq!(pb.delivered, u64::from(40 * SEG));
    // Without PB: stuck at the first loss.
    let nc = run(config(RepairPolicy::Off, 10), 40, &[3, 4, 22]);
    assert_eq!(nc.delivered, u64::from(3 * SEG));
    // EOT alone repairs only at the end.
    let eot = run(config(RepairPolicy::Eot, 10), 40, &[3, 4, 22]);
    assert_eq!(eot.bursts, [(39, 3)]);
    assert_eq!(eot.delivered, u64::from(40 * SEG));
    // EOT + PB: the blocks, then the FIN finds nothing missing.
    let both = run(config(RepairPolicy::EotPb, 10), 40, &[3, 4, 22]);
    assert_eq!(both.bursts, [(9, 2), (29, 1)]);
}
