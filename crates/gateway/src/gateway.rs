//! The event loop: one reader thread per blocking source (TUN, UDP) feeding a bounded
//! channel, and one owner thread that holds the engines, waits on the channel with a timeout
//! equal to the earliest engine deadline, dispatches, then drains every engine's
//! `poll_transmit` / `poll_local`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tcpnc_proto::seam::{keepalive_frame, parse_keepalive};
use tcpnc_proto::tcp::read_ip_header;
use tcpnc_wire::KeepaliveRepr;

use crate::cidr::PrefixTable;
use crate::config::Peer;
use crate::engines::{Engines, Output};
use crate::error::GatewayError;
use crate::io::{Tun, Udp};
use crate::monitor::Monitor;
use crate::parcel::{Parcel, Side};
use crate::peer_engine::PeerEngine;
use crate::readers::{
    Input, Pools, ReaderCounters, ReaderLink, spawn_tun_reader, spawn_udp_reader,
};
use crate::security::{Envelope, Opened, Security};
use crate::stats::{GatewayCounters, PeerCounters, Snapshot};
use crate::tun_batch::TunTx;
use crate::workers::OwnerLink;
use tcpnc_io::BATCH;
use tcpnc_proto::settings::CodingMode as Mode;

pub use crate::readers::{MAX_PACKET, POLL_INTERVAL};

mod snapshot;

/// Settings of the loop that are not per peer.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// TUN name (for the stats file).
    pub interface: String,
    /// Coding mode (for the stats file).
    pub mode: Mode,
    /// Where to write snapshots; `None` disables the file.
    pub stats_file: Option<PathBuf>,
    /// Snapshot period.
    pub stats_interval: Duration,
    /// Bound of the input channel (packets + datagrams waiting for the owner).
    pub queue_packets: usize,
    /// Keys or integrity mode (`Config::security`).
    pub security: Security,
}

struct PeerSlot {
    peer: Peer,
    counters: PeerCounters,
    next_keepalive: Option<Duration>,
    /// Where datagrams for this peer go: the configured endpoint, then (with keys) the source
    /// of the peer's last authenticated datagram.
    endpoint: Option<SocketAddr>,
}

/// A gateway: devices, peers with their engines, routing, counters.
pub struct Gateway<T: Tun, U: Udp> {
    opts: GatewayOptions,
    tun: Arc<T>,
    udp: Arc<U>,
    peers: Vec<PeerSlot>,
    /// The peers' engines: inline, or sharded over worker threads (`interface.workers`).
    engines: Engines,
    routes: PrefixTable<usize>,
    envelope: Envelope,
    counters: GatewayCounters,
    readers: Arc<ReaderCounters>,
    /// Sealed datagrams waiting for one batched send (buffer reused between flushes).
    tx_batch: Vec<(Vec<u8>, SocketAddr)>,
    /// Packets for the TUN, written in one batch per flush (buffers reused).
    tun_tx: TunTx,
    /// IP packets read on each TUN queue.
    tun_queue_packets: Vec<u64>,
    origin: Instant,
    /// Nonce of the next KEEPALIVE probe.
    next_nonce: u64,
    /// Liveness, event log, flow summaries and metrics recorders.
    monitor: Monitor,
}

impl<T: Tun, U: Udp> Gateway<T, U> {
    /// Assembles a gateway with one engine per peer, run on the owner thread. Routing and
    /// endpoint tables come from the peers' config.
    pub fn new(
        opts: GatewayOptions,
        tun: T,
        udp: U,
        peers: Vec<(Peer, PeerEngine)>,
    ) -> Result<Self, GatewayError> {
        let (peers, engines) = peers.into_iter().unzip();
        Self::with_shards(opts, tun, udp, peers, vec![engines])
    }

