//! Which engine shard owns a packet or a frame: a gateway with `workers = N` runs N engines per
//! peer and hashes every TCP connection to one of them (issue 14, "Every core"), so one
//! connection's encoder, decoder and ACK state live in one engine.
//!
//! Both directions of a connection and every frame that concerns it map to the same shard:
//! the key is the direction-normalised [`ConnKey`] (RFC 9293 §3.3.1 socket pair), read from
//!
//! * a local IP packet: its TCP 4-tuple;
//! * a DATA frame: its flow identity (the data direction, docs/wire.md §3);
//! * an NC-ACK frame: the flow identity of the DATA direction it acknowledges (§4);
//! * a BYPASS frame (SYN, pure ACK, RST, non-coded data) or a tagged pass-through datagram:
//!   the TCP 4-tuple of the IP packet it carries.
//!
//! Anything else (KEEPALIVE, non-TCP packets, unparsable bytes) goes to shard 0: the engine
//! keeps no per-connection state for it, and a malformed frame is counted by whichever engine
//! sees it. The hash is FNV-1a over the key's bytes, finished with MurmurHash3's `fmix64`
//! before the modulo: stable across runs and machines, no randomness (sans-IO). The finisher
//! matters: FNV-1a's lowest bit is the parity of the key bytes' lowest bits, and Linux gives
//! `connect(2)` even ephemeral ports (`__inet_hash_connect`), so with two shards (or two TUN
//! queues) every connection between two hosts within 256 consecutive ports took one shard.

use std::net::IpAddr;

use tcpnc_wire::{AckPacket, BypassRepr, DataPacket, Frame, FrameType};

use crate::flow_id_conversion::flow_key;
use crate::seam::PASS_THROUGH_TAG;
use crate::tcp::{ConnKey, Endpoint, TcpPacket};

/// The shard (`0..shards`) of an IP packet from the local side.
pub fn local_shard(ip_packet: &[u8], shards: usize) -> usize {
    if shards <= 1 {
        return 0;
    }
    pick(packet_conn(ip_packet), shards)
}

/// The shard (`0..shards`) of a frame from the peer (after the tunnel opened it).
pub fn remote_shard(frame: &[u8], shards: usize) -> usize {
    if shards <= 1 {
        return 0;
    }
    pick(frame_conn(frame), shards)
}

/// The connection a frame concerns, if it names one.
pub fn frame_conn(frame: &[u8]) -> Option<ConnKey> {
    if frame.first() == Some(&PASS_THROUGH_TAG) {
        return packet_conn(&frame[1..]);
    }
    let kind = Frame::new_checked(frame).ok()?.frame_type().ok()?;
    let flow = match kind {
        FrameType::Data => DataPacket::new_checked(frame).ok()?.flow(),
        FrameType::Ack => AckPacket::new_checked(frame).ok()?.flow(),
        FrameType::Bypass => return packet_conn(BypassRepr::parse(frame).ok()?.packet()),
        FrameType::Keepalive => return None,
    };
    Some(flow_key(&flow).normalize().0)
}

/// The connection of a TCP/IP packet, if it is one.
pub fn packet_conn(ip_packet: &[u8]) -> Option<ConnKey> {
    let pkt = TcpPacket::parse(ip_packet).ok()?;
    Some(pkt.flow().normalize().0)
}

fn pick(conn: Option<ConnKey>, shards: usize) -> usize {
    match conn {
        Some(c) => (fmix64(conn_hash(&c)) % shards as u64) as usize,
        None => 0,
    }
}

/// MurmurHash3's 64-bit finaliser (Appleby, `MurmurHash3.cpp`): every output bit depends on
/// every input bit.
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// FNV-1a (64 bit) over both endpoints' address and port bytes.
pub fn conn_hash(conn: &ConnKey) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(PRIME);
        }
    };
    for e in [conn.a, conn.b] {
        endpoint_bytes(&e, &mut eat);
    }
    h
}

