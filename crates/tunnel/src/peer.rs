//! One peer's key state (WireGuard §6): up to three sessions — `current` (used to send),
//! `previous` (still accepted after a rekey, for datagrams in flight) and `next` (a responder's
//! session, used to send only once the initiator has used it, which confirms it) — an initiation
//! in flight with its retry schedule, frames staged while no session exists, and the timestamps
//! the passive keepalive and the dead-peer rule need. All bounded: three sessions, one
//! initiation, `staged_frames` frames.

use std::collections::VecDeque;
use std::time::Duration;

use crate::handshake::{Initiator, TIMESTAMP_LEN};
use crate::keys::Key;
use crate::session::{Session, Timers};

/// A peer's keys as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerKeys {
    /// The peer's static public key (`public_key`).
    pub public: Key,
    /// The preshared key (`preshared_key`); all zero when absent, as in WireGuard.
    pub psk: Key,
}

impl PeerKeys {
    /// Keys with an optional preshared key.
    pub fn new(public: Key, psk: Option<Key>) -> Self {
        PeerKeys {
            public,
            psk: psk.unwrap_or(Key([0; 32])),
        }
    }
}

/// An initiation in flight.
pub(crate) struct Pending {
    pub init: Initiator,
    /// First attempt of this handshake (for REKEY_ATTEMPT_TIME).
    pub started: Duration,
    /// When to retry.
    pub retry_at: Duration,
    /// The interval that led to `retry_at` (doubles up to REKEY_TIMEOUT).
    pub interval: Duration,
}

/// A peer's state.
pub(crate) struct Peer {
    pub keys: PeerKeys,
    pub current: Option<Session>,
    pub previous: Option<Session>,
    pub next: Option<Session>,
    pub pending: Option<Pending>,
    /// Greatest initiation timestamp accepted from this peer.
    pub last_timestamp: Option<[u8; TIMESTAMP_LEN]>,
    /// The peer's boot id, from its last handshake message.
    pub boot_id: Option<u64>,
    pub staged: VecDeque<Vec<u8>>,
    /// Set when data was received and nothing sent since (passive keepalive).
    pub owe_keepalive_since: Option<Duration>,
    /// Set when data was sent and nothing authenticated received since (dead-peer rule).
    pub awaiting_since: Option<Duration>,
}

impl Peer {
    pub fn new(keys: PeerKeys) -> Self {
        Peer {
            keys,
            current: None,
            previous: None,
            next: None,
            pending: None,
            last_timestamp: None,
            boot_id: None,
            staged: VecDeque::new(),
            owe_keepalive_since: None,
            awaiting_since: None,
        }
    }

    /// The session with local index `index`.
    pub fn session_mut(&mut self, index: u32) -> Option<(&mut Session, Slot)> {
        [
            (self.current.as_mut(), Slot::Current),
            (self.previous.as_mut(), Slot::Previous),
            (self.next.as_mut(), Slot::Next),
        ]
        .into_iter()
        .find_map(|(s, slot)| s.filter(|s| s.local == index).map(|s| (s, slot)))
    }

    /// Installs `s` as the current session; returns the local indices it displaced.
    pub fn install_current(&mut self, s: Session) -> Vec<u32> {
        let mut freed = Vec::new();
        if let Some(old) = self.previous.take() {
            freed.push(old.local);
        }
        self.previous = self.current.replace(s);
        freed
    }

    /// Promotes `next` (confirmed by the peer's first datagram on it) to current.
    pub fn confirm_next(&mut self) -> Vec<u32> {
        match self.next.take() {
            Some(s) => self.install_current(s),
            None => Vec::new(),
        }
    }

    /// Installs a responder's session as `next`; returns the index it displaced.
    pub fn install_next(&mut self, s: Session) -> Option<u32> {
        self.next.replace(s).map(|old| old.local)
    }

    /// Drops sessions past REJECT_AFTER_TIME; returns their indices.
    pub fn expire(&mut self, now: Duration, t: &Timers) -> Vec<u32> {
        let mut freed = Vec::new();
        for slot in [&mut self.current, &mut self.previous, &mut self.next] {
            if slot.as_ref().is_some_and(|s| s.expired(now, t)) {
                freed.extend(slot.take().map(|s| s.local));
            }
        }
        freed
    }

    /// Stages a frame until a session exists; returns whether one was dropped to make room.
    pub fn stage(&mut self, frame: &[u8], limit: usize) -> bool {
        let dropped = self.staged.len() >= limit.max(1);
        if dropped {
            self.staged.pop_front();
        }
        self.staged.push_back(frame.to_vec());
        dropped
    }

    /// The earliest instant this peer needs [`crate::Tunnel::handle_timeout`].
    pub fn deadline(&self, t: &Timers) -> Option<Duration> {
        let sessions = [&self.current, &self.previous, &self.next]
            .into_iter()
            .flatten()
            .map(|s| s.created + t.reject_after_time);
        [
            self.pending.as_ref().map(|p| p.retry_at),
            self.owe_keepalive_since.map(|s| s + t.keepalive_timeout),
            self.awaiting_since.map(|s| s + t.dead_after),
        ]
        .into_iter()
        .flatten()
        .chain(sessions)
        .min()
    }

    /// Number of live sessions (for the bounded-state checks).
    pub fn sessions(&self) -> usize {
        usize::from(self.current.is_some())
            + usize::from(self.previous.is_some())
            + usize::from(self.next.is_some())
    }
}

/// Which of a peer's sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Current,
    Previous,
    Next,
}
