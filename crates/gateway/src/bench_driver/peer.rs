//! The gateway's remote peer, played in the driver thread: a sans-IO [`Engine`] with the
//! gateway's own engine configuration, behind the gateway's own [`Envelope`] (the integrity
//! envelope of `insecure = true`: `tcpnc_tunnel::integrity`, CRC-32C; or keys and Noise
//! sessions, [`super::DriverOptions::cipher`]), on a socket of the same
//! [`FakeNet`](crate::io::FakeNet) as the gateway's.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tcpnc_io::{FakeUdp, Udp};
use tcpnc_proto::Engine;

use crate::readers::MAX_PACKET;
use crate::security::{Envelope, Opened};

/// Datagrams taken from the socket per call at most (the driver's loop stays responsive).
const RECEIVE_BUDGET: usize = 256;

/// The remote peer: engine, envelope, socket.
pub(super) struct Peer {
    pub(super) engine: Engine,
    envelope: Envelope,
    udp: FakeUdp,
    gateway: SocketAddr,
    rx: Vec<u8>,
    /// Datagrams the envelope refused (bad CRC or tag, unknown source).
    pub(super) refused: u64,
}

impl Peer {
    pub(super) fn new(
        engine: Engine,
        envelope: Envelope,
        udp: FakeUdp,
        gateway: SocketAddr,
    ) -> Peer {
        Peer {
            engine,
            envelope,
            udp,
            gateway,
            rx: vec![0; MAX_PACKET],
            refused: 0,
        }
    }

    /// Takes the gateway's datagrams (waiting at most `wait` for the first) into the engine;
    /// returns how many.
    pub(super) fn receive(&mut self, now: Duration, wait: Duration) -> io::Result<usize> {
        let mut n = 0;
        let mut timeout = wait;
        while n < RECEIVE_BUDGET {
            let Some((len, from)) = self.udp.recv_from(&mut self.rx, timeout)? else {
                break;
            };
            timeout = Duration::ZERO;
            n += 1;
            match self.envelope.open(now, from, &mut self.rx[..len]) {
                Ok(Opened::Frame(_, frame)) => self.engine.handle_datagram(now, &self.rx[frame]),
                Ok(Opened::Control(_)) => {}
                Err(_) => self.refused += 1,
            }
        }
        Ok(n)
    }

    /// Runs the engine's and the envelope's timers if they are due (the envelope's: handshake
    /// retries and keepalives of a secure tunnel).
    pub(super) fn timers(&mut self, now: Duration) {
        if self.engine.poll_timeout().is_some_and(|t| t <= now) {
            self.engine.handle_timeout(now);
        }
        if self.envelope.poll_timeout().is_some_and(|t| t <= now) {
            self.envelope.handle_timeout(now);
        }
    }

    /// Seals every frame the engine has for the gateway and sends it; returns how many.
    pub(super) fn transmit(&mut self, now: Duration) -> io::Result<usize> {
        let mut n = 0;
        while let Some(frame) = self.engine.poll_transmit() {
            self.envelope.seal(now, 0, &frame);
            self.engine.recycle(frame);
            n += 1;
        }
        while let Some((_, d)) = self.envelope.poll_transmit() {
            self.udp.send_to(&d, self.gateway)?;
            self.envelope.recycle(d);
        }
        Ok(n)
    }
}