    /// Assembles a gateway whose connections are sharded over `shards.len()` engine workers
    /// (`shards[k][i]`: worker k's engine of peer i; one shard runs on the owner thread).
    pub fn with_shards(
        opts: GatewayOptions,
        tun: T,
        udp: U,
        peers: Vec<Peer>,
        shards: Vec<Vec<PeerEngine>>,
    ) -> Result<Self, GatewayError> {
        if shards.is_empty() || shards.iter().any(|s| s.len() != peers.len()) {
            return Err(GatewayError::Shards {
                peers: peers.len(),
                shards: shards.iter().map(Vec::len).collect(),
            });
        }
        let mut routes = PrefixTable::new();
        let configured = peers.clone();
        let unix_origin = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let envelope = Envelope::new(&opts.security, &configured, unix_origin)
            .map_err(|e| GatewayError::Keys(e.to_string()))?;
        let slots = peers
            .into_iter()
            .enumerate()
            .map(|(i, peer)| {
                for c in &peer.allowed_ips {
                    routes.insert(*c, i);
                }
                PeerSlot {
                    endpoint: peer.endpoint,
                    peer,
                    counters: PeerCounters::default(),
                    next_keepalive: None,
                }
            })
            .collect();
        let queues = tun.queues();
        Ok(Gateway {
            opts,
            tun: Arc::new(tun),
            udp: Arc::new(udp),
            peers: slots,
            engines: Engines::new(shards),
            routes,
            envelope,
            counters: GatewayCounters::default(),
            readers: Arc::default(),
            tx_batch: Vec::with_capacity(BATCH),
            tun_tx: TunTx::default(),
            tun_queue_packets: vec![0; queues],
            origin: Instant::now(),
            next_nonce: first_nonce(),
            monitor: Monitor::new(&configured, None),
        })
    }

    /// Replaces the monitor (built by `up` with the coding window and the metrics recorder).
    pub fn set_monitor(&mut self, monitor: Monitor) {
        self.monitor = monitor;
    }

    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    /// A KEEPALIVE probe frame (wire `keepalive.rs`) with a fresh nonce.
    fn probe(&mut self) -> Vec<u8> {
        self.next_nonce = self.next_nonce.wrapping_add(1);
        keepalive_frame(KeepaliveRepr::probe(self.next_nonce))
    }

    /// Sends one KEEPALIVE probe to every peer with a known endpoint (with keys, this starts
    /// the handshake); an unreachable peer is an error.
    pub fn probe_peers(&mut self) -> Result<(), GatewayError> {
        let now = self.now();
        for i in 0..self.peers.len() {
            let slot = &mut self.peers[i];
            slot.next_keepalive = (slot.peer.keepalive_secs > 0)
                .then(|| now + Duration::from_secs(slot.peer.keepalive_secs));
            if slot.endpoint.is_none() {
                continue;
            }
            let probe = self.probe();
            self.counters.keepalives_tx += 1;
            self.monitor.probe_sent(i, self.next_nonce, now);
            self.envelope.seal(now, i, &probe);
        }
        while let Some((i, d)) = self.envelope.poll_transmit() {
            let Some(endpoint) = self.peers[i].endpoint else {
                continue;
            };
            self.udp
                .send_to(&d, endpoint)
                .map_err(|source| GatewayError::PeerUnreachable {
                    peer: self.peers[i].peer.name.clone(),
                    endpoint,
                    source,
                })?;
            self.counters.udp_tx_calls += 1;
            self.counters.udp_tx_messages += 1;
            self.counters.udp_tx_datagrams += 1;
            self.counters.udp_tx_bytes += d.len() as u64;
        }
        Ok(())
    }

