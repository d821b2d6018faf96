//! IPv4 and IPv6 TCP segments with every header field chosen (the TUN GRO tests).

/// Internet checksum sum (RFC 1071) of `data` added to `acc`, not folded.
pub fn sum(data: &[u8], mut acc: u32) -> u32 {
    for c in data.chunks(2) {
        acc += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    acc
}

/// `acc` folded to 16 bits (not complemented).
pub fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Addresses of the test flows: 10.0.0.1 → 10.0.0.2, fd00::1 → fd00::2.
pub fn addrs(v6: bool) -> Vec<u8> {
    if v6 {
        let mut a = vec![0u8; 32];
        a[0] = 0xfd;
        a[15] = 1;
        a[16] = 0xfd;
        a[31] = 2;
        a
    } else {
        vec![10, 0, 0, 1, 10, 0, 0, 2]
    }
}

/// Sum of the TCP/UDP pseudo-header (RFC 9293 §3.1, RFC 8200 §8.1).
pub fn pseudo(v6: bool, protocol: u8, len: usize) -> u32 {
    sum(
        &[0, protocol],
        sum(&(len as u16).to_be_bytes(), sum(&addrs(v6), 0)),
    )
}

/// A TCP segment: every field of its IP and TCP headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub v6: bool,
    pub ports: (u16, u16),
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub urgent: u16,
    /// A multiple of 4 bytes.
    pub options: Vec<u8>,
    pub payload: Vec<u8>,
    /// IPv4 TTL / IPv6 hop limit.
    pub ttl: u8,
    /// IPv4 TOS / IPv6 traffic class.
    pub tos: u8,
    /// IPv4 identification.
    pub id: u16,
    /// IPv4 DF.
    pub df: bool,
    /// IPv6 flow label.
    pub flow_label: u32,
}

/// ACK only.
pub const ACK: u8 = 0x10;
/// PSH.
pub const PSH: u8 = 0x08;
/// FIN.
pub const FIN: u8 = 0x01;

impl Segment {
    /// An ACK segment of `payload` bytes at `seq` (ack 1, window 512, TTL 64, ID 0 with DF).
    pub fn new(v6: bool, ports: (u16, u16), seq: u32, payload: Vec<u8>) -> Segment {
        Segment {
            v6,
            ports,
            seq,
            ack: 1,
            flags: ACK,
            window: 512,
            urgent: 0,
            options: Vec::new(),
            payload,
            ttl: 64,
            tos: 0,
            id: 0,
            df: true,
            flow_label: 0,
        }
    }

    /// The IP packet, with valid checksums.
    pub fn build(&self) -> Vec<u8> {
        let mut t = Vec::with_capacity(20 + self.options.len() + self.payload.len());
        t.extend_from_slice(&self.ports.0.to_be_bytes());
        t.extend_from_slice(&self.ports.1.to_be_bytes());
        t.extend_from_slice(&self.seq.to_be_bytes());
        t.extend_from_slice(&self.ack.to_be_bytes());
        t.push((((20 + self.options.len()) / 4) << 4) as u8);
        t.push(self.flags);
        t.extend_from_slice(&self.window.to_be_bytes());
        t.extend_from_slice(&[0, 0]);
        t.extend_from_slice(&self.urgent.to_be_bytes());
        t.extend_from_slice(&self.options);
        t.extend_from_slice(&self.payload);
        let c = !fold(sum(&t, pseudo(self.v6, 6, t.len())));
        t[16..18].copy_from_slice(&c.to_be_bytes());
        let mut p = self.ip_header(6, t.len());
        p.extend_from_slice(&t);
        p
    }

    /// The IP header of a packet of `protocol` carrying `len` bytes.
    pub fn ip_header(&self, protocol: u8, len: usize) -> Vec<u8> {
        if self.v6 {
            let word = (6u32 << 28) | (u32::from(self.tos) << 20) | (self.flow_label & 0xf_ffff);
            let mut h = word.to_be_bytes().to_vec();
            h.extend_from_slice(&(len as u16).to_be_bytes());
            h.extend_from_slice(&[protocol, self.ttl]);
            h.extend_from_slice(&addrs(true));
            return h;
        }
        let mut h = vec![0x45, self.tos];
        h.extend_from_slice(&((20 + len) as u16).to_be_bytes());
        h.extend_from_slice(&self.id.to_be_bytes());
        h.extend_from_slice(&[if self.df { 0x40 } else { 0 }, 0, self.ttl, protocol, 0, 0]);
        h.extend_from_slice(&addrs(false));
        let c = !fold(sum(&h, 0));
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h
    }
}

/// A UDP datagram on `seg`'s IP header fields and ports, with a valid checksum.
pub fn udp(seg: &Segment) -> Vec<u8> {
    let mut u = Vec::new();
    u.extend_from_slice(&seg.ports.0.to_be_bytes());
    u.extend_from_slice(&seg.ports.1.to_be_bytes());
    u.extend_from_slice(&((8 + seg.payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(&seg.payload);
    let c = !fold(sum(&u, pseudo(seg.v6, 17, u.len())));
    u[6..8].copy_from_slice(&c.to_be_bytes());
    let mut p = seg.ip_header(17, u.len());
    p.extend_from_slice(&u);
    p
}
