//! Model-based property test of the coding buffer against a byte-level oracle
//! (`BTreeMap<offset, byte | FIN>` of buffered sequence numbers plus acked/next points), with
//! random in-order sends, retransmissions (overlapping, repacketised), FIN, ACKs (stale, partial,
//! beyond), tight limits, IPv4/IPv6 and sequence numbers around the 2^32 wrap.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use tcpnc_proto::coding_buffer::{
    CodingBuffer, CodingBufferError, CodingBufferLimits, DropReason, IndexRange, InsertOutcome,
};
use tcpnc_proto::tcp::{
    self, Endpoint, FlowKey, IpParams, SegmentFields, TcpFlags, TcpPacket, seq_diff,
};

#[derive(Debug, Clone)]
enum Op {
    /// Send the next `len` fresh sequence numbers.
    Next(u16),
    /// Retransmit `len` sequence numbers from `start` (mostly below the send point).
    Retx(u16, u16),
    /// ACK an offset (mostly at most one past the send point).
    Ack(u16),
    /// Query the coding window.
    Window(u16, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u16..80).prop_map(Op::Next),
        3 => (any::<u16>(), 1u16..120).prop_map(|(s, l)| Op::Retx(s, l)),
        3 => any::<u16>().prop_map(Op::Ack),
        1 => (any::<u16>(), 0u8..10).prop_map(|(n, w)| Op::Window(n, w)),
    ]
}

struct Model {
    isn: u32,
    n: u64,
    stream: Vec<u8>,
    /// (low, high) offsets; None before anchoring.
    anchor: Option<(u64, u64)>,
    map: BTreeMap<u64, Option<u8>>,
}

impl Model {
    fn off(&self, seq: u32) -> u64 {
        u64::try_from(i64::from(seq_diff(seq, self.isn))).expect("seq before isn")
    }
}

/// One generated case: the stream, the segments' shape and the buffer's limits.
struct Case {
    isn: u32,
    n: u64,
    salt: u8,
    v6: bool,
    opt_words: usize,
    limits: CodingBufferLimits,
    anchored: bool,
}

/// Running totals the buffer's own stats must match at the end.
#[derive(Default)]
struct Totals {
    acked: u64,
    dup: u64,
    gap: u64,
    full: u64,
    removed: u64,
}

/// The buffer under test beside its oracle.
struct Harness {
    m: Model,
    buf: CodingBuffer,
    flow: FlowKey,
    opts: Vec<u8>,
    limits: CodingBufferLimits,
    sent_next: u64,
    totals: Totals,
}

fn run(case: Case, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut h = Harness::new(&case);
    for op in ops {
        let seg = match op {
            Op::Next(_) | Op::Retx(..) => Some(h.segment_offsets(&op)),
            Op::Ack(x) => {
                h.ack(x)?;
                None
            }
            Op::Window(newest, w) => {
                h.window(newest, w)?;
                None
            }
        };
        if let Some((a, b)) = seg {
            h.insert(a, b)?;
        }
        check_invariants(&h.m, &h.buf, &h.flow, h.limits)?;
    }
    h.check_totals()
}

impl Harness {
    fn new(case: &Case) -> Self {
        let (sa, da): (IpAddr, IpAddr) = if case.v6 {
            (
                Ipv6Addr::LOCALHOST.into(),
                Ipv6Addr::new(0xfd, 0, 0, 0, 0, 0, 0, 2).into(),
            )
        } else {
            (
                Ipv4Addr::new(10, 1, 2, 3).into(),
                Ipv4Addr::new(10, 3, 2, 1).into(),
            )
        };
        let n = case.n;
        let stream: Vec<u8> = (0..n)
            .map(|i| (i as u8).wrapping_mul(151) ^ case.salt)
            .collect();
        Harness {
            m: Model {
                isn: case.isn,
                n,
                stream,
                anchor: case.anchored.then_some((0, 0)),
                map: BTreeMap::new(),
            },
            buf: if case.anchored {
                CodingBuffer::with_start(case.isn, case.limits)
            } else {
                CodingBuffer::new(case.limits)
            },
            flow: FlowKey::new(Endpoint::new(sa, 33333), Endpoint::new(da, 80)),
            opts: vec![1u8; case.opt_words * 4],
            limits: case.limits,
            sent_next: 0,
            totals: Totals::default(),
        }
    }

