//! The TUN's write-side GRO (`tcpnc_gateway::tun_gro`) against the kernel's inverse: every
//! written buffer is cut again with tun-rs's `gso_split` (what the kernel's GSO does to a
//! super-packet) and the packets must be the input, byte for byte, in each connection's order,
//! none lost or duplicated. Fixed batches pin the merge rules; a proptest draws random batches
//! of interleaved IPv4/IPv6 flows with every kind of irregularity.

mod common;

use common::segments::{self, FIN, PSH, Segment, fold, sum};
use proptest::prelude::*;
use tcpnc_gateway::tun_batch::{TUN_HEADROOM, TunTx};
use tcpnc_gateway::tun_gro::{TunGro, TunWrite};
use tun_rs::VirtioNetHdr;

/// One write of a coalesced batch.
struct Written {
    write: TunWrite,
    hdr: VirtioNetHdr,
    /// The bytes after the virtio header.
    packet: Vec<u8>,
    /// The IP packets the kernel cuts it into (the packet itself when not merged).
    segments: Vec<Vec<u8>>,
}

fn be16(b: &[u8]) -> usize {
    usize::from(u16::from_be_bytes([b[0], b[1]]))
}

/// Coalesces `input` in `tx` with `gro` and checks the oracle; returns the writes.
fn run(gro: &mut TunGro, tx: &mut TunTx, input: &[Vec<u8>]) -> Vec<Written> {
    tx.clear();
    for p in input {
        tx.push(p);
    }
    let writes: Vec<TunWrite> = gro.coalesce(tx.bufs_mut()).to_vec();
    assert!(
        writes.windows(2).all(|w| w[0].index < w[1].index),
        "writes in buffer order"
    );
    let carried: usize = writes.iter().map(|w| w.packets).sum();
    assert_eq!(carried, input.len(), "every packet written once");
    let bufs = tx.bufs_mut();
    let out: Vec<Written> = writes.iter().map(|&w| written(&bufs[w.index], w)).collect();
    check_flows(input, &out);
    out
}

/// Reads one written buffer: its header, and its packets as the kernel would cut them.
fn written(buf: &[u8], write: TunWrite) -> Written {
    let packets = write.packets;
    let hdr = VirtioNetHdr::decode(&buf[..TUN_HEADROOM]).unwrap();
    let packet = buf[TUN_HEADROOM..].to_vec();
    if hdr.gso_type == 0 {
        assert_eq!(
            buf[..TUN_HEADROOM],
            [0; TUN_HEADROOM],
            "an unmerged packet: zero header"
        );
        assert_eq!(packets, 1);
        let segments = vec![packet.clone()];
        return Written {
            write,
            hdr,
            packet,
            segments,
        };
    }
    check_super(&packet, &hdr);
    let v6 = packet[0] >> 4 == 6;
    let payload = packet.len() - usize::from(hdr.hdr_len);
    let n = payload.div_ceil(usize::from(hdr.gso_size));
    assert!(n > 1, "a super-packet of one segment");
    assert_eq!(n, packets, "segments reported");
    let mut outs = vec![vec![0u8; usize::from(hdr.hdr_len + hdr.gso_size)]; n];
    let mut sizes = vec![0; n];
    let mut input = packet.clone();
    let cut = tun_rs::gso_split(&mut input, hdr, &mut outs, &mut sizes, 0, v6).unwrap();
    assert_eq!(cut, n);
    let segments = outs
        .iter()
        .zip(&sizes)
        .map(|(o, &s)| o[..s].to_vec())
        .collect();
    Written {
        write,
        hdr,
        packet,
        segments,
    }
}

/// The header and IP/TCP fields of a super-packet (`include/uapi/linux/virtio_net.h`).
fn check_super(packet: &[u8], hdr: &VirtioNetHdr) {
    let v6 = packet[0] >> 4 == 6;
    let iph = if v6 { 40 } else { 20 };
    assert_eq!(hdr.flags, 1, "NEEDS_CSUM");
    assert_eq!(
        hdr.gso_type,
        if v6 { 4 } else { 1 },
        "GSO_TCPV6 / GSO_TCPV4"
    );
    assert_eq!(usize::from(hdr.csum_start), iph);
    assert_eq!(hdr.csum_offset, 16);
    let thl = usize::from(packet[iph + 12] >> 4) * 4;
    assert_eq!(usize::from(hdr.hdr_len), iph + thl);
    assert!(packet.len() <= 65535);
    if v6 {
        assert_eq!(
            be16(&packet[4..6]) + 40,
            packet.len(),
            "IPv6 payload length"
        );
    } else {
        assert_eq!(be16(&packet[2..4]), packet.len(), "IPv4 total length");
        assert_eq!(fold(sum(&packet[..20], 0)), 0xffff, "IPv4 header checksum");
    }
    let partial = fold(segments::pseudo(v6, 6, packet.len() - iph));
    assert_eq!(
        be16(&packet[iph + 16..]),
        usize::from(partial),
        "pseudo-header sum"
    );
}

