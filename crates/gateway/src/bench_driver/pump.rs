//! The driver's loop: one thread moving packets between the gateway's fake devices, the two
//! TCPs of every flow and the peer engine, waiting (briefly, on one device at a time) only
//! when a round moved nothing. Every wait and every loop is bounded.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use tcpnc_proto::tcp::TcpPacket;

use super::rig::Rig;
use super::tcp::{Pattern, ReceivingTcp, SendingTcp, flow_of_port};
use super::{DriverError, DriverOptions, TransferCounts};
use crate::stats::Snapshot;

/// Longest wait on one device in a round that moved nothing.
const IDLE_WAIT: Duration = Duration::from_micros(200);
/// Segments one flow sends per round at most.
const SEND_BUDGET: usize = 64;
/// Packets taken from the TUN, or from the peer engine, per round at most.
const TAKE_BUDGET: usize = 1024;
/// Bound on the handshakes.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Both TCPs of every flow, the peer, the gateway's devices.
pub(super) struct Driver {
    opts: DriverOptions,
    rig: Rig,
    senders: Vec<SendingTcp>,
    receivers: Vec<ReceivingTcp>,
    pattern: Pattern,
    origin: Instant,
    /// Segments of this round for the TUN (buffer reused).
    outbox: Vec<Vec<u8>>,
    /// The receivers' packet for the peer engine (buffer reused).
    answer: Vec<u8>,
    /// Packets neither TCP could place.
    stray: u64,
}

impl Driver {
    pub(super) fn new(opts: &DriverOptions, rig: Rig) -> Driver {
        Driver {
            senders: (0..opts.flows)
                .map(|f| SendingTcp::new(f, opts.bytes, opts.mss))
                .collect(),
            receivers: (0..opts.flows)
                .map(|f| ReceivingTcp::new(f, opts.bytes))
                .collect(),
            opts: opts.clone(),
            rig,
            pattern: Pattern::new(),
            origin: Instant::now(),
            outbox: Vec::new(),
            answer: Vec::new(),
            stray: 0,
        }
    }

    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    /// Every flow's SYN, then rounds until every sender has its SYN-ACK (and has answered
    /// it), at most [`HANDSHAKE_TIMEOUT`].
    pub(super) fn handshake(&mut self) -> Result<(), DriverError> {
        for s in &mut self.senders {
            let syn = s.syn()?;
            self.outbox.push(syn);
        }
        self.inject()?;
        let start = Instant::now();
        let mut idle = false;
        while !self.senders.iter().all(SendingTcp::established) {
            if start.elapsed() > HANDSHAKE_TIMEOUT {
                return Err(DriverError::Handshake {
                    established: self.senders.iter().filter(|s| s.established()).count(),
                    flows: self.senders.len(),
                    waited: HANDSHAKE_TIMEOUT,
                });
            }
            idle = !self.round(idle)?;
        }
        Ok(())
    }

