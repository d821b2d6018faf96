//! The tail repair (`tail_repair.rs`, `tail_repair` switch): when the local TCP pauses after a
//! burst — here a video frame — the sender adds repairs sized from the loss estimate, so a
//! frame whose last combinations were lost decodes within the pause instead of waiting for the
//! next frame or a round trip.

mod common;

use common::*;
use tcpnc_proto::settings::Switch;
use tcpnc_proto::tcp::{TcpFlags, TcpPacket, seq_diff};
use tcpnc_proto::{AckPolicy, Engine, EngineConfig, FlowStats, Policies, RedundancyPolicy};
use tcpnc_wire::{FrameRepr, IpVersion};

const ISN: u32 = 9_000;
/// A frame every 33 ms (30 frames/s).
const FRAME_MS: u64 = 33;
/// Full-size segments per frame, then one short one (a frame's last packet).
const FULL: u32 = 7;
const SHORT: u32 = 300;
/// One-way delays: data 20 ms, NC-ACKs 40 ms, so the previous frame is still unacknowledged
/// when a frame ends (its short last packet in the coding buffer).
const DATA_DELAY: u64 = 20;
const ACK_DELAY: u64 = 40;
const FRAMES: u64 = 40;
/// Frames before this one lose 10 % of their DATA frames (the loss estimate learns a rate).
const LEARN: u64 = 20;
/// The frame whose last two combinations are dropped.
const PROBE_FRAME: u64 = 25;

fn config(tail: Switch) -> EngineConfig {
    EngineConfig {
        policies: Policies {
            window: 8,
            redundancy: RedundancyPolicy::Fixed(1.25),
            ack_rule: AckPolicy::InnovativeOnly,
            tail_repair: tail,
            ..Policies::engine_test()
        },
        ..EngineConfig::default()
    }
}

struct Outcome {
    /// Per frame: ms from its sending to the delivery of its last byte at B's local TCP.
    latency: Vec<Option<u64>>,
    /// Bytes delivered in order at B.
    delivered: u32,
    flow: FlowStats,
}

/// Segments of frame `f`: (sequence offset from ISN, payload length).
fn frame_segments(f: u64, full: u32) -> Vec<(u32, u32)> {
    let frame_len = FULL * full + SHORT;
    let start = f as u32 * frame_len;
    (0..=FULL)
        .map(|i| (start + i * full, if i < FULL { full } else { SHORT }))
        .collect()
}

fn is_data(d: &[u8]) -> bool {
    matches!(FrameRepr::parse(d), Ok(FrameRepr::Data { header, .. }) if !header.flush)
}