/// The TCP connection of a packet (addresses and ports), `None` for anything else. IPv4
/// fragments are taken as whole (the tests send first fragments only); an IPv6 hop-by-hop
/// header is skipped.
fn flow_of(p: &[u8]) -> Option<Vec<u8>> {
    let (iph, proto, addrs) = match (p[0] >> 4, p[6]) {
        (4, _) => (20, p[9], &p[12..20]),
        (_, 0) => (40 + 8 * (usize::from(p[41]) + 1), p[40], &p[8..40]),
        _ => (40, p[6], &p[8..40]),
    };
    (proto == 6).then(|| [addrs, &p[iph..iph + 4]].concat())
}

/// Per connection (and for all non-TCP packets together) the packets cut from the writes are
/// the input's, in order.
fn check_flows(input: &[Vec<u8>], out: &[Written]) {
    // Each cut packet with its place in its write and the write's first packet.
    let cut: Vec<(&[u8], usize, &[u8])> = out
        .iter()
        .flat_map(|w| {
            let first = &w.segments[0];
            w.segments
                .iter()
                .enumerate()
                .map(move |(k, s)| (&s[..], k, &first[..]))
        })
        .collect();
    assert_eq!(cut.len(), input.len());
    let mut flows: Vec<Option<Vec<u8>>> = input.iter().map(|p| flow_of(p)).collect();
    flows.sort();
    flows.dedup();
    for flow in flows {
        let ins: Vec<&Vec<u8>> = input.iter().filter(|p| flow_of(p) == flow).collect();
        let outs: Vec<_> = cut.iter().filter(|c| flow_of(c.0) == flow).collect();
        assert_eq!(ins.len(), outs.len(), "packets of flow {flow:?}");
        for (i, &&(o, k, first)) in ins.iter().zip(&outs) {
            same_packet(i, o, k, first);
        }
    }
}

/// `out`, the `k`th packet cut from a write starting with `first`, is `input`; or, in a DF run
/// that kept one IPv4 identification, `input` renumbered as the kernel's segmentation does.
fn same_packet(input: &[u8], out: &[u8], k: usize, first: &[u8]) {
    if input == out {
        return;
    }
    let fixed = k > 0 && input[0] >> 4 == 4 && input[6] & 0x40 != 0 && input[4..6] == first[4..6];
    assert!(fixed, "packet {k} of its write differs from the input");
    assert_eq!(be16(&out[4..6]), (be16(&first[4..6]) + k) % 65536);
    let mut renumbered = out.to_vec();
    renumbered[4..6].copy_from_slice(&input[4..6]);
    renumbered[10..12].copy_from_slice(&input[10..12]);
    assert!(
        renumbered == input,
        "packet {k} differs beyond its identification"
    );
}

/// `n` consecutive segments of `mss` bytes from `seq` 1000, IPv4 identifications counting up.
fn stream(v6: bool, sport: u16, n: usize, mss: usize) -> Vec<Segment> {
    (0..n)
        .map(|i| {
            let seq = 1000 + (i * mss) as u32;
            let payload = (0..mss).map(|j| (seq as usize + j) as u8).collect();
            let mut s = Segment::new(v6, (sport, 80), seq, payload);
            s.id = 100 + i as u16;
            s
        })
        .collect()
}

fn build(segs: &[Segment]) -> Vec<Vec<u8>> {
    segs.iter().map(Segment::build).collect()
}

/// (first buffer, packets) of every write (after the oracle's checks).
fn shape(gro: &mut TunGro, tx: &mut TunTx, input: &[Vec<u8>]) -> Vec<(usize, usize)> {
    let out = run(gro, tx, input);
    out.iter()
        .map(|w| (w.write.index, w.write.packets))
        .collect()
}