    /// The offsets `[a, b)` a send or retransmission covers (`n + 1` stands for the FIN).
    fn segment_offsets(&mut self, op: &Op) -> (u64, u64) {
        let n = self.m.n;
        match *op {
            Op::Next(len) if self.sent_next <= n => {
                let a = self.sent_next;
                let b = (a + u64::from(len)).min(n + 1);
                self.sent_next = b;
                (a, b)
            }
            Op::Next(len) | Op::Retx(_, len) => {
                let start = match *op {
                    Op::Retx(s, _) if s % 8 == 0 => u64::from(s) % (n + 1),
                    Op::Retx(s, _) => u64::from(s) % (self.sent_next.min(n) + 1),
                    _ => 0,
                };
                (start, (start + u64::from(len)).min(n + 1))
            }
            Op::Ack(_) | Op::Window(..) => unreachable!("not a segment"),
        }
    }

    fn ack(&mut self, x: u16) -> Result<(), TestCaseError> {
        let (m, buf) = (&mut self.m, &mut self.buf);
        let x = if x.is_multiple_of(8) {
            u64::from(x) % (m.n + 2)
        } else {
            u64::from(x) % (self.sent_next + 2)
        };
        let before: Vec<_> = buf.iter().cloned().collect();
        let out = buf.acknowledge(m.isn.wrapping_add(x as u32));
        match m.anchor {
            None => {
                m.anchor = Some((x, x));
                prop_assert!(out.advanced && out.removed.is_none());
            }
            Some((low, high)) => {
                prop_assert_eq!(out.advanced, x > low);
                if x > low {
                    m.anchor = Some((x, high.max(x)));
                    prop_assert_eq!(out.beyond_buffer, x > high);
                }
                let gone: Vec<u64> = before
                    .iter()
                    .filter(|p| x > low && m.off(p.end) < x)
                    .map(|p| p.index)
                    .collect();
                let want = gone.first().map(|f| IndexRange {
                    first: *f,
                    last: *gone.last().unwrap(),
                });
                prop_assert_eq!(out.removed, want);
                self.totals.removed += gone.len() as u64;
            }
        }
        let keep_from = buf.iter().next().map(|p| m.off(p.start));
        match keep_from {
            Some(k) => m.map.retain(|o, _| *o >= k),
            None => m.map.clear(),
        }
        Ok(())
    }

    fn window(&mut self, newest: u16, w: u8) -> Result<(), TestCaseError> {
        let buf = &self.buf;
        let w = usize::from(w);
        let newest = buf.first_index().unwrap_or(0) + u64::from(newest) % 20;
        let r = buf.coding_window(newest, w);
        match (buf.first_index(), buf.last_index()) {
            (Some(f), Some(l)) if w > 0 && newest <= l => {
                let r = r.expect("window");
                prop_assert!(r.first >= f && r.last <= l);
                prop_assert!(r.contains(newest.max(f)));
                prop_assert_eq!(r.len(), (w as u64).min(l - f + 1));
                prop_assert!(r.last == l || r.first + (w as u64) - 1 == r.last);
                prop_assert!(r.first == f || newest - r.first == (w as u64) - 1);
            }
            _ => prop_assert!(r.is_none()),
        }
        Ok(())
    }

    /// Builds the segment for offsets `[a, b)` and inserts it, checking the outcome against
    /// the oracle.
    fn insert(&mut self, a: u64, b: u64) -> Result<(), TestCaseError> {
        let n = self.m.n;
        let fin = b == n + 1;
        let data = &self.m.stream[a as usize..b.min(n) as usize];
        let mut flags = TcpFlags::ACK | TcpFlags::PSH;
        if fin {
            flags = flags | TcpFlags::FIN;
        }
        let f = SegmentFields {
            seq: self.m.isn.wrapping_add(a as u32),
            ack: 99,
            flags,
            window: 1000,
            urgent: 0,
        };
        let pkt_bytes =
            tcp::build_segment(&self.flow, &f, &self.opts, data, &IpParams::default()).unwrap();
        let pkt = TcpPacket::parse(&pkt_bytes).unwrap();
        let before = (
            self.buf.len(),
            self.buf.stored_bytes(),
            self.buf.next_index(),
        );
        let out = self.buf.insert(&pkt).unwrap();
        self.check_insert(a, b, before, &out)
    }

