//! Engine workers (`interface.workers = N`, issue 14 "Every core"): N threads, each holding
//! one engine shard per peer; every TCP connection is hashed to one shard
//! ([`tcpnc_proto::shard`]), so a connection's coding state lives on one thread and the
//! engines stay sans-IO and single-threaded.
//!
//! The owner thread keeps everything that is per peer rather than per connection: the tunnel
//! (handshakes, session keys, replay windows, roaming), routing, keepalive probes, the monitor,
//! and all device I/O. It hands each worker the packets and opened frames of its shard in one
//! [`Parcel`] per dispatch round; a worker feeds them to its engines, runs their timers, and
//! sends what they produced (frames to seal, packets for the TUN, events) back as one parcel
//! through the owner's input channel ([`Input::Worker`]). Parcels come back to their sender
//! for reuse: no allocation per packet once warm.
//!
//! Bounds: a full worker channel drops the parcel (counted in `queue_drops`, like a full input
//! channel); a worker blocks on a full owner channel (the owner never waits on a worker, so
//! this cannot deadlock). A peer restart reaches every worker through [`Shared::resets`],
//! which is never dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tcpnc_proto::seam::Counters;
use tcpnc_proto::shard::{local_shard, remote_shard};

use crate::engines::{Output, drain};
use crate::monitor::FLOW_REFRESH;
use crate::parcel::{Parcel, Side};
use crate::peer_engine::PeerEngine;
use crate::readers::{Input, POLL_INTERVAL};

/// Parcels waiting for one worker.
const WORKER_QUEUE: usize = 64;

/// What the owner and one worker share besides the channels.
#[derive(Default)]
struct Shared {
    /// The worker's engines' counters, one per peer, as of its last publication.
    counters: Mutex<Vec<Counters>>,
    /// Peers whose connections must be reset (the peer restarted).
    resets: Mutex<Vec<usize>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The owner's side of the workers.
pub(crate) struct Workers {
    state: State,
    shared: Vec<Arc<Shared>>,
    /// The parcel being filled for each worker in this dispatch round.
    pending: Vec<Parcel>,
    /// Input parcels the workers are done with.
    spent: Receiver<Parcel>,
    spent_tx: Sender<Parcel>,
    /// Items dropped because a worker's channel was full.
    pub drops: u64,
    /// Items (packets and frames) handed to each worker.
    pub fed: Vec<u64>,
}

enum State {
    /// Built, not started: the engines of each worker.
    Idle(Vec<Vec<PeerEngine>>),
    Running(Vec<Running>),
    Stopped,
}

struct Running {
    tx: SyncSender<Parcel>,
    /// Where the owner returns the worker's output parcels.
    back: Sender<Parcel>,
    thread: JoinHandle<()>,
}

/// What [`Workers::start`] needs from the owner.
pub(crate) struct OwnerLink {
    pub out: SyncSender<Input>,
    pub shutdown: Arc<AtomicBool>,
    pub origin: Instant,
}

impl Workers {
    /// Workers for `shards` (`shards[k][i]` = worker k's engine of peer i; at least two).
    pub fn new(shards: Vec<Vec<PeerEngine>>) -> Workers {
        let n = shards.len();
        let (spent_tx, spent) = mpsc::channel();
        let shared: Vec<Arc<Shared>> = shards
            .iter()
            .map(|engines| {
                let s = Shared::default();
                *lock(&s.counters) = engines.iter().map(|e| e.counters()).collect();
                Arc::new(s)
            })
            .collect();
        Workers {
            state: State::Idle(shards),
            shared,
            pending: (0..n).map(|_| Parcel::default()).collect(),
            spent,
            spent_tx,
            drops: 0,
            fed: vec![0; n],
        }
    }

    /// Starts the worker threads (once).
    pub fn start(&mut self, link: &OwnerLink) {
        let State::Idle(shards) = std::mem::replace(&mut self.state, State::Stopped) else {
            return;
        };
        let running = shards
            .into_iter()
            .enumerate()
            .map(|(k, engines)| {
                let (tx, rx) = mpsc::sync_channel(WORKER_QUEUE);
                let (back, returned) = mpsc::channel();
                let worker = Worker {
                    index: k,
                    engines,
                    rx,
                    returned,
                    spent: self.spent_tx.clone(),
                    out: link.out.clone(),
                    shutdown: link.shutdown.clone(),
                    origin: link.origin,
                    shared: self.shared[k].clone(),
                };
                let thread = thread::spawn(move || worker.run());
                Running { tx, back, thread }
            })
            .collect();
        self.state = State::Running(running);
    }

    /// An IP packet from the TUN for peer `peer`.
    pub fn local(&mut self, peer: usize, packet: &[u8]) {
        let k = local_shard(packet, self.pending.len());
        self.pending[k].push(peer, Side::Local, packet);
    }

    /// An opened frame from peer `peer`.
    pub fn remote(&mut self, peer: usize, frame: &[u8]) {
        let k = remote_shard(frame, self.pending.len());
        self.pending[k].push(peer, Side::Remote, frame);
    }

