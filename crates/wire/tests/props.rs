//! Property tests: round trips, no panics on arbitrary input, truncation, invalid reprs.

use proptest::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};

use tcpnc_wire::fuzzing::parse_any;
use tcpnc_wire::{
    AckPacket, AckRepr, BypassRepr, Coefficients, DataPacket, DataRepr, FlowId, FrameRepr,
    KeepaliveRepr, RangeForm, SeqRange, WireError, data_header_len, flags, header_overhead,
};

/// Encodes `h` with its ranges in `form` (canonical or not) through the view's setters; `None`
/// if the ranges cannot be written in that form at all (gaps, unequal lengths for UNIFORM, or
/// more than 255 exceptions for PATCHED, whose count is the one `form` carries).
fn emit_in_form(h: &DataRepr, form: RangeForm, payload: &[u8]) -> Option<Vec<u8>> {
    let n = h.ranges.len();
    let gaps_zero = h
        .ranges
        .windows(2)
        .all(|w| w[1].start == w[0].end.wrapping_add(1));
    let lens: Vec<u16> = h
        .ranges
        .iter()
        .map(|r| r.end.wrapping_sub(r.start) as u16)
        .collect();
    let ok = match form {
        RangeForm::Gapped => true,
        RangeForm::Contiguous => gaps_zero,
        RangeForm::Uniform => gaps_zero && lens[..n - 1].iter().all(|&l| l == lens[0]),
        RangeForm::Patched { exceptions } => {
            let longest = lens.iter().copied().max().unwrap_or(0);
            gaps_zero && lens.iter().filter(|&&l| l < longest).count() == usize::from(exceptions)
        }
    };
    if !ok {
        return None;
    }
    let len = data_header_len(n, h.coefficients.mode(), h.flow.ip_version(), form);
    let mut buf = vec![0u8; len + payload.len()];
    buf[0] = tcpnc_wire::VERSION;
    buf[1] = 1;
    let mut p = DataPacket::new_unchecked(&mut buf[..]);
    let form_flags = match form {
        RangeForm::Gapped => 0,
        RangeForm::Contiguous => flags::data::CONTIGUOUS,
        RangeForm::Uniform => flags::data::CONTIGUOUS | flags::data::UNIFORM,
        RangeForm::Patched { .. } => flags::data::UNIFORM,
    };
    p.set_flags((h.flags_byte() & !(flags::data::CONTIGUOUS | flags::data::UNIFORM)) | form_flags);
    p.set_count(n as u8);
    if let RangeForm::Patched { exceptions } = form {
        p.set_exception_count(exceptions);
        let longest = lens.iter().copied().max().unwrap_or(0);
        let listed = lens.iter().enumerate().filter(|(_, l)| **l < longest);
        for (j, (i, &len)) in listed.enumerate() {
            p.set_exception(j, i as u8, len);
        }
    }
    p.set_flow(&h.flow);
    p.set_pid(h.pid);
    p.set_base(h.base);
    p.set_first_index(h.first_index);
    p.set_start(h.ranges[0].start);
    for (i, &len) in lens.iter().enumerate() {
        if i >= 1 {
            let gap = h.ranges[i]
                .start
                .wrapping_sub(h.ranges[i - 1].end)
                .wrapping_sub(1);
            p.set_gap_delta(i, gap as u16);
        }
        p.set_len_delta(i, len);
    }
    match &h.coefficients {
        Coefficients::Explicit(c) => p.coefficients_mut().copy_from_slice(c),
        Coefficients::Seeded(seed) => p.set_seed(*seed),
        Coefficients::Systematic => {}
    }
    p.payload_mut().copy_from_slice(payload);
    Some(buf)
}

fn flow() -> impl Strategy<Value = FlowId> {
    prop_oneof![
        (
            any::<[u8; 4]>(),
            any::<u16>(),
            any::<[u8; 4]>(),
            any::<u16>()
        )
            .prop_map(|(s, sp, d, dp)| FlowId::v4(
                Ipv4Addr::from(s),
                sp,
                Ipv4Addr::from(d),
                dp
            )),
        (
            any::<[u8; 16]>(),
            any::<u16>(),
            any::<[u8; 16]>(),
            any::<u16>()
        )
            .prop_map(|(s, sp, d, dp)| FlowId::v6(
                Ipv6Addr::from(s),
                sp,
                Ipv6Addr::from(d),
                dp
            )),
    ]
}