    /// The oracle's view of an insertion of `[a, b)` into a buffer that held `before` =
    /// (packets, bytes, next index).
    fn check_insert(
        &mut self,
        a: u64,
        b: u64,
        before: (usize, usize, u64),
        out: &InsertOutcome,
    ) -> Result<(), TestCaseError> {
        let m = &mut self.m;
        let (low, high) = *m.anchor.get_or_insert((a, a));
        let buf_start = m.map.keys().next().copied().unwrap_or(low);
        let acked = (a..b).filter(|o| *o < buf_start).count() as u32;
        let dup = (a..b).filter(|o| m.map.contains_key(o)).count() as u32;
        prop_assert_eq!(out.acked_seq, acked);
        prop_assert_eq!(out.duplicate_seq, dup);
        let mut accepted = false;
        if b > high {
            let new_len = (b - a.max(high)) as u32;
            if a > high {
                prop_assert_eq!(out.dropped, Some(DropReason::Gap));
                prop_assert_eq!(out.dropped_seq, new_len);
                self.totals.gap += 1;
            } else {
                let (len_before, bytes_before, next_index) = before;
                let payload = (b.min(m.n) - high.min(m.n)) as usize;
                let hdr = 16 + self.opts.len();
                let fits = len_before == 0
                    || (len_before < self.limits.max_packets.max(1)
                        && bytes_before + hdr + payload <= self.limits.max_bytes);
                if fits {
                    prop_assert_eq!(out.dropped, None);
                    prop_assert_eq!(out.dropped_seq, 0);
                    prop_assert_eq!(out.new_index, Some(next_index));
                    accepted = true;
                    for o in high..b {
                        m.map.insert(o, m.stream.get(o as usize).copied());
                    }
                    m.anchor = Some((low, b));
                } else {
                    prop_assert_eq!(out.dropped, Some(DropReason::Full));
                    prop_assert_eq!(out.dropped_seq, new_len);
                    self.totals.full += 1;
                }
            }
        } else {
            prop_assert_eq!(out.dropped, None);
            prop_assert_eq!(out.dropped_seq, 0);
        }
        if !accepted {
            prop_assert_eq!(out.new_index, None);
        }
        self.totals.acked += u64::from(acked);
        self.totals.dup += u64::from(dup);
        self.check_touched(a, b, out)
    }

    /// Touched = packets intersecting `[a, b)`.
    fn check_touched(&self, a: u64, b: u64, out: &InsertOutcome) -> Result<(), TestCaseError> {
        let hit: Vec<u64> = self
            .buf
            .iter()
            .filter(|p| self.m.off(p.start) < b && self.m.off(p.end) >= a)
            .map(|p| p.index)
            .collect();
        let want = hit.first().map(|f| IndexRange {
            first: *f,
            last: *hit.last().unwrap(),
        });
        prop_assert_eq!(out.touched, want);
        prop_assert_eq!(out.most_recent(), want.map(|r| r.last));
        Ok(())
    }

    fn check_totals(&self) -> Result<(), TestCaseError> {
        let (s, t, buf) = (self.buf.stats(), &self.totals, &self.buf);
        prop_assert_eq!(s.acked_seq, t.acked);
        prop_assert_eq!(s.duplicate_seq, t.dup);
        prop_assert_eq!(s.gap_drops, t.gap);
        prop_assert_eq!(s.full_drops, t.full);
        prop_assert_eq!(s.packets_removed, t.removed);
        prop_assert_eq!(s.packets_created, buf.next_index());
        prop_assert_eq!(s.packets_created - s.packets_removed, buf.len() as u64);
        Ok(())
    }
}

