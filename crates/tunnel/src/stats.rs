//! [`TunnelStats`]: what a [`crate::Tunnel`] counts, besides the drops by reason.

use crate::cipher::Cipher;
use crate::error::DropCounters;

/// Counters beyond the drops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TunnelStats {
    /// Why datagrams were dropped.
    pub drops: DropCounters,
    /// Initiations sent (first attempts and retries).
    pub initiations_sent: u64,
    /// Initiations sent as retries.
    pub initiation_retries: u64,
    /// Handshakes given up after REKEY_ATTEMPT_TIME.
    pub handshakes_given_up: u64,
    /// Responses sent.
    pub responses_sent: u64,
    /// Handshakes completed as initiator.
    pub sessions_initiated: u64,
    /// Responder sessions confirmed by the peer's first datagram.
    pub sessions_confirmed: u64,
    /// Sessions completed (initiated or confirmed) under ChaCha20-Poly1305.
    pub sessions_chacha20_poly1305: u64,
    /// Sessions completed (initiated or confirmed) under AES-256-GCM.
    pub sessions_aes_256_gcm: u64,
    /// Peer restarts seen (boot id changed).
    pub peer_restarts: u64,
    /// Transport datagrams sealed.
    pub sealed: u64,
    /// Transport datagrams opened (authenticated).
    pub opened: u64,
    /// Empty keepalives sent.
    pub keepalives_sent: u64,
    /// Empty keepalives received.
    pub keepalives_received: u64,
    /// Frames dropped because the staging queue was full.
    pub staged_drops: u64,
    /// Initiations that could not be built (no random source).
    pub initiation_errors: u64,
}

impl TunnelStats {
    /// Counts a completed session under `cipher`.
    pub(crate) fn session_under(&mut self, cipher: Cipher) {
        match cipher {
            Cipher::ChaCha20Poly1305 => self.sessions_chacha20_poly1305 += 1,
            Cipher::Aes256Gcm => self.sessions_aes_256_gcm += 1,
        }
    }

    /// `(name, value)` pairs; drop reasons as `drops.<reason>`.
    pub fn pairs(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> = vec![
            ("initiations_sent", self.initiations_sent),
            ("initiation_retries", self.initiation_retries),
            ("handshakes_given_up", self.handshakes_given_up),
            ("responses_sent", self.responses_sent),
            ("sessions_initiated", self.sessions_initiated),
            ("sessions_confirmed", self.sessions_confirmed),
            (
                Cipher::ChaCha20Poly1305.sessions_counter(),
                self.sessions_chacha20_poly1305,
            ),
            (
                Cipher::Aes256Gcm.sessions_counter(),
                self.sessions_aes_256_gcm,
            ),
            ("peer_restarts", self.peer_restarts),
            ("sealed", self.sealed),
            ("opened", self.opened),
            ("keepalives_sent", self.keepalives_sent),
            ("keepalives_received", self.keepalives_received),
            ("staged_drops", self.staged_drops),
            ("initiation_errors", self.initiation_errors),
        ];
        v.extend(self.drops.pairs());
        v
    }
}