/// Valid ranges: Start_1 anywhere, then 16-bit gaps and lengths (wrapping freely): arbitrary
/// ones (the gapped form), all gaps 0 (contiguous), all gaps 0 and equal lengths but maybe the
/// last (uniform), and uniform but for one gap or length (gapped or contiguous after all).
fn ranges(n: usize) -> impl Strategy<Value = Vec<SeqRange>> {
    let arbitrary = prop::collection::vec((any::<u16>(), any::<u16>()), n).boxed();
    let contiguous = prop::collection::vec(any::<u16>(), n)
        .prop_map(|lens| lens.into_iter().map(|l| (0, l)).collect())
        .boxed();
    let uniform = (any::<u16>(), any::<u16>())
        .prop_map(move |(len, last)| {
            let mut d = vec![(0u16, len); n];
            d[n - 1].1 = last;
            d
        })
        .boxed();
    let almost = (any::<u16>(), 0..n, any::<bool>(), 1u16..=u16::MAX)
        .prop_map(move |(len, at, gap, delta)| {
            let mut d = vec![(0u16, len); n];
            if gap {
                d[at].0 = delta;
            } else {
                d[at].1 = len.wrapping_add(delta);
            }
            d
        })
        .boxed();
    // Contiguous, one shared length but for a few (PATCHED, or CONTIGUOUS where not shorter).
    let patched = (
        any::<u16>(),
        prop::collection::vec((0..n, any::<u16>()), 0..8),
    )
        .prop_map(move |(len, odd)| {
            let mut d = vec![(0u16, len); n];
            for (at, l) in odd {
                d[at].1 = l;
            }
            d
        })
        .boxed();
    (
        any::<u32>(),
        prop_oneof![arbitrary, contiguous, uniform, almost, patched],
    )
        .prop_map(|(start, deltas)| {
            let mut out: Vec<SeqRange> = Vec::with_capacity(deltas.len());
            for (gap, len) in deltas {
                let s = match out.last() {
                    None => start,
                    Some(prev) => prev.end.wrapping_add(1).wrapping_add(u32::from(gap)),
                };
                out.push(SeqRange::new(s, s.wrapping_add(u32::from(len))));
            }
            out
        })
}

fn data_repr() -> impl Strategy<Value = DataRepr> {
    prop_oneof![1usize..=8, 1usize..=255]
        .prop_flat_map(|n| {
            let coeffs = prop_oneof![
                prop::collection::vec(any::<u8>(), n).prop_map(Coefficients::Explicit),
                any::<u32>().prop_map(Coefficients::Seeded),
                Just(if n == 1 {
                    Coefficients::Systematic
                } else {
                    Coefficients::Seeded(n as u32)
                }),
            ];
            (
                any::<(bool, bool)>(),
                flow(),
                any::<(u32, u32, u32)>(),
                ranges(n),
                coeffs,
            )
        })
        .prop_map(
            |((redundant, flush), flow, (pid, base, first_index), ranges, coefficients)| DataRepr {
                redundant,
                flush,
                flow,
                pid,
                base,
                first_index,
                ranges,
                coefficients,
            },
        )
}

fn ack_repr() -> impl Strategy<Value = AckRepr> {
    (
        flow(),
        any::<(u32, u32, u32, u32)>(),
        any::<(u16, u16)>(),
        any::<(bool, bool, bool)>(),
        any::<Option<u32>>(),
    )
        .prop_map(
            |(flow, (ack, window, pid_echo, loss_bitmap), (lost_dof, unordering), f, dependent)| {
                AckRepr {
                    flow,
                    ack,
                    window,
                    pid_echo,
                    loss_bitmap,
                    lost_dof,
                    unordering,
                    redundant: f.0,
                    dependent,
                    pause: f.1,
                    update: f.2,
                }
            },
        )
}

fn ip_packet() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![Just(0x40u8), Just(0x60u8)],
        any::<u8>(),
        prop::collection::vec(any::<u8>(), 0..80),
    )
        .prop_map(|(v, low, mut rest)| {
            rest.insert(0, v | (low & 0x0f));
            rest
        })
}

