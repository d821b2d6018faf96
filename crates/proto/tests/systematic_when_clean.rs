//! `systematic_when_clean` (docs/engine.md "Systematic while clean"): with the dense scheme, a
//! flow whose loss record shows no random loss sends each new packet alone, uncoded; once the
//! NC-ACKs report a loss, its combinations are dense again. Off, every combination is dense.

mod common;

use std::collections::VecDeque;

use common::*;
use tcpnc_proto::config::{CodingScheme, Switch};
use tcpnc_proto::tcp::{TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig, Policies, RedundancyPolicy};
use tcpnc_wire::{Coefficients, FrameRepr};

const SEG: u32 = 100;
const ISN: u32 = 3_000;
const SEGMENTS: u32 = 400;
/// The segment whose frame is lost.
const LOST: u32 = 200;
const ACK_DELAY: u64 = 10;

fn config(clean: Switch) -> EngineConfig {
    EngineConfig {
        policies: Policies {
            window: 4,
            redundancy: RedundancyPolicy::Fixed(1.0),
            scheme: CodingScheme::Dense,
            systematic_when_clean: clean,
            path_memory: Switch::Off,
            ..Policies::engine_test()
        },
        ..EngineConfig::default()
    }
}

/// Uncoded (SYSTEMATIC) DATA frames among the non-repair frames of segments before and after
/// the loss, and whether the whole stream reached the peer.
struct Outcome {
    uncoded_before: u32,
    coded_before: u32,
    uncoded_after: u32,
    coded_after: u32,
    delivered_all: bool,
}

fn run(clean: Switch) -> Outcome {
    let mut a = Engine::new(config(clean), 1).unwrap();
    let mut b = Engine::new(config(clean), 2).unwrap();
    let mut back: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let mut o = Outcome {
        uncoded_before: 0,
        coded_before: 0,
        uncoded_after: 0,
        coded_after: 0,
        delivered_all: false,
    };
    let mut delivered_to = ISN;
    for now in 0..u64::from(SEGMENTS) + 200 {
        while back.front().is_some_and(|(t, _)| *t <= now) {
            a.handle_datagram(ms(now), &back.pop_front().unwrap().1);
        }
        if a.poll_timeout().is_some_and(|t| t <= ms(now)) {
            a.handle_timeout(ms(now));
        }
        let seg = now as u32;
        if seg < SEGMENTS {
            a.handle_local(ms(now), &bulk_segment(ISN, seg, SEG));
        }
        while let Some(d) = a.poll_transmit() {
            if let Ok(FrameRepr::Data { header, .. }) = FrameRepr::parse(&d)
                && !header.flush
                && seg < SEGMENTS
            {
                let uncoded = matches!(header.coefficients, Coefficients::Systematic);
                // Before the loss, and well after its NC-ACK came back.
                if seg < LOST {
                    o.uncoded_before += u32::from(uncoded);
                    o.coded_before += u32::from(!uncoded);
                } else if seg > LOST + 3 * ACK_DELAY as u32 {
                    o.uncoded_after += u32::from(uncoded);
                    o.coded_after += u32::from(!uncoded);
                }
                if seg == LOST {
                    continue;
                }
            }
            b.handle_datagram(ms(now), &d);
        }
        while let Some(p) = b.poll_local() {
            delivered_to = TcpPacket::parse(&p).unwrap().end_seq();
        }
        let ack = segment(
            &server_to_client(),
            1,
            delivered_to,
            TcpFlags::ACK,
            65535,
            &[],
            &[],
        );
        b.handle_local(ms(now), &ack);
        while let Some(d) = b.poll_transmit() {
            back.push_back((now + ACK_DELAY, d));
        }
        while a.poll_local().is_some() {}
    }
    o.delivered_all = delivered_to == ISN.wrapping_add(SEGMENTS * SEG);
    o
}

#[test]
fn uncoded_while_clean_then_dense_after_a_loss() {
    let on = run(Switch::On);
    assert!(on.delivered_all);
    assert_eq!(on.coded_before, 0, "clean: every packet sent alone");
    assert_eq!(on.uncoded_before, LOST);
    assert_eq!(on.uncoded_after, 0, "after the loss: dense");
    assert!(on.coded_after > 100);
}

#[test]
fn off_every_combination_is_dense() {
    let off = run(Switch::Off);
    assert!(off.delivered_all);
    assert_eq!(off.uncoded_before + off.uncoded_after, 0);
    assert!(off.coded_before >= LOST);
}