    /// Hands every worker its parcel of this round; a full worker channel drops it (counted).
    pub fn submit(&mut self) {
        let State::Running(running) = &self.state else {
            return;
        };
        for (k, r) in running.iter().enumerate() {
            if self.pending[k].is_empty() {
                continue;
            }
            let next = self.spent.try_recv().unwrap_or_default();
            let parcel = std::mem::replace(&mut self.pending[k], next);
            let items = parcel.len() as u64;
            match r.tx.try_send(parcel) {
                Ok(()) => self.fed[k] += items,
                Err(TrySendError::Full(mut p) | TrySendError::Disconnected(mut p)) => {
                    self.drops += items;
                    p.clear();
                    let _ = self.spent_tx.send(p);
                }
            }
        }
    }

    /// Gives worker `k`'s output parcel back for reuse.
    pub fn give_back(&self, k: usize, mut parcel: Parcel) {
        if let State::Running(running) = &self.state
            && let Some(r) = running.get(k)
        {
            parcel.clear();
            let _ = r.back.send(parcel);
        }
    }

    /// Resets peer `peer`'s connections on every worker (it restarted).
    pub fn reset_flows(&mut self, peer: usize) {
        match &mut self.state {
            State::Idle(shards) => shards
                .iter_mut()
                .for_each(|e| e[peer].reset_flows(Duration::ZERO)),
            _ => self.shared.iter().for_each(|s| lock(&s.resets).push(peer)),
        }
    }

    /// Peer `peer`'s counters over every worker, as last published (at most
    /// [`FLOW_REFRESH`] old, fresh after a flow opened or closed).
    pub fn counters(&self, peer: usize) -> Counters {
        let all: Vec<Counters> = self
            .shared
            .iter()
            .filter_map(|s| lock(&s.counters).get(peer).cloned())
            .collect();
        merge(&all)
    }

    /// Number of workers.
    pub fn shards(&self) -> usize {
        self.shared.len()
    }