    /// Rounds until every byte is received and acknowledged; fails after `stall` without
    /// progress or after `timeout` in all.
    pub(super) fn transfer(&mut self) -> Result<(), DriverError> {
        let start = Instant::now();
        let mut mark = (start, self.progress());
        let mut idle = false;
        while !self.done() {
            idle = !self.round(idle)?;
            let now = Instant::now();
            let progress = self.progress();
            let (acked, received) = progress;
            let total = self.opts.bytes * self.opts.flows as u64;
            let stuck = |what, waited| DriverError::Stuck {
                what,
                waited,
                acked,
                received,
                total,
            };
            if progress != mark.1 {
                mark = (now, progress);
            } else if now - mark.0 > self.opts.stall {
                return Err(stuck("stalled", self.opts.stall));
            }
            if now - start > self.opts.timeout {
                return Err(stuck("timed out", self.opts.timeout));
            }
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.senders.iter().all(SendingTcp::done) && self.receivers.iter().all(ReceivingTcp::done)
    }

    /// (bytes acknowledged, bytes received in order), all flows.
    fn progress(&self) -> (u64, u64) {
        (
            self.senders.iter().map(SendingTcp::acked).sum(),
            self.receivers.iter().map(ReceivingTcp::received).sum(),
        )
    }

    /// One round: the senders fill their windows; the peer takes the gateway's datagrams, its
    /// receivers answer, its frames go back; the senders take what the gateway wrote to its
    /// TUN. After an idle round (`idle`) the peer's socket, then the TUN, is waited on
    /// briefly. Returns whether anything moved.
    fn round(&mut self, idle: bool) -> Result<bool, DriverError> {
        let now = self.now();
        let mut moved = self.send(now)?;
        let wait = |moved: bool| match idle && !moved {
            true => IDLE_WAIT,
            false => Duration::ZERO,
        };
        let got = self
            .rig
            .peer
            .receive(now, wait(moved))
            .map_err(|source| DriverError::Io {
                what: "receiving on the peer's fake socket",
                source,
            })?;
        moved |= got > 0;
        moved |= self.peer_side(now)?;
        moved |= self.tun_side(now, wait(moved))?;
        for s in &mut self.senders {
            s.on_timer(now);
        }
        Ok(moved)
    }

    /// The senders' segments into the TUN.
    fn send(&mut self, now: Duration) -> Result<bool, DriverError> {
        for s in &mut self.senders {
            s.fill(
                now,
                self.opts.inflight,
                SEND_BUDGET,
                &self.pattern,
                &mut self.outbox,
            )?;
        }
        let moved = !self.outbox.is_empty();
        self.inject()?;
        Ok(moved)
    }

    fn inject(&mut self) -> Result<(), DriverError> {
        for p in self.outbox.drain(..) {
            self.rig
                .tun
                .inject
                .send(p)
                .map_err(|_| DriverError::GatewayStopped)?;
        }
        Ok(())
    }

    /// The peer engine's timers, its packets to the receivers (and their ACKs back into it),
    /// its frames to the gateway.
    fn peer_side(&mut self, now: Duration) -> Result<bool, DriverError> {
        let peer = &mut self.rig.peer;
        peer.timers(now);
        let mut taken = 0;
        while taken < TAKE_BUDGET {
            let Some(p) = peer.engine.poll_local() else {
                break;
            };
            taken += 1;
            let parsed = TcpPacket::parse(&p).ok();
            let flow = parsed.map(|k| flow_of_port(k.tcp.src_port));
            match (parsed, flow.and_then(|f| self.receivers.get_mut(f))) {
                (Some(pkt), Some(r)) => {
                    if r.on_packet(&pkt, &self.pattern, &mut self.answer)? {
                        peer.engine.handle_local(now, &self.answer);
                    }
                }
                _ => self.stray += 1,
            }
            peer.engine.recycle(p);
        }
        for r in &mut self.receivers {
            if r.flush(&mut self.answer)? {
                peer.engine.handle_local(now, &self.answer);
            }
        }
        let sent = peer.transmit(now).map_err(|source| DriverError::Io {
            what: "sending on the peer's fake socket",
            source,
        })?;
        Ok(taken > 0 || sent > 0)
    }

    /// What the gateway wrote to its TUN (SYN-ACKs, ACKs) to the senders; the handshakes'
    /// ACKs back into the TUN.
    fn tun_side(&mut self, now: Duration, wait: Duration) -> Result<bool, DriverError> {
        let mut taken = 0;
        let mut timeout = wait;
        while taken < TAKE_BUDGET {
            let p = match self.rig.tun.written.recv_timeout(timeout) {
                Ok(p) => p,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return Err(DriverError::GatewayStopped),
            };
            timeout = Duration::ZERO;
            taken += 1;
            let Ok(pkt) = TcpPacket::parse(&p) else {
                self.stray += 1;
                continue;
            };
            match self.senders.get_mut(flow_of_port(pkt.tcp.dst_port)) {
                Some(s) => {
                    if let Some(ack) = s.on_packet(now, &pkt)? {
                        self.outbox.push(ack);
                    }
                }
                None => self.stray += 1,
            }
        }
        self.inject()?;
        Ok(taken > 0)
    }

    /// Stops the gateway: its final snapshot.
    pub(super) fn stop(&mut self) -> Result<Snapshot, DriverError> {
        match self.rig.gateway.take() {
            Some(handle) => Ok(handle.stop()?),
            None => Err(DriverError::GatewayStopped),
        }
    }

    /// The MSS the senders used.
    pub(super) fn mss(&self) -> u16 {
        self.senders.first().map_or(self.opts.mss, SendingTcp::mss)
    }

    /// Data segments the receivers took in order.
    pub(super) fn segments_delivered(&self) -> u64 {
        self.receivers.iter().map(|r| r.segments).sum()
    }

    /// The TCPs' and the peer's counts.
    pub(super) fn counts(&self) -> TransferCounts {
        let mut t = TransferCounts {
            refused: self.rig.peer.refused,
            stray: self.stray,
            ..TransferCounts::default()
        };
        for s in &self.senders {
            t.retransmitted += s.retransmitted;
            t.timeouts += s.timeouts;
            t.checksum_errors += s.checksum_errors;
        }
        for r in &self.receivers {
            t.delivered_bytes += r.received();
            t.mismatched_bytes += r.mismatched_bytes;
            t.checksum_errors += r.checksum_errors;
            t.out_of_order += r.out_of_order;
            t.duplicates += r.duplicates;
        }
        t
    }
}
