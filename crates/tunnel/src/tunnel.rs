//! [`Tunnel`]: the sans-IO key and session machine of one gateway — every peer's sessions,
//! the session-index table, the handshake rate limiter and the counters. Time is passed in
//! (`now`, since an origin the driver chooses) together with the Unix time of that origin (for
//! the initiation timestamps); the driver moves datagrams between it and the socket.
//!
//! Incoming: [`Tunnel::receive`] reads the outer header only, then authenticates (mac1 for
//! handshake messages, rate limit, Noise; the AEAD tag for transport) before anything else is
//! looked at; every failure is a counted [`Drop`] and nothing is ever sent in answer to an
//! unauthenticated datagram. Outgoing: [`Tunnel::send`] seals a frame (or stages it and starts a
//! handshake); [`Tunnel::poll_transmit`] yields every datagram to send.
//!
//! Buffers: [`Tunnel::receive_in_place`] opens a datagram where it is (the frame is a range of
//! the caller's buffer) and sent datagrams can be
//! handed back with [`Tunnel::recycle`] to be sealed into again, so a driver that does both
//! allocates nothing per datagram once warm.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

use crate::cipher::Cipher;
use crate::error::{Drop, KeyError};
use crate::handshake::{self, mac1_key, mac1_ok, tai64n};
use crate::keys::Key;
use crate::limiter::{Limiter, Limits};
use crate::outer::{self, Initiation, Outer, Response};
use crate::peer::{Peer, PeerKeys, Pending, Slot};
use crate::session::{Session, Timers};
use crate::stats::TunnelStats;

/// How a [`Tunnel`] is set up.
#[derive(Debug, Clone)]
pub struct TunnelConfig {
    /// Our static private key.
    pub private: Key,
    /// The peers, in the gateway's order (indices are the gateway's peer indices).
    pub peers: Vec<PeerKeys>,
    /// Timers and limits.
    pub timers: Timers,
    /// Handshake rate limits.
    pub limits: Limits,
    /// Seed of the session-index generator (indices need not be secret, only unique).
    pub seed: u64,
    /// Unix time at `now` = 0.
    pub unix_origin: Duration,
    /// This process's boot id (random per start): peers learn from a new one that we
    /// restarted.
    pub boot_id: u64,
    /// The cipher of the handshakes we initiate, and the one tried first on a peer's
    /// initiation (the initiator chooses: [`crate::cipher`]).
    pub cipher: Cipher,
}

/// What the tunnel tells its driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunnelEvent {
    /// A peer completed a handshake with another boot id than before: it restarted and lost
    /// its engine state; connections through it are broken.
    PeerRestarted {
        /// The peer.
        peer: usize,
    },
}

/// A datagram to send to a peer's endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The peer (index into [`TunnelConfig::peers`]).
    pub peer: usize,
    /// The whole UDP payload.
    pub datagram: Vec<u8>,
}

/// An authenticated datagram, as [`Tunnel::receive_in_place`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrival {
    /// A frame for the peer's engine.
    Frame {
        /// The peer.
        peer: usize,
        /// Where the frame is in the opened datagram.
        frame: std::ops::Range<usize>,
    },
    /// Nothing for the engine (see [`Received::Control`]).
    Control {
        /// The peer.
        peer: usize,
    },
}

/// Sealing buffers kept for reuse at most ([`Tunnel::recycle`]).
const SPARE_BUFFERS: usize = 1024;

/// An authenticated datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// A frame for the peer's engine.
    Frame {
        /// The peer.
        peer: usize,
        /// The decrypted frame.
        frame: Vec<u8>,
    },
    /// A handshake message or an empty keepalive: nothing for the engine, but the peer has
    /// proven itself from this source address (roaming).
    Control {
        /// The peer.
        peer: usize,
    },
}