fn check_invariants(
    m: &Model,
    buf: &CodingBuffer,
    flow: &FlowKey,
    limits: CodingBufferLimits,
) -> Result<(), TestCaseError> {
    let pk: Vec<_> = buf.iter().collect();
    prop_assert!(pk.len() <= limits.max_packets.max(1));
    let stored: usize = pk.iter().map(|p| p.bytes.len()).sum();
    prop_assert_eq!(stored, buf.stored_bytes());
    prop_assert!(pk.len() <= 1 || stored <= limits.max_bytes);
    if let Some((low, high)) = m.anchor {
        prop_assert_eq!(buf.base(), Some(m.isn.wrapping_add(low as u32)));
        prop_assert_eq!(buf.next_seq(), Some(m.isn.wrapping_add(high as u32)));
        if let (Some(f), Some(l)) = (pk.first(), pk.last()) {
            prop_assert!(m.off(f.start) <= low && low <= m.off(f.end));
            prop_assert_eq!(m.off(l.end) + 1, high);
        } else {
            prop_assert_eq!(low, high);
        }
    } else {
        prop_assert!(buf.base().is_none() && pk.is_empty());
    }
    let mut covered = 0u64;
    for (i, p) in pk.iter().enumerate() {
        prop_assert_eq!(Some(p.index), buf.first_index().map(|f| f + i as u64));
        prop_assert_eq!(buf.get(p.index), Some(*p));
        if i > 0 {
            prop_assert_eq!(pk[i - 1].end.wrapping_add(1), p.start);
        }
        let (so, eo) = (m.off(p.start), m.off(p.end));
        prop_assert!(so <= eo);
        covered += eo - so + 1;
        prop_assert!(m.map.contains_key(&so) && m.map.contains_key(&eo));
        prop_assert_eq!(buf.find_seq(p.end).map(|q| q.index), Some(p.index));
        // Real bytes: rebuild, checksum, seq, payload, FIN.
        let raw = tcp::rebuild_packet(flow, &p.bytes, &IpParams::default()).unwrap();
        let q = TcpPacket::parse(&raw).unwrap();
        prop_assert!(q.checksum_ok());
        prop_assert_eq!(q.tcp.seq, p.start);
        prop_assert_eq!(q.seq_len(), p.seq_len());
        prop_assert_eq!(p.fin, eo == m.n);
        prop_assert_eq!(q.tcp.flags.contains(TcpFlags::FIN), p.fin);
        prop_assert_eq!(
            q.payload(),
            &m.stream[so as usize..(eo + 1).min(m.n) as usize]
        );
    }
    prop_assert_eq!(covered, m.map.len() as u64);
    // `range`: the buffered packets of the indices asked for, in order, for ranges that start
    // before the buffer, end past it, or are inverted.
    let f = buf.first_index().unwrap_or(0).saturating_sub(1);
    for (a, b) in [(0, 0), (0, 3), (1, 1), (2, 9), (5, 2), (0, 40), (30, 50)] {
        let r = IndexRange {
            first: f + a,
            last: f + b,
        };
        let got: Vec<u64> = buf.range(r).map(|p| p.index).collect();
        let want: Vec<u64> = pk
            .iter()
            .map(|p| p.index)
            .filter(|i| r.first <= *i && *i <= r.last)
            .collect();
        prop_assert_eq!(got, want);
    }
    if let Some(l) = buf.last_index() {
        prop_assert_eq!(buf.next_index(), l + 1);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 600,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn coding_buffer_matches_model(
        isn in prop_oneof![any::<u32>(), (u32::MAX - 400)..=u32::MAX],
        n in 1u64..500,
        salt in any::<u8>(),
        v6 in any::<bool>(),
        opt_words in 0usize..3,
        max_packets in 0usize..14,
        max_bytes in 0usize..900,
        anchored in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..70),
    ) {
        let limits = CodingBufferLimits { max_packets, max_bytes };
        let case = Case { isn, n, salt, v6, opt_words, limits, anchored };
        run(case, ops)?;
    }
}

