//! The gateway's I/O seams: the [`Tun`] trait here and the [`Udp`] trait of `tcpnc-io`, with
//! in-memory fakes so that gateways can be tested in one process without privileges.
//!
//! Both traits take `&self` so one reader thread and the owner thread can share a device
//! through an `Arc`. `recv` waits at most `timeout` and returns `Ok(None)` when nothing
//! arrived, which lets reader threads notice shutdown.

use std::io;
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

pub use tcpnc_io::{FakeNet, FakeUdp, Udp};
use tcpnc_io::{copy_out, recv_timeout};

/// A TUN device: IP packets in and out.
pub trait Tun: Send + Sync + 'static {
    /// Reads one IP packet into `buf`, waiting at most `timeout`.
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>>;
    /// Writes one IP packet.
    fn send(&self, packet: &[u8]) -> io::Result<()>;
}

/// In-memory TUN: the gateway side of a pair made by [`fake_tun`].
pub struct FakeTun {
    inbound: Mutex<Receiver<Vec<u8>>>,
    outbound: Sender<Vec<u8>>,
}

/// The test's side of a [`FakeTun`]: plays the local kernel.
pub struct FakeTunHandle {
    /// Packets the "kernel" sends into the tunnel (the gateway reads them).
    pub inject: Sender<Vec<u8>>,
    /// Packets the gateway wrote to the TUN.
    pub written: Receiver<Vec<u8>>,
}

/// Makes a connected fake TUN and its test handle.
pub fn fake_tun() -> (FakeTun, FakeTunHandle) {
    let (inject, inbound) = mpsc::channel();
    let (outbound, written) = mpsc::channel();
    (
        FakeTun {
            inbound: Mutex::new(inbound),
            outbound,
        },
        FakeTunHandle { inject, written },
    )
}

impl Tun for FakeTun {
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        Ok(recv_timeout(&self.inbound, timeout)?.map(|p| copy_out(buf, &p)))
    }

    fn send(&self, packet: &[u8]) -> io::Result<()> {
        self.outbound
            .send(packet.to_vec())
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "fake TUN reader gone"))
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
}
