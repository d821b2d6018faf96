//! Property tests of `tcpnc_proto::tcp`: no panics on arbitrary input; parse/rebuild round trip;
//! trimming always yields verifying checksums and reassembles to the original payload.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use tcpnc_proto::tcp::{
    self, Endpoint, FlowKey, IpParams, SegmentFields, Subheader, SynPolicy, TcpFlags, TcpPacket,
};

fn exercise(bytes: &[u8]) {
    if let Ok(p) = TcpPacket::parse(bytes) {
        let _ = (
            p.options(),
            p.payload(),
            p.checksum_ok(),
            p.flow().normalize(),
        );
        let _ = tcp::scan_options(p.options());
        let len = p.seq_len();
        if len > 0 {
            let s = p.tcp.seq;
            let _ = tcp::trim(&p, s, s.wrapping_add(len - 1));
            let _ = tcp::trim(&p, s.wrapping_add(len / 2), s.wrapping_add(len - 1));
        }
        let _ = tcp::rebuild_packet(&p.flow(), p.subheader(), &p.ip.params());
    }
    let mut m = bytes.to_vec();
    let _ = tcp::rewrite_syn(&mut m, &SynPolicy::new(536));
    if let Ok(s) = Subheader::parse(bytes) {
        let _ = (s.seq(), s.options(), s.payload());
        let _ = s.unpadded_len(s.seq(), s.seq().wrapping_add(bytes.len() as u32));
        let _ = s.unpadded_len(1, 0);
    }
    let _ = tcp::scan_options(bytes);
}

fn addrs(v6: bool, a: u32, b: u32) -> (IpAddr, IpAddr) {
    if v6 {
        (
            IpAddr::V6(Ipv6Addr::new(
                0x2001,
                0xdb8,
                0,
                0,
                0,
                0,
                (a >> 16) as u16,
                a as u16,
            )),
            IpAddr::V6(Ipv6Addr::new(
                0xfd00,
                0,
                0,
                0,
                0,
                0,
                (b >> 16) as u16,
                b as u16,
            )),
        )
    } else {
        (IpAddr::V4(Ipv4Addr::from(a)), IpAddr::V4(Ipv4Addr::from(b)))
    }
}

prop_compose! {
    fn segment()(
        v6 in any::<bool>(), a in any::<u32>(), b in any::<u32>(),
        sp in any::<u16>(), dp in any::<u16>(),
        seq in prop_oneof![any::<u32>(), (u32::MAX - 300)..=u32::MAX],
        ack in any::<u32>(), flags in any::<u8>(), window in any::<u16>(), urgent in 0u16..400,
        opt_words in 0usize..=10, opt_byte in any::<u8>(),
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        tos in any::<u8>(), ttl in any::<u8>(), df in any::<bool>(), ident in any::<u16>(),
        flow_label in 0u32..(1 << 20),
    ) -> Vec<u8> {
        let (sa, da) = addrs(v6, a, b);
        let flow = FlowKey::new(Endpoint::new(sa, sp), Endpoint::new(da, dp));
        let f = SegmentFields { seq, ack, flags: TcpFlags(flags), window, urgent };
        let opts = vec![opt_byte; opt_words * 4];
        let ip = IpParams { tos, ttl, dont_fragment: df, ident, flow_label };
        tcp::build_segment(&flow, &f, &opts, &payload, &ip).unwrap()
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        exercise(&bytes);
    }

    #[test]
    fn mutated_packets_never_panic(
        pkt in segment(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let mut m = pkt.clone();
        for (i, x) in flips {
            let n = m.len();
            m[i % n] ^= x;
        }
        m.truncate(cut % (pkt.len() + 1) + pkt.len() / 2);
        exercise(&m);
    }

    #[test]
    fn built_packets_parse_and_round_trip(pkt in segment()) {
        let p = TcpPacket::parse(&pkt).unwrap();
        prop_assert!(p.checksum_ok());
        prop_assert!(p.ip.header_checksum_ok);
        let (flow, sub) = tcp::split(&p);
        let r = tcp::rebuild_packet(&flow, sub, &p.ip.params()).unwrap();
        prop_assert_eq!(r, pkt);
    }

    #[test]
    fn trims_verify_and_reassemble(
        pkt in segment(),
        cuts in proptest::collection::vec(any::<u16>(), 0..5),
    ) {
        let p = TcpPacket::parse(&pkt).unwrap();
        let flags = p.tcp.flags;
        let len = p.seq_len();
        prop_assume!(len > 0);
        let mut points: Vec<u32> = cuts.iter().map(|c| u32::from(*c) % len).filter(|c| *c > 0).collect();
        points.push(0);
        points.push(len);
        points.sort_unstable();
        points.dedup();
        let mut payload = Vec::new();
        let (mut fins, mut syns) = (0, 0);
        // One buffer reused for every part: `trim_into` gives what `trim` gives.
        let mut reused = vec![0xEE; 3000];
        for w in points.windows(2) {
            let (a, b) = (p.tcp.seq.wrapping_add(w[0]), p.tcp.seq.wrapping_add(w[1] - 1));
            let sub = tcp::trim(&p, a, b).unwrap();
            tcp::trim_into(&p, a, b, &mut reused).unwrap();
            prop_assert_eq!(&reused, &sub);
            let r = tcp::rebuild_packet(&p.flow(), &sub, &p.ip.params()).unwrap();
            let q = TcpPacket::parse(&r).unwrap();
            prop_assert!(q.checksum_ok());
            prop_assert_eq!(q.tcp.seq, a);
            prop_assert_eq!(q.seq_len(), w[1] - w[0]);
            let last = w[1] == len;
            prop_assert_eq!(q.tcp.flags.contains(TcpFlags::PSH), last && flags.contains(TcpFlags::PSH));
            fins += u32::from(q.tcp.flags.contains(TcpFlags::FIN));
            syns += u32::from(q.tcp.flags.contains(TcpFlags::SYN));
            if q.tcp.flags.contains(TcpFlags::URG) {
                prop_assert_eq!(
                    q.tcp.seq.wrapping_add(u32::from(q.tcp.urgent)),
                    p.tcp.seq.wrapping_add(u32::from(p.tcp.urgent))
                );
            }
            payload.extend_from_slice(q.payload());
        }
        prop_assert_eq!(fins, u32::from(flags.contains(TcpFlags::FIN)));
        prop_assert_eq!(syns, u32::from(flags.contains(TcpFlags::SYN)));
        prop_assert_eq!(payload, p.payload());
    }
}