#[test]
fn control_and_pure_ack_are_refused() {
    let flow = FlowKey::new(
        Endpoint::new(Ipv4Addr::new(1, 1, 1, 1).into(), 1),
        Endpoint::new(Ipv4Addr::new(2, 2, 2, 2).into(), 2),
    );
    let mk = |flags: TcpFlags, data: &[u8]| {
        let f = SegmentFields {
            seq: 5,
            ack: 1,
            flags,
            window: 9,
            urgent: 0,
        };
        tcp::build_segment(&flow, &f, &[], data, &IpParams::default()).unwrap()
    };
    let mut b = CodingBuffer::new(CodingBufferLimits::default());
    let syn = mk(TcpFlags::SYN, &[]);
    let rst = mk(TcpFlags::RST | TcpFlags::ACK, &[]);
    let ack = mk(TcpFlags::ACK, &[]);
    for (p, e) in [
        (&syn, CodingBufferError::Control),
        (&rst, CodingBufferError::Control),
        (&ack, CodingBufferError::NoSequenceSpace),
    ] {
        assert_eq!(b.insert(&TcpPacket::parse(p).unwrap()), Err(e));
    }
    assert!(b.is_empty() && b.base().is_none() && b.stats().segments == 0);
}

#[test]
fn retransmission_touches_buffered_packets_and_window() {
    // Three in-order packets across the wrap, then a repacketised retransmission of all three
    // plus new bytes: touched = all four, one new packet; coding window around it.
    let flow = FlowKey::new(
        Endpoint::new(Ipv4Addr::new(1, 1, 1, 1).into(), 1),
        Endpoint::new(Ipv4Addr::new(2, 2, 2, 2).into(), 2),
    );
    let isn = u32::MAX - 15;
    let mk = |off: u32, len: usize| {
        let f = SegmentFields {
            seq: isn.wrapping_add(off),
            ack: 1,
            flags: TcpFlags::ACK,
            window: 9,
            urgent: 0,
        };
        tcp::build_segment(&flow, &f, &[], &vec![7u8; len], &IpParams::default()).unwrap()
    };
    let mut b = CodingBuffer::with_start(isn, CodingBufferLimits::default());
    for i in 0..3 {
        let o = b
            .insert(&TcpPacket::parse(&mk(i * 10, 10)).unwrap())
            .unwrap();
        assert_eq!(o.new_index, Some(u64::from(i)));
    }
    let o = b.insert(&TcpPacket::parse(&mk(5, 40)).unwrap()).unwrap();
    assert_eq!(o.touched, Some(IndexRange { first: 0, last: 3 }));
    assert_eq!((o.new_index, o.duplicate_seq), (Some(3), 25));
    assert_eq!(
        b.get(3).map(|p| (p.start, p.end)),
        Some((isn.wrapping_add(30), isn.wrapping_add(44)))
    );
    assert_eq!(
        b.coding_window(3, 2),
        Some(IndexRange { first: 2, last: 3 })
    );
    assert_eq!(
        b.coding_window(1, 3),
        Some(IndexRange { first: 0, last: 2 })
    );
    assert_eq!(
        b.coding_window(0, 8),
        Some(IndexRange { first: 0, last: 3 })
    );
    let se: Vec<_> = b.start_end(IndexRange { first: 1, last: 2 }).collect();
    assert_eq!(
        se,
        vec![
            (isn.wrapping_add(10), isn.wrapping_add(19)),
            (isn.wrapping_add(20), isn.wrapping_add(29))
        ]
    );
    // ACK inside packet 1 removes packet 0 only; Base is the ACK.
    let a = b.acknowledge(isn.wrapping_add(12));
    assert_eq!(a.removed, Some(IndexRange { first: 0, last: 0 }));
    assert_eq!(b.base(), Some(isn.wrapping_add(12)));
    assert_eq!(
        b.coding_window(0, 2),
        Some(IndexRange { first: 1, last: 2 })
    );
    assert_eq!(b.coding_window(4, 2), None);
    // Stale ACK: nothing.
    assert!(!b.acknowledge(isn.wrapping_add(3)).advanced);
}