fn endpoint_bytes(e: &Endpoint, eat: &mut impl FnMut(&[u8])) {
    match e.addr {
        IpAddr::V4(a) => eat(&a.octets()),
        IpAddr::V6(a) => eat(&a.octets()),
    }
    eat(&e.port.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;
    use crate::flow_id_conversion::flow_id;
    use crate::tcp::{FlowKey, IpParams, SegmentFields, TcpFlags, build_segment};
    use crate::test_util::nc_ack;
    use tcpnc_wire::FrameRepr;

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);

    fn flow(src: Ipv4Addr, sp: u16, dst: Ipv4Addr, dp: u16) -> FlowKey {
        FlowKey::new(Endpoint::new(src.into(), sp), Endpoint::new(dst.into(), dp))
    }

    fn segment(f: &FlowKey, payload: &[u8]) -> Vec<u8> {
        let fields = SegmentFields {
            seq: 7,
            ack: 9,
            flags: TcpFlags::ACK,
            window: 100,
            urgent: 0,
        };
        build_segment(f, &fields, &[], payload, &IpParams::default()).unwrap()
    }

    /// Every packet and frame of one connection lands on one shard, whichever way it travels;
    /// over many connections every shard gets some.
    #[test]
    fn a_connection_keeps_its_shard() {
        let mut seen = [0usize; 4];
        for port in 40000..40200u16 {
            let f = flow(A, port, B, 5001);
            let out = segment(&f, b"data");
            let back = segment(&f.reversed(), b"");
            let s = local_shard(&out, 4);
            assert_eq!(local_shard(&back, 4), s);
            let bypass = FrameRepr::Bypass(BypassRepr::new(&back).unwrap());
            assert_eq!(remote_shard(&bypass.to_vec().unwrap(), 4), s);
            let mut ack = nc_ack(1, 2, 0, 0);
            ack.flow = flow_id(&f).unwrap();
            assert_eq!(remote_shard(&FrameRepr::Ack(ack).to_vec().unwrap(), 4), s);
            let mut tagged = vec![PASS_THROUGH_TAG];
            tagged.extend_from_slice(&back);
            assert_eq!(remote_shard(&tagged, 4), s);
            seen[s] += 1;
        }
        assert!(seen.iter().all(|&n| n > 20), "{seen:?}");
    }

    /// Connections from one host to one service on the even ports Linux gives `connect(2)`,
    /// within one high byte, spread over two and three shards (plain FNV-1a modulo 2 put all
    /// 128 of ports 32768..33024 on one shard).
    #[test]
    fn even_ephemeral_ports_spread_over_shards() {
        for shards in [2usize, 3] {
            let mut seen = vec![0usize; shards];
            for port in (32768..33024u16).step_by(2) {
                seen[local_shard(&segment(&flow(A, port, B, 5001), b""), shards)] += 1;
            }
            let least = 128 / shards / 2;
            assert!(
                seen.iter().all(|&n| n >= least),
                "{shards} shards: {seen:?}"
            );
        }
    }

    /// The DATA vectors of docs/wire.md land on the shard of their connection's TCP packets.
    #[test]
    fn data_frames_follow_their_connection() {
        let doc = include_str!("../../../docs/wire.md");
        let vectors = tcpnc_wire::spec_vectors::hex_blocks(doc, "golden").unwrap();
        let (_, data) = vectors
            .iter()
            .find(|(n, _)| n == "data-v4-uniform")
            .unwrap();
        let f = flow(A, 40000, Ipv4Addr::new(10, 0, 0, 2), 5001);
        for shards in 2..9 {
            assert_eq!(
                remote_shard(data, shards),
                local_shard(&segment(&f, b"x"), shards)
            );
        }
        assert_eq!(frame_conn(data), packet_conn(&segment(&f.reversed(), b"")));
    }

    /// One shard, or nothing that names a connection: shard 0; never out of range.
    #[test]
    fn the_rest_goes_to_shard_zero() {
        let p = segment(&flow(A, 1, B, 2), b"");
        assert_eq!(local_shard(&p, 1), 0);
        assert_eq!(local_shard(b"\x45garbage", 3), 0);
        assert_eq!(remote_shard(&[], 3), 0);
        assert_eq!(remote_shard(&[1, 1, 0], 3), 0);
        assert_eq!(remote_shard(&[0xff; 40], 3), 0);
        assert!(local_shard(&p, 3) < 3);
    }

    /// The hash is FNV-1a over the normalised key: the smaller endpoint first.
    #[test]
    fn hash_is_fnv1a_of_the_normalised_key() {
        let p = segment(&flow(B, 5001, A, 40000), b"");
        let c = packet_conn(&p).unwrap();
        let mut bytes = A.octets().to_vec();
        bytes.extend_from_slice(&40000u16.to_be_bytes());
        bytes.extend_from_slice(&B.octets());
        bytes.extend_from_slice(&5001u16.to_be_bytes());
        let fnv = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        assert_eq!(conn_hash(&c), fnv);
    }
}
