//! Deterministic engine scenarios: SYN rewrite, request/response in both directions with window
//! scaling, FIN teardown, coding off, RST, expiry, bounded buffers, keepalive, redelivery,
//! malformed input.

mod common;

use std::time::Duration;

use common::*;
use tcpnc_proto::Policies;
use tcpnc_proto::tcp::{TcpFlags, TcpPacket, scan_options};
use tcpnc_proto::{CloseReason, Engine, EngineConfig, Event, Limits};
use tcpnc_wire::{FrameRepr, KeepaliveRepr};

const C_ISN: u32 = 1000;
const S_ISN: u32 = 9000;

fn engines(cfg: EngineConfig) -> (Engine, Engine) {
    (
        Engine::new(cfg.clone(), 11).unwrap(),
        Engine::new(cfg, 22).unwrap(),
    )
}

/// Moves every queued datagram across once (no loss).
fn cross(from: &mut Engine, to: &mut Engine, now: std::time::Duration) -> usize {
    let mut n = 0;
    while let Some(d) = from.poll_transmit() {
        to.handle_datagram(now, &d);
        n += 1;
    }
    n
}

fn locals(e: &mut Engine) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| e.poll_local()).collect()
}

fn tcp_part(p: &[u8]) -> Vec<u8> {
    TcpPacket::parse(p).unwrap().segment.to_vec()
}

/// Runs the handshake through both engines; returns them.
fn handshake(cfg: EngineConfig) -> (Engine, Engine) {
    let (mut a, mut b) = engines(cfg);
    let t = ms(0);
    let syn = segment(
        &client_to_server(),
        C_ISN,
        0,
        TcpFlags::SYN,
        65535,
        &syn_options(1460, 1),
        &[],
    );
    a.handle_local(t, &syn);
    cross(&mut a, &mut b, t);
    let got = locals(&mut b);
    assert_eq!(got.len(), 1);
    let p = TcpPacket::parse(&got[0]).unwrap();
    assert!(p.checksum_ok());
    let o = scan_options(p.options()).unwrap();
    let clamp = a.config().mss_clamp(tcpnc_wire::IpVersion::V4) as u16;
    assert_eq!(
        o.mss,
        Some(clamp),
        "MSS clamped to fit a W-packet combination"
    );
    assert!(!o.sack_permitted && !o.timestamps);
    assert_eq!(o.window_scale, Some(1));
    let synack = segment(
        &server_to_client(),
        S_ISN,
        C_ISN + 1,
        flags(&[TcpFlags::SYN, TcpFlags::ACK]),
        65535,
        &syn_options(1460, 2),
        &[],
    );
    b.handle_local(t, &synack);
    cross(&mut b, &mut a, t);
    assert_eq!(locals(&mut a).len(), 1);
    // Handshake ACK: forwarded (no coded data from the peer yet).
    let ack = segment(
        &client_to_server(),
        C_ISN + 1,
        S_ISN + 1,
        TcpFlags::ACK,
        30000,
        &[],
        &[],
    );
    a.handle_local(t, &ack);
    cross(&mut a, &mut b, t);
    assert_eq!(
        locals(&mut b)
            .iter()
            .map(|p| tcp_part(p))
            .collect::<Vec<_>>(),
        vec![tcp_part(&ack)]
    );
    assert_eq!(a.stats().pure_acks_forwarded, 1);
    (a, b)
}

#[test]
fn request_response_both_directions_with_fin() {
    let (mut a, mut b) = handshake(EngineConfig::default());
    let t = ms(1);
    request_is_delivered_and_acknowledged(&mut a, &mut b, t);
    response_is_delivered_and_acknowledged(&mut a, &mut b, t);
    client_pure_ack_is_suppressed(&mut a, t);
    fins_close_both_directions(&mut a, &mut b, t);
    finished_flows_linger_then_close(&mut a, &mut b, t);
}

