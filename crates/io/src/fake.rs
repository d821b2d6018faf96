//! An in-memory UDP network ([`FakeNet`], [`FakeUdp`]) so that gateways and relays can be
//! tested in one process without privileges.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::batch::RecvSlots;
use crate::udp::Udp;

/// Waits at most `timeout` on a fake device's channel: `Ok(None)` on timeout, `BrokenPipe` when
/// the other end is gone (shared by the in-memory devices of the gateway and this crate).
pub fn recv_timeout<T>(rx: &Mutex<Receiver<T>>, timeout: Duration) -> io::Result<Option<T>> {
    let rx = rx
        .lock()
        .map_err(|_| io::Error::other("fake device lock poisoned"))?;
    match rx.recv_timeout(timeout) {
        Ok(v) => Ok(Some(v)),
        Err(RecvTimeoutError::Timeout) => Ok(None),
        Err(RecvTimeoutError::Disconnected) => Err(io::Error::new(
            io::ErrorKind::BrokenPipe,
            "fake device closed",
        )),
    }
}

/// Copies `packet` into `buf` (truncating like a datagram socket); returns the bytes copied.
pub fn copy_out(buf: &mut [u8], packet: &[u8]) -> usize {
    let n = packet.len().min(buf.len());
    buf[..n].copy_from_slice(&packet[..n]);
    n
}

type Mailbox = SyncSender<(Vec<u8>, SocketAddr)>;

/// An in-memory UDP network: sockets bound on it exchange datagrams by address. Like UDP,
/// a datagram to an unbound address or a full mailbox is silently lost.
#[derive(Clone, Default)]
pub struct FakeNet {
    sockets: Arc<Mutex<HashMap<SocketAddr, Mailbox>>>,
}

impl FakeNet {
    /// An empty network.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds a socket at `addr` with a receive buffer of `capacity` datagrams.
    pub fn bind(&self, addr: SocketAddr, capacity: usize) -> io::Result<FakeUdp> {
        let mut map = self
            .sockets
            .lock()
            .map_err(|_| io::Error::other("fake net lock poisoned"))?;
        if map.contains_key(&addr) {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("{addr} already bound on the fake network"),
            ));
        }
        let (tx, rx) = mpsc::sync_channel(capacity.max(1));
        map.insert(addr, tx);
        Ok(FakeUdp {
            net: self.clone(),
            addr,
            inbound: Mutex::new(rx),
        })
    }
}

/// A socket on a [`FakeNet`].
pub struct FakeUdp {
    net: FakeNet,
    addr: SocketAddr,
    inbound: Mutex<Receiver<(Vec<u8>, SocketAddr)>>,
}

impl Udp for FakeUdp {
    fn recv_from(
        &self,
        buf: &mut [u8],
        timeout: Duration,
    ) -> io::Result<Option<(usize, SocketAddr)>> {
        Ok(recv_timeout(&self.inbound, timeout)?.map(|(d, from)| (copy_out(buf, &d), from)))
    }

    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<()> {
        let map = self
            .net
            .sockets
            .lock()
            .map_err(|_| io::Error::other("fake net lock poisoned"))?;
        if let Some(tx) = map.get(&to) {
            match tx.try_send((datagram.to_vec(), self.addr)) {
                Ok(()) | Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {}
            }
        }
        Ok(())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.addr)
    }

    /// Like `recvmmsg(2)` on the real socket: waits at most `timeout` for the first datagram,
    /// then takes every datagram already queued, up to the slots' capacity.
    fn recv_batch(&self, slots: &mut RecvSlots, timeout: Duration) -> io::Result<()> {
        slots.clear();
        let Some((d, from)) = recv_timeout(&self.inbound, timeout)? else {
            return Ok(());
        };
        let n = copy_out(slots.slot_mut(0), &d);
        slots.push(n, from);
        let inbound = self
            .inbound
            .lock()
            .map_err(|_| io::Error::other("fake device lock poisoned"))?;
        while slots.messages() < slots.capacity() {
            let Ok((d, from)) = inbound.try_recv() else {
                break;
            };
            let i = slots.messages();
            let n = copy_out(slots.slot_mut(i), &d);
            slots.push(n, from);
        }
        Ok(())
    }
}

impl Drop for FakeUdp {
    fn drop(&mut self) {
        if let Ok(mut map) = self.net.sockets.lock() {
            map.remove(&self.addr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_net_delivers_with_source() {
        let net = FakeNet::new();
        let a = net.bind("127.0.0.1:1".parse().unwrap(), 4).unwrap();
        let b = net.bind("127.0.0.1:2".parse().unwrap(), 4).unwrap();
        assert!(net.bind("127.0.0.1:2".parse().unwrap(), 4).is_err());
        a.send_to(b"hi", b.local_addr().unwrap()).unwrap();
        a.send_to(b"lost", "127.0.0.1:9".parse().unwrap()).unwrap();
        let mut buf = [0u8; 16];
        let (n, from) = b
            .recv_from(&mut buf, Duration::from_secs(1))
            .unwrap()
            .unwrap();
        assert_eq!((&buf[..n], from), (&b"hi"[..], a.local_addr().unwrap()));
        assert!(b.recv_from(&mut buf, Duration::ZERO).unwrap().is_none());
    }

    /// One batched receive takes every datagram already queued, in order, up to the slots.
    #[test]
    fn fake_recv_batch_takes_what_is_queued() {
        let net = FakeNet::new();
        let a = net.bind("127.0.0.1:1".parse().unwrap(), 16).unwrap();
        let b = net.bind("127.0.0.1:2".parse().unwrap(), 16).unwrap();
        for i in 0..5u8 {
            a.send_to(&[i; 3], b.local_addr().unwrap()).unwrap();
        }
        let mut slots = RecvSlots::new(4, 16);
        b.recv_batch(&mut slots, Duration::from_secs(1)).unwrap();
        let got: Vec<Vec<u8>> = (0..slots.len())
            .map(|i| slots.get(i).unwrap().0.to_vec())
            .collect();
        assert_eq!(got, (0..4u8).map(|i| vec![i; 3]).collect::<Vec<_>>());
        assert_eq!(slots.get(0).unwrap().1, a.local_addr().unwrap());
        b.recv_batch(&mut slots, Duration::from_secs(1)).unwrap();
        assert_eq!((slots.len(), slots.get(0).unwrap().0), (1, &[4u8; 3][..]));
        b.recv_batch(&mut slots, Duration::ZERO).unwrap();
        assert!(slots.is_empty());
    }
}
