//! Write-side TCP GRO for an offloading TUN (`IFF_VNET_HDR`): the TCP segments of one
//! [`TunTx`](crate::tun_batch::TunTx) batch that Linux GRO would merge are merged into GSO
//! super-packets, each written with one `write(2)` behind a `virtio_net_hdr` that tells the
//! kernel how to cut it again (Linux `include/uapi/linux/virtio_net.h`,
//! `Documentation/networking/segmentation-offloads.rst`). The kernel's TCP takes a super-packet
//! whole, as it takes a GRO packet from a NIC. The job of wireguard-go's `tcpGRO`
//! (`tun/offload_linux.go`) and tun-rs's port of it, done in place: a merged payload is appended
//! to the run's first buffer (reused, 64 KiB reserved once), nothing is copied per packet
//! otherwise and nothing is allocated once warm.
//!
//! # Merge rules
//!
//! Linux GRO's, so that a super-packet is what the kernel itself would have built from the
//! same segments (`tcp_gro_receive` in `net/ipv4/tcp_offload.c`; `inet_gro_receive` and
//! `inet_gro_flush` in `net/ipv4/af_inet.c`, `include/net/gro.h`; `ipv6_gro_receive` in
//! `net/ipv6/ip6_offload.c`). A packet is a *candidate* when it is
//! * IPv4 with a 20-byte header, its total length = the packet, not a fragment (only DF may be
//!   set of the flags and offset), or IPv6 whose next header is TCP (no extension headers) and
//!   whose payload length = the packet;
//! * TCP with flags exactly ACK or ACK|PSH (wireguard-go's rule; Linux would also merge equal ECE
//!   and a last FIN) and at least one byte of payload.
//!
//! A candidate is appended to the open run of its connection (same addresses and ports) when
//! 1. its sequence number follows the run's last byte (`th2->seq + skb_gro_len(p) == th->seq`);
//! 2. its ack number, data offset, window, urgent pointer and option bytes equal the run's
//!    first segment's (Linux compares the 32-bit word of data offset, flags and window and
//!    every option word; the urgent pointer is compared too because the kernel's segmentation
//!    copies the first segment's to every segment);
//! 3. IPv4: the same TOS, DF and TTL (`inet_gro_flush`: "all fields must match except length
//!    and checksum") and an identification = the first's + segments so far, or, with DF, the
//!    first's in every segment (Linux's fixed-ID case; the kernel renumbers such a run when it
//!    cuts it, harmless for DF datagrams, RFC 6864 §4.1); IPv6: the same traffic class, flow
//!    label and hop limit;
//! 4. its payload is at most the first's (the `gso_size`); a shorter one, or one with PSH, is the
//!    run's last (`flush = len < mss`, PSH flushes);
//! 5. the merged IP packet stays within 65535 bytes;
//! 6. its TCP checksum (and IPv4 header checksum) verifies, as the first segment's does (checked
//!    at the first merge): the kernel recomputes a super-packet's checksum, which must not hide
//!    a corrupted segment (`skb_gro_checksum_validate` in `tcp4_gro_receive`, `ip_fast_csum`
//!    in `inet_gro_receive`). A packet that fails is written alone, unchanged.
//!
//! Any other TCP packet of the connection ends its open run (and a candidate without PSH starts
//! the next), so the packets of one connection are written in their order; a packet whose
//! connection cannot be told (a TCP fragment, IPv6 with extension headers) ends every open run.
//! Packets of different connections may be reordered, as Linux GRO reorders them.
//!
//! # Headers written
//!
//! A merged run: `flags = NEEDS_CSUM`, `gso_type = TCPV4 / TCPV6`, `hdr_len` = IP + TCP header,
//! `gso_size`, `csum_start` = the IP header length, `csum_offset = 16`; the TCP checksum field
//! holds the pseudo-header sum for the merged length (RFC 9293 §3.1, RFC 8200 §8.1; the kernel
//! completes it, `CHECKSUM_PARTIAL`), the IPv4 total length and header checksum or the IPv6
//! payload length are rewritten, and a last segment's PSH is set on the first (the kernel's
//! segmentation leaves PSH on the last segment only). Every other packet is written unchanged
//! behind a zeroed header (`GSO_NONE`, no flags: its checksums are taken as they are), as
//! tun-rs and wireguard-go write the packets they do not merge.

