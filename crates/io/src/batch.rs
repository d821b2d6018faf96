//! Batched UDP I/O: receive slots for `recvmmsg(2)` (with the datagrams of UDP GRO messages
//! cut apart, [`crate::gro`]) and the batched calls of [`crate::Udp`] on the real socket
//! (`sendmmsg(2)`), through the `nix` crate's safe wrappers.
//!
//! `nix` was picked over `quinn-udp`: the gateway needs many datagrams to *different*
//! addresses per call (`sendmmsg`), which quinn-udp does not offer (it sends one GSO train to
//! one destination), and nix is already in the build (through tun-rs).

use std::io::{self, IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::RawFd;

use nix::errno::Errno;
use nix::sys::socket::{MsgFlags, MultiHeaders, SockaddrLike, SockaddrStorage, recvmmsg, sendmmsg};

/// Most datagrams one batched system call moves.
pub const BATCH: usize = 32;

/// Receive slots: `count` buffers of `slot` bytes, one per kernel message, and the datagrams
/// the last receive put in them, each with its source. A message coalesced by UDP GRO
/// ([`crate::gro`]) holds several datagrams; they are handed out one by one, exactly as plain
/// receives would give them. Allocated once per reader; [`crate::Udp::recv_batch`] fills them
/// (the datagram list grows to the most a receive has held, then is reused).
#[derive(Debug)]
pub struct RecvSlots {
    data: Vec<u8>,
    got: Received,
}

/// Where the datagrams of the last receive are in [`RecvSlots::data`].
#[derive(Debug)]
struct Received {
    /// Bytes per slot.
    slot: usize,
    /// Kernel messages received (the slots used, from the first).
    messages: usize,
    /// Each datagram: start in the buffer, length, source.
    datagrams: Vec<(usize, usize, SocketAddr)>,
}

impl Received {
    /// Records that the next slot holds a message of `bytes` bytes from `from`, cut into
    /// datagrams of `seg` bytes (the last may be shorter) when the kernel gave a GRO size.
    fn push(&mut self, bytes: usize, seg: Option<usize>, from: SocketAddr) {
        let base = self.messages * self.slot;
        for (at, len) in crate::gro::segments(bytes.min(self.slot), seg) {
            self.datagrams.push((base + at, len, from));
        }
        self.messages += 1;
    }
}

impl RecvSlots {
    /// `count` slots (at least one) of `slot` bytes each. With UDP GRO on, a slot must hold a
    /// whole coalesced message (up to 64 KiB) or the kernel truncates it.
    pub fn new(count: usize, slot: usize) -> RecvSlots {
        let count = count.max(1);
        RecvSlots {
            data: vec![0; count * slot],
            got: Received {
                slot,
                messages: 0,
                datagrams: Vec::with_capacity(count),
            },
        }
    }

    /// Number of slots: the most kernel messages one receive takes.
    pub fn capacity(&self) -> usize {
        self.data.len() / self.got.slot.max(1)
    }

    /// Datagrams held after the last receive.
    pub fn len(&self) -> usize {
        self.got.datagrams.len()
    }

    /// Kernel messages the last receive took: [`RecvSlots::len`] or fewer when UDP GRO
    /// coalesced datagrams.
    pub fn messages(&self) -> usize {
        self.got.messages
    }

    /// Whether the last receive got nothing.
    pub fn is_empty(&self) -> bool {
        self.got.datagrams.is_empty()
    }

    /// Datagram `i` of the last receive and its source.
    pub fn get(&self, i: usize) -> Option<(&[u8], SocketAddr)> {
        let &(start, len, from) = self.got.datagrams.get(i)?;
        Some((&self.data[start..start + len], from))
    }

    /// Empties the slots before a receive.
    pub fn clear(&mut self) {
        self.got.messages = 0;
        self.got.datagrams.clear();
    }

    /// Slot `i` to receive into (for the one-datagram fallback).
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        let start = i * self.got.slot;
        &mut self.data[start..start + self.got.slot]
    }

    /// Records that the next slot holds one datagram of `len` bytes from `from`.
    pub fn push(&mut self, len: usize, from: SocketAddr) {
        self.got.push(len, None, from);
    }

    /// Records that the next slot holds a message of `bytes` bytes from `from`: datagrams of
    /// `seg` bytes each, the last possibly shorter (the UDP GRO size, [`crate::gro`]), or one
    /// datagram when `seg` is `None`.
    pub fn push_message(&mut self, bytes: usize, seg: Option<usize>, from: SocketAddr) {
        self.got.push(bytes, seg, from);
    }
}

