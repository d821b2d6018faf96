//! The DoF ACK (`dof_ack`, docs/engine.md "DoF ACK") and in-order delivery, with a
//! systematic code: a lost uncoded packet does not make the local TCP see duplicate ACKs (its
//! ack counts every degree of freedom the peer holds), the sender keeps the lost packet until
//! the peer has it, and the peer's local TCP gets its segments in order, the ones decoded past
//! the loss held until the repair arrives. Without a deficit repair the DoF ACK stays off.

mod common;

use std::collections::VecDeque;

use common::*;
use tcpnc_proto::Policies;
use tcpnc_proto::config::{CodingScheme, RepairPolicy, Switch};
use tcpnc_proto::tcp::{TcpFlags, TcpPacket, seq_diff};
use tcpnc_proto::{Engine, EngineConfig, RedundancyPolicy};
use tcpnc_wire::FrameRepr;

const SEG: u32 = 100;
const ISN: u32 = 9_000;
const SEGMENTS: u32 = 60;
/// The segment whose (uncoded) frame is lost.
const LOST: u32 = 10;
/// Time between two segments, and the NC-ACKs' delay back.
const STEP: u64 = 5;
const ACK_DELAY: u64 = 20;
/// Repairs are lost until then: the hole stays open for a while.
const REPAIRS_FROM: u64 = 150;

fn config(dof_ack: Switch) -> EngineConfig {
    EngineConfig {
        policies: Policies {
            window: 4,
            redundancy: RedundancyPolicy::Fixed(1.0),
            scheme: CodingScheme::Systematic,
            dof_ack,
            ..Policies::engine_test()
        },
        ..EngineConfig::default()
    }
}

/// [`config`] without any repair: the local TCP's retransmission is the only repair.
fn config_without_repair() -> EngineConfig {
    let mut c = config(Switch::On);
    c.policies.repair = RepairPolicy::Off;
    c
}

fn is_repair(datagram: &[u8]) -> bool {
    matches!(FrameRepr::parse(datagram), Ok(FrameRepr::Data { header, .. }) if header.flush)
}

/// What one transfer showed.
struct Outcome {
    /// Ack number and window of each TCP ACK the local sender got.
    tcp_acks: Vec<(u32, u16)>,
    /// The highest ack the local sender got while the hole was open.
    ack_while_open: u32,
    /// The sender's coding buffer length at the last step before repairs get through.
    buffered_while_open: usize,
    /// Start sequence numbers of the segments the peer's local TCP got, in order.
    delivered: Vec<u32>,
}

/// [`SEGMENTS`] segments through A → B; the uncoded frame of [`LOST`] is lost, and every
/// repair before [`REPAIRS_FROM`].
fn run(dof_ack: Switch) -> Outcome {
    run_with(config(dof_ack))
}

/// [`run`] with `cfg` at both ends.
fn run_with(cfg: EngineConfig) -> Outcome {
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let mut back: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let mut out = Outcome {
        tcp_acks: Vec::new(),
        ack_while_open: ISN,
        buffered_while_open: 0,
        delivered: Vec::new(),
    };
    for step in 0..SEGMENTS + 60 {
        let now = u64::from(step) * STEP;
        while back.front().is_some_and(|(t, _)| *t <= now) {
            a.handle_datagram(ms(now), &back.pop_front().unwrap().1);
        }
        if a.poll_timeout().is_some_and(|t| t <= ms(now)) {
            a.handle_timeout(ms(now));
        }
        if step < SEGMENTS {
            a.handle_local(ms(now), &bulk_segment(ISN, step, SEG));
        }
        while let Some(d) = a.poll_transmit() {
            let lost = (step == LOST && !is_repair(&d)) || (is_repair(&d) && now < REPAIRS_FROM);
            if !lost {
                b.handle_datagram(ms(now), &d);
            }
        }
        let mut end = None;
        while let Some(p) = b.poll_local() {
            let pkt = TcpPacket::parse(&p).unwrap();
            out.delivered.push(pkt.tcp.seq);
            end = Some(pkt.end_seq());
        }
        if let Some(end) = end {
            let ack = segment(&server_to_client(), 1, end, TcpFlags::ACK, 65535, &[], &[]);
            b.handle_local(ms(now), &ack);
        }
        while let Some(d) = b.poll_transmit() {
            back.push_back((now + ACK_DELAY, d));
        }
        while let Some(p) = a.poll_local() {
            let pkt = TcpPacket::parse(&p).unwrap();
            out.tcp_acks.push((pkt.tcp.ack, pkt.tcp.window));
            if now < REPAIRS_FROM && seq_diff(pkt.tcp.ack, out.ack_while_open) > 0 {
                out.ack_while_open = pkt.tcp.ack;
            }
        }
        if now + STEP == REPAIRS_FROM {
            let flow = a.stats().flows.values().next().cloned().unwrap();
            out.buffered_while_open = flow.coding_buffer_len;
        }
    }
    out
}

fn duplicates(acks: &[(u32, u16)]) -> usize {
    acks.windows(2).filter(|p| p[0] == p[1]).count()
}

fn seq_of(i: u32) -> u32 {
    ISN.wrapping_add(i * SEG)
}

#[test]
fn a_lost_uncoded_packet_is_masked_and_kept_until_seen() {
    let on = run(Switch::On);
    assert_eq!(duplicates(&on.tcp_acks), 0, "{:?}", on.tcp_acks);
    // The local TCP's ack passed the lost segment while the peer still missed it.
    assert!(
        seq_diff(on.ack_while_open, seq_of(LOST + 1)) > 0,
        "ack {} while open",
        on.ack_while_open
    );
    // The lost packet stayed in the coding buffer with everything sent after it.
    let sent_after = ((REPAIRS_FROM - STEP) / STEP - u64::from(LOST) + 1) as usize;
    assert!(
        on.buffered_while_open >= sent_after,
        "buffered {} of {sent_after} while open",
        on.buffered_while_open
    );
    // Everything arrives in the end, and the local TCP's last ack covers it.
    let last = on.tcp_acks.last().unwrap().0;
    assert_eq!(last, seq_of(SEGMENTS));
}

#[test]
fn without_it_the_loss_shows_as_duplicate_acks() {
    let off = run(Switch::Off);
    assert!(duplicates(&off.tcp_acks) >= 3, "{:?}", off.tcp_acks);
    assert!(seq_diff(off.ack_while_open, seq_of(LOST)) <= 0);
    assert_eq!(off.tcp_acks.last().unwrap().0, seq_of(SEGMENTS));
}

/// Without a repair nothing would send the DoF the peer lacks but the local TCP, and a TCP
/// told it was delivered never resends it: the transfer would stall (stop 43 found the Ha &
/// Tsuru plans' no-repair variants at 0.0016 Mbit/s). The DoF ACK stays off there.
#[test]
fn without_a_repair_the_loss_is_left_to_the_local_tcp() {
    let o = run_with(config_without_repair());
    assert!(duplicates(&o.tcp_acks) >= 3, "{:?}", o.tcp_acks);
    assert!(
        seq_diff(o.ack_while_open, seq_of(LOST)) <= 0,
        "ack {} while open",
        o.ack_while_open
    );
}

#[test]
fn the_peer_delivers_in_order_holding_what_was_decoded_past_the_loss() {
    for dof in [Switch::On, Switch::Off] {
        let o = run(dof);
        let expected: Vec<u32> = (0..SEGMENTS).map(seq_of).collect();
        assert_eq!(o.delivered, expected, "dof_ack {dof:?}");
    }
}