/// Timestamp options (NOP, NOP, TS) with `tsval`.
fn timestamps(tsval: u32) -> Vec<u8> {
    [&[1, 1, 8, 10][..], &tsval.to_be_bytes(), &[0, 0, 0, 1]].concat()
}

#[test]
fn thirty_two_full_segments_become_one_write() {
    for v6 in [false, true] {
        let input = build(&stream(v6, 5000, 32, 1448));
        let out = run(&mut TunGro::default(), &mut TunTx::default(), &input);
        assert_eq!(out.len(), 1, "one write (v6 {v6})");
        assert_eq!(out[0].hdr.gso_size, 1448);
        assert_eq!(out[0].segments.len(), 32);
        assert_eq!(out[0].packet.len(), input[0].len() + 31 * 1448);
    }
}

/// A packet whose TCP or IPv4 header checksum fails is written alone and unchanged; the run
/// ends before it and a new one starts after it. Without the check it would be merged (and its
/// checksum recomputed by the kernel): one write.
#[test]
fn bad_checksum_in_a_run_is_written_alone_unchanged() {
    for (v6, at) in [(false, 16), (false, 10), (true, 56), (true, 70)] {
        let mut input = build(&stream(v6, 5000, 16, 1000));
        input[8][at] ^= 0x5a;
        let mut tx = TunTx::default();
        let out = run(&mut TunGro::default(), &mut tx, &input);
        let packets: Vec<usize> = out.iter().map(|w| w.segments.len()).collect();
        assert_eq!(packets, [8, 1, 7], "v6 {v6}, byte {at}");
        assert_eq!(out[1].hdr.gso_type, 0);
        assert!(out[1].packet == input[8], "written unchanged");
    }
    // A bad first segment is written alone; the rest merge.
    let mut input = build(&stream(false, 5000, 16, 1000));
    input[0][40] ^= 1;
    let out = run(&mut TunGro::default(), &mut TunTx::default(), &input);
    let packets: Vec<usize> = out.iter().map(|w| w.segments.len()).collect();
    assert_eq!(packets, [1, 15]);
    assert!(out[0].packet == input[0]);
}

/// PSH or a short segment is the last of a run; a run stops before 65535 bytes.
#[test]
fn runs_end_at_psh_short_segments_and_64k() {
    let (mut gro, mut tx) = (TunGro::default(), TunTx::default());
    let mut segs = stream(false, 5000, 8, 1000);
    segs[3].flags |= PSH;
    assert_eq!(shape(&mut gro, &mut tx, &build(&segs)), [(0, 4), (4, 4)]);
    let mut segs = stream(true, 5000, 8, 1000);
    segs[2].payload.truncate(10);
    for s in &mut segs[3..] {
        s.seq -= 990;
    }
    assert_eq!(shape(&mut gro, &mut tx, &build(&segs)), [(0, 3), (3, 5)]);
    // 7 × 9000 + 40 fits in an IP packet, 8 × 9000 does not.
    let segs = stream(false, 5000, 10, 9000);
    assert_eq!(shape(&mut gro, &mut tx, &build(&segs)), [(0, 7), (7, 3)]);
    // A larger segment does not follow a smaller one.
    let mut segs = stream(false, 5000, 3, 1000);
    segs[0].payload.truncate(500);
    for s in &mut segs[1..] {
        s.seq -= 500;
    }
    assert_eq!(shape(&mut gro, &mut tx, &build(&segs)), [(0, 1), (1, 2)]);
    // A pure ACK or FIN is never merged.
    let mut segs = stream(false, 5000, 6, 1000);
    segs[1].payload.clear();
    segs[3].flags |= FIN;
    for s in &mut segs[2..] {
        s.seq -= 1000;
    }
    assert_eq!(
        shape(&mut gro, &mut tx, &build(&segs)),
        [(0, 1), (1, 1), (2, 1), (3, 1), (4, 2)]
    );
}