/// Client request (coded), delivered intact; the NC-ACK becomes the client's TCP ACK.
fn request_is_delivered_and_acknowledged(a: &mut Engine, b: &mut Engine, t: Duration) {
    // Client request (coded).
    let req = segment(
        &client_to_server(),
        C_ISN + 1,
        S_ISN + 1,
        flags(&[TcpFlags::ACK, TcpFlags::PSH]),
        30000,
        &[],
        b"GET /",
    );
    a.handle_local(t, &req);
    assert!(cross(a, b, t) >= 1);
    let got = locals(b);
    assert_eq!(got.len(), 1);
    assert_eq!(
        tcp_part(&got[0]),
        tcp_part(&req),
        "original header, payload and checksum"
    );
    assert!(TcpPacket::parse(&got[0]).unwrap().checksum_ok());
    // NC-ACK → TCP ACK for the client.
    cross(b, a, t);
    let acks = locals(a);
    assert_eq!(acks.len(), 1);
    let p = TcpPacket::parse(&acks[0]).unwrap();
    assert!(p.checksum_ok());
    assert_eq!(p.flow(), server_to_client());
    assert_eq!(p.tcp.ack, C_ISN + 1 + 5);
    assert_eq!(p.tcp.seq, S_ISN + 1);
    // Window: server's SYN-ACK window 65535 (unscaled) minus 5 bytes, shifted by the server's
    // scale (2) since both SYNs carried the option.
    assert_eq!(p.tcp.window, ((65535 - 5) >> 2) as u16);
}

/// Server response (coded), carrying its ack of the request and a scaled window.
fn response_is_delivered_and_acknowledged(a: &mut Engine, b: &mut Engine, t: Duration) {
    // Server response (coded), carrying its ack of the request and a scaled window.
    let resp = segment(
        &server_to_client(),
        S_ISN + 1,
        C_ISN + 6,
        flags(&[TcpFlags::ACK, TcpFlags::PSH]),
        1000,
        &[],
        b"HTTP/1.1 200 OK",
    );
    b.handle_local(t, &resp);
    cross(b, a, t);
    let got = locals(a);
    assert_eq!(got.len(), 1);
    assert_eq!(
        tcp_part(&got[0]),
        tcp_part(&resp),
        "peer's ack field kept as sent"
    );
    cross(a, b, t);
    let acks = locals(b);
    assert_eq!(acks.len(), 1);
    let p = TcpPacket::parse(&acks[0]).unwrap();
    assert_eq!((p.tcp.seq, p.tcp.ack), (C_ISN + 6, S_ISN + 1 + 15));
    // Client's right edge: its last ack (S+1) + 30000 << 1 (its scale); minus the 15 bytes
    // acknowledged since, >> 1 for the server (the client's scale applies to it).
    assert_eq!(p.tcp.window, ((60000 - 15) >> 1) as u16);
}

fn client_pure_ack_is_suppressed(a: &mut Engine, t: Duration) {
    // Client's pure ACK of the response is suppressed now that coded data flowed.
    let cack = segment(
        &client_to_server(),
        C_ISN + 6,
        S_ISN + 16,
        TcpFlags::ACK,
        30000,
        &[],
        &[],
    );
    a.handle_local(t, &cack);
    assert_eq!(a.poll_transmit(), None);
    assert_eq!(a.stats().pure_acks_suppressed, 1);
}

fn fins_close_both_directions(a: &mut Engine, b: &mut Engine, t: Duration) {
    // FIN both ways, each coded (one sequence number).
    let cfin = segment(
        &client_to_server(),
        C_ISN + 6,
        S_ISN + 16,
        flags(&[TcpFlags::ACK, TcpFlags::FIN]),
        30000,
        &[],
        &[],
    );
    a.handle_local(t, &cfin);
    cross(a, b, t);
    assert_eq!(
        locals(b).iter().map(|p| tcp_part(p)).collect::<Vec<_>>(),
        vec![tcp_part(&cfin)]
    );
    cross(b, a, t);
    let p = TcpPacket::parse(&locals(a)[0]).unwrap().tcp;
    assert_eq!(p.ack, C_ISN + 7, "FIN acknowledged");
    let sfin = segment(
        &server_to_client(),
        S_ISN + 16,
        C_ISN + 7,
        flags(&[TcpFlags::ACK, TcpFlags::FIN]),
        1000,
        &[],
        &[],
    );
    b.handle_local(t, &sfin);
    cross(b, a, t);
    assert_eq!(locals(a).len(), 1);
    // Client's last ACK (suppressed) confirms delivery of the server's FIN.
    let last = segment(
        &client_to_server(),
        C_ISN + 7,
        S_ISN + 17,
        TcpFlags::ACK,
        30000,
        &[],
        &[],
    );
    a.handle_local(t, &last);
    cross(a, b, t);
    let p = TcpPacket::parse(&locals(b)[0]).unwrap().tcp;
    assert_eq!(p.ack, S_ISN + 17);
}

