//! Handshake protection (`protect_handshake`, issue 10): a SYN and a SYN-ACK travel three
//! times so that a connection's start survives loss; the peer gateway delivers one.

mod common;

use common::*;
use tcpnc_proto::Policies;
use tcpnc_proto::config::Switch;
use tcpnc_proto::tcp::{TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig};

fn engines(protect: Switch) -> (Engine, Engine) {
    let cfg = EngineConfig {
        policies: Policies {
            protect_handshake: protect,
            ..Policies::engine_test()
        },
        ..EngineConfig::default()
    };
    (
        Engine::new(cfg.clone(), 1).unwrap(),
        Engine::new(cfg, 2).unwrap(),
    )
}

fn syn() -> Vec<u8> {
    segment(
        &client_to_server(),
        1000,
        0,
        TcpFlags::SYN,
        65535,
        &syn_options(1460, 7),
        &[],
    )
}

fn syn_ack() -> Vec<u8> {
    let flags = flags(&[TcpFlags::SYN, TcpFlags::ACK]);
    segment(
        &server_to_client(),
        5000,
        1001,
        flags,
        65535,
        &syn_options(1460, 7),
        &[],
    )
}

fn drain_transmit(e: &mut Engine) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| e.poll_transmit()).collect()
}

fn drain_local(e: &mut Engine) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| e.poll_local()).collect()
}

#[test]
fn syn_and_syn_ack_travel_three_times_and_arrive_once() {
    let (mut a, mut b) = engines(Switch::On);
    a.handle_local(ms(0), &syn());
    let copies = drain_transmit(&mut a);
    assert_eq!(copies.len(), 3);
    for c in &copies {
        b.handle_datagram(ms(1), c);
    }
    let delivered = drain_local(&mut b);
    assert_eq!(delivered.len(), 1);
    assert!(
        TcpPacket::parse(&delivered[0])
            .unwrap()
            .tcp
            .flags
            .contains(TcpFlags::SYN)
    );
    assert_eq!(b.stats().handshake_duplicates, 2);
    // The SYN-ACK: the first two copies lost, the third gets through.
    b.handle_local(ms(2), &syn_ack());
    let copies = drain_transmit(&mut b);
    assert_eq!(copies.len(), 3);
    a.handle_datagram(ms(3), &copies[2]);
    assert_eq!(drain_local(&mut a).len(), 1);
    // TCP's own retransmission of the SYN, a second later, is delivered again.
    a.handle_local(ms(1000), &syn());
    for c in drain_transmit(&mut a) {
        b.handle_datagram(ms(1001), &c);
    }
    assert_eq!(drain_local(&mut b).len(), 1);
}

#[test]
fn without_protection_one_copy_travels() {
    let (mut a, mut b) = engines(Switch::Off);
    a.handle_local(ms(0), &syn());
    let copies = drain_transmit(&mut a);
    assert_eq!(copies.len(), 1);
    b.handle_datagram(ms(1), &copies[0]);
    b.handle_datagram(ms(2), &copies[0]);
    assert_eq!(
        drain_local(&mut b).len(),
        2,
        "a duplicate is delivered as it came"
    );
}