/// The key and session machine (see the module documentation).
pub struct Tunnel {
    private: Key,
    own_mac1_key: [u8; 32],
    peers: Vec<Peer>,
    by_index: HashMap<u32, usize>,
    timers: Timers,
    limiter: Limiter,
    index_state: u64,
    unix_origin: Duration,
    boot_id: u64,
    cipher: Cipher,
    out: VecDeque<Transmit>,
    /// Buffers of sent datagrams, sealed into again.
    spare: Vec<Vec<u8>>,
    events: VecDeque<TunnelEvent>,
    stats: TunnelStats,
}

impl Tunnel {
    /// A tunnel with no sessions yet.
    pub fn new(c: TunnelConfig, now: Duration) -> Result<Tunnel, KeyError> {
        let public = c.private.public()?;
        Ok(Tunnel {
            own_mac1_key: mac1_key(&public),
            private: c.private,
            peers: c.peers.into_iter().map(Peer::new).collect(),
            by_index: HashMap::new(),
            timers: c.timers,
            limiter: Limiter::new(c.limits, now),
            index_state: c.seed,
            unix_origin: c.unix_origin,
            boot_id: c.boot_id,
            cipher: c.cipher,
            out: VecDeque::new(),
            spare: Vec::new(),
            events: VecDeque::new(),
            stats: TunnelStats::default(),
        })
    }

    /// The counters.
    pub fn stats(&self) -> TunnelStats {
        self.stats
    }

    /// Live sessions, staged frames and tracked handshake sources, summed over peers: what
    /// the state of this tunnel holds (bounded: 3 sessions and `staged_frames` per peer).
    pub fn state_size(&self) -> (usize, usize, usize) {
        let sessions = self.peers.iter().map(Peer::sessions).sum();
        let staged = self.peers.iter().map(|p| p.staged.len()).sum();
        (sessions, staged, self.limiter.sources())
    }

    /// Whether `peer` has a session to send on.
    pub fn has_session(&self, peer: usize, now: Duration) -> bool {
        self.peers
            .get(peer)
            .and_then(|p| p.current.as_ref())
            .is_some_and(|s| s.can_send(now, &self.timers))
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.pop_front()
    }

    /// Hands back a sent datagram's buffer: a later [`Tunnel::send`] seals into it instead
    /// of allocating (at most [`SPARE_BUFFERS`] are kept).
    pub fn recycle(&mut self, datagram: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS {
            self.spare.push(datagram);
        }
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<TunnelEvent> {
        self.events.pop_front()
    }

    /// Records the boot id a peer's handshake message carried. A new one means the peer
    /// restarted: the sessions it had are gone on its side, so they are dropped here too
    /// (anything sent on them would be lost).
    fn note_boot(&mut self, peer: usize, boot_id: u64) {
        let p = &mut self.peers[peer];
        let restarted = p.boot_id.is_some_and(|b| b != boot_id);
        p.boot_id = Some(boot_id);
        if restarted {
            let old: Vec<u32> = [p.current.take(), p.previous.take()]
                .into_iter()
                .flatten()
                .map(|s| s.local)
                .collect();
            self.free(old);
            self.stats.peer_restarts += 1;
            self.events.push_back(TunnelEvent::PeerRestarted { peer });
        }
    }

    /// The earliest time [`Tunnel::handle_timeout`] has work.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.peers
            .iter()
            .filter_map(|p| p.deadline(&self.timers))
            .min()
    }

    /// A fresh unused session index (splitmix64 over a counter seeded at construction).
    fn new_index(&mut self, peer: usize) -> u32 {
        loop {
            self.index_state = self.index_state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.index_state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let index = (z ^ (z >> 31)) as u32;
            if let std::collections::hash_map::Entry::Vacant(e) = self.by_index.entry(index) {
                e.insert(peer);
                return index;
            }
        }
    }

    fn free(&mut self, indices: impl IntoIterator<Item = u32>) {
        for i in indices {
            self.by_index.remove(&i);
        }
    }

