//! The variable coding window (VBNC, Parejiya & Desai §II-B, `vbnc.rs`): one test per rule —
//! it starts at 1, grows with ACKs up to the local TCP's transmission opportunity, shrinks with
//! TCP's window on a loss TCP sees, and halves once per round trip while the round trip exceeds
//! 100 ms — and one through two engines: the DATA frames' windows start at one packet and grow
//! to W as the local TCP's window opens.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::timed::{acknowledge_delivered, take_due};
use common::*;
use tcpnc_proto::settings::WindowPolicy;
use tcpnc_proto::tcp::TcpPacket;
use tcpnc_proto::vbnc::{Observation, RTT_BOUND, Vbnc};
use tcpnc_proto::wire::FrameRepr;
use tcpnc_proto::{Engine, EngineConfig, Policies, RedundancyPolicy};

const PKT: u32 = 1000;
const RTT: Duration = Duration::from_millis(40);

/// A local TCP as the gateway sees it: `flight` packets beyond the ack `acked` packets in.
fn seen(now: Duration, acked: u32, flight: u32, losses: u64, rtt: Duration) -> Observation {
    Observation {
        now,
        sent_end: (acked + flight) * PKT,
        acked: Some(acked * PKT),
        rwnd: 1 << 20,
        rtt: Some(rtt),
        losses,
        packet_size: PKT,
    }
}

/// A TCP in slow start: each round trip its flight doubles (2, 4, 8, … packets), each segment
/// observed as it is sent, the previous round's packets acknowledged one by one.
/// Returns the controller and the packets acknowledged so far.
fn slow_start(v: &mut Vbnc, rounds: u32) -> (Duration, u32) {
    let (mut now, mut acked) = (Duration::ZERO, 0);
    for r in 0..rounds {
        let flight = 2u32 << r;
        for k in 0..flight {
            let t = now + RTT * k / flight;
            v.observe(&seen(t, acked + k / 2, flight, 0, RTT));
        }
        acked += flight / 2;
        now += RTT;
    }
    (now, acked)
}

#[test]
fn starts_at_one() {
    let mut v = Vbnc::new(16);
    assert_eq!(v.window(), 1);
    // Segments sent before any ACK came back: nothing acknowledged, still 1.
    for k in 0..10 {
        let o = Observation {
            acked: None,
            ..seen(Duration::from_millis(k), 0, k as u32, 0, RTT)
        };
        assert_eq!(v.observe(&o), 1);
    }
}

#[test]
fn grows_with_acks_up_to_the_opportunity_and_w() {
    let mut v = Vbnc::new(16);
    let (now, acked) = slow_start(&mut v, 3);
    let after_three = v.window();
    // The window follows TCP's flight (2, 4, 8 packets, growing by its per-round growth).
    assert!((4..=16).contains(&after_three), "window {after_three}");
    let (_, _) = (now, acked);
    let mut w = Vbnc::new(16);
    slow_start(&mut w, 6);
    assert_eq!(w.window(), 16, "bounded by W");
    // ACKs without flight growth: the opportunity (one packet in flight) bounds the growth.
    let mut small = Vbnc::new(16);
    for k in 0..50u32 {
        small.observe(&seen(RTT * k, k, 1, 0, RTT));
    }
    assert!(small.window() <= 2, "window {}", small.window());
}

#[test]
fn shrinks_with_the_window_on_loss() {
    let mut v = Vbnc::new(64);
    let (now, acked) = slow_start(&mut v, 5);
    let before = v.window();
    assert!(before >= 16, "window {before}");
    // A duplicate ACK given to TCP: its window (32 packets in flight) halves, and the coding
    // window follows it down to 16.
    let after = v.observe(&seen(now, acked, 32, 1, RTT));
    assert_eq!(v.cwnd_estimate(), 16 * PKT);
    assert_eq!(after, 16, "{before} -> {after}");
    // The next duplicates of the same episode (within a round trip) do not shrink it again.
    let again = v.observe(&seen(now + RTT / 4, acked, 32, 3, RTT));
    assert_eq!(again, after);
}