/// Headers must match but for the sequence number and the IPv4 identification (counting up,
/// or fixed with DF): each differing field ends the run.
#[test]
fn differing_headers_are_not_merged() {
    type Edit = fn(&mut Segment);
    let edits: [(bool, Edit); 11] = [
        (false, |s| s.ttl = 63),
        (false, |s| s.tos = 4),
        (false, |s| s.ack += 1),
        (false, |s| s.window += 1),
        (false, |s| s.urgent = 1),
        (false, |s| s.seq += 1),
        (false, |s| s.id += 1),
        (false, |s| s.options = timestamps(2)),
        (false, |s| s.options.clear()),
        (true, |s| s.flow_label = 7),
        (true, |s| s.ttl = 1),
    ];
    for (v6, edit) in edits {
        let mut segs = stream(v6, 5000, 4, 500);
        for s in &mut segs {
            s.options = timestamps(1);
        }
        edit(&mut segs[2]);
        let input = build(&segs);
        let out = run(&mut TunGro::default(), &mut TunTx::default(), &input);
        let packets: Vec<usize> = out.iter().map(|w| w.segments.len()).collect();
        assert_eq!(packets[0], 2, "{packets:?}");
        assert!(out[1].segments[0] == input[2]);
    }
}

/// A DF run may keep one IPv4 identification (Linux GRO's fixed-ID case; cut again, the
/// segments are numbered up, harmless for atomic datagrams); without DF it may not.
#[test]
fn fixed_identifications_merge_only_with_df() {
    let mut segs = stream(false, 5000, 8, 1000);
    for s in &mut segs {
        s.id = 7;
    }
    let out = run(&mut TunGro::default(), &mut TunTx::default(), &build(&segs));
    assert_eq!(out.len(), 1);
    for s in &mut segs {
        s.df = false;
    }
    let out = run(&mut TunGro::default(), &mut TunTx::default(), &build(&segs));
    assert_eq!(out.len(), 8);
}

/// Flows interleaved with each other and with UDP merge separately; a pure ACK of a flow ends
/// its run (nothing of a connection is written out of order).
#[test]
fn interleaved_flows_merge_separately_in_order() {
    let a = stream(false, 5000, 6, 1000);
    let b = stream(true, 5000, 6, 1200);
    let c = stream(false, 5001, 6, 700);
    let mut input = Vec::new();
    for i in 0..6 {
        input.push(a[i].build());
        input.push(b[i].build());
        input.push(segments::udp(&c[i]));
        input.push(c[i].build());
        if i == 3 {
            let mut ack = c[i].clone();
            ack.payload.clear();
            ack.seq += 700;
            input.push(ack.build());
        }
    }
    let (mut gro, mut tx) = (TunGro::default(), TunTx::default());
    let writes = shape(&mut gro, &mut tx, &input);
    let tcp: Vec<usize> = writes.iter().map(|w| w.1).filter(|&n| n > 1).collect();
    assert_eq!(tcp, [6, 6, 4, 2]);
}

/// Consecutive batches reuse the coalescer and the buffers: the first buffers keep their
/// place and capacity once warm (no allocation; `tun_gro_alloc.rs` counts them).
#[test]
fn batches_reuse_buffers() {
    let input = build(&stream(false, 5000, 20, 1400));
    let (mut gro, mut tx) = (TunGro::default(), TunTx::default());
    run(&mut gro, &mut tx, &input);
    let before: Vec<(usize, usize)> = tx
        .bufs_mut()
        .iter()
        .map(|b| (b.as_ptr() as usize, b.capacity()))
        .collect();
    for _ in 0..5 {
        run(&mut gro, &mut tx, &input);
        let now: Vec<(usize, usize)> = tx
            .bufs_mut()
            .iter()
            .map(|b| (b.as_ptr() as usize, b.capacity()))
            .collect();
        assert_eq!(now, before);
    }
}

/// How one flow of the proptest numbers and sizes its segments.
#[derive(Debug, Clone)]
struct FlowSpec {
    v6: bool,
    mss: usize,
    /// 0: identifications count up; 1: fixed, DF; 2: fixed, no DF.
    ids: u8,
    timestamps: bool,
}

/// The state of one flow while a batch is drawn.
struct Flow {
    spec: FlowSpec,
    port: u16,
    seq: u32,
    ack: u32,
    window: u16,
    id: u16,
    ts: u32,
}

impl Flow {
    fn segment(&self, len: usize) -> Segment {
        let payload = (0..len)
            .map(|j| (self.seq as usize + j) as u8 ^ self.port as u8)
            .collect();
        let mut s = Segment::new(self.spec.v6, (self.port, 443), self.seq, payload);
        s.ack = self.ack;
        s.window = self.window;
        s.id = self.id;
        s.df = self.spec.ids != 2;
        if self.spec.timestamps {
            s.options = timestamps(self.ts);
        }
        s
    }