    /// Seals `frame` for `peer` (an empty frame is a keepalive), or stages it and starts a
    /// handshake when there is no usable session.
    pub fn send(&mut self, now: Duration, peer: usize, frame: &[u8]) {
        let t = self.timers;
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        let mut rekey = false;
        // Without a current session, a responder's unconfirmed one is better than none (if the
        // initiator missed our response, the datagram is lost like any other).
        let usable = match p.current.as_ref().is_some_and(|s| s.can_send(now, &t)) {
            true => p.current.as_mut(),
            false => p.next.as_mut().filter(|s| s.can_send(now, &t)),
        };
        match usable {
            Some(s) => {
                rekey = s.wants_rekey(now, &t);
                let mut datagram = self.spare.pop().unwrap_or_default();
                if s.seal_into(frame, &mut datagram) {
                    self.stats.sealed += 1;
                    p.owe_keepalive_since = None;
                    if !frame.is_empty() {
                        p.awaiting_since.get_or_insert(now);
                    }
                    self.out.push_back(Transmit { peer, datagram });
                } else {
                    self.spare.push(datagram);
                }
            }
            None if frame.is_empty() => {}
            None => {
                if p.stage(frame, t.staged_frames) {
                    self.stats.staged_drops += 1;
                }
                rekey = true;
            }
        }
        if rekey && self.peers[peer].pending.is_none() {
            self.initiate(now, peer, now);
        }
    }

    /// Sends a new initiation to `peer` (first attempt at `started`).
    fn initiate(&mut self, now: Duration, peer: usize, started: Duration) {
        if let Some(old) = self.peers[peer].pending.take() {
            self.free([old.init.sender]);
        }
        let sender = self.new_index(peer);
        let p = &self.peers[peer];
        let stamp = tai64n(self.unix_origin + now);
        let fields = handshake::InitiationFields {
            sender,
            timestamp: stamp,
            boot_id: self.boot_id,
            cipher: self.cipher,
        };
        match handshake::initiate(&self.private, &p.keys.public, &p.keys.psk, fields, None) {
            Ok((init, datagram)) => {
                let interval = self.timers.retry_initial;
                self.peers[peer].pending = Some(Pending {
                    init,
                    started,
                    retry_at: now + interval,
                    interval,
                });
                self.stats.initiations_sent += 1;
                self.out.push_back(Transmit { peer, datagram });
            }
            Err(_) => {
                self.free([sender]);
                self.stats.initiation_errors += 1;
            }
        }
    }

    /// Timers: handshake retries with backoff, passive keepalives, the dead-peer rule and
    /// session expiry.
    pub fn handle_timeout(&mut self, now: Duration) {
        let t = self.timers;
        for peer in 0..self.peers.len() {
            let freed = self.peers[peer].expire(now, &t);
            self.free(freed);
            let p = &mut self.peers[peer];
            if let Some(pending) = p.pending.as_ref().filter(|x| x.retry_at <= now) {
                let (started, interval) = (pending.started, pending.interval);
                if now.saturating_sub(started) >= t.rekey_attempt_time {
                    let sender = pending.init.sender;
                    p.pending = None;
                    p.staged.clear();
                    self.free([sender]);
                    self.stats.handshakes_given_up += 1;
                } else {
                    self.initiate(now, peer, started);
                    self.stats.initiation_retries += 1;
                    let next = (interval * 2).min(t.rekey_timeout);
                    if let Some(x) = self.peers[peer].pending.as_mut() {
                        x.interval = next;
                        x.retry_at = now + next;
                    }
                }
            }
            let p = &mut self.peers[peer];
            if p.owe_keepalive_since
                .is_some_and(|s| s + t.keepalive_timeout <= now)
            {
                p.owe_keepalive_since = None;
                if p.current.is_some() {
                    self.stats.keepalives_sent += 1;
                    self.send(now, peer, &[]);
                }
            }
            let p = &mut self.peers[peer];
            if p.awaiting_since.is_some_and(|s| s + t.dead_after <= now) {
                p.awaiting_since = None;
                if p.pending.is_none() {
                    self.initiate(now, peer, now);
                }
            }
        }
    }

