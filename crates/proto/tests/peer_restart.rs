//! `Engine::reset_flows`: when the peer gateway lost its state, every connection is reset at
//! both ends (exact RSTs to the local TCP, a provoking ACK to the remote one), and the local
//! TCP's later segments on those connections are answered with exact RSTs.

mod common;

use common::*;
use tcpnc_proto::tcp::{TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig};
use tcpnc_wire::FrameRepr;

const C_ISN: u32 = 1000;
const S_ISN: u32 = 9000;

/// A pure ACK from the client's TCP (seq `seq`, ack `ack`).
fn client_ack(seq: u32, ack: u32) -> Vec<u8> {
    segment(&client_to_server(), seq, ack, TcpFlags::ACK, 1000, &[], &[])
}

fn cross(from: &mut Engine, to: &mut Engine) {
    while let Some(d) = from.poll_transmit() {
        to.handle_datagram(ms(0), &d);
    }
}

fn locals(e: &mut Engine) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| e.poll_local()).collect()
}

/// A client connection through A to B, with two data segments delivered.
fn connected() -> (Engine, Engine) {
    let cfg = EngineConfig::default();
    let (mut a, mut b) = (
        Engine::new(cfg.clone(), 1).unwrap(),
        Engine::new(cfg, 2).unwrap(),
    );
    let t = ms(0);
    a.handle_local(
        t,
        &segment(
            &client_to_server(),
            C_ISN,
            0,
            TcpFlags::SYN,
            65535,
            &[],
            &[],
        ),
    );
    cross(&mut a, &mut b);
    locals(&mut b);
    let synack = flags(&[TcpFlags::SYN, TcpFlags::ACK]);
    b.handle_local(
        t,
        &segment(
            &server_to_client(),
            S_ISN,
            C_ISN + 1,
            synack,
            65535,
            &[],
            &[],
        ),
    );
    cross(&mut b, &mut a);
    locals(&mut a);
    for i in 0..2 {
        let seq = C_ISN + 1 + i * 100;
        a.handle_local(
            t,
            &segment(
                &client_to_server(),
                seq,
                S_ISN + 1,
                TcpFlags::ACK,
                1000,
                &[],
                &[7; 100],
            ),
        );
    }
    cross(&mut a, &mut b);
    assert_eq!(locals(&mut b).len(), 2, "both segments delivered");
    (a, b)
}

#[test]
fn a_peer_restart_resets_both_ends_exactly() {
    let (mut a, _old_b) = connected();
    let mut fresh_b = Engine::new(EngineConfig::default(), 3).unwrap();
    a.reset_flows(ms(10));
    assert_eq!(a.stats().flows_reset, 1);
    assert!(a.stats().flows.is_empty());
    // To the client: an RST from the server whose seq is what the client expects next.
    let to_client = locals(&mut a);
    assert_eq!(to_client.len(), 1);
    let rst = TcpPacket::parse(&to_client[0]).unwrap();
    assert!(rst.checksum_ok());
    assert_eq!(rst.flow(), server_to_client());
    assert_eq!((rst.tcp.flags, rst.tcp.seq), (TcpFlags::RST, S_ISN + 1));
    // To the server, through the peer: an ACK far outside its window, delivered uncoded by the
    // peer's fresh engine, so that the server's TCP answers it.
    let d = a.poll_transmit().expect("provoking ACK");
    assert!(matches!(FrameRepr::parse(&d), Ok(FrameRepr::Bypass(_))));
    fresh_b.handle_datagram(ms(10), &d);
    let provoke = locals(&mut fresh_b);
    let p = TcpPacket::parse(&provoke[0]).unwrap();
    assert_eq!(p.flow(), client_to_server());
    assert_eq!(p.tcp.flags, TcpFlags::ACK);
    assert_eq!(p.tcp.seq, (C_ISN).wrapping_add(0x8000_0000));
    assert!(a.poll_transmit().is_none());
}