/// With `lossy`, frames before [`LEARN`] lose 10 % of their DATA frames and [`PROBE_FRAME`]
/// its last two; without, nothing is lost.
fn run(tail: Switch, lossy: bool) -> Outcome {
    let cfg = config(tail);
    let full = cfg.mss_clamp(IpVersion::V4) as u32;
    let frame_len = FULL * full + SHORT;
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let mut rng = TestRng(0x7a11);
    // Fixed delays, nothing lost on the channels themselves (their own generator).
    let mut path_rng = TestRng(1);
    let delay = |delay_ms| {
        Channel::new(ChannelParams {
            delay_ms,
            ..ChannelParams::default()
        })
    };
    let (mut to_b, mut to_a) = (delay(DATA_DELAY), delay(ACK_DELAY));
    let mut latency = vec![None; FRAMES as usize];
    let mut delivered = 0u32;
    for now in 0..(FRAMES + 10) * FRAME_MS {
        for d in to_a.due(ms(now)) {
            a.handle_datagram(ms(now), &d);
        }
        while a.poll_local().is_some() {}
        if a.poll_timeout().is_some_and(|t| t <= ms(now)) {
            a.handle_timeout(ms(now));
        }
        let frame = now / FRAME_MS;
        if now.is_multiple_of(FRAME_MS) && frame < FRAMES {
            for (off, len) in frame_segments(frame, full) {
                let payload = vec![frame as u8; len as usize];
                let seg = segment(
                    &client_to_server(),
                    ISN.wrapping_add(off),
                    1,
                    TcpFlags::ACK,
                    1000,
                    &[],
                    &payload,
                );
                a.handle_local(ms(now), &seg);
            }
        }
        for d in dropping(&mut a, now, lossy, &mut rng) {
            to_b.send(ms(now), d, &mut path_rng);
        }
        for d in to_b.due(ms(now)) {
            b.handle_datagram(ms(now), &d);
        }
        let mut end = None;
        while let Some(p) = b.poll_local() {
            let pkt = TcpPacket::parse(&p).unwrap();
            end = Some(pkt.end_seq());
        }
        if let Some(e) = end {
            delivered = seq_diff(e, ISN) as u32;
            for (f, l) in latency.iter_mut().enumerate() {
                if l.is_none() && delivered >= (f as u32 + 1) * frame_len {
                    *l = Some(now - f as u64 * FRAME_MS);
                }
            }
            let ack = segment(&server_to_client(), 1, e, TcpFlags::ACK, 65535, &[], &[]);
            b.handle_local(ms(now), &ack);
        }
        while let Some(d) = b.poll_transmit() {
            to_a.send(ms(now), d, &mut path_rng);
        }
    }
    let flow = a.stats().flows.values().next().cloned().unwrap();
    Outcome {
        latency,
        delivered,
        flow,
    }
}

/// A's datagrams for the path to B, less the drops [`run`] describes.
fn dropping(a: &mut Engine, now: u64, lossy: bool, rng: &mut TestRng) -> Vec<Vec<u8>> {
    let frame = now / FRAME_MS;
    let mut sent = Vec::new();
    while let Some(d) = a.poll_transmit() {
        sent.push(d);
    }
    let data_frames = sent.iter().filter(|d| is_data(d)).count();
    let mut nth_data = 0;
    sent.retain(|d| {
        if !is_data(d) {
            return true;
        }
        nth_data += 1;
        !(lossy
            && ((frame < LEARN && rng.chance(0.1))
                || (frame == PROBE_FRAME
                    && now.is_multiple_of(FRAME_MS)
                    && nth_data + 2 > data_frames)))
    });
    sent
}

fn frame_len() -> u32 {
    FULL * config(Switch::On).mss_clamp(IpVersion::V4) as u32 + SHORT
}

#[test]
fn a_frames_lost_tail_is_repaired_within_the_pause() {
    let on = run(Switch::On, true);
    let off = run(Switch::Off, true);
    for o in [&on, &off] {
        assert_eq!(
            o.delivered,
            FRAMES as u32 * frame_len(),
            "every frame, in order"
        );
    }
    let probe = PROBE_FRAME as usize;
    let (with, without) = (on.latency[probe].unwrap(), off.latency[probe].unwrap());
    // With the tail repair the frame is complete one data delay after the pause (a few ms
    // after the frame), before the next frame is even sent; without it the sink learns of the
    // missing packets only from the next frame's combinations.
    eprintln!("latency of the frame: {with} ms with, {without} ms without");
    assert!(with < FRAME_MS, "with the tail repair: {with} ms");
    assert!(without >= FRAME_MS, "without: {without} ms");
    assert!(on.flow.tail_repairs > 0);
    assert_eq!(off.flow.tail_repairs, 0);
}

#[test]
fn without_loss_a_pause_sends_nothing() {
    let on = run(Switch::On, false);
    let off = run(Switch::Off, false);
    assert_eq!(on.delivered, FRAMES as u32 * frame_len());
    // q = 1: every pause finds the burst decodable as it is.
    assert_eq!(on.flow.tail_repairs, 0);
    assert_eq!(on.flow.data_sent, off.flow.data_sent);
    assert_eq!(on.latency, off.latency);
}
