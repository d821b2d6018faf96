//! Shared by the cli's integration tests: the golden vectors of docs/wire.md, a pcap writer and
//! ([`lab`]) running `tcpnc` in the root lab tests.
#![allow(dead_code)]

pub mod lab;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The Wireshark dissector.
pub const LUA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../contrib/wireshark/tcpnc.lua"
);

const DOC: &str = include_str!("../../../../docs/wire.md");

/// (name, bytes) of every ```hex golden:NAME block of docs/wire.md.
pub fn golden_blocks() -> Vec<(String, Vec<u8>)> {
    hex_blocks("golden")
}

/// The tunnel envelope vectors of docs/wire.md section 10 (`hex envelope:NAME` blocks).
pub fn envelope_blocks() -> Vec<(String, Vec<u8>)> {
    hex_blocks("envelope")
}

fn hex_blocks(kind: &str) -> Vec<(String, Vec<u8>)> {
    tcpnc_wire::spec_vectors::hex_blocks(DOC, kind).unwrap()
}

/// A pcap (LINKTYPE_RAW) with one IPv4/UDP packet 192.0.2.1:51900 -> 192.0.2.2:51900 per payload.
pub fn write_pcap(path: &Path, payloads: &[Vec<u8>]) {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&101u32.to_le_bytes());
    for (i, p) in payloads.iter().enumerate() {
        let total = 28 + p.len();
        let mut ip = vec![
            0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2,
        ];
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        let sum = ip
            .chunks(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .sum::<u32>();
        let sum = (sum & 0xffff) + (sum >> 16);
        ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        ip.extend_from_slice(&51900u16.to_be_bytes());
        ip.extend_from_slice(&51900u16.to_be_bytes());
        ip.extend_from_slice(&((8 + p.len()) as u16).to_be_bytes());
        ip.extend_from_slice(&[0, 0]);
        ip.extend_from_slice(p);
        out.extend_from_slice(&(i as u32 + 1).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(ip.len() as u32).to_le_bytes());
        out.extend_from_slice(&(ip.len() as u32).to_le_bytes());
        out.extend_from_slice(&ip);
    }
    std::fs::write(path, out).unwrap();
}

/// Runs `cmd` with `input` on its standard input; its output and status.
pub fn run_with_input(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}
