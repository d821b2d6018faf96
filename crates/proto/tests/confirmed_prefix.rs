//! The receiver's confirmed prefix (`confirmed_to`, docs/speed.md "The receiver's confirmed
//! prefix"): its scans start past the symbols the local TCP confirmed. A symbol recorded only
//! after the local TCP acknowledged past it (its bytes reached the TCP another way) lands below
//! that prefix, where no scan looks: it must be confirmed as it is delivered, or the decoder
//! could never drop past it and, once its buffer filled, every later DATA frame would be
//! dropped.
//!
//! Systematic coding at R 1.0 sends each segment alone in its own frame, so holding one frame
//! back leaves exactly one index unrecorded while the later ones are decoded (and held for it:
//! delivery is in order).

mod common;

use common::flows::*;
use common::*;
use tcpnc_proto::tcp::{FlowKey, TcpFlags};
use tcpnc_proto::{CodingScheme, Engine, EngineConfig, Limits, Policies, RedundancyPolicy};

const SEG: u32 = 1000;
const PORT: u16 = 41_000;

fn config() -> EngineConfig {
    EngineConfig {
        policies: Policies {
            window: 4,
            redundancy: RedundancyPolicy::Fixed(1.0),
            scheme: CodingScheme::Systematic,
            ..Policies::engine_test()
        },
        limits: Limits {
            decoding_buffer_packets: 64,
            ..Limits::default()
        },
        ..EngineConfig::default()
    }
}

/// The local TCP behind B acknowledges every byte before `ack`.
fn local_ack(b: &mut Engine, ack: u32, now_ms: u64) {
    let f = client_flow(PORT);
    let back = FlowKey::new(f.dst, f.src);
    b.handle_local(
        ms(now_ms),
        &segment(&back, 1, ack, TcpFlags::ACK, 65535, &[], &[]),
    );
}

#[test]
fn a_symbol_recorded_after_the_local_ack_passed_it_is_still_dropped() {
    let (mut a, mut b) = (
        Engine::new(config(), 1).unwrap(),
        Engine::new(config(), 2).unwrap(),
    );
    // Segments 0..6; the frame of segment 3 is held back.
    let mut held = Vec::new();
    for i in 0..6u32 {
        a.handle_local(ms(u64::from(i)), &client_data(PORT, i, SEG));
        while let Some(d) = a.poll_transmit() {
            if i == 3 {
                held.push(d);
            } else {
                b.handle_datagram(ms(u64::from(i)), &d);
            }
        }
    }
    assert_eq!(held.len(), 1, "systematic R 1.0: one frame per segment");
    let mut delivered = 0;
    while b.poll_local().is_some() {
        delivered += 1;
    }
    // Delivery is in order: 4 and 5 are decoded but wait for 3.
    assert_eq!(delivered, 3, "0, 1 and 2 delivered before 3");
    // The local TCP got segment 3 some other way: it acknowledges all six.
    local_ack(&mut b, 5_000 + 6 * SEG, 10);
    // Segment 3's frame arrives at last; B delivers it; the TCP acknowledges again.
    b.handle_datagram(ms(11), &held[0]);
    while b.poll_local().is_some() {}
    local_ack(&mut b, 5_000 + 6 * SEG, 12);
    // Four decoding buffers' worth of segments more, each acknowledged at once.
    for i in 6..6 + 4 * 64u32 {
        let now = ms(20 + u64::from(i));
        a.handle_local(now, &client_data(PORT, i, SEG));
        while let Some(d) = a.poll_transmit() {
            b.handle_datagram(now, &d);
        }
        acknowledge_at_once(&mut a, &mut b, PORT, now);
    }
    let stats = b.stats();
    assert_eq!(stats.decoding_buffer_drops, 0, "{stats:?}");
    let flow = stats.flows.values().next().expect("B's flow");
    // 0..=3 and the later ones; 4 and 5 reached the TCP the other way before their turn.
    assert!(flow.segments_delivered >= 4 + 4 * 64, "{flow:?}");
}
