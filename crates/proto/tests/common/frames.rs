//! A frame stream through two engines, for the repairs around a pause of the local TCP
//! (`tail_repair.rs`): every `frame_ms` the sender's TCP writes a frame of [`FULL`] full-size
//! segments and a short one; data take [`DATA_DELAY`] ms one way, NC-ACKs [`ACK_DELAY`] ms,
//! so the previous frame is still unacknowledged when a frame ends. The path drops the DATA
//! frames a test's rule names; nothing else is lost.

use std::time::Duration;

use tcpnc_proto::tcp::{TcpFlags, TcpPacket, seq_diff};
use tcpnc_proto::{Engine, EngineConfig, FlowStats};
use tcpnc_wire::{FrameRepr, IpVersion};

use super::{Channel, ChannelParams, TestRng, client_data_at, ms, segment, server_to_client};

pub const ISN: u32 = 9_000;
/// Full-size segments per frame, then one short one (a frame's last packet).
pub const FULL: u32 = 7;
pub const SHORT: u32 = 300;
pub const DATA_DELAY: u64 = 20;
pub const ACK_DELAY: u64 = 40;
pub const FRAMES: u64 = 40;

/// One DATA frame the sender emitted, as a drop rule sees it.
#[derive(Debug, Clone, Copy)]
pub struct Emitted {
    /// Milliseconds since the start.
    pub now: u64,
    /// The stream frame last written (`now / frame_ms`).
    pub frame: u64,
    /// A repair combination (FLUSH), not one of R's combinations of an arrival.
    pub repair: bool,
    /// For a non-repair: its position (1-based) among this millisecond's non-repair DATA
    /// frames, and their number.
    pub nth: usize,
    pub of: usize,
}

/// What a run delivered.
pub struct Outcome {
    /// Per frame: ms from its sending to the delivery of its last byte at B's local TCP.
    pub latency: Vec<Option<u64>>,
    /// Bytes delivered in order at B.
    pub delivered: u32,
    /// The sender's flow counters.
    pub flow: FlowStats,
}

/// Bytes of one frame under `cfg`'s MSS clamp.
pub fn frame_len(cfg: &EngineConfig) -> u32 {
    FULL * cfg.mss_clamp(IpVersion::V4) as u32 + SHORT
}

/// Runs [`FRAMES`] frames, one every `frame_ms`, dropping the DATA frames `drop` names.
pub fn run_frames(
    cfg: EngineConfig,
    frame_ms: u64,
    mut drop: impl FnMut(&Emitted) -> bool,
) -> Outcome {
    let full = cfg.mss_clamp(IpVersion::V4) as u32;
    let len = frame_len(&cfg);
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    // Fixed delays, nothing lost on the channels themselves.
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
    for now in 0..(FRAMES + 10) * frame_ms {
        for d in to_a.due(ms(now)) {
            a.handle_datagram(ms(now), &d);
        }
        while a.poll_local().is_some() {}
        if a.poll_timeout().is_some_and(|t| t <= ms(now)) {
            a.handle_timeout(ms(now));
        }
        let frame = now / frame_ms;
        if now.is_multiple_of(frame_ms) && frame < FRAMES {
            write_frame(&mut a, ms(now), frame, full);
        }
        for d in emitted(&mut a, now, frame, &mut drop) {
            to_b.send(ms(now), d, &mut path_rng);
        }
        for d in to_b.due(ms(now)) {
            b.handle_datagram(ms(now), &d);
        }
        let mut end = None;
        while let Some(p) = b.poll_local() {
            end = Some(TcpPacket::parse(&p).unwrap().end_seq());
        }
        if let Some(e) = end {
            delivered = seq_diff(e, ISN) as u32;
            for (f, l) in latency.iter_mut().enumerate() {
                if l.is_none() && delivered >= (f as u32 + 1) * len {
                    *l = Some(now - f as u64 * frame_ms);
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

/// The local TCP writes frame `f`: [`FULL`] segments of `full` bytes and one of [`SHORT`].
fn write_frame(a: &mut Engine, now: Duration, f: u64, full: u32) {
    let start = f as u32 * (FULL * full + SHORT);
    for i in 0..=FULL {
        let len = if i < FULL { full } else { SHORT };
        let payload = vec![f as u8; len as usize];
        let seq = ISN.wrapping_add(start + i * full);
        a.handle_local(now, &client_data_at(seq, &payload));
    }
}

/// A's datagrams for the path to B, less the DATA frames `drop` names.
fn emitted(
    a: &mut Engine,
    now: u64,
    frame: u64,
    drop: &mut impl FnMut(&Emitted) -> bool,
) -> Vec<Vec<u8>> {
    let mut sent = Vec::new();
    while let Some(d) = a.poll_transmit() {
        sent.push(d);
    }
    let kind = |d: &[u8]| match FrameRepr::parse(d) {
        Ok(FrameRepr::Data { header, .. }) => Some(header.flush),
        _ => None,
    };
    let of = sent.iter().filter(|d| kind(d) == Some(false)).count();
    let mut nth = 0;
    sent.retain(|d| {
        let Some(repair) = kind(d) else {
            return true;
        };
        nth += usize::from(!repair);
        !drop(&Emitted {
            now,
            frame,
            repair,
            nth: if repair { 0 } else { nth },
            of,
        })
    });
    sent
}