/// A valid frame, encoded.
fn frame_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (data_repr(), prop::collection::vec(any::<u8>(), 0..64)).prop_map(|(header, payload)| {
            FrameRepr::Data {
                header,
                payload: &payload,
            }
            .to_vec()
            .unwrap()
        }),
        ack_repr().prop_map(|a| FrameRepr::Ack(a).to_vec().unwrap()),
        ip_packet().prop_map(|p| FrameRepr::Bypass(BypassRepr::new(&p).unwrap())
            .to_vec()
            .unwrap()),
        any::<(bool, u64)>().prop_map(|(reply, nonce)| {
            FrameRepr::Keepalive(KeepaliveRepr { reply, nonce })
                .to_vec()
                .unwrap()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn data_round_trip(header in data_repr(), payload in prop::collection::vec(any::<u8>(), 0..64)) {
        let repr = FrameRepr::Data { header: header.clone(), payload: &payload };
        let bytes = repr.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), header.buffer_len() + payload.len());
        prop_assert_eq!(FrameRepr::parse(&bytes).unwrap(), repr);
        let view = DataPacket::new_checked(&bytes[..]).unwrap();
        prop_assert_eq!(DataRepr::parse(&view).unwrap(), header.clone());
        // The emitted range form is the canonical one, and the header length is its length.
        let form = RangeForm::of(&header.ranges);
        prop_assert_eq!(view.range_form(), form);
        prop_assert_eq!(header.range_form(), form);
        prop_assert_eq!(
            view.header_len(),
            data_header_len(header.ranges.len(), header.coefficients.mode(), header.flow.ip_version(), form)
        );
        prop_assert!(view.header_len() <= header_overhead(header.ranges.len(), header.coefficients.mode(), header.flow.ip_version()));
        let gaps_zero = header.ranges.windows(2).all(|w| w[1].start == w[0].end.wrapping_add(1));
        let n = header.ranges.len();
        prop_assert_eq!(form != RangeForm::Gapped, n >= 2 && gaps_zero);
        for i in 0..n {
            let r = header.ranges[i];
            prop_assert_eq!(view.len_delta(i), Some(r.end.wrapping_sub(r.start) as u16));
            if i >= 1 {
                let gap = r.start.wrapping_sub(header.ranges[i - 1].end).wrapping_sub(1) as u16;
                prop_assert_eq!(view.gap_delta(i), Some(gap));
            }
        }
        prop_assert_eq!(view.payload(), &payload[..]);
        prop_assert_eq!(view.seed(), match header.coefficients {
            Coefficients::Seeded(s) => Some(s),
            _ => None,
        });
        parse_any(&bytes);
    }

    #[test]
    fn ack_round_trip(ack in ack_repr()) {
        let bytes = FrameRepr::Ack(ack).to_vec().unwrap();
        prop_assert_eq!(bytes.len(), if ack.flow.src_addr().is_ipv4() { 40 } else { 64 });
        prop_assert!(bytes.len() <= AckRepr::MAX_LEN && AckRepr::MAX_LEN == 64);
        prop_assert_eq!(FrameRepr::parse(&bytes).unwrap(), FrameRepr::Ack(ack));
        let view = AckPacket::new_checked(&bytes[..]).unwrap();
        prop_assert_eq!(AckRepr::parse(&view).unwrap(), ack);
        parse_any(&bytes);
    }

    #[test]
    fn keepalive_and_bypass_round_trip(reply: bool, nonce: u64, ip in ip_packet()) {
        let k = FrameRepr::Keepalive(KeepaliveRepr { reply, nonce });
        let bytes = k.to_vec().unwrap();
        prop_assert_eq!(FrameRepr::parse(&bytes).unwrap(), k);
        let b = FrameRepr::Bypass(BypassRepr::new(&ip).unwrap());
        let bytes = b.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), ip.len() + 2);
        prop_assert_eq!(FrameRepr::parse(&bytes).unwrap(), b);
    }

    /// Cutting a frame anywhere inside its header is an error, never a panic; DATA and BYPASS
    /// have no length field, so cuts inside their payload yield a shorter payload.
    #[test]
    fn truncation_is_an_error(bytes in frame_bytes()) {
        let full = FrameRepr::parse(&bytes).unwrap();
        let min_ok = match &full {
            FrameRepr::Data { header, .. } => header.buffer_len(),
            FrameRepr::Bypass(_) => 3,
            _ => bytes.len(),
        };
        for cut in 0..bytes.len() {
            let r = FrameRepr::parse(&bytes[..cut]);
            if cut < min_ok {
                prop_assert!(r.is_err(), "prefix of {} bytes parsed: {:?}", cut, r);
            } else {
                prop_assert!(r.is_ok());
            }
            parse_any(&bytes[..cut]);
        }
    }

    /// Arbitrary bytes never panic, and whatever parses re-emits identically.
    #[test]
    fn arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..160)) {
        parse_any(&data);
    }

    /// Bytes with a valid preamble (or nearly), to get past the first check.
    #[test]
    fn arbitrary_bodies(ty in 0u8..6, flags: u8, body in prop::collection::vec(any::<u8>(), 0..120)) {
        let mut data = vec![1, ty, flags];
        data.extend_from_slice(&body);
        parse_any(&data);
    }

    /// Valid frames with a few bytes overwritten or appended.
    #[test]
    fn mutated_frames(
        bytes in frame_bytes(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        extra in prop::collection::vec(any::<u8>(), 0..3),
    ) {
        let mut data = bytes;
        for (i, v) in edits {
            let i = i.index(data.len());
            data[i] = v;
        }
        parse_any(&data);
        data.extend_from_slice(&extra);
        parse_any(&data);
    }

    /// Every encoding of a header's ranges other than the canonical one is rejected (so a parsed
    /// frame always re-emits to the same bytes); the canonical one is what `emit` writes.
    #[test]
    fn only_the_canonical_range_form_parses(header in data_repr(), payload in prop::collection::vec(any::<u8>(), 0..8)) {
        let n = header.ranges.len();
        let canonical = RangeForm::of(&header.ranges);
        let emitted = FrameRepr::Data { header: header.clone(), payload: &payload }.to_vec().unwrap();
        let len = |r: &SeqRange| r.end.wrapping_sub(r.start);
        let longest = header.ranges.iter().map(len).max().unwrap_or(0);
        let shorter = header.ranges.iter().filter(|r| len(r) < longest).count();
        let patched = RangeForm::Patched { exceptions: shorter.min(255) as u8 };
        for form in [RangeForm::Gapped, RangeForm::Contiguous, RangeForm::Uniform, patched] {
            let Some(bytes) = emit_in_form(&header, form, &payload) else { continue };
            let parsed = FrameRepr::parse(&bytes);
            if form == canonical {
                prop_assert_eq!(&bytes, &emitted);
                prop_assert!(parsed.is_ok());
            } else if (form == RangeForm::Contiguous && n < 2) || (form != RangeForm::Gapped && form != RangeForm::Contiguous && n < 3) {
                let bad_flags = matches!(parsed, Err(WireError::BadFlags { .. }));
                prop_assert!(bad_flags, "{:?} n = {}: {:?}", form, n, parsed);
            } else {
                prop_assert_eq!(parsed, Err(WireError::NonCanonical));
            }
            parse_any(&bytes);
        }
    }

    /// Any DataRepr (valid or not) either emits and parses back, or is refused; no panic.
    #[test]
    fn unchecked_data_repr_never_panics(
        n in 0usize..300,
        starts in prop::collection::vec((any::<u32>(), 0u32..70_000), 300),
        ncoef in 0usize..300,
        kind in 0u8..3,
        flow in flow(),
    ) {
        let ranges: Vec<SeqRange> =
            starts[..n].iter().map(|&(s, l)| SeqRange::new(s, s.wrapping_add(l))).collect();
        let coefficients = match kind {
            0 => Coefficients::Explicit(vec![7; ncoef]),
            1 => Coefficients::Seeded(ncoef as u32),
            _ => Coefficients::Systematic,
        };
        let header = DataRepr {
            redundant: false, flush: true, flow, pid: 1, base: 2, first_index: 3, ranges, coefficients,
        };
        let repr = FrameRepr::Data { header: header.clone(), payload: &[9, 9] };
        // `emit` (the view's setters' layout) and `encode_into` agree, errors included.
        let mut big = vec![0u8; 4096];
        let emitted = repr.emit(&mut big).map(|len| big[..len].to_vec());
        prop_assert_eq!(&emitted, &repr.to_vec());
        match repr.to_vec() {
            Ok(bytes) => {
                prop_assert!(header.validate().is_ok());
                prop_assert_eq!(FrameRepr::parse(&bytes).unwrap(), repr);
            }
            Err(e) => {
                prop_assert!(header.validate().is_err());
                let too_small = matches!(e, WireError::BufferTooSmall { .. });
                prop_assert!(!too_small);
            }
        }
    }
}

