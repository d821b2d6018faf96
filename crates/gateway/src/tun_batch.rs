//! Batches of IP packets on the TUN seam: [`TunRx`], the receive slots one read fills (a TUN
//! with `IFF_VNET_HDR` offloads hands over a TSO/GSO super-packet that is cut into
//! MSS-sized IP packets, as wireguard-go does), and [`TunTx`], the packets the owner writes in
//! one batch per loop turn (coalesced by GRO on such a TUN).
//!
//! Both are allocated once and reused: no allocation per packet once warm.

use std::io;

/// Bytes kept free in front of every packet of a [`TunTx`]: the `virtio_net_hdr` an
/// offloading TUN needs before each written packet (Linux `include/uapi/linux/virtio_net.h`).
pub const TUN_HEADROOM: usize = tun_rs::VIRTIO_NET_HDR_LEN;

/// The smallest segment a super-packet is cut into: Linux's default `tcp_min_snd_mss` (48 B),
/// so a 64 KiB super-packet of the smallest MSS still fits the slots (UDP GSO trains are at most
/// 128 datagrams, `UDP_MAX_SEGMENTS`).
pub const MIN_SEGMENT: usize = 48;

/// Largest read from the TUN: a virtio header and a 64 KiB IP packet.
pub const MAX_READ: usize = TUN_HEADROOM + 65536;

/// Receive slots: what one read of the TUN gave, as separate IP packets.
#[derive(Debug)]
pub struct TunRx {
    /// The raw read (virtio header + super-packet) on an offloading TUN.
    pub(crate) raw: Vec<u8>,
    /// One buffer per segment, each as long as the largest packet it may hold.
    pub(crate) slots: Vec<Vec<u8>>,
    /// Length of the packet in each slot.
    pub(crate) sizes: Vec<usize>,
    /// Packets held after the last read.
    pub(crate) len: usize,
}

impl TunRx {
    /// `count` slots (at least one) of `slot` bytes each, and a raw buffer for one read when
    /// `raw` is set (offloading TUNs).
    pub fn new(count: usize, slot: usize, raw: bool) -> TunRx {
        let count = count.max(1);
        TunRx {
            raw: if raw { vec![0; MAX_READ] } else { Vec::new() },
            slots: (0..count).map(|_| vec![0; slot]).collect(),
            sizes: vec![0; count],
            len: 0,
        }
    }

    /// Slots for an offloading TUN of MTU `mtu`: enough for a 64 KiB super-packet cut into
    /// [`MIN_SEGMENT`]-byte segments, each slot one MTU.
    pub fn for_offload(mtu: usize) -> TunRx {
        TunRx::new(65535 / MIN_SEGMENT + 1, mtu, true)
    }

    /// The packets of the last read.
    pub fn packets(&self) -> impl Iterator<Item = &[u8]> {
        self.slots
            .iter()
            .zip(&self.sizes)
            .take(self.len)
            .map(|(s, &n)| &s[..n.min(s.len())])
    }

    /// Number of packets of the last read.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the last read gave no packet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stores one packet read whole into slot 0 (the one-packet read of a plain TUN).
    pub fn set_one(&mut self, n: usize) {
        self.sizes[0] = n;
        self.len = 1;
    }

    /// Slot 0, to read one packet into.
    pub fn first_slot(&mut self) -> &mut [u8] {
        &mut self.slots[0]
    }
}

/// What one read of the TUN gave.
#[derive(Debug)]
pub enum TunRead {
    /// Nothing within the timeout.
    Timeout,
    /// [`TunRx::len`] packets.
    Packets,
    /// A read whose contents could not be cut into IP packets (bad virtio header, more
    /// segments than slots): dropped, counted as `tun_read_errors`.
    Malformed(io::Error),
}

/// Packets waiting to be written to the TUN, each behind [`TUN_HEADROOM`] free bytes.
#[derive(Debug, Default)]
pub struct TunTx {
    bufs: Vec<Vec<u8>>,
    len: usize,
}

impl TunTx {
    /// Appends a copy of `packet` (buffers are reused; empty packets are ignored).
    pub fn push(&mut self, packet: &[u8]) {
        if packet.is_empty() {
            return;
        }
        if self.len == self.bufs.len() {
            self.bufs.push(Vec::new());
        }
        let b = &mut self.bufs[self.len];
        b.clear();
        b.resize(TUN_HEADROOM, 0);
        b.extend_from_slice(packet);
        self.len += 1;
    }

    /// Number of packets waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The waiting packets, without headroom.
    pub fn packets(&self) -> impl Iterator<Item = &[u8]> {
        self.bufs[..self.len].iter().map(|b| &b[TUN_HEADROOM..])
    }

    /// The waiting buffers, headroom included (for a batched write that fills the headroom).
    pub fn bufs_mut(&mut self) -> &mut [Vec<u8>] {
        &mut self.bufs[..self.len]
    }

    /// Forgets the packets, keeping the buffers.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// What a batched write did.
#[derive(Debug, Default)]
pub struct TunSent {
    /// Write system calls made.
    pub calls: u64,
    /// Packets written.
    pub written: u64,
    /// Packets that could not be written.
    pub failed: u64,
    /// The last error, if any.
    pub error: Option<io::Error>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reused transmit batch keeps its buffers (no allocation once warm) and hands out the
    /// packets without their headroom.
    #[test]
    fn tx_reuses_buffers_and_hides_headroom() {
        let mut tx = TunTx::default();
        tx.push(&[1; 100]);
        tx.push(&[]);
        tx.push(&[2; 10]);
        assert_eq!(tx.len(), 2);
        let ptr = tx.bufs_mut()[0].as_ptr();
        assert!(tx.bufs_mut().iter().all(|b| b.len() > TUN_HEADROOM));
        tx.clear();
        tx.push(&[3; 50]);
        let got: Vec<&[u8]> = tx.packets().collect();
        assert_eq!(got, vec![&[3u8; 50][..]]);
        assert_eq!(tx.bufs_mut()[0].as_ptr(), ptr);
    }

    /// Offload slots hold the most segments a 64 KiB super-packet can have.
    #[test]
    fn offload_slots_fit_smallest_segments() {
        let rx = TunRx::for_offload(1400);
        assert!(rx.slots.len() * MIN_SEGMENT >= 65535);
        assert!(rx.slots.iter().all(|s| s.len() == 1400));
        assert_eq!(rx.raw.len(), MAX_READ);
        assert!(rx.is_empty());
    }
}
