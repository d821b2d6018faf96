//! [`NcBox`]: a TCP/NC engine ([`tcpnc_proto::Engine`]) as a simulator box, behind the outer
//! header a real tunnel would add.

use std::time::Duration;

use tcpnc_proto::seam::{Counters, Seam};
use tcpnc_proto::{ConfigError, Engine, EngineConfig, EngineStats, Event};

/// Bytes of outer IPv4 + UDP header a real tunnel adds to every datagram (20 + 8).
///
/// The simulated link charges its rate and queue by packet length, so the box prepends this many
/// zero bytes to every datagram it puts on the link (and strips them on the way in): a coded
/// packet then costs on the simulated path exactly what it costs on a real one, and plain and
/// nc runs compare fairly.
pub const OUTER_HEADER_LEN: usize = tcpnc_proto::wire::OUTER_HEADER_V4;

/// Seed offset of the client-side engine ("nc-clien").
pub const CLIENT_SEED_XOR: u64 = 0x6e63_2d63_6c69_656e;
/// Seed offset of the server-side engine ("nc-serve").
pub const SERVER_SEED_XOR: u64 = 0x6e63_2d73_6572_7665;

/// One side of the TCP/NC tunnel in the simulator.
#[derive(Debug)]
pub struct NcBox {
    engine: Engine,
    /// Datagrams from the link that were too short to carry the outer header.
    runts: u64,
}

impl NcBox {
    /// An engine with `config` and `seed`, carried over the link like UDP datagrams.
    pub fn new(config: EngineConfig, seed: u64) -> Result<Self, ConfigError> {
        Ok(Self {
            engine: Engine::new(config, seed)?,
            runts: 0,
        })
    }

    /// The client's and the server's box for one run with master seed `seed`: each engine
    /// draws its coefficients from its own stream (`seed` xor the ASCII of "nc-clien" and
    /// "nc-serve"), the same in `tcpnc sim` and the experiment runner.
    pub fn pair(config: EngineConfig, seed: u64) -> Result<(NcBox, NcBox), ConfigError> {
        Ok((
            NcBox::new(config.clone(), seed ^ CLIENT_SEED_XOR)?,
            NcBox::new(config, seed ^ SERVER_SEED_XOR)?,
        ))
    }

    /// The engine's counters.
    pub fn stats(&self) -> EngineStats {
        self.engine.stats()
    }
}

impl Seam for NcBox {
    fn handle_local(&mut self, now: Duration, ip_packet: &[u8]) {
        self.engine.handle_local(now, ip_packet);
    }

    fn handle_remote(&mut self, now: Duration, datagram: &[u8]) {
        match datagram.get(OUTER_HEADER_LEN..) {
            Some(payload) => self.engine.handle_datagram(now, payload),
            None => self.runts += 1,
        }
    }

    fn poll_remote(&mut self) -> Option<Vec<u8>> {
        let payload = self.engine.poll_transmit()?;
        let mut datagram = Vec::with_capacity(OUTER_HEADER_LEN + payload.len());
        datagram.resize(OUTER_HEADER_LEN, 0);
        datagram.extend_from_slice(&payload);
        Some(datagram)
    }

    fn poll_local(&mut self) -> Option<Vec<u8>> {
        self.engine.poll_local()
    }

    fn poll_timeout(&self) -> Option<Duration> {
        self.engine.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Duration) {
        self.engine.handle_timeout(now);
    }

    /// The engine's counters ([`Seam::counters`] of [`Engine`]) plus `runt_datagrams`.
    fn counters(&self) -> Counters {
        let mut c = Seam::counters(&self.engine);
        c.totals.push(("runt_datagrams", self.runts));
        c
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.engine.poll_event()
    }
}
