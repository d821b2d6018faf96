//! Golden byte vectors: the ```hex golden:NAME blocks of docs/wire.md must be exactly what the
//! code emits for the field values below, and must parse back to them.

use std::net::{Ipv4Addr, Ipv6Addr};

use tcpnc_wire::{
    AckRepr, BypassRepr, CoefficientMode, Coefficients, DataRepr, FlowId, FrameRepr, IpVersion,
    KeepaliveRepr, RangeForm, SeqRange, WireError, data_header_len, header_overhead,
};

const DOC: &str = include_str!("../../../docs/wire.md");

/// (name, bytes) of every golden block, in document order.
fn golden_blocks() -> Vec<(String, Vec<u8>)> {
    tcpnc_wire::spec_vectors::hex_blocks(DOC, "golden").unwrap()
}

fn flow_v4() -> FlowId {
    FlowId::v4(
        Ipv4Addr::new(10, 0, 0, 1),
        40000,
        Ipv4Addr::new(10, 0, 0, 2),
        5001,
    )
}

fn flow_v6() -> FlowId {
    FlowId::v6(
        "2001:db8::1".parse::<Ipv6Addr>().unwrap(),
        443,
        "2001:db8::2".parse::<Ipv6Addr>().unwrap(),
        50000,
    )
}

fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The 44-byte IPv4 TCP SYN of `bypass-v4-syn`, built field by field.
fn syn_packet() -> Vec<u8> {
    let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut tcp = Vec::new();
    tcp.extend_from_slice(&40000u16.to_be_bytes());
    tcp.extend_from_slice(&5001u16.to_be_bytes());
    tcp.extend_from_slice(&999u32.to_be_bytes()); // seq
    tcp.extend_from_slice(&0u32.to_be_bytes()); // ack
    tcp.extend_from_slice(&[6 << 4, 0x02]); // data offset 6 words, SYN
    tcp.extend_from_slice(&64240u16.to_be_bytes());
    tcp.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    tcp.extend_from_slice(&[2, 4, 0x05, 0x78]); // MSS 1400
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&src);
    pseudo.extend_from_slice(&dst);
    pseudo.extend_from_slice(&[0, 6, 0, tcp.len() as u8]);
    pseudo.extend_from_slice(&tcp);
    let c = checksum(&pseudo);
    tcp[16..18].copy_from_slice(&c.to_be_bytes());
    let mut ip = vec![
        0x45,
        0,
        0,
        (20 + tcp.len()) as u8,
        0x12,
        0x34,
        0x40,
        0,
        64,
        6,
        0,
        0,
    ];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    ip.extend_from_slice(&tcp);
    ip
}

/// The field values each golden block documents.
fn expected(name: &str, syn: &'static [u8]) -> Option<FrameRepr<'static>> {
    if let Some(data) = expected_data(name).or_else(|| expected_patched(name)) {
        return Some(data);
    }
    Some(match name {
        "ack-v4" => FrameRepr::Ack(AckRepr {
            flow: flow_v4(),
            ack: 5380,
            window: 262_144,
            pid_echo: 9,
            loss_bitmap: 0x0000_0005,
            lost_dof: 2,
            unordering: 0,
            redundant: false,
            dependent: None,
            pause: false,
            update: false,
        }),
        "ack-v6-flags" => FrameRepr::Ack(AckRepr {
            flow: flow_v6(),
            ack: 16,
            window: 1_048_576,
            pid_echo: 4_294_967_295,
            loss_bitmap: 0x8000_0001,
            lost_dof: 1,
            unordering: 3,
            redundant: true,
            dependent: Some(0xffff_fb00),
            pause: true,
            update: true,
        }),
        "bypass-v4-syn" => FrameRepr::Bypass(BypassRepr::new(syn).unwrap()),
        "keepalive-probe" => FrameRepr::Keepalive(KeepaliveRepr::probe(0x0123_4567_89ab_cdef)),
        "keepalive-reply" => {
            FrameRepr::Keepalive(KeepaliveRepr::probe(0x0123_4567_89ab_cdef).to_reply())
        }
        _ => return None,
    })
}

/// The PATCHED golden block's field values (wire version 2).
fn expected_patched(name: &str) -> Option<FrameRepr<'static>> {
    Some(match name {
        "data-v4-patched" => FrameRepr::Data {
            header: DataRepr {
                redundant: true,
                flush: true,
                flow: flow_v4(),
                pid: 9,
                base: 1000,
                first_index: 3,
                ranges: vec![
                    SeqRange::new(1000, 2459),
                    SeqRange::new(2460, 3919),
                    SeqRange::new(3920, 4619),
                    SeqRange::new(4620, 6079),
                    SeqRange::new(6080, 7539),
                    SeqRange::new(7540, 7839),
                ],
                coefficients: Coefficients::Seeded(0x1234_5678),
            },
            payload: &[0x00, 0x11],
        },
        _ => return None,
    })
}