fn finished_flows_linger_then_close(a: &mut Engine, b: &mut Engine, t: Duration) {
    // The server's engine saw the server's ACK of the client FIN in its FIN segment; both
    // directions are finished on both engines: they linger, then close.
    let linger = a.config().closed_linger;
    for e in [a, b] {
        let deadline = e.poll_timeout().unwrap();
        assert!(deadline <= t + linger);
        e.handle_timeout(t + linger);
        assert_eq!(e.stats().flows_active, 0);
        let closed = std::iter::from_fn(|| e.poll_event()).any(|ev| {
            matches!(
                ev,
                Event::FlowClosed {
                    reason: CloseReason::Finished,
                    ..
                }
            )
        });
        assert!(closed);
    }
}

#[test]
fn coding_off_is_plain_forwarding() {
    let cfg = EngineConfig {
        coding: false,
        ..EngineConfig::default()
    };
    let (mut a, mut b) = engines(cfg);
    let t = ms(0);
    let pkts = [
        segment(
            &client_to_server(),
            C_ISN,
            0,
            TcpFlags::SYN,
            65535,
            &syn_options(1460, 1),
            &[],
        ),
        segment(
            &client_to_server(),
            C_ISN + 1,
            S_ISN + 1,
            TcpFlags::ACK,
            30000,
            &[],
            b"data",
        ),
        segment(
            &client_to_server(),
            C_ISN + 5,
            S_ISN + 1,
            TcpFlags::ACK,
            30000,
            &[],
            &[],
        ),
    ];
    for p in &pkts {
        a.handle_local(t, p);
        let d = a.poll_transmit().unwrap();
        assert!(matches!(
            FrameRepr::parse(&d).unwrap(),
            FrameRepr::Bypass(_)
        ));
        b.handle_datagram(t, &d);
        assert_eq!(&b.poll_local().unwrap(), p, "byte-identical");
    }
    assert_eq!(a.stats().data_sent, 0);
    assert_eq!(a.stats().flows_active, 0);
}

#[test]
fn rst_bypasses_and_removes_flow() {
    let (mut a, mut b) = handshake(EngineConfig::default());
    let t = ms(2);
    let rst = segment(
        &client_to_server(),
        C_ISN + 1,
        0,
        TcpFlags::RST,
        0,
        &[],
        &[],
    );
    a.handle_local(t, &rst);
    assert_eq!(a.stats().flows_active, 0);
    cross(&mut a, &mut b, t);
    assert_eq!(locals(&mut b), vec![rst]);
    assert_eq!(b.stats().flows_active, 0);
    assert!(std::iter::from_fn(|| b.poll_event()).any(|e| matches!(
        e,
        Event::FlowClosed {
            reason: CloseReason::Reset,
            ..
        }
    )));
}

#[test]
fn idle_flows_expire() {
    let (mut a, _b) = handshake(EngineConfig::default());
    let idle = a.config().idle_timeout;
    assert_eq!(a.poll_timeout(), Some(idle));
    a.handle_timeout(idle - ms(1));
    assert_eq!(a.stats().flows_active, 1);
    a.handle_timeout(idle);
    assert_eq!(a.stats().flows_active, 0);
    assert_eq!(a.stats().flows_expired, 1);
    assert!(a.stats().flows.is_empty());
    assert_eq!(a.poll_timeout(), None);
}