    /// The next packet of the flow: `kind` picks a regular full segment (most) or one of the
    /// irregularities, `param` its size or step.
    fn packet(&mut self, kind: u8, param: u16) -> Vec<u8> {
        let mss = self.spec.mss;
        let short = 1 + usize::from(param) % mss;
        match kind {
            12 => self.seq = self.seq.wrapping_add(1 + u32::from(param % 3000)),
            15 => self.ack += 1,
            18 => self.window = self.window.wrapping_add(1),
            19 => self.ts += 1,
            20 => self.id = self.id.wrapping_add(2 + param % 1000),
            _ => {}
        }
        let len = match kind {
            8 | 10 => short,
            11 => 0,
            24 => mss + 1 + usize::from(param % 100),
            _ => mss,
        };
        let mut s = self.segment(len);
        match kind {
            9 | 10 => s.flags |= PSH,
            16 => s.ttl = 1,
            17 => s.tos = 0x20,
            21 => return segments::udp(&s),
            22 => s.flags |= FIN,
            23 => s.seq = s.seq.wrapping_sub(mss as u32),
            25 => s.flow_label = 1 + u32::from(param),
            _ => {}
        }
        let mut p = s.build();
        match kind {
            26 => p = fragment_or_extension(p),
            13 => p[if s.v6 { 56 } else { 36 }] ^= 0x40,
            // The IPv4 header checksum; IPv6 has none: the last payload byte.
            14 if s.v6 => *p.last_mut().unwrap() ^= 0x01,
            14 => p[10] ^= 0x01,
            _ => {}
        }
        if kind != 23 {
            self.seq = self.seq.wrapping_add(len as u32);
        }
        if self.spec.ids == 0 {
            self.id = self.id.wrapping_add(1);
        }
        p
    }
}

/// The TCP packet `p` as one whose connection the coalescer cannot tell: an IPv4 first fragment
/// (MF), or behind an IPv6 hop-by-hop header (RFC 8200 §4.3, one PadN option).
fn fragment_or_extension(mut p: Vec<u8>) -> Vec<u8> {
    if p[0] >> 4 == 4 {
        p[6] |= 0x20;
        p[10..12].fill(0);
        let c = !fold(sum(&p[..20], 0));
        p[10..12].copy_from_slice(&c.to_be_bytes());
        return p;
    }
    let len = be16(&p[4..6]) + 8;
    p[4..6].copy_from_slice(&(len as u16).to_be_bytes());
    p[6] = 0;
    p.splice(40..40, [6, 0, 1, 4, 0, 0, 0, 0]);
    p
}

fn flow_spec() -> impl Strategy<Value = FlowSpec> {
    let mss = prop::sample::select(vec![1usize, 7, 536, 1448, 9000]);
    (any::<bool>(), mss, 0..3u8, any::<bool>()).prop_map(|(v6, mss, ids, timestamps)| FlowSpec {
        v6,
        mss,
        ids,
        timestamps,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random batches of four interleaved flows (full, short, PSH, FIN, pure-ACK, too-large,
    /// retransmitted and out-of-sequence segments, bad TCP or IPv4 header checksums, changed
    /// ack, window, TTL, TOS, flow label, timestamps and identification, IPv4 fragments and IPv6
    /// extension headers, UDP between): cut
    /// again, every batch is its input in each flow's order.
    #[test]
    fn coalesced_batches_cut_back_into_their_input(
        specs in prop::collection::vec(flow_spec(), 4),
        batches in prop::collection::vec(
            // Kinds 27 and up are regular full segments, like 0 to 7.
            prop::collection::vec((0..4usize, 0..44u8, any::<u16>()), 0..70),
            1..4,
        ),
    ) {
        let mut flows: Vec<Flow> = specs
            .into_iter()
            .enumerate()
            .map(|(i, spec)| Flow {
                spec,
                port: 40000 + i as u16,
                seq: 7 + i as u32 * 1_000_000,
                ack: 1,
                window: 1000,
                id: 65530,
                ts: 1,
            })
            .collect();
        let (mut gro, mut tx) = (TunGro::default(), TunTx::default());
        for batch in batches {
            let input: Vec<Vec<u8>> = batch
                .iter()
                .map(|&(f, kind, param)| flows[f].packet(kind, param))
                .collect();
            run(&mut gro, &mut tx, &input);
        }
    }
}
