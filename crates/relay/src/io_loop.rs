//! The relay's I/O loop: a real-time UDP relay between two endpoints through a [`Channel`].
//!
//! Datagrams arriving on the A socket go through the a→b model and leave from the B socket
//! to the B peer; the reverse direction likewise. One thread per socket receives and stamps
//! each datagram with its arrival time; the calling thread owns the [`RelayCore`] and sleeps
//! on the input channel until the earliest delivery time the models report.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tcpnc_io::udp::UDP_BUFFER_BYTES;
use tcpnc_io::{SysUdp, Udp};
use tcpnc_link::{Link, LinkConfig};

use crate::channel::Channel;
use crate::core::{RelayCore, Side};
use crate::error::RelayError;

/// Seed offset of the b→a model, so the two directions draw independent streams.
pub const BA_SEED_XOR: u64 = 0x9e37_79b9_7f4a_7c15;
/// How often idle threads look at the shutdown flag.
const POLL: Duration = Duration::from_millis(50);

/// Everything the relay needs, as built values (see [`crate::RelayArgs`] for the flags).
#[derive(Debug, Clone)]
pub struct RelayOptions {
    /// A socket address.
    pub a_listen: SocketAddr,
    /// Where b→a traffic is sent (`None`: learned from arrivals on A).
    pub a_peer: Option<SocketAddr>,
    /// B socket address.
    pub b_listen: SocketAddr,
    /// Where a→b traffic is sent (`None`: learned from arrivals on B).
    pub b_peer: Option<SocketAddr>,
    /// Model of the a→b direction.
    pub ab: LinkConfig,
    /// Model of the b→a direction.
    pub ba: LinkConfig,
    /// Seed of the a→b model (b→a uses `seed ^ BA_SEED_XOR`).
    pub seed: u64,
    /// JSON counters file, written every second and on exit.
    pub stats_file: Option<PathBuf>,
}

/// A relay with bound sockets, ready to [`Relay::run`].
pub struct Relay<U: Udp> {
    sockets: [Arc<U>; 2],
    core: RelayCore<Channel>,
    stats_file: Option<PathBuf>,
    origin: Instant,
}

impl Relay<SysUdp> {
    /// The kernel's receive and send buffer sizes of the A and B sockets.
    pub fn socket_buffers(&self) -> std::io::Result<[(usize, usize); 2]> {
        Ok([self.sockets[0].buffers()?, self.sockets[1].buffers()?])
    }

    /// Binds both sockets, sizes their kernel buffers ([`UDP_BUFFER_BYTES`]) and builds the
    /// models.
    pub fn bind(opts: &RelayOptions) -> Result<Self, RelayError> {
        let a = SysUdp::bind(opts.a_listen)?;
        let b = SysUdp::bind(opts.b_listen)?;
        for sock in [&a, &b] {
            // The emulated link, not the socket, drops what the path cannot carry.
            if let Err(e) = sock.set_buffers(UDP_BUFFER_BYTES) {
                tracing::warn!("cannot size the relay's UDP socket buffers: {e}");
            }
        }
        Relay::with_sockets(opts, a, b)
    }
}