#[test]
fn emit_into_short_buffer_is_an_error() {
    let k = FrameRepr::Keepalive(KeepaliveRepr::probe(1));
    let mut buf = [0u8; 11];
    assert_eq!(
        k.emit(&mut buf),
        Err(WireError::BufferTooSmall {
            needed: 12,
            got: 11
        })
    );
}

#[test]
fn specific_ack_and_frame_rejections() {
    let flow = FlowId::v4(Ipv4Addr::LOCALHOST, 1, Ipv4Addr::LOCALHOST, 2);
    let ack = AckRepr {
        flow,
        ack: 1,
        window: 2,
        pid_echo: 3,
        loss_bitmap: 0,
        lost_dof: 0,
        unordering: 0,
        redundant: false,
        dependent: None,
        pause: false,
        update: false,
    };
    let good = FrameRepr::Ack(ack).to_vec().unwrap();
    let mut b = good.clone();
    // Version 1 (before PATCHED) and a later one are refused alike.
    for v in [1, tcpnc_wire::VERSION + 1] {
        b[0] = v;
        assert_eq!(FrameRepr::parse(&b), Err(WireError::BadVersion(v)));
    }
    b = good.clone();
    b[1] = 9;
    assert_eq!(FrameRepr::parse(&b), Err(WireError::UnknownType(9)));
    b = good.clone();
    b[3] |= 0x10;
    assert_eq!(FrameRepr::parse(&b), Err(WireError::ReservedBits(0x10)));
    b = good.clone();
    b[4 + 12 + 19] = 1; // last byte of dependent_seq
    assert_eq!(FrameRepr::parse(&b), Err(WireError::UnusedFieldNotZero));
    b = good.clone();
    b.push(0);
    assert_eq!(
        FrameRepr::parse(&b),
        Err(WireError::BadLength {
            expected: 40,
            got: 41
        })
    );
    assert!(matches!(
        DataPacket::new_checked(&good[..]),
        Err(WireError::WrongType {
            expected: 1,
            found: 2
        })
    ));
    assert_eq!(
        FrameRepr::parse(&[tcpnc_wire::VERSION, 3, 0x50]),
        Err(WireError::BadIpVersion(5))
    );
    assert!(matches!(
        FrameRepr::parse(&[tcpnc_wire::VERSION, 3]),
        Err(WireError::Truncated { .. })
    ));
}

