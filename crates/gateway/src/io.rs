//! The gateway's I/O seams: the [`Tun`] trait here and the [`Udp`] trait of `tcpnc-io`, with
//! in-memory fakes so that gateways can be tested in one process without privileges.
//!
//! Both traits take `&self` so one reader thread and the owner thread can share a device
//! through an `Arc`. `recv` waits at most `timeout` and returns `Ok(None)` when nothing
//! arrived, which lets reader threads notice shutdown.
//!
//! Batches ([`crate::tun_batch`]): `recv_batch` is one read that may give many IP packets (a
//! TSO/GSO super-packet cut into segments on an offloading TUN) and `send_batch` writes a
//! whole batch (coalesced by GRO on such a TUN); the defaults move one packet per call.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use tcpnc_io::{FakeNet, FakeUdp, Udp};
use tcpnc_io::{copy_out, recv_timeout};

use crate::readers::MAX_PACKET;
use crate::tun_batch::{TunRead, TunRx, TunSent, TunTx};

/// A TUN device: IP packets in and out.
pub trait Tun: Send + Sync + 'static {
    /// Reads one IP packet into `buf`, waiting at most `timeout`.
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>>;
    /// Writes one IP packet.
    fn send(&self, packet: &[u8]) -> io::Result<()>;

    /// Receive slots sized for this device's reads (default: one packet of [`MAX_PACKET`]).
    fn rx_slots(&self) -> TunRx {
        TunRx::new(1, MAX_PACKET, false)
    }

    /// Receive queues (`IFF_MULTI_QUEUE`, `interface.tun_queues`): the gateway runs one
    /// reader thread per queue. Default one.
    fn queues(&self) -> usize {
        1
    }

    /// One read of queue `queue` (below [`Tun::queues`]), waiting at most `timeout`: `rx`
    /// holds the IP packets it gave. The default (one queue) reads one packet with
    /// [`Tun::recv`].
    fn recv_batch(&self, queue: usize, rx: &mut TunRx, timeout: Duration) -> io::Result<TunRead> {
        let _ = queue;
        recv_one(rx, |buf| self.recv(buf, timeout))
    }

    /// Writes every packet of `tx`. The default makes one [`Tun::send`] per packet.
    fn send_batch(&self, tx: &mut TunTx) -> TunSent {
        send_each(self, tx)
    }

    /// Whether the device runs with `IFF_VNET_HDR` offloads (large segments in, GRO out).
    fn offload(&self) -> bool {
        false
    }
}

/// One packet read by `read` (a [`Tun::recv`] with its timeout) into slot 0 of `rx` (the
/// one-packet batch).
pub fn recv_one(
    rx: &mut TunRx,
    read: impl FnOnce(&mut [u8]) -> io::Result<Option<usize>>,
) -> io::Result<TunRead> {
    rx.len = 0;
    Ok(match read(rx.first_slot())? {
        Some(n) => {
            rx.set_one(n);
            TunRead::Packets
        }
        None => TunRead::Timeout,
    })
}

/// Every packet of `tx` written with its own [`Tun::send`].
pub fn send_each<T: Tun + ?Sized>(tun: &T, tx: &TunTx) -> TunSent {
    let mut r = TunSent::default();
    for p in tx.packets() {
        r.calls += 1;
        match tun.send(p) {
            Ok(()) => r.written += 1,
            Err(e) => {
                r.failed += 1;
                r.error = Some(e);
            }
        }
    }
    r
}

/// In-memory TUN: the gateway side of a pair made by [`fake_tun`] (or [`fake_tun_queues`]).
/// Like an offloading TUN it moves batches: one `recv_batch` takes every packet already
/// injected in its queue (up to [`FAKE_TUN_SLOTS`]) and one `send_batch` is one call however
/// many packets it writes.
pub struct FakeTun {
    /// One receiver per queue.
    inbound: Vec<Mutex<Receiver<Vec<u8>>>>,
    outbound: Sender<Vec<u8>>,
    write_calls: Arc<AtomicU64>,
}

/// Packets one read of a [`FakeTun`] takes at most.
pub const FAKE_TUN_SLOTS: usize = 64;

/// The test's side of a [`FakeTun`]: plays the local kernel.
pub struct FakeTunHandle {
    /// Packets the "kernel" sends into the tunnel (the gateway reads them), on queue 0.
    pub inject: Sender<Vec<u8>>,
    /// The same, one sender per queue (the first is `inject`'s queue).
    pub inject_queue: Vec<Sender<Vec<u8>>>,
    /// Packets the gateway wrote to the TUN.
    pub written: Receiver<Vec<u8>>,
    /// Write calls the gateway made (each `send` or `send_batch`).
    pub write_calls: Arc<AtomicU64>,
}

