//! The MSS clamp reserves the UNIFORM range form (`EngineConfig::mss_clamp`); a coding window
//! holding a shorter packet before its last one needs the longer CONTIGUOUS form and must shrink
//! until the datagram fits the tunnel MTU, for ordinary combinations and repairs alike.

mod common;

use common::*;
use tcpnc_proto::Policies;
use tcpnc_proto::{CoefficientTransport, Engine, EngineConfig, RedundancyPolicy, RepairPolicy};
use tcpnc_wire::{FrameRepr, IpVersion};

const ISN: u32 = 1_000;

/// W 8, R 1, deficit repair, a 600-byte tunnel MTU; every combination dense (not uncoded
/// while the flow is clean, which would never fill a window).
fn config(coefficients: CoefficientTransport) -> EngineConfig {
    EngineConfig {
        policies: Policies {
            window: 8,
            redundancy: RedundancyPolicy::Fixed(1.0),
            repair: RepairPolicy::Deficit,
            coefficients,
            systematic_when_clean: tcpnc_proto::config::Switch::Off,
            ..Policies::engine_test()
        },
        tunnel_mtu: 600,
        ..EngineConfig::default()
    }
}

#[test]
fn windows_with_a_short_packet_fit_the_mtu() {
    for coefficients in [CoefficientTransport::Seeded, CoefficientTransport::Explicit] {
        let cfg = config(coefficients);
        let mss = cfg.mss_clamp(IpVersion::V4) as usize;
        let mut a = Engine::new(cfg.clone(), 1).unwrap();
        let mut b = Engine::new(cfg.clone(), 2).unwrap();
        // Full segments with a short one (10 bytes) second: the next windows of 8 hold it in
        // the middle until it slides out, and so does every repair over the whole buffer.
        let sizes: Vec<usize> = (0..30).map(|i| if i == 1 { 10 } else { mss }).collect();
        let mut seq = ISN;
        let mut lengths = Vec::new();
        // Widest ordinary combination and widest repair (FLUSH).
        let mut widest = [0usize; 2];
        let mut note = |d: &[u8], lengths: &mut Vec<usize>| {
            lengths.push(d.len());
            if let Ok(FrameRepr::Data { header, .. }) = FrameRepr::parse(d) {
                let w = &mut widest[usize::from(header.flush)];
                *w = (*w).max(header.ranges.len());
            }
        };
        // One flight: NC-ACKs are held back until every segment is sent, so the coding buffer
        // fills and windows reach W; every third datagram is lost.
        let mut acks = Vec::new();
        for (i, &len) in sizes.iter().enumerate() {
            let payload = vec![i as u8; len];
            let seg = client_data_at(seq, &payload);
            seq += len as u32;
            a.handle_local(ms(0), &seg);
            while let Some(d) = a.poll_transmit() {
                note(&d, &mut lengths);
                if lengths.len() % 3 != 0 {
                    b.handle_datagram(ms(0), &d);
                }
            }
            while b.poll_local().is_some() {}
            acks.extend(std::iter::from_fn(|| b.poll_transmit()));
        }
        // The NC-ACKs report the deficit: whole-buffer repairs, delivered without loss.
        for round in 1..10 {
            for ack in acks.drain(..) {
                a.handle_datagram(ms(round), &ack);
            }
            while a.poll_local().is_some() {}
            while let Some(d) = a.poll_transmit() {
                note(&d, &mut lengths);
                b.handle_datagram(ms(round), &d);
            }
            while b.poll_local().is_some() {}
            acks.extend(std::iter::from_fn(|| b.poll_transmit()));
        }
        assert!(
            lengths.iter().all(|&l| l <= cfg.tunnel_mtu),
            "{coefficients:?}: {lengths:?}"
        );
        assert_eq!(a.stats().oversize_datagrams, 0);
        assert!(a.stats().flows.values().next().unwrap().repairs_sent > 0);
        // Everything was seen and delivered in the end.
        let delivered = b.stats().flows.values().next().unwrap().bytes_delivered;
        assert_eq!(delivered, u64::from(seq - ISN), "{coefficients:?}");
        // Windows of the full W still occur once the short packet is out of them, and repairs
        // span more than W packets where the header allows.
        assert_eq!(widest[0], 8, "{coefficients:?}");
        assert!(widest[1] > 8, "{coefficients:?}: {widest:?}");
    }
}

/// A deficit repair combines the whole coding buffer from its oldest packet even when a few
/// packets in it are shorter than the others (the end of an application write, a window edge,
/// the buffer's oldest packet among them):
/// the PATCHED range form (docs/wire.md section 3) fits them in the room the MSS clamp keeps.
/// Cut to the widest range that fits without it, a repair covered only the oldest packets, and
/// the receiver's missing degrees of freedom often lay after them (the lab at 10 % loss, R = 1:
/// half the repairs arrived useless; docs/engine.md "Deficit repair").
#[test]
fn a_repair_covers_a_buffer_with_a_few_short_packets_whole() {
    let cfg = config(CoefficientTransport::Seeded);
    let mss = cfg.mss_clamp(IpVersion::V4) as usize;
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg.clone(), 2).unwrap();
    let short = [5, 12, 20];
    let mut seq = ISN;
    let mut acks = Vec::new();
    let mut sent = 0;
    for i in 0..30u32 {
        let len = if short.contains(&i) {
            100 + 10 * i as usize
        } else {
            mss
        };
        a.handle_local(ms(0), &client_data_at(seq, &vec![i as u8; len]));
        seq += len as u32;
        while let Some(d) = a.poll_transmit() {
            sent += 1;
            if sent % 3 != 0 {
                b.handle_datagram(ms(0), &d);
            }
        }
        while b.poll_local().is_some() {}
        acks.extend(std::iter::from_fn(|| b.poll_transmit()));
    }
    // The held NC-ACKs report the deficit; every repair reaches the newest packet (index 29).
    let mut repairs = Vec::new();
    for round in 1..10 {
        for ack in acks.drain(..) {
            a.handle_datagram(ms(round), &ack);
        }
        while a.poll_local().is_some() {}
        while let Some(d) = a.poll_transmit() {
            assert!(d.len() <= cfg.tunnel_mtu);
            if let Ok(FrameRepr::Data { header, .. }) = FrameRepr::parse(&d)
                && header.flush
            {
                repairs.push((header.first_index, header.ranges.len()));
            }
            b.handle_datagram(ms(round), &d);
        }
        while b.poll_local().is_some() {}
        acks.extend(std::iter::from_fn(|| b.poll_transmit()));
    }
    assert!(!repairs.is_empty());
    for &(first, n) in &repairs {
        assert_eq!(
            first + n as u32 - 1,
            29,
            "repair over {n} packets from {first}: {repairs:?}"
        );
    }
    let delivered = b.stats().flows.values().next().unwrap().bytes_delivered;
    assert_eq!(delivered, u64::from(seq - ISN));
}
