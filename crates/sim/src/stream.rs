//! The streaming workload (issue 12): the client application writes each frame of a
//! [`Trace`] at its time into the connection (Nagle off, as a live streaming application sets
//! `TCP_NODELAY`), the server application reads continuously and timestamps each frame's last
//! byte. Frame contents are seeded pseudo-random bytes; each frame's SHA-256 is compared at the
//! sink (integrity of every frame).

use std::collections::VecDeque;
use std::time::Duration;

use sha2::{Digest, Sha256};
use smoltcp::socket::tcp;
use tcpnc_link::Rng;
use tcpnc_stream::{FrameRecord, Trace};

use crate::app::Workload;

/// A frame trace written and read through one connection.
pub struct StreamWorkload {
    trace: Trace,
    rng: Rng,
    /// Next frame to write.
    next: usize,
    /// Bytes of written frames the socket has not taken yet.
    pending: VecDeque<u8>,
    /// Digest of each frame, as written.
    sent_digests: Vec<[u8; 32]>,
    written: u64,
    all: Sha256,
    closed: bool,
    nodelay: bool,
    /// Sink: frame being read, bytes of it read, its running digest.
    reading: usize,
    read_in_frame: u32,
    frame_hash: Sha256,
    received: u64,
    all_received: Sha256,
    /// Per frame: when its last byte was read and whether its digest matched.
    arrivals: Vec<Option<(Duration, bool)>>,
}

impl StreamWorkload {
    /// The workload of `trace` with frame contents drawn from `seed`.
    pub fn new(trace: Trace, seed: u64) -> Self {
        let n = trace.frames.len();
        StreamWorkload {
            trace,
            rng: Rng::new(seed),
            next: 0,
            pending: VecDeque::new(),
            sent_digests: Vec::with_capacity(n),
            written: 0,
            all: Sha256::new(),
            closed: false,
            nodelay: false,
            reading: 0,
            read_in_frame: 0,
            frame_hash: Sha256::new(),
            received: 0,
            all_received: Sha256::new(),
            arrivals: vec![None; n],
        }
    }

    /// Every frame as the sink saw it.
    pub fn records(&self) -> Vec<FrameRecord> {
        self.trace
            .frames
            .iter()
            .zip(&self.arrivals)
            .enumerate()
            .map(|(i, (f, a))| {
                let mut r = FrameRecord::new(i, f.size, f.at, a.map(|(t, _)| t));
                r.intact = a.is_some_and(|(_, ok)| ok);
                r
            })
            .collect()
    }

    /// Generates the frames due at `now` into the pending bytes.
    fn write_due(&mut self, now: Duration) {
        while let Some(f) = self.trace.frames.get(self.next).filter(|f| f.at <= now) {
            let mut bytes = vec![0u8; f.size as usize];
            self.rng.fill_bytes(&mut bytes);
            self.sent_digests.push(Sha256::digest(&bytes).into());
            self.all.update(&bytes);
            self.pending.extend(bytes);
            self.next += 1;
        }
    }

    /// Reads `buf` (the next bytes of the stream) at `now`: completes frames.
    fn absorb(&mut self, now: Duration, mut buf: &[u8]) {
        self.all_received.update(buf);
        self.received += buf.len() as u64;
        while !buf.is_empty() {
            let Some(frame) = self.trace.frames.get(self.reading) else {
                return; // bytes beyond the trace: counted, the digest shows them
            };
            let want = (frame.size - self.read_in_frame) as usize;
            let take = want.min(buf.len());
            self.frame_hash.update(&buf[..take]);
            self.read_in_frame += take as u32;
            buf = &buf[take..];
            if take == want {
                let digest: [u8; 32] = std::mem::take(&mut self.frame_hash).finalize().into();
                let ok = self.sent_digests.get(self.reading) == Some(&digest);
                self.arrivals[self.reading] = Some((now, ok));
                self.reading += 1;
                self.read_in_frame = 0;
            }
        }
    }
}

impl Workload for StreamWorkload {
    fn pump_source(&mut self, now: Duration, socket: &mut tcp::Socket<'_>) -> bool {
        if !self.nodelay {
            socket.set_nagle_enabled(false);
            self.nodelay = true;
        }
        self.write_due(now);
        let mut progress = false;
        while !self.pending.is_empty() && socket.can_send() {
            let (head, _) = self.pending.as_slices();
            let n = socket.send_slice(head).unwrap_or(0);
            if n == 0 {
                break;
            }
            self.pending.drain(..n);
            self.written += n as u64;
            progress = true;
        }
        let done = self.next == self.trace.frames.len() && self.pending.is_empty();
        if done && !self.closed && socket.may_send() {
            socket.close();
            self.closed = true;
            progress = true;
        }
        progress
    }

    fn pump_sink(&mut self, now: Duration, socket: &mut tcp::Socket<'_>) -> bool {
        let mut progress = false;
        while socket.can_recv() {
            let mut chunk = Vec::new();
            let n = socket
                .recv(|buf| {
                    chunk.extend_from_slice(buf);
                    (buf.len(), buf.len())
                })
                .unwrap_or(0);
            if n == 0 {
                break;
            }
            self.absorb(now, &chunk);
            progress = true;
        }
        progress
    }

    fn next_write(&self) -> Option<Duration> {
        self.trace.frames.get(self.next).map(|f| f.at)
    }

    fn written(&self) -> u64 {
        self.written
    }

    fn received(&self) -> u64 {
        self.received
    }

    fn digests(&self) -> ([u8; 32], [u8; 32]) {
        (
            self.all.clone().finalize().into(),
            self.all_received.clone().finalize().into(),
        )
    }
}