/// Makes a connected fake TUN and its test handle.
pub fn fake_tun() -> (FakeTun, FakeTunHandle) {
    fake_tun_queues(1)
}

/// A fake TUN with `queues` receive queues (at least one); the test picks each injected
/// packet's queue, as the kernel's steering would.
pub fn fake_tun_queues(queues: usize) -> (FakeTun, FakeTunHandle) {
    let (inject_queue, inbound): (Vec<_>, Vec<_>) = (0..queues.max(1))
        .map(|_| {
            let (tx, rx) = mpsc::channel();
            (tx, Mutex::new(rx))
        })
        .unzip();
    let (outbound, written) = mpsc::channel();
    let write_calls = Arc::new(AtomicU64::new(0));
    (
        FakeTun {
            inbound,
            outbound,
            write_calls: write_calls.clone(),
        },
        FakeTunHandle {
            inject: inject_queue[0].clone(),
            inject_queue,
            written,
            write_calls,
        },
    )
}

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "fake TUN reader gone")
}

impl Tun for FakeTun {
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        Ok(recv_timeout(&self.inbound[0], timeout)?.map(|p| copy_out(buf, &p)))
    }

    fn send(&self, packet: &[u8]) -> io::Result<()> {
        self.write_calls.fetch_add(1, Ordering::Relaxed);
        self.outbound.send(packet.to_vec()).map_err(|_| gone())
    }

    fn rx_slots(&self) -> TunRx {
        TunRx::new(FAKE_TUN_SLOTS, MAX_PACKET, false)
    }

    fn queues(&self) -> usize {
        self.inbound.len()
    }

    /// Waits for the first packet of queue `queue`, then takes every packet already injected
    /// there.
    fn recv_batch(&self, queue: usize, rx: &mut TunRx, timeout: Duration) -> io::Result<TunRead> {
        rx.len = 0;
        let Some(first) = recv_timeout(&self.inbound[queue], timeout)? else {
            return Ok(TunRead::Timeout);
        };
        let inbound = self.inbound[queue].lock().map_err(|_| gone())?;
        let mut next = Some(first);
        while let Some(p) = next.take() {
            let i = rx.len;
            rx.sizes[i] = copy_out(&mut rx.slots[i], &p);
            rx.len += 1;
            if rx.len < rx.slots.len() {
                next = inbound.try_recv().ok();
            }
        }
        Ok(TunRead::Packets)
    }

    /// One call for the whole batch.
    fn send_batch(&self, tx: &mut TunTx) -> TunSent {
        self.write_calls.fetch_add(1, Ordering::Relaxed);
        let mut r = TunSent {
            calls: 1,
            ..TunSent::default()
        };
        for p in tx.packets() {
            match self.outbound.send(p.to_vec()) {
                Ok(()) => r.written += 1,
                Err(_) => {
                    r.failed += 1;
                    r.error = Some(gone());
                }
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_tun_round_trip() {
        let (tun, h) = fake_tun();
        h.inject.send(vec![1, 2, 3]).unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(tun.recv(&mut buf, Duration::from_secs(1)).unwrap(), Some(3));
        tun.send(&[9]).unwrap();
        assert_eq!(h.written.recv().unwrap(), vec![9]);
        drop(h);
        assert!(tun.recv(&mut buf, Duration::ZERO).is_err());
    }

    /// One batched read takes every packet already injected; one batched write is one call.
    /// (With the trait's one-packet defaults the read holds one packet and the write makes
    /// three calls.)
    #[test]
    fn fake_tun_batches() {
        let (tun, h) = fake_tun();
        for i in 0..5u8 {
            h.inject.send(vec![i; 20]).unwrap();
        }
        let mut rx = tun.rx_slots();
        let r = tun.recv_batch(0, &mut rx, Duration::from_secs(1)).unwrap();
        assert!(matches!(r, TunRead::Packets));
        let got: Vec<Vec<u8>> = rx.packets().map(<[u8]>::to_vec).collect();
        assert_eq!(got, (0..5u8).map(|i| vec![i; 20]).collect::<Vec<_>>());
        let mut tx = TunTx::default();
        for i in 0..3u8 {
            tx.push(&[i; 7]);
        }
        let sent = tun.send_batch(&mut tx);
        assert_eq!((sent.calls, sent.written, sent.failed), (1, 3, 0));
        assert_eq!(h.write_calls.load(Ordering::Relaxed), 1);
        let written: Vec<Vec<u8>> = h.written.try_iter().collect();
        assert_eq!(written, (0..3u8).map(|i| vec![i; 7]).collect::<Vec<_>>());
    }
}