    /// Reads one datagram from `from` (a copy of it is opened; see
    /// [`Tunnel::receive_in_place`]).
    pub fn receive(&mut self, now: Duration, from: SocketAddr, d: &[u8]) -> Result<Received, Drop> {
        let mut buf = d.to_vec();
        Ok(match self.receive_in_place(now, from, &mut buf)? {
            Arrival::Frame { peer, frame } => Received::Frame {
                peer,
                frame: buf[frame].to_vec(),
            },
            Arrival::Control { peer } => Received::Control { peer },
        })
    }

    /// Reads one datagram from `from`, a transport datagram decrypted where it is: a frame
    /// arrives as its range in `d` (the rest of `d`, and all of it after a drop, is
    /// unspecified).
    pub fn receive_in_place(
        &mut self,
        now: Duration,
        from: SocketAddr,
        d: &mut [u8],
    ) -> Result<Arrival, Drop> {
        let r = match outer::parse(d) {
            Ok(Outer::Transport(m)) => {
                let (receiver, counter) = (m.receiver, m.counter);
                let sealed = &mut d[outer::TRANSPORT_HEADER..];
                self.on_transport(now, receiver, counter, sealed)
            }
            Ok(Outer::Initiation(m)) => self.on_initiation(now, from, &m),
            Ok(Outer::Response(m)) => self.on_response(now, from, &m),
            Ok(Outer::Integrity { .. }) => Err(Drop::WrongMode),
            Err(e) => Err(e),
        };
        if let Err(e) = r {
            self.stats.drops.add(e);
        }
        r
    }

    /// A transport datagram for session `receiver`; `sealed` is opened in place (the frame
    /// starts [`outer::TRANSPORT_HEADER`] bytes into the datagram).
    fn on_transport(
        &mut self,
        now: Duration,
        receiver: u32,
        counter: u64,
        sealed: &mut [u8],
    ) -> Result<Arrival, Drop> {
        let t = self.timers;
        let &peer = self.by_index.get(&receiver).ok_or(Drop::UnknownIndex)?;
        let p = &mut self.peers[peer];
        let (session, slot) = p.session_mut(receiver).ok_or(Drop::UnknownIndex)?;
        let len = session.open_in_place(counter, sealed, now, &t)?;
        let rekey = slot == Slot::Current
            && session.initiator()
            && now.saturating_sub(session.created)
                >= t.reject_after_time
                    .saturating_sub(t.keepalive_timeout + t.rekey_timeout);
        self.stats.opened += 1;
        if slot == Slot::Next {
            self.stats.session_under(session.cipher());
            let freed = p.confirm_next();
            self.stats.sessions_confirmed += 1;
            self.free(freed);
        }
        let p = &mut self.peers[peer];
        p.awaiting_since = None;
        if rekey && p.pending.is_none() {
            self.initiate(now, peer, now);
        }
        let p = &mut self.peers[peer];
        let arrival = if len == 0 {
            self.stats.keepalives_received += 1;
            Arrival::Control { peer }
        } else {
            p.owe_keepalive_since.get_or_insert(now);
            let at = outer::TRANSPORT_HEADER;
            Arrival::Frame {
                peer,
                frame: at..at + len,
            }
        };
        if slot == Slot::Next {
            self.complete_as_responder(now, peer);
        }
        Ok(arrival)
    }