/// The DATA golden blocks' field values.
fn expected_data(name: &str) -> Option<FrameRepr<'static>> {
    Some(match name {
        "data-v4-uniform" => FrameRepr::Data {
            header: DataRepr {
                redundant: false,
                flush: false,
                flow: flow_v4(),
                pid: 7,
                base: 1000,
                first_index: 3,
                ranges: vec![
                    SeqRange::new(1000, 2459),
                    SeqRange::new(2460, 3919),
                    SeqRange::new(3920, 4419),
                ],
                coefficients: Coefficients::Explicit(vec![0x1d, 0x02, 0xc3]),
            },
            payload: &[0xde, 0xad, 0xbe, 0xef],
        },
        "data-v4-contiguous" => FrameRepr::Data {
            header: DataRepr {
                redundant: true,
                flush: false,
                flow: flow_v4(),
                pid: 8,
                base: 1000,
                first_index: 3,
                ranges: vec![
                    SeqRange::new(1000, 2459),
                    SeqRange::new(2460, 2995),
                    SeqRange::new(2996, 4455),
                ],
                coefficients: Coefficients::Seeded(0x1234_5678),
            },
            payload: &[0x00, 0x11],
        },
        "data-v6-seeded" => FrameRepr::Data {
            header: DataRepr {
                redundant: true,
                flush: true,
                flow: flow_v6(),
                pid: 4_294_967_294,
                base: 0xffff_ff00,
                first_index: 65536,
                ranges: vec![
                    SeqRange::new(0xffff_fb00, 0xffff_ffff),
                    SeqRange::new(0x10, 0x50f),
                ],
                coefficients: Coefficients::Seeded(0xc0ff_ee01),
            },
            payload: &[1, 2, 3, 4, 5],
        },
        "data-v4-systematic" => FrameRepr::Data {
            header: DataRepr {
                redundant: false,
                flush: false,
                flow: FlowId::v4(
                    Ipv4Addr::new(192, 168, 1, 10),
                    80,
                    Ipv4Addr::new(192, 168, 2, 20),
                    61000,
                ),
                pid: 1,
                base: 1,
                first_index: 0,
                ranges: vec![SeqRange::new(1, 536)],
                coefficients: Coefficients::Systematic,
            },
            payload: &[0xca, 0xfe],
        },
        _ => return None,
    })
}

const NAMES: &[&str] = &[
    "data-v4-uniform",
    "data-v4-contiguous",
    "data-v4-patched",
    "data-v6-seeded",
    "data-v4-systematic",
    "ack-v4",
    "ack-v6-flags",
    "bypass-v4-syn",
    "keepalive-probe",
    "keepalive-reply",
];

#[test]
fn golden_vectors_emit_and_parse() {
    let syn: &'static [u8] = Box::leak(syn_packet().into_boxed_slice());
    let blocks = golden_blocks();
    let found: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        found, NAMES,
        "golden blocks in docs/wire.md differ from the test's list"
    );
    for (name, bytes) in &blocks {
        let repr = expected(name, syn).unwrap_or_else(|| panic!("no field values for {name}"));
        let emitted = repr
            .to_vec()
            .unwrap_or_else(|e| panic!("{name}: emit failed: {e}"));
        assert_eq!(
            &emitted, bytes,
            "{name}: emit(repr) differs from the documented bytes"
        );
        let parsed = FrameRepr::parse(bytes).unwrap_or_else(|e| panic!("{name}: parse: {e}"));
        assert_eq!(
            parsed, repr,
            "{name}: parse(bytes) differs from the documented fields"
        );
        tcpnc_wire::fuzzing::parse_any(bytes);
    }
}

#[test]
fn golden_ack_bitmap_semantics() {
    let FrameRepr::Ack(a) = expected("ack-v4", &[]).unwrap() else {
        unreachable!()
    };
    assert_eq!(a.pid_lost(9), Some(false));
    assert_eq!(a.pid_lost(8), Some(true));
    assert_eq!(a.pid_lost(7), Some(false));
    assert_eq!(a.pid_lost(6), Some(true));
    assert_eq!(a.pid_lost(10), None);
    let FrameRepr::Ack(b) = expected("ack-v6-flags", &[]).unwrap() else {
        unreachable!()
    };
    assert_eq!(b.pid_lost(4_294_967_294), Some(true));
    assert_eq!(b.pid_lost(4_294_967_263), Some(true));
    assert_eq!(b.pid_lost(4_294_967_262), None);
}

/// The first five numeric columns of the docs/wire.md table whose header row starts with
/// `header`.
fn doc_table(header: &str) -> Vec<Vec<usize>> {
    DOC.lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.split('|')
                .skip(1)
                .take(5)
                .map(|c| c.trim().parse().unwrap())
                .collect()
        })
        .collect()
}