    /// Stops and joins the workers; each publishes its final counters first. `out`'s receiver
    /// must be gone or drained, or a worker blocked on it would not notice.
    pub fn stop(&mut self) {
        if let State::Running(running) = std::mem::replace(&mut self.state, State::Stopped) {
            for r in running {
                drop(r.tx);
                let _ = r.thread.join();
            }
        }
    }
}

/// One worker thread: its engines (one per peer) and its links to the owner.
struct Worker {
    index: usize,
    engines: Vec<PeerEngine>,
    rx: Receiver<Parcel>,
    returned: Receiver<Parcel>,
    spent: Sender<Parcel>,
    out: SyncSender<Input>,
    shutdown: Arc<AtomicBool>,
    origin: Instant,
    shared: Arc<Shared>,
}

impl Worker {
    fn run(mut self) {
        let mut next_publish = self.origin.elapsed() + FLOW_REFRESH;
        let mut out = Parcel::default();
        while !self.shutdown.load(Ordering::SeqCst) {
            let now = self.origin.elapsed();
            let wake = self
                .engines
                .iter()
                .filter_map(|e| e.poll_timeout())
                .fold(next_publish.min(now + POLL_INTERVAL), Duration::min);
            match self.rx.recv_timeout(wake.saturating_sub(now)) {
                Ok(parcel) => {
                    self.feed(parcel);
                    // Up to 8 more parcels before the engines' output goes back.
                    for _ in 0..8 {
                        match self.rx.try_recv() {
                            Ok(parcel) => self.feed(parcel),
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.timers();
            let opened_or_closed = drain(&mut self.engines, |peer, o| match o {
                Output::Packet(side, bytes) => out.push(peer, side, bytes),
                Output::Event(ev) => out.events.push((peer, ev)),
            });
            if opened_or_closed || self.origin.elapsed() >= next_publish {
                self.publish();
                next_publish = self.origin.elapsed() + FLOW_REFRESH;
            }
            if !out.is_empty() {
                let next = self.returned.try_recv().unwrap_or_default();
                let full = std::mem::replace(&mut out, next);
                if self.out.send(Input::Worker(self.index, full)).is_err() {
                    break;
                }
            }
        }
        self.publish();
    }

    /// Feeds one parcel from the owner to the engines and returns it.
    fn feed(&mut self, mut parcel: Parcel) {
        let now = self.origin.elapsed();
        for (peer, side, bytes) in parcel.items() {
            let Some(engine) = self.engines.get_mut(peer) else {
                continue;
            };
            match side {
                Side::Local => engine.handle_local(now, bytes),
                Side::Remote => engine.handle_remote(now, bytes),
            }
        }
        parcel.clear();
        let _ = self.spent.send(parcel);
    }

    /// Due timers and requested resets.
    fn timers(&mut self) {
        let now = self.origin.elapsed();
        let resets = std::mem::take(&mut *lock(&self.shared.resets));
        for peer in resets {
            if let Some(e) = self.engines.get_mut(peer) {
                e.reset_flows(now);
            }
        }
        for e in &mut self.engines {
            if e.poll_timeout().is_some_and(|t| t <= now) {
                e.handle_timeout(now);
            }
        }
    }

    fn publish(&self) {
        *lock(&self.shared.counters) = self.engines.iter().map(|e| e.counters()).collect();
    }
}

/// The counters of several shards of one peer as one: totals added by name (in the first
/// shard's order), flows listed together (a connection lives in one shard).
pub fn merge(shards: &[Counters]) -> Counters {
    let mut merged = shards.first().cloned().unwrap_or_default();
    for c in shards.iter().skip(1) {
        for &(name, v) in &c.totals {
            match merged.totals.iter_mut().find(|(n, _)| *n == name) {
                Some((_, total)) => *total += v,
                None => merged.totals.push((name, v)),
            }
        }
        merged.flows.extend(c.flows.iter().cloned());
    }
    merged
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, VecDeque};

    use tcpnc_proto::Seam;
    use tcpnc_proto::tcp::{Endpoint, FlowKey, IpParams, SegmentFields, TcpFlags, build_segment};

    use super::*;

    /// An engine that echoes every local packet back to the local side and every remote
    /// frame back to the remote side, and counts what it saw.
    #[derive(Default)]
    struct Echo {
        out: VecDeque<(Side, Vec<u8>)>,
        seen: u64,
    }

    impl Seam for Echo {
        fn handle_local(&mut self, _: Duration, p: &[u8]) {
            self.seen += 1;
            self.out.push_back((Side::Local, p.to_vec()));
        }
        fn handle_remote(&mut self, _: Duration, d: &[u8]) {
            self.seen += 1;
            self.out.push_back((Side::Remote, d.to_vec()));
        }
        fn poll_remote(&mut self) -> Option<Vec<u8>> {
            let i = self.out.iter().position(|(s, _)| *s == Side::Remote)?;
            self.out.remove(i).map(|(_, d)| d)
        }
        fn poll_local(&mut self) -> Option<Vec<u8>> {
            let i = self.out.iter().position(|(s, _)| *s == Side::Local)?;
            self.out.remove(i).map(|(_, d)| d)
        }
        fn poll_timeout(&self) -> Option<Duration> {
            None
        }
        fn handle_timeout(&mut self, _: Duration) {}
        fn counters(&self) -> Counters {
            Counters {
                engine: "echo",
                totals: vec![("seen", self.seen)],
                flows: Vec::new(),
            }
        }
    }

    fn segment(port: u16, seq: u32) -> Vec<u8> {
        let a = Endpoint::new([10, 0, 0, 1].into(), port);
        let b = Endpoint::new([10, 0, 0, 2].into(), 80);
        let fields = SegmentFields {
            seq,
            ack: 0,
            flags: TcpFlags::ACK,
            window: 9,
            urgent: 0,
        };
        build_segment(
            &FlowKey::new(a, b),
            &fields,
            &[],
            b"x",
            &IpParams::default(),
        )
        .unwrap()
    }

    /// 32 connections over 3 workers: every packet comes back exactly once, all packets of one
    /// connection from the same worker, every worker gets some, and the counters add up.
    #[test]
    fn connections_spread_over_workers_and_stay_put() {
        let engines = || vec![Box::new(Echo::default()) as PeerEngine];
        let mut w = Workers::new(vec![engines(), engines(), engines()]);
        let (out, rx) = mpsc::sync_channel(16);
        let shutdown = Arc::new(AtomicBool::new(false));
        w.start(&OwnerLink {
            out,
            shutdown: shutdown.clone(),
            origin: Instant::now(),
        });
        let mut sent = 0;
        for seq in 0..4 {
            for port in 40000..40032u16 {
                w.local(0, &segment(port, seq));
                sent += 1;
            }
            w.submit();
        }
        let mut by_port: HashMap<u16, usize> = HashMap::new();
        let mut got = 0;
        while got < sent {
            let Ok(Input::Worker(k, parcel)) = rx.recv_timeout(Duration::from_secs(5)) else {
                panic!("only {got} of {sent} packets came back");
            };
            for (peer, side, p) in parcel.items() {
                assert_eq!((peer, side), (0, Side::Local));
                let port = u16::from_be_bytes([p[20], p[21]]);
                assert_eq!(*by_port.entry(port).or_insert(k), k, "port {port}");
                got += 1;
            }
            w.give_back(k, parcel);
        }
        assert_eq!(by_port.len(), 32);
        assert!(
            (0..3).all(|k| by_port.values().any(|&v| v == k)),
            "{by_port:?}"
        );
        assert_eq!(w.fed.iter().sum::<u64>(), sent);
        shutdown.store(true, Ordering::SeqCst);
        drop(rx);
        w.stop();
        assert_eq!(w.counters(0).total("seen"), Some(sent));
    }

    /// Totals add by name, flows list together.
    #[test]
    fn merge_adds_totals_and_lists_flows() {
        let c = |v, flow: &str| Counters {
            engine: "e",
            totals: vec![("a", v), ("b", 1)],
            flows: vec![(flow.to_string(), vec![("x", v)])],
        };
        let m = merge(&[c(2, "f1"), c(5, "f2")]);
        assert_eq!(m.totals, vec![("a", 7), ("b", 2)]);
        assert_eq!(m.flows.len(), 2);
        assert_eq!(merge(&[]), Counters::default());
    }
}