#[test]
fn bounded_buffers_count_drops() {
    let cfg = EngineConfig {
        limits: Limits {
            coding_buffer_packets: 4,
            max_flows: 1,
            transmit_queue: 64,
            ..Limits::default()
        },
        ..EngineConfig::default()
    };
    let (mut a, _b) = engines(cfg);
    let t = ms(0);
    for i in 0..6u32 {
        let p = segment(
            &client_to_server(),
            C_ISN + 1 + i * 10,
            1,
            TcpFlags::ACK,
            100,
            &[],
            &[i as u8; 10],
        );
        a.handle_local(t, &p);
    }
    assert_eq!(a.stats().coding_buffer_drops, 2);
    let stats = a.stats();
    let fs = stats.flows.values().next().unwrap();
    assert_eq!(fs.coding_buffer_len, 4);
    // A second connection does not fit: forwarded uncoded and counted.
    let other = tcpnc_proto::tcp::FlowKey::new(
        tcpnc_proto::tcp::Endpoint::new(std::net::IpAddr::V4(CLIENT), 40001),
        tcpnc_proto::tcp::Endpoint::new(std::net::IpAddr::V4(SERVER), 80),
    );
    let bypass_before = a.stats().bypass_sent;
    a.handle_local(t, &segment(&other, 5, 1, TcpFlags::ACK, 100, &[], b"x"));
    assert_eq!(a.stats().flow_table_full, 1);
    assert_eq!(a.stats().bypass_sent, bypass_before + 1);
    // The transmit queue is bounded too.
    let cfg = EngineConfig {
        policies: Policies {
            redundancy: tcpnc_proto::RedundancyPolicy::Fixed(1.0),
            ..Policies::engine_test()
        },
        limits: Limits {
            transmit_queue: 2,
            ..Limits::default()
        },
        ..EngineConfig::default()
    };
    let mut e = Engine::new(cfg, 1).unwrap();
    for i in 0..5u32 {
        e.handle_local(
            t,
            &segment(
                &client_to_server(),
                C_ISN + 1 + i,
                1,
                TcpFlags::ACK,
                100,
                &[],
                b"y",
            ),
        );
    }
    assert_eq!(e.stats().transmit_queue_drops, 3);
    assert_eq!(std::iter::from_fn(|| e.poll_transmit()).count(), 2);
}

#[test]
fn undelivered_segments_are_redelivered() {
    let (mut a, mut b) = handshake(EngineConfig::default());
    let t = ms(10);
    let req = segment(
        &client_to_server(),
        C_ISN + 1,
        S_ISN + 1,
        TcpFlags::ACK,
        30000,
        &[],
        b"hello",
    );
    a.handle_local(t, &req);
    cross(&mut a, &mut b, t);
    let first = locals(&mut b);
    assert_eq!(first.len(), 1);
    cross(&mut b, &mut a, t);
    // The server never acknowledges: redelivered after the redelivery timeout.
    let rto = b.config().redelivery_timeout;
    let due = b.poll_timeout().unwrap();
    assert_eq!(due, t + rto);
    b.handle_timeout(due);
    let again = locals(&mut b);
    assert_eq!(again.len(), 1);
    assert_eq!(tcp_part(&again[0]), tcp_part(&req));
    // Rebuilt from the decoder's symbol: the same packet, IP identification included.
    assert_eq!(again, first);
    assert_eq!(b.stats().redeliveries, 1);
    // Once the server acknowledges it, no more redelivery.
    let ack = segment(
        &server_to_client(),
        S_ISN + 1,
        C_ISN + 6,
        TcpFlags::ACK,
        1000,
        &[],
        &[],
    );
    b.handle_local(due, &ack);
    assert_eq!(b.poll_transmit(), None, "suppressed");
    b.handle_timeout(due + rto * 4);
    assert!(locals(&mut b).is_empty());
}

#[test]
fn keepalive_and_malformed_input() {
    let (mut a, mut b) = engines(EngineConfig::default());
    let t = ms(0);
    let probe = FrameRepr::Keepalive(KeepaliveRepr::probe(42))
        .to_vec()
        .unwrap();
    a.handle_datagram(t, &probe);
    let reply = a.poll_transmit().unwrap();
    b.handle_datagram(t, &reply);
    assert_eq!(b.poll_event(), Some(Event::KeepaliveReply { nonce: 42 }));
    a.handle_datagram(t, &[1, 2, 3]);
    a.handle_datagram(t, &[]);
    assert_eq!(a.stats().datagrams_malformed, 2);
    a.handle_local(t, &[0x45, 0, 0]);
    assert_eq!(a.stats().local_malformed, 1);
    // Non-TCP goes through uncoded.
    let mut udp = vec![
        0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 1, 1,
    ];
    udp.extend_from_slice(&[0, 1, 0, 2, 0, 8, 0, 0]);
    a.handle_local(t, &udp);
    let d = a.poll_transmit().unwrap();
    b.handle_datagram(t, &d);
    assert_eq!(b.poll_local(), Some(udp));
}