impl<U: Udp> Relay<U> {
    /// Builds a relay on given sockets (real or fake); the listen addresses in `opts` are
    /// not used.
    pub fn with_sockets(opts: &RelayOptions, a: U, b: U) -> Result<Self, RelayError> {
        let model = |cfg: &LinkConfig, seed: u64, direction: &'static str| {
            Link::new(cfg.clone(), seed).map_err(|source| RelayError::Model { direction, source })
        };
        let channel = Channel::new(
            model(&opts.ab, opts.seed, "a->b")?,
            model(&opts.ba, opts.seed ^ BA_SEED_XOR, "b->a")?,
        );
        let core = RelayCore::new(channel, opts.a_peer, opts.b_peer);
        Ok(Relay {
            sockets: [Arc::new(a), Arc::new(b)],
            core,
            stats_file: opts.stats_file.clone(),
            origin: Instant::now(),
        })
    }

    /// The bound addresses of the A and B sockets.
    pub fn local_addrs(&self) -> std::io::Result<(SocketAddr, SocketAddr)> {
        Ok((self.sockets[0].local_addr()?, self.sockets[1].local_addr()?))
    }

    /// Relays until `shutdown` is set; returns the final counters (also written to the
    /// stats file, if any).
    pub fn run(mut self, shutdown: Arc<AtomicBool>) -> Result<serde_json::Value, RelayError> {
        let (tx, rx) = mpsc::channel();
        let failure = Arc::new(Mutex::new(None));
        let readers: Vec<JoinHandle<()>> = [Side::A, Side::B]
            .into_iter()
            .map(|side| self.spawn_reader(side, tx.clone(), &shutdown, &failure))
            .collect();
        drop(tx);
        let mut next_stats = self.now() + Duration::from_secs(1);
        while !shutdown.load(Ordering::SeqCst) {
            let now = self.now();
            let wake = self
                .core
                .poll_timeout()
                .unwrap_or(now + POLL)
                .min(now + POLL)
                .min(next_stats);
            match rx.recv_timeout(wake.saturating_sub(now)) {
                Ok((side, from, at, d)) => {
                    self.core.on_receive(at, side, from, d);
                    for (side, from, at, d) in rx.try_iter() {
                        self.core.on_receive(at, side, from, d);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            let now = self.now();
            while let Some((egress, to, d)) = self.core.poll_send(now) {
                if self.sockets[egress as usize].send_to(&d, to).is_err() {
                    self.core.count_send_error(egress.other());
                }
            }
            if now >= next_stats {
                self.write_stats(false);
                next_stats = now + Duration::from_secs(1);
            }
        }
        shutdown.store(true, Ordering::SeqCst);
        for r in readers {
            let _ = r.join();
        }
        let stats = self.write_stats(true);
        match failure.lock().ok().and_then(|mut f| f.take()) {
            Some(e) => Err(e),
            None => Ok(stats),
        }
    }

    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn write_stats(&self, stopped: bool) -> serde_json::Value {
        let mut v = self.core.stats_json();
        v["uptime_secs"] = self.now().as_secs_f64().into();
        v["stopped"] = stopped.into();
        if let Some(path) = &self.stats_file {
            let mut tmp = path.as_os_str().to_owned();
            tmp.push(".tmp");
            let text = serde_json::to_string_pretty(&v).unwrap_or_default();
            if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)) {
                tracing::warn!("relay stats file {}: {e}", path.display());
            }
        }
        v
    }

    fn spawn_reader(
        &self,
        side: Side,
        tx: Sender<(Side, SocketAddr, Duration, Vec<u8>)>,
        shutdown: &Arc<AtomicBool>,
        failure: &Arc<Mutex<Option<RelayError>>>,
    ) -> JoinHandle<()> {
        let sock = self.sockets[side as usize].clone();
        let (shutdown, failure, origin) = (shutdown.clone(), failure.clone(), self.origin);
        thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            while !shutdown.load(Ordering::SeqCst) {
                match sock.recv_from(&mut buf, POLL) {
                    Ok(Some((n, from))) => {
                        let at = origin.elapsed();
                        if tx.send((side, from, at, buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {}
                    Err(source) => {
                        if let Ok(mut f) = failure.lock() {
                            *f = Some(RelayError::Io {
                                what: format!("receiving on the {side:?} socket"),
                                source,
                            });
                        }
                        shutdown.store(true, Ordering::SeqCst);
                        return;
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relay's sockets get the gateway's buffers, as far as the kernel lets this process
    /// (`net.core.rmem_max` without CAP_NET_ADMIN): as large as a socket asking for
    /// [`UDP_BUFFER_BYTES`] gets, larger than the default. The emulated link, not a socket,
    /// drops what the path cannot carry.
    #[test]
    fn the_relays_sockets_hold_a_burst() {
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let opts = RelayOptions {
            a_listen: any,
            a_peer: None,
            b_listen: any,
            b_peer: None,
            ab: LinkConfig::default(),
            ba: LinkConfig::default(),
            seed: 1,
            stats_file: None,
        };
        let relay = Relay::bind(&opts).unwrap();
        let probe = SysUdp::bind(any).unwrap();
        let default = probe.buffers().unwrap().0;
        let possible = probe.set_buffers(UDP_BUFFER_BYTES).unwrap().0;
        assert!(
            possible > default,
            "{possible} B against the default {default} B"
        );
        for (rx, _) in relay.socket_buffers().unwrap() {
            assert!(
                rx >= possible,
                "receive buffer {rx} B, {possible} B possible"
            );
        }
    }
}