#[test]
fn specific_data_rejections() {
    let flow = FlowId::v4(Ipv4Addr::LOCALHOST, 1, Ipv4Addr::LOCALHOST, 2);
    // DATA with n = 0, and with SEEDED | SYSTEMATIC.
    let data = FrameRepr::Data {
        header: DataRepr {
            redundant: false,
            flush: false,
            flow,
            pid: 0,
            base: 0,
            first_index: 0,
            ranges: vec![SeqRange::new(5, 6)],
            coefficients: Coefficients::Systematic,
        },
        payload: &[0; 8],
    }
    .to_vec()
    .unwrap();
    let mut d = data.clone();
    d[3] = 0;
    assert_eq!(FrameRepr::parse(&d), Err(WireError::BadCount(0)));
    d = data.clone();
    d[2] |= 0x04;
    assert!(matches!(
        FrameRepr::parse(&d),
        Err(WireError::BadFlags { .. })
    ));
    d = data.clone();
    d[3] = 2;
    assert!(matches!(
        FrameRepr::parse(&d),
        Err(WireError::BadFlags { .. })
    ));
    // Reserved DATA bit; UNIFORM without CONTIGUOUS (PATCHED) with n = 1; CONTIGUOUS with n = 1.
    d = data.clone();
    d[2] |= 0x40;
    assert_eq!(FrameRepr::parse(&d), Err(WireError::ReservedBits(0x40)));
    d = data.clone();
    d[2] |= flags::data::UNIFORM;
    assert!(matches!(
        FrameRepr::parse(&d),
        Err(WireError::BadFlags { .. })
    ));
    d = data;
    d[2] = flags::data::CONTIGUOUS;
    assert!(matches!(
        FrameRepr::parse(&d),
        Err(WireError::BadFlags { .. })
    ));
}