/// The compact-range overhead table of docs/wire.md section 7 matches `data_header_len`, and
/// every compact form is shorter than the worst case `header_overhead`.
#[test]
fn compact_overhead_table_matches() {
    let rows = doc_table("| n (compact) |");
    let ns: Vec<usize> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(ns, [3, 4, 8, 16, 32, 64]);
    let len = |n, mode, form| data_header_len(n, mode, IpVersion::V4, form);
    for r in rows {
        let n = r[0];
        assert_eq!(
            r[1],
            len(n, CoefficientMode::Explicit, RangeForm::Contiguous)
        );
        assert_eq!(r[2], len(n, CoefficientMode::Seeded, RangeForm::Contiguous));
        assert_eq!(r[3], len(n, CoefficientMode::Explicit, RangeForm::Uniform));
        assert_eq!(r[4], len(n, CoefficientMode::Seeded, RangeForm::Uniform));
    }
    for n in 1..=255 {
        for mode in [CoefficientMode::Explicit, CoefficientMode::Seeded] {
            for ip in [IpVersion::V4, IpVersion::V6] {
                let worst = header_overhead(n, mode, ip);
                // CONTIGUOUS needs n >= 2, UNIFORM n >= 3.
                let forms = [
                    (RangeForm::Gapped, 1),
                    (RangeForm::Contiguous, 2),
                    (RangeForm::Uniform, 3),
                ];
                for (form, min_n) in forms {
                    if n >= min_n {
                        assert!(data_header_len(n, mode, ip, form) <= worst);
                    }
                }
                assert_eq!(data_header_len(n, mode, ip, RangeForm::Gapped), worst);
            }
        }
    }
}

/// The overhead table of docs/wire.md section 7 matches `header_overhead`.
#[test]
fn overhead_table_matches() {
    let rows = doc_table("| W = n |");
    let ws: Vec<usize> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(ws, [1, 2, 3, 4, 8, 16, 32, 64]);
    for r in rows {
        let n = r[0];
        assert_eq!(
            r[1],
            header_overhead(n, CoefficientMode::Explicit, IpVersion::V4)
        );
        assert_eq!(
            r[2],
            header_overhead(n, CoefficientMode::Seeded, IpVersion::V4)
        );
        assert_eq!(
            r[3],
            header_overhead(n, CoefficientMode::Explicit, IpVersion::V6)
        );
        assert_eq!(
            r[4],
            header_overhead(n, CoefficientMode::Seeded, IpVersion::V6)
        );
    }
    assert_eq!(
        header_overhead(1, CoefficientMode::Systematic, IpVersion::V4),
        34
    );
    assert_eq!(
        header_overhead(1, CoefficientMode::Systematic, IpVersion::V6),
        58
    );
}

/// PATCHED (docs/wire.md section 3): every other listing of the golden frame's ranges is
/// refused, so the canonical encoding stays the only one.
#[test]
fn patched_listings_other_than_the_canonical_are_refused() {
    let golden = golden_blocks()
        .into_iter()
        .find(|(name, _)| name == "data-v4-patched")
        .map(|(_, bytes)| bytes)
        .unwrap();
    assert!(FrameRepr::parse(&golden).is_ok());
    // Range section at 28: Start_1, len_1 (32), k (34), entries (35: position, len).
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = golden.clone();
        f(&mut b);
        FrameRepr::parse(&b).map(|_| ())
    };
    let non_canonical = Err(WireError::NonCanonical);
    // A listed packet as long as the shared length, or longer.
    assert_eq!(
        edit(&|b| b[36..38].copy_from_slice(&[0x05, 0xb3])),
        non_canonical
    );
    assert_eq!(
        edit(&|b| b[36..38].copy_from_slice(&[0x05, 0xb4])),
        non_canonical
    );
    // Positions out of order, or beyond n; the first packet listed instead is another frame.
    assert_eq!(edit(&|b| (b[35], b[38]) = (5, 2)), non_canonical);
    assert_eq!(edit(&|b| b[38] = 6), non_canonical);
    assert_eq!(edit(&|b| b[35] = 0), Ok(()));
    // Only the last packet listed (UNIFORM's case): k = 1, the entry of position 5 first.
    assert_eq!(
        edit(&|b| {
            b[34] = 1;
            b.drain(35..38);
        }),
        non_canonical
    );
    // n = 2 with UNIFORM alone; the header cut before k.
    assert!(matches!(
        edit(&|b| b[3] = 2),
        Err(WireError::BadFlags { .. })
    ));
    assert!(matches!(
        FrameRepr::parse(&golden[..34]),
        Err(WireError::Truncated { .. })
    ));
    // PATCHED only where shorter than CONTIGUOUS (2n + 4 = 16 bytes for six packets): two
    // packets of another length take 13 bytes, three would take 16.
    let mut header = match FrameRepr::parse(&golden).unwrap() {
        FrameRepr::Data { header, .. } => header,
        _ => unreachable!(),
    };
    let contiguous = |lens: [u32; 6]| {
        let mut start = 1000;
        lens.iter()
            .map(|&len| {
                let r = SeqRange::new(start, start + len);
                start += len + 1;
                r
            })
            .collect::<Vec<_>>()
    };
    header.ranges = contiguous([1459, 99, 98, 1459, 1459, 1459]);
    assert_eq!(header.range_form(), RangeForm::Patched { exceptions: 2 });
    header.ranges = contiguous([1459, 99, 98, 97, 1459, 1459]);
    assert_eq!(header.range_form(), RangeForm::Contiguous);
}