/// `recvmmsg(2)` without waiting: fills as many slots as messages are queued. With `gro`
/// (the socket has `UDP_GRO` on) each message's `UDP_GRO` control message, if any, gives the
/// size its datagrams are cut at; a message whose control data the kernel truncated (no room:
/// cannot happen with only `UDP_GRO` on) cannot be cut and is dropped.
pub(crate) fn recv_mmsg(fd: RawFd, slots: &mut RecvSlots, gro: bool) -> io::Result<()> {
    slots.clear();
    let n = slots.capacity();
    let RecvSlots { data, got } = slots;
    let mut headers =
        MultiHeaders::<SockaddrStorage>::preallocate(n, gro.then(crate::gro::cmsg_buffer));
    let mut iovs: Vec<[IoSliceMut<'_>; 1]> = data
        .chunks_exact_mut(got.slot)
        .map(|c| [IoSliceMut::new(c)])
        .collect();
    let received = match recvmmsg(
        fd,
        &mut headers,
        iovs.iter_mut(),
        MsgFlags::MSG_DONTWAIT,
        None,
    ) {
        Ok(r) => r,
        Err(Errno::EAGAIN | Errno::EINTR | Errno::ECONNREFUSED) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    for m in received {
        // A datagram without an IP source cannot be answered or matched to a peer: it is
        // handed out with the unspecified address.
        let from = m
            .address
            .as_ref()
            .and_then(socket_addr)
            .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
        let seg = match m.cmsgs() {
            Ok(cmsgs) if gro => crate::gro::segment_size(cmsgs),
            Ok(_) => None,
            Err(_) => {
                got.messages += 1;
                continue;
            }
        };
        got.push(m.bytes, seg, from);
    }
    Ok(())
}

/// `sendmmsg(2)` of `batch` (at most [`BATCH`] of it): how many were sent; an error only when
/// the first could not be.
pub(crate) fn send_mmsg(fd: RawFd, batch: &[(Vec<u8>, SocketAddr)]) -> io::Result<usize> {
    let batch = &batch[..batch.len().min(BATCH)];
    if batch.is_empty() {
        return Ok(0);
    }
    let iovs: Vec<[IoSlice<'_>; 1]> = batch.iter().map(|(d, _)| [IoSlice::new(d)]).collect();
    let addrs: Vec<Option<SockaddrStorage>> = batch
        .iter()
        .map(|(_, to)| Some(SockaddrStorage::from(*to)))
        .collect();
    let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(batch.len(), None);
    let sent = sendmmsg(fd, &mut headers, &iovs, addrs, [], MsgFlags::empty())?;
    Ok(sent.count())
}

fn socket_addr(a: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(SocketAddr::from(std::net::SocketAddrV4::from(*v4)));
    }
    a.as_sockaddr_in6()
        .map(|v6| SocketAddr::from(std::net::SocketAddrV6::from(*v6)))
        .filter(|_| a.family().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SysUdp, Udp};
    use std::time::Duration;

    /// A burst of datagrams from two senders arrives in one receive call, in order, with the
    /// right sources; a batched send reaches two destinations in one call. (With the trait's
    /// one-datagram defaults the first receive holds one datagram and the test fails.)
    #[test]
    fn batches_cross_loopback() {
        let rx = SysUdp::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let to = rx.local_addr().unwrap();
        let a = SysUdp::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let b = SysUdp::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let batch: Vec<(Vec<u8>, SocketAddr)> = (0..10u8).map(|i| (vec![i; 100], to)).collect();
        assert_eq!(a.send_batch(&batch).unwrap().datagrams, 10);
        b.send_to(&[77; 3], to).unwrap();
        let mut slots = RecvSlots::new(BATCH, 2048);
        // Loopback queues the datagrams before the sends return: one call takes all eleven.
        rx.recv_batch(&mut slots, Duration::from_secs(1)).unwrap();
        assert_eq!(slots.len(), 11, "one recvmmsg takes every queued datagram");
        let mut got = Vec::new();
        for i in 0..slots.len() {
            let (d, from) = slots.get(i).unwrap();
            got.push((d.to_vec(), from));
        }
        assert_eq!(got.len(), 11);
        for (i, (d, from)) in got[..10].iter().enumerate() {
            assert_eq!(d, &vec![i as u8; 100]);
            assert_eq!(*from, a.local_addr().unwrap());
        }
        assert_eq!(got[10], (vec![77; 3], b.local_addr().unwrap()));
        // Two destinations in one call.
        let c = SysUdp::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let two = vec![(vec![1], to), (vec![2], c.local_addr().unwrap())];
        assert_eq!(a.send_batch(&two).unwrap().datagrams, 2);
        let mut buf = [0u8; 8];
        let r = c.recv_from(&mut buf, Duration::from_secs(1)).unwrap();
        assert_eq!(r.map(|(n, _)| buf[..n].to_vec()), Some(vec![2]));
    }

    /// Without a socket: a GRO message is handed out as its datagrams (size from the control
    /// message, the last shorter), each with the message's source; the next message starts
    /// in the next slot; a message of exactly one datagram and a plain one stay whole.
    #[test]
    fn slots_cut_coalesced_messages() {
        let (a, b): (SocketAddr, SocketAddr) =
            ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:2".parse().unwrap());
        let mut slots = RecvSlots::new(4, 4096);
        let first: Vec<u8> = (0..3 * 1000 + 400).map(|i| (i / 1000) as u8).collect();
        slots.slot_mut(0)[..first.len()].copy_from_slice(&first);
        slots.slot_mut(1)[..1000].fill(7);
        slots.slot_mut(2)[..5].fill(9);
        slots.push_message(first.len(), Some(1000), a);
        slots.push_message(1000, Some(1000), b);
        slots.push(5, a);
        assert_eq!((slots.len(), slots.messages()), (6, 3));
        let got: Vec<(Vec<u8>, SocketAddr)> = (0..slots.len())
            .map(|i| slots.get(i).map(|(d, f)| (d.to_vec(), f)).unwrap())
            .collect();
        assert_eq!(
            got,
            vec![
                (vec![0; 1000], a),
                (vec![1; 1000], a),
                (vec![2; 1000], a),
                (vec![3; 400], a),
                (vec![7; 1000], b),
                (vec![9; 5], a),
            ]
        );
        assert!(slots.get(6).is_none());
        slots.clear();
        assert!(slots.is_empty() && slots.messages() == 0);
    }

    /// The buffer request reaches the kernel (which reports at least what it granted before).
    #[test]
    fn socket_buffers_grow() {
        let s = SysUdp::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let (rx0, tx0) = s.set_buffers(4096).unwrap();
        let (rx1, tx1) = s.set_buffers(1 << 20).unwrap();
        assert!(rx1 > rx0 && tx1 > tx0, "{rx0} {tx0} -> {rx1} {tx1}");
    }
}
