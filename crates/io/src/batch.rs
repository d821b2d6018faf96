//! Batched UDP I/O: receive slots for `recvmmsg(2)` and the batched calls of [`crate::Udp`]
//! on the real socket (`sendmmsg(2)`), through the `nix` crate's safe wrappers.
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

/// Receive slots: `count` buffers of `slot` bytes, with each received datagram's length and
/// source. Allocated once per reader; [`crate::Udp::recv_batch`] fills them.
#[derive(Debug)]
pub struct RecvSlots {
    data: Vec<u8>,
    slot: usize,
    meta: Vec<(usize, SocketAddr)>,
}

impl RecvSlots {
    /// `count` slots (at least one) of `slot` bytes each.
    pub fn new(count: usize, slot: usize) -> RecvSlots {
        let count = count.max(1);
        RecvSlots {
            data: vec![0; count * slot],
            slot,
            meta: Vec::with_capacity(count),
        }
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.data.len() / self.slot.max(1)
    }

    /// Datagrams held after the last receive.
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    /// Whether the last receive got nothing.
    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }

    /// Datagram `i` of the last receive and its source.
    pub fn get(&self, i: usize) -> Option<(&[u8], SocketAddr)> {
        let &(len, from) = self.meta.get(i)?;
        let start = i * self.slot;
        Some((&self.data[start..start + len], from))
    }

    /// Empties the slots before a receive.
    pub fn clear(&mut self) {
        self.meta.clear();
    }

    /// Slot `i` to receive into (for the one-datagram fallback).
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        let start = i * self.slot;
        &mut self.data[start..start + self.slot]
    }

    /// Records that the next slot holds `len` bytes from `from`.
    pub fn push(&mut self, len: usize, from: SocketAddr) {
        self.meta.push((len.min(self.slot), from));
    }
}

/// `recvmmsg(2)` without waiting: fills as many slots as datagrams are queued.
pub(crate) fn recv_mmsg(fd: RawFd, slots: &mut RecvSlots) -> io::Result<()> {
    slots.clear();
    let n = slots.capacity();
    let slot = slots.slot;
    let got = {
        let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(n, None);
        let mut iovs: Vec<[IoSliceMut<'_>; 1]> = slots
            .data
            .chunks_exact_mut(slot)
            .map(|c| [IoSliceMut::new(c)])
            .collect();
        match recvmmsg(
            fd,
            &mut headers,
            iovs.iter_mut(),
            MsgFlags::MSG_DONTWAIT,
            None,
        ) {
            Ok(r) => r
                .map(|m| (m.bytes, m.address.and_then(|a| socket_addr(&a))))
                .collect::<Vec<_>>(),
            Err(Errno::EAGAIN | Errno::EINTR | Errno::ECONNREFUSED) => Vec::new(),
            Err(e) => return Err(e.into()),
        }
    };
    for (len, from) in got {
        // A datagram without an IP source cannot be answered or matched to a peer: it keeps
        // its slot (so the indices stay aligned) with the unspecified address.
        slots.push(
            len,
            from.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0))),
        );
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

    /// The buffer request reaches the kernel (which reports at least what it granted before).
    #[test]
    fn socket_buffers_grow() {
        let s = SysUdp::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let (rx0, tx0) = s.set_buffers(4096).unwrap();
        let (rx1, tx1) = s.set_buffers(1 << 20).unwrap();
        assert!(rx1 > rx0 && tx1 > tx0, "{rx0} {tx0} -> {rx1} {tx1}");
    }
}
