//! One transport session: the two AEAD keys a handshake produced, under its [`Cipher`]
//! ([`TransportKeys`]: the nonce is the explicit 64-bit counter of each datagram, and datagrams
//! are sealed and opened in place), the indices,
//! the send counter and the receive replay window; and the time rules (WireGuard §6.1-6.2:
//! REKEY_AFTER_TIME, REJECT_AFTER_TIME, REKEY_AFTER_MESSAGES, REJECT_AFTER_MESSAGES, ...).

use std::time::Duration;

use crate::cipher::Cipher;
use crate::error::Drop;
use crate::outer::{TRANSPORT_HEADER, transport_header};
use crate::replay::ReplayWindow;
use crate::transport_keys::TransportKeys;

/// The protocol's timers and limits (WireGuard's names, §6.1), with the gateway's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timers {
    /// The initiator of a session starts a new handshake when sending on a session this old.
    pub rekey_after_time: Duration,
    /// A session this old is neither used nor accepted.
    pub reject_after_time: Duration,
    /// The initiator starts a new handshake after sending this many datagrams on a session.
    pub rekey_after_messages: u64,
    /// No datagram is sent or accepted with a counter at or past this.
    pub reject_after_messages: u64,
    /// First handshake retry interval; each retry doubles it, up to `rekey_timeout`.
    pub retry_initial: Duration,
    /// Longest interval between handshake retries.
    pub rekey_timeout: Duration,
    /// A handshake is given up after trying this long (until there is new data to send).
    pub rekey_attempt_time: Duration,
    /// After receiving data and sending nothing for this long, send an empty keepalive.
    pub keepalive_timeout: Duration,
    /// After sending data and receiving nothing authenticated for this long, start a new
    /// handshake (the peer may have restarted and lost its keys).
    pub dead_after: Duration,
    /// Frames held per peer while a handshake is in flight (oldest dropped first).
    pub staged_frames: usize,
}

impl Default for Timers {
    /// WireGuard's values (REKEY_AFTER_TIME 120 s, REJECT_AFTER_TIME 180 s,
    /// REKEY_AFTER_MESSAGES 2^60, REJECT_AFTER_MESSAGES 2^64 − 2^13 − 1, REKEY_TIMEOUT 5 s,
    /// REKEY_ATTEMPT_TIME 90 s) except: retries start at 1 s and back off to 5 s; the passive
    /// keepalive is 2 s (not 10 s) and a silent peer is re-handshaken after 5 s (not 15 s), so
    /// that a restarted peer is noticed well within the 10 s an application may wait.
    fn default() -> Self {
        Timers {
            rekey_after_time: Duration::from_secs(120),
            reject_after_time: Duration::from_secs(180),
            rekey_after_messages: 1 << 60,
            reject_after_messages: u64::MAX - (1 << 13),
            retry_initial: Duration::from_secs(1),
            rekey_timeout: Duration::from_secs(5),
            rekey_attempt_time: Duration::from_secs(90),
            keepalive_timeout: Duration::from_secs(2),
            dead_after: Duration::from_secs(5),
            staged_frames: 128,
        }
    }
}

/// A session's keys and state.
pub struct Session {
    keys: TransportKeys,
    /// Our index: the peer's transport headers carry it.
    pub local: u32,
    /// The peer's index: our transport headers carry it.
    pub remote: u32,
    /// When the handshake completed.
    pub created: Duration,
    next_counter: u64,
    replay: ReplayWindow,
}

impl Session {
    /// A fresh session.
    pub fn new(
        keys: TransportKeys,
        local: u32,
        remote: u32,
        created: Duration,
        timers: &Timers,
    ) -> Self {
        Session {
            keys,
            local,
            remote,
            created,
            next_counter: 0,
            replay: ReplayWindow::new(timers.reject_after_messages),
        }
    }

    /// Whether we initiated the handshake (only the initiator rekeys on time).
    pub fn initiator(&self) -> bool {
        self.keys.is_initiator()
    }

    /// The handshake's cipher, which the session's keys use.
    pub fn cipher(&self) -> Cipher {
        self.keys.cipher()
    }

    /// Whether the session may still send at `now`.
    pub fn can_send(&self, now: Duration, t: &Timers) -> bool {
        now.saturating_sub(self.created) < t.reject_after_time
            && self.next_counter < t.reject_after_messages
    }

    /// Whether the session may still receive at `now`.
    pub fn expired(&self, now: Duration, t: &Timers) -> bool {
        now.saturating_sub(self.created) >= t.reject_after_time
    }

    /// Whether we (as initiator) should start a new handshake when sending at `now`.
    pub fn wants_rekey(&self, now: Duration, t: &Timers) -> bool {
        self.initiator()
            && (now.saturating_sub(self.created) >= t.rekey_after_time
                || self.next_counter >= t.rekey_after_messages)
    }

    /// Datagrams sent so far.
    pub fn sent(&self) -> u64 {
        self.next_counter
    }

    /// `frame` as a transport datagram with the next counter.
    pub fn seal(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        let mut d = Vec::new();
        self.seal_into(frame, &mut d).then_some(d)
    }

    /// [`Session::seal`] into `out` (replaced; no allocation when its capacity suffices): the
    /// header and the frame written once, then sealed where they are. `false` when the
    /// cipher refused (nothing sealed, the counter unchanged).
    pub fn seal_into(&mut self, frame: &[u8], out: &mut Vec<u8>) -> bool {
        let counter = self.next_counter;
        out.clear();
        out.extend_from_slice(&transport_header(self.remote, counter));
        out.extend_from_slice(frame);
        match self.keys.seal_in_place(counter, out, TRANSPORT_HEADER) {
            Ok(()) => {
                self.next_counter += 1;
                true
            }
            Err(_) => false,
        }
    }

    /// The frame inside a transport datagram for this session: replay check, AEAD, then the
    /// counter is recorded.
    pub fn open(
        &mut self,
        counter: u64,
        sealed: &[u8],
        now: Duration,
        t: &Timers,
    ) -> Result<Vec<u8>, Drop> {
        let mut frame = sealed.to_vec();
        let n = self.open_in_place(counter, &mut frame, now, t)?;
        frame.truncate(n);
        Ok(frame)
    }

    /// [`Session::open`] in place: `sealed` (ciphertext and tag) is decrypted where it is and
    /// the frame's length returned (the frame is `sealed[..len]`). On failure `sealed` is
    /// unspecified and the replay window unchanged.
    pub fn open_in_place(
        &mut self,
        counter: u64,
        sealed: &mut [u8],
        now: Duration,
        t: &Timers,
    ) -> Result<usize, Drop> {
        if self.expired(now, t) {
            return Err(Drop::Expired);
        }
        self.replay.check(counter)?;
        let n = self
            .keys
            .open_in_place(counter, sealed)
            .map_err(|_| Drop::BadTag)?;
        self.replay.accept(counter)?;
        Ok(n)
    }
}