#[test]
fn later_local_segments_of_a_reset_connection_get_exact_rsts() {
    let (mut a, _b) = connected();
    a.reset_flows(ms(10));
    locals(&mut a);
    while a.poll_transmit().is_some() {}
    // A challenge ACK (or a retransmission) from the client: answered with seq = its ACK.
    a.handle_local(ms(20), &client_ack(C_ISN + 201, S_ISN + 77));
    let got = locals(&mut a);
    let rst = TcpPacket::parse(&got[0]).unwrap();
    assert_eq!(
        (rst.flow(), rst.tcp.flags, rst.tcp.seq),
        (server_to_client(), TcpFlags::RST, S_ISN + 77)
    );
    assert!(a.poll_transmit().is_none(), "not forwarded to the peer");
    // A new connection on the same ports goes its usual way (the SYN is forwarded).
    a.handle_local(
        ms(30),
        &segment(&client_to_server(), 5, 0, TcpFlags::SYN, 65535, &[], &[]),
    );
    assert!(a.poll_transmit().is_some());
    assert!(locals(&mut a).is_empty());
    // After the memory expires, a stray segment is handled as any unknown one (forwarded).
    let (mut a, _b) = connected();
    a.reset_flows(ms(0));
    locals(&mut a);
    while a.poll_transmit().is_some() {}
    let late = tcpnc_proto::engine::RESET_MEMORY + ms(1);
    a.handle_local(late, &client_ack(C_ISN + 201, S_ISN + 1));
    assert!(locals(&mut a).is_empty());
}

/// The provoking ACK is repeated every second (it may be lost, or sent before the peer's new
/// session is confirmed, and the local stack's RST that answers it may be lost on the path)
/// until the remote TCP, closed, answers one with an RST.
#[test]
fn the_provoking_ack_is_repeated_until_the_remote_end_is_reset() {
    let (mut a, _old_b) = connected();
    let mut fresh_b = Engine::new(EngineConfig::default(), 3).unwrap();
    a.reset_flows(ms(0));
    locals(&mut a);
    assert!(a.poll_transmit().is_some());
    assert_eq!(a.poll_timeout(), Some(tcpnc_proto::engine::PROVOKE_EVERY));
    a.handle_timeout(ms(1000));
    let again = a.poll_transmit().expect("repeated");
    assert!(matches!(FrameRepr::parse(&again), Ok(FrameRepr::Bypass(_))));
    // The local stack's RST (its answer to the remote TCP's ACK) is forwarded; it may be lost
    // on the path, so the provoking ACKs go on.
    let local_rst = segment(
        &client_to_server(),
        C_ISN + 201,
        0,
        TcpFlags::RST,
        0,
        &[],
        &[],
    );
    a.handle_local(ms(1100), &local_rst);
    assert!(a.poll_transmit().is_some(), "the RST is forwarded");
    a.handle_timeout(ms(2000));
    assert!(
        a.poll_transmit().is_some(),
        "provoked again after the local RST"
    );
    // A later local segment of the connection is still answered with an RST.
    a.handle_local(ms(2050), &client_ack(C_ISN + 201, S_ISN + 1));
    assert_eq!(locals(&mut a).len(), 1);
    // The remote TCP, reset, answers the next provoking ACK with an RST: the repeats end.
    let remote_rst = segment(
        &server_to_client(),
        C_ISN + 201,
        0,
        TcpFlags::RST,
        0,
        &[],
        &[],
    );
    fresh_b.handle_local(ms(2100), &remote_rst);
    cross(&mut fresh_b, &mut a);
    assert_eq!(locals(&mut a).len(), 1, "the remote RST is delivered");
    a.handle_timeout(ms(5000));
    assert!(a.poll_transmit().is_none(), "no more provoking ACKs");
}

/// Coded frames still queued when the peer's restart is learnt are not sent to it: in the
/// peer's new session a DATA frame would build a receiver mid-stream in its fresh engine, which
/// then swallows the remote TCP's answer to the provoking ACK, and that end would stall.
#[test]
fn queued_coded_frames_do_not_reach_the_restarted_peer() {
    let (mut a, _old_b) = connected();
    let mut fresh_b = Engine::new(EngineConfig::default(), 3).unwrap();
    for i in 2..6 {
        a.handle_local(
            ms(5),
            &segment(
                &client_to_server(),
                C_ISN + 1 + i * 100,
                S_ISN + 1,
                TcpFlags::ACK,
                1000,
                &[],
                &[7; 100],
            ),
        );
    }
    a.reset_flows(ms(10));
    locals(&mut a);
    cross(&mut a, &mut fresh_b);
    assert!(fresh_b.stats().flows.is_empty(), "no receiver built");
    assert_eq!(locals(&mut fresh_b).len(), 1, "only the provoking ACK");
    // The server TCP's answer to it passes the fresh engine uncoded to the client side.
    fresh_b.handle_local(
        ms(11),
        &segment(
            &server_to_client(),
            S_ISN + 1,
            C_ISN + 201,
            TcpFlags::ACK,
            1000,
            &[],
            &[],
        ),
    );
    let d = fresh_b.poll_transmit().expect("forwarded");
    assert!(matches!(FrameRepr::parse(&d), Ok(FrameRepr::Bypass(_))));
}
