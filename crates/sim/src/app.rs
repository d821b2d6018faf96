//! The applications at the two ends: the [`Workload`] the event loop drives, and the bulk
//! transfer's seeded data source and hashing sink (the streaming workload is `stream.rs`).

use std::time::Duration;

use sha2::{Digest, Sha256};
use smoltcp::socket::tcp;
use tcpnc_link::Rng;

/// What the client application writes and the server application reads.
pub trait Workload {
    /// Feeds the client socket at `now`; `true` if anything happened.
    fn pump_source(&mut self, now: Duration, socket: &mut tcp::Socket<'_>) -> bool;
    /// Drains the server socket at `now`; `true` if anything happened.
    fn pump_sink(&mut self, now: Duration, socket: &mut tcp::Socket<'_>) -> bool;
    /// When the source next has something to write (a timed workload), if ever.
    fn next_write(&self) -> Option<Duration>;
    /// Bytes the source handed to its socket.
    fn written(&self) -> u64;
    /// Bytes the sink read.
    fn received(&self) -> u64;
    /// SHA-256 of everything written and of everything read.
    fn digests(&self) -> ([u8; 32], [u8; 32]);
}

/// The bulk transfer: `total` seeded bytes as fast as the socket takes them.
pub(crate) struct Bulk {
    pub source: Source,
    pub sink: Sink,
}

impl Workload for Bulk {
    fn pump_source(&mut self, _now: Duration, socket: &mut tcp::Socket<'_>) -> bool {
        self.source.pump(socket)
    }
    fn pump_sink(&mut self, _now: Duration, socket: &mut tcp::Socket<'_>) -> bool {
        self.sink.pump(socket)
    }
    fn next_write(&self) -> Option<Duration> {
        None
    }
    fn written(&self) -> u64 {
        self.source.written()
    }
    fn received(&self) -> u64 {
        self.sink.received()
    }
    fn digests(&self) -> ([u8; 32], [u8; 32]) {
        (self.source.digest(), self.sink.digest())
    }
}

/// Writes `total` seeded pseudo-random bytes into a socket, hashing what it writes.
pub(crate) struct Source {
    rng: Rng,
    total: u64,
    written: u64,
    /// Generated but not yet accepted bytes (at most 7 left over from a word).
    spare: Vec<u8>,
    hasher: Sha256,
    closed: bool,
}

impl Source {
    pub fn new(total: u64, seed: u64) -> Self {
        Self {
            rng: Rng::new(seed),
            total,
            written: 0,
            spare: Vec::new(),
            hasher: Sha256::new(),
            closed: false,
        }
    }

    /// Feeds the socket as far as its buffer allows; closes it once everything is queued.
    /// Returns `true` if anything happened.
    pub fn pump(&mut self, socket: &mut tcp::Socket<'_>) -> bool {
        let mut progress = false;
        while self.written < self.total && socket.can_send() {
            let left = self.total - self.written;
            let n = socket
                .send(|buf| {
                    let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    self.fill(&mut buf[..n]);
                    (n, n)
                })
                .unwrap_or(0);
            if n == 0 {
                break;
            }
            self.written += n as u64;
            progress = true;
        }
        if self.written == self.total && !self.closed && socket.may_send() {
            socket.close();
            self.closed = true;
            progress = true;
        }
        progress
    }

    /// Fills `buf` with the next bytes of the stream and hashes them.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let take = self.spare.len().min(buf.len());
        buf[..take].copy_from_slice(&self.spare[..take]);
        self.spare.drain(..take);
        let rest = &mut buf[take..];
        let whole = rest.len() / 8 * 8;
        self.rng.fill_bytes(&mut rest[..whole]);
        let tail = &mut rest[whole..];
        if !tail.is_empty() {
            let w = self.rng.next_u64().to_le_bytes();
            tail.copy_from_slice(&w[..tail.len()]);
            self.spare.extend_from_slice(&w[tail.len()..]);
        }
        self.hasher.update(&*buf);
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn digest(&self) -> [u8; 32] {
        self.hasher.clone().finalize().into()
    }
}

/// Reads everything from a socket, counting and hashing it.
pub(crate) struct Sink {
    received: u64,
    hasher: Sha256,
}

impl Sink {
    pub fn new() -> Self {
        Self {
            received: 0,
            hasher: Sha256::new(),
        }
    }

    /// Drains the socket's receive buffer. Returns `true` if bytes were read.
    pub fn pump(&mut self, socket: &mut tcp::Socket<'_>) -> bool {
        let mut progress = false;
        while socket.can_recv() {
            let n = socket
                .recv(|buf| {
                    self.hasher.update(&*buf);
                    (buf.len(), buf.len())
                })
                .unwrap_or(0);
            if n == 0 {
                break;
            }
            self.received += n as u64;
            progress = true;
        }
        progress
    }

    pub fn received(&self) -> u64 {
        self.received
    }

    pub fn digest(&self) -> [u8; 32] {
        self.hasher.clone().finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_independent_of_chunking() {
        let mut a = Source::new(100, 5);
        let mut b = Source::new(100, 5);
        let mut x = vec![0u8; 100];
        a.fill(&mut x);
        let mut y = vec![0u8; 100];
        let mut off = 0;
        for len in [3usize, 1, 9, 7, 13, 67] {
            b.fill(&mut y[off..off + len]);
            off += len;
        }
        assert_eq!(x, y);
        assert_eq!(a.digest(), b.digest());
    }
}
