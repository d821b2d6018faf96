//! A window update reaches the local TCP (RFC 5681 §2: an ACK that changes the window is not a
//! duplicate). The receiving TCP's window closes, the NC-ACKs carry it to the sender gateway,
//! and the local TCP stops; when the receiving application reads, the peer gateway sends one
//! NC-ACK with the same ack number and an open window. Withheld as a "duplicate" (the deficit
//! repair's hold, Pause-ACK), it would leave the local TCP on a zero window with nothing else
//! to trigger an ACK: found as 100-flow lab runs that never finished (docs/lab.md).

mod common;

use common::*;
use tcpnc_proto::tcp::{TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig, Policies};

const SEG: u32 = 1000;
const ISN: u32 = 9_000;
const SEGMENTS: u32 = 10;

/// The receiving TCP's ACK of everything so far with `window` bytes open.
fn sink_ack(window: u16) -> Vec<u8> {
    let end = ISN + SEGMENTS * SEG;
    segment(&server_to_client(), 1, end, TcpFlags::ACK, window, &[], &[])
}

/// Windows of the TCP ACKs engine A gave its local TCP.
fn windows(a: &mut Engine) -> Vec<(u32, u16)> {
    let mut w = Vec::new();
    while let Some(p) = a.poll_local() {
        let pkt = TcpPacket::parse(&p).unwrap();
        w.push((pkt.tcp.ack, pkt.tcp.window));
    }
    w
}

#[test]
fn a_window_update_after_a_zero_window_reaches_the_local_tcp() {
    let cfg = EngineConfig::new(&Policies::product(), 1472);
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    // The receiving TCP's window ends exactly after the tenth segment.
    let first = segment(&server_to_client(), 1, ISN, TcpFlags::ACK, 10_000, &[], &[]);
    // Segments 100 ms apart, each NC-ACK back 20 ms later (a measured round trip).
    for i in 0..SEGMENTS {
        let now = ms(100 * u64::from(i));
        a.handle_local(now, &bulk_segment(ISN, i, SEG));
        while let Some(d) = a.poll_transmit() {
            b.handle_datagram(now, &d);
        }
        if i == 0 {
            b.handle_local(now, &first);
        }
        while b.poll_local().is_some() {}
        while let Some(d) = b.poll_transmit() {
            a.handle_datagram(now + ms(20), &d);
        }
    }
    // Everything delivered; the receiving TCP acknowledges it with a closed window.
    b.handle_local(ms(905), &sink_ack(0));
    while let Some(d) = b.poll_transmit() {
        a.handle_datagram(ms(925), &d);
    }
    let end = ISN + SEGMENTS * SEG;
    let before = windows(&mut a);
    assert_eq!(
        before.last(),
        Some(&(end, 0)),
        "the local TCP sees the zero window"
    );
    // The application reads at once: the receiving TCP opens its window (a pure window
    // update), one round trip after the last segment (no queue: the sender's repair would
    // have withheld a duplicate as part of a random-loss stall).
    b.handle_local(ms(906), &sink_ack(60_000));
    let mut updates = 0;
    while let Some(d) = b.poll_transmit() {
        updates += 1;
        a.handle_datagram(ms(926), &d);
    }
    assert!(updates > 0, "the peer gateway sends the window update");
    let after = windows(&mut a);
    assert!(
        after.iter().any(|&(ack, w)| ack == end && w > 0),
        "the local TCP never learns that the window opened: {after:?}"
    );
}