    /// Runs until `shutdown` is set (or a device fails), then writes the final snapshot
    /// and returns it. Reader threads are joined before returning.
    pub fn run(mut self, shutdown: Arc<AtomicBool>) -> Result<Snapshot, GatewayError> {
        let (tx, rx) = mpsc::sync_channel(channel_bound(self.opts.queue_packets));
        let (udp_pool, udp_back) = mpsc::channel();
        let link = |pool| ReaderLink {
            tx: tx.clone(),
            shutdown: shutdown.clone(),
            counters: self.readers.clone(),
            pool,
        };
        let mut readers = vec![spawn_udp_reader(&self.udp, link(udp_back))];
        let mut tun_pools = Vec::new();
        for queue in 0..self.tun.queues() {
            let (pool, back) = mpsc::channel();
            readers.push(spawn_tun_reader(&self.tun, queue, link(back)));
            tun_pools.push(pool);
        }
        self.engines.start(&OwnerLink {
            out: tx.clone(),
            shutdown: shutdown.clone(),
            origin: self.origin,
        });
        drop(tx);
        let pools = Pools {
            tun: tun_pools,
            udp: udp_pool,
        };
        let result = self.owner_loop(&rx, &pools, &shutdown);
        shutdown.store(true, Ordering::SeqCst);
        // Workers blocked on a full channel see it closed.
        drop(rx);
        for r in readers {
            let _ = r.join();
        }
        self.engines.stop();
        self.write_stats(true);
        result.map(|()| self.snapshot(true))
    }

    /// Starts [`Gateway::run`] on its own thread.
    pub fn spawn(self) -> GatewayHandle {
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        let thread = thread::spawn(move || self.run(flag));
        GatewayHandle {
            shutdown,
            thread: Mutex::new(Some(thread)),
        }
    }