use std::collections::HashMap;

use crate::tun_batch::TUN_HEADROOM;

/// Bytes of a `struct virtio_net_hdr` (no `num_buffers`): flags, gso_type, hdr_len, gso_size,
/// csum_start, csum_offset, in the host's byte order (a legacy TUN header).
const VIRTIO_NET_HDR_SIZE: usize = 10;
const _: () = assert!(TUN_HEADROOM == VIRTIO_NET_HDR_SIZE);

/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`: checksum from `csum_start`, stored at `+ csum_offset`.
const NEEDS_CSUM: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_TCPV4`.
const GSO_TCPV4: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_TCPV6`.
const GSO_TCPV6: u8 = 4;
/// Offset of the checksum in the TCP header (RFC 9293 §3.1).
const TCP_CSUM_OFFSET: usize = 16;

const TCP_PSH: u8 = 0x08;
const TCP_ACK: u8 = 0x10;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;
const IPPROTO_ICMPV6: u8 = 58;
/// The IPv4 DF bit in the flags/fragment-offset word.
const IPV4_DF: u16 = 0x4000;
/// Largest IP packet (IPv4 total length, IPv6 header + payload length).
const MAX_IP_LEN: usize = 65535;
/// Capacity a run's first buffer is given once: headroom and the largest IP packet.
const RUN_CAPACITY: usize = TUN_HEADROOM + MAX_IP_LEN;

/// One write of a coalesced batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunWrite {
    /// The buffer to write (headroom included).
    pub index: usize,
    /// IP packets it carries (1, or the segments of a super-packet).
    pub packets: usize,
}

/// The coalescer: its tables are kept between batches (no allocation once warm).
#[derive(Debug, Default)]
pub struct TunGro {
    /// The open run of each connection, as an index into `runs`.
    open: HashMap<FlowKey, usize>,
    runs: Vec<Run>,
    writes: Vec<TunWrite>,
}

/// A TCP connection, one direction: addresses and ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FlowKey {
    addrs: [u8; 32],
    ports: [u8; 4],
    v6: bool,
}

/// What a packet is to the coalescer.
enum Class {
    /// Not TCP: written alone, runs untouched.
    Other,
    /// TCP of an unknown connection: written alone, every run ends.
    Barrier,
    /// A TCP segment.
    Tcp(Seg),
}

/// The facts of a TCP segment read from its headers.
#[derive(Debug, Clone, Copy)]
struct Seg {
    key: FlowKey,
    /// IP header length (20 or 40 for a candidate).
    iph: usize,
    /// TCP header length.
    thl: usize,
    seq: u32,
    payload: usize,
    flags: u8,
    /// IPv4 identification (0 for IPv6).
    id: u16,
    /// IPv4 DF.
    df: bool,
    /// Whether it may be merged at all (see the module doc).
    candidate: bool,
}

/// A run of merged segments, held in the buffer of its first.
#[derive(Debug, Clone, Copy)]
struct Run {
    head: usize,
    /// The first segment (its headers are compared with every candidate).
    first: Seg,
    /// IP length so far.
    len: usize,
    next_seq: u32,
    segments: usize,
    /// Every segment carries the first's IPv4 identification (DF set).
    fixed_id: bool,
    /// The first segment's checksums were verified.
    verified: bool,
    /// The last merged segment had PSH.
    psh: bool,
    /// Index of the run's entry in `writes`.
    write: usize,
}

/// Why a candidate was not appended.
enum Refusal {
    /// It does not continue the run (or the run's first segment failed its checksums).
    NoMatch,
    /// Its own checksums fail: written alone, unchanged, starting no run.
    BadChecksum,
}

impl TunGro {
    /// Coalesces the batch `bufs` (each [`TUN_HEADROOM`] bytes of headroom and one IP packet)
    /// in place and returns the buffers to write, in order: every buffer but those merged into
    /// another, each with its headroom filled with a `virtio_net_hdr`. The packets of a merged
    /// run are appended to its first buffer, whose headers are rewritten (module doc).
    pub fn coalesce(&mut self, bufs: &mut [Vec<u8>]) -> &[TunWrite] {
        self.open.clear();
        self.runs.clear();
        self.writes.clear();
        for i in 0..bufs.len() {
            self.place(bufs, i);
        }
        for run in &self.runs {
            if run.segments > 1 {
                finish(&mut bufs[run.head], run);
            }
        }
        for w in &self.writes {
            if w.packets == 1 {
                bufs[w.index][..VIRTIO_NET_HDR_SIZE].fill(0);
            }
        }
        &self.writes
    }

    /// Appends packet `i` to its connection's open run, or makes it a write of its own.
    fn place(&mut self, bufs: &mut [Vec<u8>], i: usize) {
        let seg = match classify(&bufs[i][TUN_HEADROOM..]) {
            Class::Other => return self.alone(i),
            Class::Barrier => {
                self.open.clear();
                return self.alone(i);
            }
            Class::Tcp(seg) => seg,
        };
        if let Some(&r) = self.open.get(&seg.key) {
            match self.append(bufs, r, i, &seg) {
                Ok(()) => return,
                Err(refusal) => {
                    self.open.remove(&seg.key);
                    if let Refusal::BadChecksum = refusal {
                        return self.alone(i);
                    }
                }
            }
        }
        self.alone(i);
        if seg.candidate && seg.flags & TCP_PSH == 0 {
            self.runs.push(Run {
                head: i,
                first: seg,
                len: seg.iph + seg.thl + seg.payload,
                next_seq: seg.seq.wrapping_add(seg.payload as u32),
                segments: 1,
                fixed_id: false,
                verified: false,
                psh: false,
                write: self.writes.len() - 1,
            });
            self.open.insert(seg.key, self.runs.len() - 1);
        }
    }

    /// Packet `i` is written by itself.
    fn alone(&mut self, i: usize) {
        self.writes.push(TunWrite {
            index: i,
            packets: 1,
        });
    }

    /// Appends candidate `i` (`seg`) to run `r` if the merge rules allow it.
    fn append(
        &mut self,
        bufs: &mut [Vec<u8>],
        r: usize,
        i: usize,
        seg: &Seg,
    ) -> Result<(), Refusal> {
        let run = &mut self.runs[r];
        let (before, rest) = bufs.split_at_mut(i);
        let head = &mut before[run.head];
        let pkt = &rest[0][TUN_HEADROOM..];
        if !continues(run, &head[TUN_HEADROOM..], pkt, seg) {
            return Err(Refusal::NoMatch);
        }
        if !run.verified {
            if !checksums_valid(&head[TUN_HEADROOM..], &run.first) {
                return Err(Refusal::NoMatch);
            }
            run.verified = true;
        }
        if !checksums_valid(pkt, seg) {
            return Err(Refusal::BadChecksum);
        }
        if run.segments == 1 && head.capacity() < RUN_CAPACITY {
            head.reserve_exact(RUN_CAPACITY - head.len());
        }
        head.extend_from_slice(&pkt[seg.iph + seg.thl..]);
        if run.segments == 1 && !seg.key.v6 && seg.df && seg.id == run.first.id {
            // The second segment decides: a DF run may keep one identification (`continues`).
            run.fixed_id = true;
        }
        run.segments += 1;
        run.len += seg.payload;
        run.next_seq = run.next_seq.wrapping_add(seg.payload as u32);
        run.psh = seg.flags & TCP_PSH != 0;
        self.writes[run.write].packets += 1;
        if run.psh || seg.payload < run.first.payload {
            self.open.remove(&seg.key);
        }
        Ok(())
    }
}

/// Whether `pkt` (`seg`) continues `run`, whose first segment is `head`: rules 1 to 5 of the
/// module doc (the checksums are checked after).
fn continues(run: &Run, head: &[u8], pkt: &[u8], seg: &Seg) -> bool {
    let first = &run.first;
    if !seg.candidate
        || seg.iph != first.iph
        || seg.thl != first.thl
        || seg.seq != run.next_seq
        || seg.payload > first.payload
        || run.len + seg.payload > MAX_IP_LEN
    {
        return false;
    }
    let t = first.iph;
    // Ack, data offset; window; urgent pointer and options (the flags are checked by
    // `candidate`, the sequence number above).
    let tcp_same = head[t + 8..t + 13] == pkt[t + 8..t + 13]
        && head[t + 14..t + 16] == pkt[t + 14..t + 16]
        && head[t + 18..t + first.thl] == pkt[t + 18..t + first.thl];
    if !tcp_same {
        return false;
    }
    if first.key.v6 {
        // Version, traffic class, flow label; next header, hop limit.
        return head[0..4] == pkt[0..4] && head[6..8] == pkt[6..8];
    }
    // Version/IHL, TOS; flags/offset, TTL, protocol.
    if head[0..2] != pkt[0..2] || head[6..10] != pkt[6..10] {
        return false;
    }
    let step = seg.id.wrapping_sub(first.id);
    if run.segments == 1 && seg.df && step == 0 {
        return true;
    }
    let want = if run.fixed_id { 0 } else { run.segments };
    usize::from(step) == want
}

/// Reads the headers of `pkt`.
fn classify(pkt: &[u8]) -> Class {
    match pkt.first().map(|b| b >> 4) {
        Some(4) if pkt.len() >= 20 => classify_v4(pkt),
        Some(6) if pkt.len() >= 40 => classify_v6(pkt),
        _ => Class::Other,
    }
}

fn classify_v4(pkt: &[u8]) -> Class {
    if pkt[9] != IPPROTO_TCP {
        return Class::Other;
    }
    let iph = usize::from(pkt[0] & 0x0f) * 4;
    let frag = u16::from_be_bytes([pkt[6], pkt[7]]);
    if frag & !IPV4_DF != 0 || iph < 20 || pkt.len() < iph + 20 {
        return Class::Barrier;
    }
    let mut addrs = [0u8; 32];
    addrs[..8].copy_from_slice(&pkt[12..20]);
    let total = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
    let ip_ok = iph == 20 && total == pkt.len();
    let id = u16::from_be_bytes([pkt[4], pkt[5]]);
    tcp_seg(pkt, iph, addrs, false, ip_ok, id, frag & IPV4_DF != 0)
}

fn classify_v6(pkt: &[u8]) -> Class {
    match pkt[6] {
        IPPROTO_TCP if pkt.len() >= 60 => {}
        IPPROTO_UDP | IPPROTO_ICMPV6 => return Class::Other,
        _ => return Class::Barrier,
    }
    let mut addrs = [0u8; 32];
    addrs.copy_from_slice(&pkt[8..40]);
    let payload = usize::from(u16::from_be_bytes([pkt[4], pkt[5]]));
    tcp_seg(pkt, 40, addrs, true, payload + 40 == pkt.len(), 0, false)
}

/// The TCP segment at `iph` of `pkt` (at least 20 bytes there); `ip_ok`: the IP header allows
/// merging.
fn tcp_seg(
    pkt: &[u8],
    iph: usize,
    addrs: [u8; 32],
    v6: bool,
    ip_ok: bool,
    id: u16,
    df: bool,
) -> Class {
    let tcp = &pkt[iph..];
    let key = FlowKey {
        addrs,
        ports: [tcp[0], tcp[1], tcp[2], tcp[3]],
        v6,
    };
    let thl = usize::from(tcp[12] >> 4) * 4;
    let flags = tcp[13];
    let shape_ok = thl >= 20 && thl <= tcp.len();
    let payload = if shape_ok { tcp.len() - thl } else { 0 };
    let candidate =
        ip_ok && shape_ok && payload > 0 && (flags == TCP_ACK || flags == TCP_ACK | TCP_PSH);
    Class::Tcp(Seg {
        key,
        iph,
        thl,
        seq: u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]),
        payload,
        flags,
        id,
        df,
        candidate,
    })
}

/// Rewrites the headers of a merged run in `buf` and fills its headroom (module doc).
fn finish(buf: &mut [u8], run: &Run) {
    let first = &run.first;
    let (iph, thl) = (first.iph, first.thl);
    let (hdr, pkt) = buf.split_at_mut(TUN_HEADROOM);
    let len = run.len as u16;
    let gso_type = if first.key.v6 {
        pkt[4..6].copy_from_slice(&(len - 40).to_be_bytes());
        GSO_TCPV6
    } else {
        pkt[2..4].copy_from_slice(&len.to_be_bytes());
        pkt[10..12].fill(0);
        let c = !fold(sum_words(&pkt[..iph], 0));
        pkt[10..12].copy_from_slice(&c.to_ne_bytes());
        GSO_TCPV4
    };
    if run.psh {
        pkt[iph + 13] |= TCP_PSH;
    }
    let addrs = if first.key.v6 {
        &pkt[8..40]
    } else {
        &pkt[12..20]
    };
    let pseudo = fold(pseudo_sum(addrs, len - iph as u16));
    pkt[iph + TCP_CSUM_OFFSET..iph + TCP_CSUM_OFFSET + 2].copy_from_slice(&pseudo.to_ne_bytes());
    hdr[0] = NEEDS_CSUM;
    hdr[1] = gso_type;
    hdr[2..4].copy_from_slice(&((iph + thl) as u16).to_ne_bytes());
    hdr[4..6].copy_from_slice(&(first.payload as u16).to_ne_bytes());
    hdr[6..8].copy_from_slice(&(iph as u16).to_ne_bytes());
    hdr[8..10].copy_from_slice(&(TCP_CSUM_OFFSET as u16).to_ne_bytes());
}

/// Whether the TCP checksum of `pkt` (`seg`) verifies, and for IPv4 its header checksum.
fn checksums_valid(pkt: &[u8], seg: &Seg) -> bool {
    if !seg.key.v6 && fold(sum_words(&pkt[..seg.iph], 0)) != 0xffff {
        return false;
    }
    let addrs = if seg.key.v6 {
        &pkt[8..40]
    } else {
        &pkt[12..20]
    };
    let tcp = &pkt[seg.iph..];
    fold(sum_words(tcp, pseudo_sum(addrs, tcp.len() as u16))) == 0xffff
}

/// The unfolded sum of the TCP pseudo-header: both addresses, protocol 6 and the TCP length
/// (RFC 9293 §3.1; RFC 8200 §8.1's 32-bit length and next header give the same sum).
fn pseudo_sum(addrs: &[u8], tcp_len: u16) -> u64 {
    let [hi, lo] = tcp_len.to_be_bytes();
    sum_words(&[0, IPPROTO_TCP, hi, lo], sum_words(addrs, 0))
}

/// Adds `data` to `acc` as 16-bit words in the host's byte order, carries deferred (RFC 1071
/// §2 (B), (C) and §4.1): folded, the sum's bytes in host order are the big-endian sum's, so
/// checksums are written with `to_ne_bytes`. An odd last byte is padded with a zero. Sums of
/// 32-bit words so the loop vectorizes; a `u64` cannot overflow for packets below 4 GiB.
fn sum_words(data: &[u8], mut acc: u64) -> u64 {
    let mut quads = data.chunks_exact(4);
    for q in &mut quads {
        acc += u64::from(u32::from_ne_bytes([q[0], q[1], q[2], q[3]]));
    }
    let mut pairs = quads.remainder().chunks_exact(2);
    for p in &mut pairs {
        acc += u64::from(u16::from_ne_bytes([p[0], p[1]]));
    }
    if let [last] = pairs.remainder() {
        acc += u64::from(u16::from_ne_bytes([*last, 0]));
    }
    acc
}

/// Folds a [`sum_words`] sum to 16 bits (end-around carry), host byte order.
fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host-order sum equals tun-rs's big-endian checksum, for every length and odd start.
    #[test]
    fn sum_words_matches_big_endian_sum() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7919 % 251) as u8).collect();
        for start in 0..4 {
            for end in start..data.len() {
                let d = &data[start..end];
                let ours = fold(sum_words(d, 0));
                let theirs = tun_rs::checksum(d, 0);
                assert_eq!(ours.to_ne_bytes(), theirs.to_be_bytes(), "{start}..{end}");
            }
        }
    }
}
