//! The Wireshark dissector `contrib/wireshark/tcpnc.lua` decodes every golden vector of
//! docs/wire.md field by field: the vectors are written into a pcap (raw IPv4/UDP to port
//! 51900) and read back with `tshark -X lua_script:... -T fields`. Needs tshark (scripts/test
//! installs it; required when CI=true).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{LUA, envelope_blocks, golden_blocks, write_pcap};

/// Whether tshark runs; under CI=true its absence is a failure.
pub fn have_tshark(test: &str) -> bool {
    if Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but tshark is missing: scripts/test installs it"
    );
    eprintln!(
        "skipping {test}: tshark not installed (apt-get install tshark, or run scripts/test)"
    );
    false
}

/// `tshark -T fields` of `fields` for every packet of `pcap`, one Vec per packet.
pub fn tshark_fields(pcap: &Path, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.args(["-n", "-X", &format!("lua_script:{LUA}"), "-r"])
        .arg(pcap)
        .args([
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=,",
        ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("Lua: Error"),
        "tshark: {stderr}"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tcpnc-dissector-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Expected `field=value` per golden vector, in document order (values as tshark prints them;
/// each checked against the vector's description in docs/wire.md). An empty value means the
/// field must be absent.
const EXPECTED: &[(&str, &[(&str, &str)])] = &[
    (
        "data-v4-uniform",
        &[
            ("tcpnc.version", "2"),
            ("tcpnc.type", "0x01"),
            ("tcpnc.data.flags", "0x30"),
            ("tcpnc.data.flags.redundant", "0"),
            ("tcpnc.data.flags.systematic", "0"),
            ("tcpnc.data.flags.seeded", "0"),
            ("tcpnc.data.flags.flush", "0"),
            ("tcpnc.data.flags.contiguous", "1"),
            ("tcpnc.data.flags.uniform", "1"),
            ("tcpnc.data.flags.ipv6", "0"),
            ("tcpnc.data.n", "3"),
            ("tcpnc.flow.src", "10.0.0.1"),
            ("tcpnc.flow.dst", "10.0.0.2"),
            ("tcpnc.flow.srcport", "40000"),
            ("tcpnc.flow.dstport", "5001"),
            ("tcpnc.data.pid", "7"),
            ("tcpnc.data.base", "1000"),
            ("tcpnc.data.first_index", "3"),
            ("tcpnc.data.range_form", "uniform"),
            ("tcpnc.data.start", "1000"),
            ("tcpnc.data.shared_len", "1459"),
            ("tcpnc.data.last_len", "499"),
            ("tcpnc.data.len", ""),
            ("tcpnc.data.gap", ""),
            ("tcpnc.data.seq_start", "1000,2460,3920"),
            ("tcpnc.data.seq_end", "2459,3919,4419"),
            ("tcpnc.data.coef", "0x1d,0x02,0xc3"),
            ("tcpnc.data.seed", ""),
            ("tcpnc.data.header_len", "39"),
            ("tcpnc.data.payload", "deadbeef"),
        ],
    ),
    (
        "data-v4-contiguous",
        &[
            ("tcpnc.type", "0x01"),
            ("tcpnc.data.flags", "0x15"),
            ("tcpnc.data.flags.redundant", "1"),
            ("tcpnc.data.flags.seeded", "1"),
            ("tcpnc.data.flags.contiguous", "1"),
            ("tcpnc.data.flags.uniform", "0"),
            ("tcpnc.data.n", "3"),
            ("tcpnc.flow.src", "10.0.0.1"),
            ("tcpnc.flow.dstport", "5001"),
            ("tcpnc.data.pid", "8"),
            ("tcpnc.data.base", "1000"),
            ("tcpnc.data.first_index", "3"),
            ("tcpnc.data.range_form", "contiguous"),
            ("tcpnc.data.start", "1000"),
            ("tcpnc.data.len", "1459,535,1459"),
            ("tcpnc.data.gap", ""),
            ("tcpnc.data.seq_start", "1000,2460,2996"),
            ("tcpnc.data.seq_end", "2459,2995,4455"),
            ("tcpnc.data.coef", ""),
            ("tcpnc.data.seed", "0x12345678"),
            ("tcpnc.data.header_len", "42"),
            ("tcpnc.data.payload", "0011"),
        ],
    ),
    (
        "data-v4-patched",
        &[
            ("tcpnc.type", "0x01"),
            ("tcpnc.data.flags", "0x2d"),
            ("tcpnc.data.flags.flush", "1"),
            ("tcpnc.data.flags.contiguous", "0"),
            ("tcpnc.data.flags.uniform", "1"),
            ("tcpnc.data.n", "6"),
            ("tcpnc.data.pid", "9"),
            ("tcpnc.data.range_form", "patched"),
            ("tcpnc.data.start", "1000"),
            ("tcpnc.data.shared_len", "1459"),
            ("tcpnc.data.patched_count", "2"),
            ("tcpnc.data.patched_pos", "2,5"),
            ("tcpnc.data.len", "699,299"),
            ("tcpnc.data.seq_start", "1000,2460,3920,4620,6080,7540"),
            ("tcpnc.data.seq_end", "2459,3919,4619,6079,7539,7839"),
            ("tcpnc.data.seed", "0x12345678"),
            ("tcpnc.data.header_len", "45"),
            ("tcpnc.data.payload", "0011"),
        ],
    ),
    (
        "data-v6-seeded",
        &[
            ("tcpnc.type", "0x01"),
            ("tcpnc.data.flags", "0x8d"),
            ("tcpnc.data.flags.ipv6", "1"),
            ("tcpnc.data.flags.flush", "1"),
            ("tcpnc.data.flags.seeded", "1"),
            ("tcpnc.data.flags.redundant", "1"),
            ("tcpnc.data.flags.contiguous", "0"),
            ("tcpnc.data.n", "2"),
            ("tcpnc.flow.src", ""),
            ("tcpnc.flow.src6", "2001:db8::1"),
            ("tcpnc.flow.dst6", "2001:db8::2"),
            ("tcpnc.flow.srcport", "443"),
            ("tcpnc.flow.dstport", "50000"),
            ("tcpnc.data.pid", "4294967294"),
            ("tcpnc.data.base", "4294967040"),
            ("tcpnc.data.first_index", "65536"),
            ("tcpnc.data.range_form", "gapped"),
            ("tcpnc.data.start", "4294966016"),
            ("tcpnc.data.len", "1279,1279"),
            ("tcpnc.data.gap", "16"),
            ("tcpnc.data.seq_start", "4294966016,16"),
            ("tcpnc.data.seq_end", "4294967295,1295"),
            ("tcpnc.data.seed", "0xc0ffee01"),
            ("tcpnc.data.header_len", "66"),
            ("tcpnc.data.payload", "0102030405"),
        ],
    ),
    (
        "data-v4-systematic",
        &[
            ("tcpnc.data.flags", "0x02"),
            ("tcpnc.data.flags.systematic", "1"),
            ("tcpnc.data.n", "1"),
            ("tcpnc.flow.src", "192.168.1.10"),
            ("tcpnc.flow.dst", "192.168.2.20"),
            ("tcpnc.flow.srcport", "80"),
            ("tcpnc.flow.dstport", "61000"),
            ("tcpnc.data.pid", "1"),
            ("tcpnc.data.base", "1"),
            ("tcpnc.data.first_index", "0"),
            ("tcpnc.data.range_form", "gapped"),
            ("tcpnc.data.len", "535"),
            ("tcpnc.data.seq_start", "1"),
            ("tcpnc.data.seq_end", "536"),
            ("tcpnc.data.coef", ""),
            ("tcpnc.data.seed", ""),
            ("tcpnc.data.header_len", "34"),
            ("tcpnc.data.payload", "cafe"),
        ],
    ),
    (
        "ack-v4",
        &[
            ("tcpnc.type", "0x02"),
            ("tcpnc.ack.flags", "0x0000"),
            ("tcpnc.ack.flags.redundant", "0"),
            ("tcpnc.ack.flags.dependent", "0"),
            ("tcpnc.ack.flags.pause", "0"),
            ("tcpnc.ack.flags.update", "0"),
            ("tcpnc.ack.flags.ipv6", "0"),
            ("tcpnc.flow.src", "10.0.0.1"),
            ("tcpnc.flow.dst", "10.0.0.2"),
            ("tcpnc.flow.srcport", "40000"),
            ("tcpnc.flow.dstport", "5001"),
            ("tcpnc.ack.ack", "5380"),
            ("tcpnc.ack.window", "262144"),
            ("tcpnc.ack.pid_echo", "9"),
            ("tcpnc.ack.loss_bitmap", "0x00000005"),
            ("tcpnc.ack.lost_pid", "8,6"),
            ("tcpnc.ack.dependent_seq", "0"),
            ("tcpnc.ack.nlp", "2"),
            ("tcpnc.ack.unordering", "0"),
        ],
    ),
    (
        "ack-v6-flags",
        &[
            ("tcpnc.type", "0x02"),
            ("tcpnc.ack.flags", "0x800f"),
            ("tcpnc.ack.flags.redundant", "1"),
            ("tcpnc.ack.flags.dependent", "1"),
            ("tcpnc.ack.flags.pause", "1"),
            ("tcpnc.ack.flags.update", "1"),
            ("tcpnc.ack.flags.ipv6", "1"),
            ("tcpnc.flow.src6", "2001:db8::1"),
            ("tcpnc.flow.dst6", "2001:db8::2"),
            ("tcpnc.flow.srcport", "443"),
            ("tcpnc.flow.dstport", "50000"),
            ("tcpnc.ack.ack", "16"),
            ("tcpnc.ack.window", "1048576"),
            ("tcpnc.ack.pid_echo", "4294967295"),
            ("tcpnc.ack.loss_bitmap", "0x80000001"),
            ("tcpnc.ack.lost_pid", "4294967294,4294967263"),
            ("tcpnc.ack.dependent_seq", "4294966016"),
            ("tcpnc.ack.nlp", "1"),
            ("tcpnc.ack.unordering", "3"),
        ],
    ),
    (
        "bypass-v4-syn",
        &[
            ("tcpnc.type", "0x03"),
            ("ip.src", "192.0.2.1,10.0.0.1"),
            ("ip.dst", "192.0.2.2,10.0.0.2"),
            ("tcp.srcport", "40000"),
            ("tcp.dstport", "5001"),
            ("tcp.seq_raw", "999"),
            ("tcp.flags.syn", "1"),
            ("tcp.window_size_value", "64240"),
            ("tcp.options.mss_val", "1400"),
            ("tcp.checksum.status", "2"),
        ],
    ),
    (
        "keepalive-probe",
        &[
            ("tcpnc.type", "0x04"),
            ("tcpnc.keepalive.flags", "0x00"),
            ("tcpnc.keepalive.reply", "0"),
            ("tcpnc.keepalive.reserved", "0x00"),
            ("tcpnc.keepalive.nonce", "0x0123456789abcdef"),
        ],
    ),
    (
        "keepalive-reply",
        &[
            ("tcpnc.type", "0x04"),
            ("tcpnc.keepalive.flags", "0x01"),
            ("tcpnc.keepalive.reply", "1"),
            ("tcpnc.keepalive.nonce", "0x0123456789abcdef"),
        ],
    ),
];

/// Frames that break docs/wire.md section 9, each flagged `tcpnc.malformed`.
fn broken_frames() -> Vec<Vec<u8>> {
    let blocks = golden_blocks();
    let get = |n: &str| blocks.iter().find(|(k, _)| k == n).unwrap().1.clone();
    let mut truncated = get("data-v4-uniform");
    truncated.truncate(30);
    let mut reserved = get("keepalive-probe");
    reserved[3] = 1;
    let mut long_ack = get("ack-v4");
    long_ack.push(0);
    let mut bad_version = get("keepalive-reply");
    bad_version[0] = 1;
    vec![truncated, reserved, long_ack, bad_version]
}

#[test]
fn dissector_decodes_every_golden_vector_exactly() {
    if !have_tshark("dissector_decodes_every_golden_vector_exactly") {
        return;
    }
    let blocks = golden_blocks();
    let names: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    let expected: Vec<&str> = EXPECTED.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names, expected,
        "one expectation per golden vector of docs/wire.md"
    );
    let dir = scratch("golden");
    let pcap = dir.join("golden.pcap");
    let mut frames: Vec<Vec<u8>> = blocks.iter().map(|(_, b)| b.clone()).collect();
    frames.extend(broken_frames());
    write_pcap(&pcap, &frames);
    let mut fields: Vec<&str> = vec!["tcpnc.malformed", "_ws.malformed"];
    for (_, checks) in EXPECTED {
        for (f, _) in *checks {
            if !fields.contains(f) {
                fields.push(f);
            }
        }
    }
    let rows = tshark_fields(&pcap, &fields);
    assert_eq!(rows.len(), frames.len());
    for ((name, checks), row) in EXPECTED.iter().zip(&rows) {
        assert_eq!(
            (row[0].as_str(), row[1].as_str()),
            ("", ""),
            "{name} flagged malformed"
        );
        for (field, want) in *checks {
            let i = fields.iter().position(|f| f == field).unwrap();
            assert_eq!(row[i], *want, "{name}: {field}");
        }
    }
    for (k, row) in rows[EXPECTED.len()..].iter().enumerate() {
        assert!(!row[0].is_empty(), "broken frame {k} not flagged: {row:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Expected fields per envelope vector of docs/wire.md section 10.
const ENVELOPE_EXPECTED: &[(&str, &[(&str, &str)])] = &[
    (
        "integrity-keepalive",
        &[
            ("tcpnc.envelope.type", "0x11"),
            ("tcpnc.envelope.crc32c", "0x1838a7ee"),
            ("tcpnc.type", "0x04"),
            ("tcpnc.keepalive.nonce", "0x0123456789abcdef"),
        ],
    ),
    (
        "initiation",
        &[
            ("tcpnc.envelope.type", "0x21"),
            ("tcpnc.envelope.sender_index", "0x01020304"),
        ],
    ),
    (
        "response",
        &[
            ("tcpnc.envelope.type", "0x22"),
            ("tcpnc.envelope.sender_index", "0x0a0b0c0d"),
            ("tcpnc.envelope.receiver_index", "0x01020304"),
        ],
    ),
    (
        "transport-keepalive-0",
        &[
            ("tcpnc.envelope.type", "0x24"),
            ("tcpnc.envelope.receiver_index", "0x0a0b0c0d"),
            ("tcpnc.envelope.counter", "0"),
        ],
    ),
    (
        "transport-keepalive-1",
        &[
            ("tcpnc.envelope.receiver_index", "0x0a0b0c0d"),
            ("tcpnc.envelope.counter", "1"),
        ],
    ),
    (
        "transport-empty",
        &[
            ("tcpnc.envelope.receiver_index", "0x01020304"),
            ("tcpnc.envelope.counter", "0"),
        ],
    ),
    // The AES-256-GCM vectors: the same envelope fields (the cipher changes no header byte).
    (
        "aes-initiation",
        &[
            ("tcpnc.envelope.type", "0x21"),
            ("tcpnc.envelope.sender_index", "0x01020304"),
        ],
    ),
    (
        "aes-response",
        &[
            ("tcpnc.envelope.type", "0x22"),
            ("tcpnc.envelope.sender_index", "0x0a0b0c0d"),
            ("tcpnc.envelope.receiver_index", "0x01020304"),
        ],
    ),
    (
        "aes-transport-keepalive-0",
        &[
            ("tcpnc.envelope.type", "0x24"),
            ("tcpnc.envelope.receiver_index", "0x0a0b0c0d"),
            ("tcpnc.envelope.counter", "0"),
        ],
    ),
    (
        "aes-transport-keepalive-1",
        &[
            ("tcpnc.envelope.type", "0x24"),
            ("tcpnc.envelope.receiver_index", "0x0a0b0c0d"),
            ("tcpnc.envelope.counter", "1"),
        ],
    ),
];

#[test]
fn dissector_decodes_every_envelope_vector() {
    if !have_tshark("dissector_decodes_every_envelope_vector") {
        return;
    }
    let blocks = envelope_blocks();
    let names: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    let expected: Vec<&str> = ENVELOPE_EXPECTED.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, expected, "one expectation per envelope vector");
    let dir = scratch("envelope");
    let pcap = dir.join("envelope.pcap");
    let mut frames: Vec<Vec<u8>> = blocks.iter().map(|(_, b)| b.clone()).collect();
    // A truncated initiation and a transport shorter than its header are malformed.
    frames.push(blocks[1].1[..100].to_vec());
    frames.push(blocks[3].1[..20].to_vec());
    write_pcap(&pcap, &frames);
    let mut fields: Vec<&str> = vec!["tcpnc.malformed", "_ws.malformed"];
    for (_, checks) in ENVELOPE_EXPECTED {
        for (f, _) in *checks {
            if !fields.contains(f) {
                fields.push(f);
            }
        }
    }
    let rows = tshark_fields(&pcap, &fields);
    assert_eq!(rows.len(), frames.len());
    for ((name, checks), row) in ENVELOPE_EXPECTED.iter().zip(&rows) {
        assert_eq!(
            (row[0].as_str(), row[1].as_str()),
            ("", ""),
            "{name} malformed"
        );
        for (field, want) in *checks {
            let i = fields.iter().position(|f| f == field).unwrap();
            assert_eq!(row[i], *want, "{name}: {field}");
        }
    }
    for row in &rows[ENVELOPE_EXPECTED.len()..] {
        assert!(!row[0].is_empty(), "broken envelope not flagged: {row:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