    fn owner_loop(
        &mut self,
        rx: &Receiver<Input>,
        pools: &Pools,
        shutdown: &AtomicBool,
    ) -> Result<(), GatewayError> {
        let interval = self.opts.stats_interval.max(Duration::from_millis(10));
        let mut next_stats = self.now() + interval;
        while !shutdown.load(Ordering::SeqCst) {
            let now = self.now();
            let wake = self
                .peers
                .iter()
                .map(|s| s.next_keepalive)
                .chain([self.engines.poll_timeout(), self.envelope.poll_timeout()])
                .flatten()
                .fold(next_stats.min(now + POLL_INTERVAL), Duration::min);
            match rx.recv_timeout(wake.saturating_sub(now)) {
                Ok(input) => {
                    self.dispatch(input, pools)?;
                    // Up to 8 more batches (256 packets when full) before the engines flush.
                    for input in rx.try_iter().take(8) {
                        self.dispatch(input, pools)?;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.on_timers();
            self.flush();
            if self.now() >= next_stats {
                self.write_stats(false);
                next_stats = self.now() + interval;
            }
        }
        Ok(())
    }

    /// One batch from a reader; its buffers go back to the reader's pool.
    fn dispatch(&mut self, input: Input, pools: &Pools) -> Result<(), GatewayError> {
        let now = self.now();
        match input {
            Input::Tun(queue, batch) => {
                self.tun_queue_packets[queue] += batch.packets().len() as u64;
                for p in batch.packets() {
                    self.on_local(now, p.bytes());
                }
                let _ = pools.tun[queue].send(batch);
            }
            Input::Udp(mut batch) => {
                for p in batch.packets_mut() {
                    let Some(from) = p.from else { continue };
                    self.counters.udp_rx_datagrams += 1;
                    let datagram = p.bytes_mut();
                    self.counters.udp_rx_bytes += datagram.len() as u64;
                    self.on_datagram(now, datagram, from);
                }
                let _ = pools.udp.send(batch);
            }
            Input::Worker(k, mut parcel) => {
                self.deliver(now, &mut parcel);
                self.engines.give_back(k, parcel);
            }
            Input::Failed(what, source) => return Err(GatewayError::Io { what, source }),
        }
        Ok(())
    }

    /// A packet from the TUN: routed to the peer whose allowed_ips hold its destination.
    fn on_local(&mut self, now: Duration, packet: &[u8]) {
        self.counters.tun_rx_packets += 1;
        self.counters.tun_rx_bytes += packet.len() as u64;
        let peer = read_ip_header(packet)
            .ok()
            .and_then(|h| self.routes.lookup(h.dst));
        match peer {
            Some(&i) => {
                let slot = &mut self.peers[i];
                slot.counters.local_packets += 1;
                slot.counters.local_bytes += packet.len() as u64;
                self.engines.local(now, i, packet);
            }
            None => self.counters.no_peer_drops += 1,
        }
    }

    /// An incoming datagram: opened (authenticated, in place) by the envelope before an
    /// engine sees it.
    fn on_datagram(&mut self, now: Duration, datagram: &mut [u8], from: SocketAddr) {
        let (i, frame) = match self.envelope.open(now, from, datagram) {
            Ok(Opened::Frame(i, frame)) => (i, Some(frame)),
            Ok(Opened::Control(i)) => (i, None),
            Err(tcpnc_tunnel::Drop::UnknownSource) => {
                self.counters.unknown_source_drops += 1;
                return;
            }
            Err(_) => return,
        };
        let roaming = self.envelope.roaming();
        self.monitor.received(i, now);
        let slot = &mut self.peers[i];
        if roaming && slot.endpoint != Some(from) {
            tracing::info!(peer = %slot.peer.name, "endpoint {from}");
            slot.endpoint = Some(from);
        }
        let Some(frame) = frame else {
            return;
        };
        let frame = &datagram[frame];
        if parse_keepalive(frame).is_some() {
            // Liveness: the engine answers probes (and reports replies).
            self.counters.keepalives_rx += 1;
        } else {
            slot.counters.datagrams_rx += 1;
        }
        self.engines.remote(now, i, frame);
    }

    fn on_timers(&mut self) {
        let now = self.now();
        self.monitor.tick(now);
        self.envelope.handle_timeout(now);
        self.engines.handle_timeout(now);
        for i in 0..self.peers.len() {
            let slot = &mut self.peers[i];
            if slot.next_keepalive.is_some_and(|t| t <= now) {
                let probe = self.probe();
                self.counters.keepalives_tx += 1;
                self.monitor.probe_sent(i, self.next_nonce, now);
                self.envelope.seal(now, i, &probe);
                let slot = &mut self.peers[i];
                slot.next_keepalive = Some(now + Duration::from_secs(slot.peer.keepalive_secs));
            }
        }
    }

    fn flush(&mut self) {
        let now = self.now();
        while let Some(i) = self.envelope.poll_restarted() {
            // The peer lost its coding state: connections through it cannot resume.
            tracing::warn!(peer = %self.peers[i].peer.name, "peer restarted: resetting its connections");
            self.engines.reset_flows(now, i);
        }
        // Moved out for the flush, so that `take` may borrow the rest of the gateway.
        let mut engines = std::mem::replace(&mut self.engines, Engines::Inline(Vec::new()));
        engines.flush(|i, o| self.take(now, i, o));
        self.engines = engines;
        for i in 0..self.peers.len() {
            if self.monitor.flows_due(i, now) {
                let counters = self.engines.counters(i);
                self.monitor.refresh_flows(i, now, &counters);
            }
        }
        self.write_tun();
        self.transmit();
    }

    /// What a worker's parcel holds, taken item by item ([`Gateway::take`]).
    fn deliver(&mut self, now: Duration, parcel: &mut Parcel) {
        for (i, side, bytes) in parcel.items() {
            self.take(now, i, Output::Packet(side, bytes));
        }
        for (i, ev) in parcel.events.drain(..) {
            self.take(now, i, Output::Event(ev));
        }
    }

    /// One thing peer `i`'s engine produced: a frame sealed for the peer, a packet queued for
    /// the TUN, an event for the monitor.
    fn take(&mut self, now: Duration, i: usize, o: Output<'_>) {
        match o {
            Output::Packet(Side::Remote, bytes) => {
                if parse_keepalive(bytes).is_some() {
                    // The engine's answer to a peer's probe.
                    self.counters.keepalives_tx += 1;
                } else {
                    self.peers[i].counters.datagrams_tx += 1;
                }
                self.envelope.seal(now, i, bytes);
            }
            Output::Packet(Side::Local, bytes) => {
                self.counters.tun_tx_bytes += bytes.len() as u64;
                self.peers[i].counters.delivered_packets += 1;
                self.tun_tx.push(bytes);
            }
            Output::Event(ev) => self.monitor.event(i, now, &ev),
        }
    }

    /// Writes every packet the engines handed over in this flush with one batched write
    /// (`Tun::send_batch`: GRO-coalesced on an offloading TUN).
    fn write_tun(&mut self) {
        if self.tun_tx.is_empty() {
            return;
        }
        let sent = self.tun.send_batch(&mut self.tun_tx);
        self.counters.tun_tx_calls += sent.calls;
        self.counters.tun_tx_packets += sent.written;
        self.counters.tun_write_errors += sent.failed;
        if let Some(e) = sent.error {
            tracing::debug!("TUN write failed: {e}");
        }
        self.tun_tx.clear();
    }

    /// Sends every sealed datagram to its peer's endpoint, [`BATCH`] per system call
    /// (`sendmmsg` on the real socket; with UDP GSO, [`BATCH`] trains of same-size datagrams
    /// to one peer per call, `tcpnc_io::gso`); the buffers go back to the envelope to be sealed into
    /// again.
    fn transmit(&mut self) {
        self.tx_batch.clear();
        while let Some((i, d)) = self.envelope.poll_transmit() {
            match self.peers[i].endpoint {
                Some(endpoint) => self.tx_batch.push((d, endpoint)),
                None => {
                    self.counters.udp_send_errors += 1;
                    self.envelope.recycle(d);
                }
            }
        }
        self.send_batches();
        for (d, _) in self.tx_batch.drain(..) {
            self.envelope.recycle(d);
        }
    }

    fn send_batches(&mut self) {
        let mut at = 0;
        while at < self.tx_batch.len() {
            self.counters.udp_tx_calls += 1;
            match self.udp.send_batch(&self.tx_batch[at..]) {
                Ok(sent) if sent.datagrams > 0 => {
                    let n = sent.datagrams;
                    self.counters.udp_tx_messages += sent.messages as u64;
                    for (d, _) in &self.tx_batch[at..at + n] {
                        self.counters.udp_tx_datagrams += 1;
                        self.counters.udp_tx_bytes += d.len() as u64;
                    }
                    at += n;
                }
                Ok(_) => {
                    self.counters.udp_send_errors += 1;
                    at += 1;
                }
                Err(e) => {
                    // The first datagram could not be sent: count it and go on with the rest.
                    self.counters.udp_send_errors += 1;
                    tracing::debug!("send to {} failed: {e}", self.tx_batch[at].1);
                    at += 1;
                }
            }
        }
    }
}

/// Bound of the owner's input channel, in batches: `queue_packets` / 4 (at least 64), so full
/// batches hold at most 8 x `queue_packets` packets and single packets still find room.
fn channel_bound(queue_packets: usize) -> usize {
    (queue_packets / 4).max(64)
}

/// A starting nonce that differs between runs, so a restarted gateway does not take stale
/// replies for its own.
fn first_nonce() -> u64 {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ u64::from(std::process::id()) << 32
}

/// A gateway running on its own thread (see [`Gateway::spawn`]).
pub struct GatewayHandle {
    shutdown: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<Result<Snapshot, GatewayError>>>>,
}

impl GatewayHandle {
    /// Asks the gateway to stop, waits for it, and returns its final snapshot.
    pub fn stop(self) -> Result<Snapshot, GatewayError> {
        self.shutdown.store(true, Ordering::SeqCst);
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        match thread.map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err(GatewayError::Io {
                what: "gateway thread".into(),
                source: std::io::Error::other("panicked"),
            }),
        }
    }
}