#[test]
fn halves_once_per_round_trip_above_the_bound() {
    let mut v = Vbnc::new(64);
    let (now, acked) = slow_start(&mut v, 5);
    let before = v.window();
    let slow = RTT_BOUND + Duration::from_millis(20);
    let half = v.observe(&seen(now, acked + 4, 32, 0, slow));
    assert_eq!(half, before / 2, "{before}");
    // Within the same round trip, ACKs neither halve it again nor grow it.
    let same = v.observe(&seen(now + slow / 2, acked + 8, 32, 0, slow));
    assert_eq!(same, half);
    // One round trip later it halves again.
    let quarter = v.observe(&seen(now + slow, acked + 12, 32, 0, slow));
    assert_eq!(quarter, (half / 2).max(1));
    // Below the bound again, ACKs grow it.
    let grown = v.observe(&seen(now + slow * 2, acked + 40, 32, 0, RTT));
    assert!(grown > quarter, "{quarter} -> {grown}");
}

/// Two engines, 10 ms apart each way, and a local TCP that keeps `cwnd` segments in flight
/// (Linux's initial 10, then slow start: one more per acknowledged segment, at most 40). Returns the number of packets
/// of every DATA frame, in sending order.
fn frame_windows(policy: WindowPolicy) -> Vec<usize> {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.window = 8;
    cfg.policies.redundancy = RedundancyPolicy::Fixed(1.0);
    cfg.policies.window_policy = policy;
    // The window's growth shows in dense combinations (a clean flow would send them alone).
    cfg.policies.systematic_when_clean = tcpnc_proto::config::Switch::Off;
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let (mut to_a, mut to_b) = (BTreeMap::new(), BTreeMap::new());
    let (isn, mut next, mut acked, mut cwnd, mut sent) = (5000u32, 0u32, 0u32, 10u32, 0u64);
    let mut windows = Vec::new();
    for now in 0..400u64 {
        for d in take_due(&mut to_a, now) {
            a.handle_datagram(ms(now), &d);
        }
        while let Some(p) = a.poll_local() {
            let ack = TcpPacket::parse(&p).unwrap().tcp.ack;
            let n = ack.wrapping_sub(isn) / PKT;
            cwnd = (cwnd + n.saturating_sub(acked)).min(40);
            acked = acked.max(n);
        }
        while next < acked + cwnd {
            a.handle_local(ms(now), &bulk_segment(isn, next, PKT));
            next += 1;
        }
        while let Some(d) = a.poll_transmit() {
            if let Ok(FrameRepr::Data { header, .. }) = FrameRepr::parse(&d) {
                windows.push(header.ranges.len());
            }
            sent += 1;
            to_b.insert((now + 10, sent), d);
        }
        for d in take_due(&mut to_b, now) {
            b.handle_datagram(ms(now), &d);
        }
        acknowledge_delivered(&mut b, now);
        while let Some(d) = b.poll_transmit() {
            sent += 1;
            to_a.insert((now + 10, sent), d);
        }
    }
    windows
}

#[test]
fn engine_frames_start_at_one_packet_and_grow_to_w() {
    let fixed = frame_windows(WindowPolicy::Fixed);
    let vbnc = frame_windows(WindowPolicy::Vbnc);
    // Fixed: the initial window's frames span every packet sent, up to W.
    assert_eq!(&fixed[..10], &[1, 2, 3, 4, 5, 6, 7, 8, 8, 8]);
    // VBNC: one packet each until ACKs come back.
    assert_eq!(&vbnc[..10], &[1; 10], "{:?}", &vbnc[..20]);
    assert_eq!(vbnc.iter().copied().max(), Some(8), "grows to W");
    let first_full = vbnc.iter().position(|&n| n == 8).unwrap();
    assert!(
        vbnc[..first_full]
            .windows(2)
            .filter(|p| p[1] < p[0])
            .count()
            <= 2
    );
}