    fn on_initiation(
        &mut self,
        now: Duration,
        from: SocketAddr,
        m: &Initiation<'_>,
    ) -> Result<Arrival, Drop> {
        if !mac1_ok(&self.own_mac1_key, m.covered, m.mac1) {
            return Err(Drop::BadMac);
        }
        if !self.limiter.allow(now, from.ip()) {
            return Err(Drop::RateLimited);
        }
        let a = handshake::read_initiation(&self.private, m, &self.cipher.preference(), None)?;
        let peer = self
            .peers
            .iter()
            .position(|p| p.keys.public == a.remote)
            .ok_or(Drop::UnknownPeer)?;
        if self.peers[peer]
            .last_timestamp
            .is_some_and(|last| a.timestamp <= last)
        {
            return Err(Drop::StaleInitiation);
        }
        let (timestamp, boot_id) = (a.timestamp, a.boot_id);
        let remote = a.sender;
        let sender = self.new_index(peer);
        let psk = self.peers[peer].keys.psk;
        let (keys, datagram) = match handshake::respond(a, &psk, sender, self.boot_id) {
            Ok(v) => v,
            Err(e) => {
                self.free([sender]);
                return Err(e);
            }
        };
        let p = &mut self.peers[peer];
        p.last_timestamp = Some(timestamp);
        self.note_boot(peer, boot_id);
        let p = &mut self.peers[peer];
        let session = Session::new(keys, sender, remote, now, &self.timers);
        let displaced = p.install_next(session);
        self.free(displaced);
        self.stats.responses_sent += 1;
        self.out.push_back(Transmit { peer, datagram });
        Ok(Arrival::Control { peer })
    }

    fn on_response(
        &mut self,
        now: Duration,
        from: SocketAddr,
        m: &Response<'_>,
    ) -> Result<Arrival, Drop> {
        if !mac1_ok(&self.own_mac1_key, m.covered, m.mac1) {
            return Err(Drop::BadMac);
        }
        let &peer = self
            .by_index
            .get(&m.receiver)
            .ok_or(Drop::UnexpectedResponse)?;
        if self.peers[peer].pending.as_ref().map(|x| x.init.sender) != Some(m.receiver) {
            return Err(Drop::UnexpectedResponse);
        }
        if !self.limiter.allow(now, from.ip()) {
            return Err(Drop::RateLimited);
        }
        let pending = self.peers[peer]
            .pending
            .take()
            .ok_or(Drop::UnexpectedResponse)?;
        let (local, cipher) = (pending.init.sender, pending.init.cipher);
        let (keys, boot_id) = match handshake::read_response(pending.init, m) {
            Ok(k) => k,
            Err(e) => {
                // The initiation is spent; the retry timer starts a new one.
                let p = &mut self.peers[peer];
                p.pending = None;
                self.free([local]);
                self.initiate(now, peer, now);
                return Err(e);
            }
        };
        self.note_boot(peer, boot_id);
        let session = Session::new(keys, local, m.sender, now, &self.timers);
        let freed = self.peers[peer].install_current(session);
        self.free(freed);
        self.stats.sessions_initiated += 1;
        self.stats.session_under(cipher);
        if !self.flush_staged(now, peer) {
            // Confirms the session to the responder, which sends on it only once it is used.
            self.stats.keepalives_sent += 1;
            self.send(now, peer, &[]);
        }
        Ok(Arrival::Control { peer })
    }

    /// A responder session the peer confirmed completes the handshake as a response to our own
    /// initiation would (WireGuard calls `wg_timers_handshake_complete` on a confirmed
    /// keypair): when both ends initiated at once, ours stops retrying and the frames staged
    /// for it go out now on the confirmed session instead of after its retry.
    fn complete_as_responder(&mut self, now: Duration, peer: usize) {
        if let Some(old) = self.peers[peer].pending.take() {
            self.free([old.init.sender]);
        }
        self.flush_staged(now, peer);
    }

    /// Sends the frames staged for `peer`; returns whether there were any.
    fn flush_staged(&mut self, now: Duration, peer: usize) -> bool {
        let staged: Vec<Vec<u8>> = self.peers[peer].staged.drain(..).collect();
        let any = !staged.is_empty();
        for f in staged {
            self.send(now, peer, &f);
        }
        any
    }
}
