//! Packet builders shared by the integration tests.
#![allow(dead_code)]

/// Internet checksum of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in data.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(w);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 packet with a valid header checksum around `l4` (whose checksum the caller set).
pub fn ipv4(src: [u8; 4], dst: [u8; 4], protocol: u8, l4: &[u8]) -> Vec<u8> {
    let total = 20 + l4.len();
    let mut p = vec![0u8; 20];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[6] = 0x40; // DF
    p[8] = 64;
    p[9] = protocol;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    let c = checksum(&p);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(l4);
    p
}

fn pseudo_sum(src: [u8; 4], dst: [u8; 4], protocol: u8, l4: &[u8]) -> u16 {
    let mut buf = Vec::with_capacity(12 + l4.len());
    buf.extend_from_slice(&src);
    buf.extend_from_slice(&dst);
    buf.push(0);
    buf.push(protocol);
    buf.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    buf.extend_from_slice(l4);
    checksum(&buf)
}

/// An IPv4/TCP segment (ACK|PSH) with valid checksums.
pub fn tcp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, seq: u32, data: &[u8]) -> Vec<u8> {
    tcp_segment(src, dst, (sport, dport), (seq, 1), 0x18, &[], data)
}

/// An IPv4/TCP segment with `(seq, ack)`, `flags`, `options` (a multiple of 4 bytes) and
/// valid checksums.
pub fn tcp_segment(
    src: [u8; 4],
    dst: [u8; 4],
    (sport, dport): (u16, u16),
    (seq, ack): (u32, u32),
    flags: u8,
    options: &[u8],
    data: &[u8],
) -> Vec<u8> {
    let mut t = vec![0u8; 20];
    t[0..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&ack.to_be_bytes());
    t[12] = ((20 + options.len()) as u8 / 4) << 4;
    t[13] = flags;
    t[14..16].copy_from_slice(&65535u16.to_be_bytes());
    t.extend_from_slice(options);
    t.extend_from_slice(data);
    let c = pseudo_sum(src, dst, 6, &t);
    t[16..18].copy_from_slice(&c.to_be_bytes());
    ipv4(src, dst, 6, &t)
}

/// An IPv4 ICMP echo request.
pub fn icmp_echo(src: [u8; 4], dst: [u8; 4], id: u16, data: &[u8]) -> Vec<u8> {
    let mut m = vec![8u8, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&1u16.to_be_bytes());
    m.extend_from_slice(data);
    let c = checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ipv4(src, dst, 1, &m)
}

/// An IPv4 UDP datagram (checksum 0 = none).
pub fn udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, data: &[u8]) -> Vec<u8> {
    let mut u = vec![0u8; 8];
    u[0..2].copy_from_slice(&sport.to_be_bytes());
    u[2..4].copy_from_slice(&dport.to_be_bytes());
    u[4..6].copy_from_slice(&((8 + data.len()) as u16).to_be_bytes());
    u.extend_from_slice(data);
    ipv4(src, dst, 17, &u)
}

pub mod segments;
