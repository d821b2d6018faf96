//! Handshake protection's spaced copies (`protect_handshake`, issue 10; docs/engine.md "Real
//! links"). A local SYN or SYN-ACK goes to the peer at once and again every
//! [`HANDSHAKE_COPY_SPACING`] until [`HANDSHAKE_COPIES`] have gone or the peer's answer
//! acknowledges it; the peer's engine delivers the first copy of an ISN and drops the others.
//!
//! Copies sent back to back share the fate of the moment they arrive: at a drop-tail queue kept
//! full by other flows only the first can take a freed slot, and a Gilbert-Elliott burst takes
//! all three. With a hundred connections opening together into a 67-packet queue, 28–41 of them
//! needed more than a second to open (up to 11 s), as the kernels' SYN retries were as
//! synchronised as the first attempts (docs/lab.md, "Real links, stop 16"). Spaced, each copy
//! meets the queue (or the loss process) afresh.

use std::time::Duration;

use super::Engine;
use crate::config::{HANDSHAKE_COPIES, HANDSHAKE_COPY_SPACING};
use crate::tcp::ConnKey;

/// A SYN or SYN-ACK with copies still to send.
#[derive(Debug)]
struct Pending {
    conn: ConnKey,
    next: Duration,
    left: usize,
    packet: Vec<u8>,
}

/// The local SYNs and SYN-ACKs whose protection copies are still due.
#[derive(Debug, Default)]
pub(super) struct HandshakeCopies {
    pending: Vec<Pending>,
}

impl HandshakeCopies {
    /// Schedules the copies of `packet` (already sent once at `now`) for connection `conn`.
    pub(super) fn schedule(&mut self, now: Duration, conn: ConnKey, packet: Vec<u8>) {
        let left = HANDSHAKE_COPIES.saturating_sub(1);
        if left > 0 {
            self.pending.push(Pending {
                conn,
                next: now + HANDSHAKE_COPY_SPACING,
                left,
                packet,
            });
        }
    }

    /// When the next copy is due.
    pub(super) fn deadline(&self) -> Option<Duration> {
        self.pending.iter().map(|p| p.next).min()
    }

    /// Forgets the copies of `conn` (answered, reset, or replaced by a new connection on its
    /// 4-tuple).
    pub(super) fn forget(&mut self, conn: &ConnKey) {
        self.pending.retain(|p| p.conn != *conn);
    }

    /// Calls `send` with each copy due at `now`, in order of the packets' first sending.
    fn send_due(&mut self, now: Duration, mut send: impl FnMut(&[u8])) {
        for p in self.pending.iter_mut().filter(|p| p.next <= now) {
            send(&p.packet);
            p.left -= 1;
            p.next += HANDSHAKE_COPY_SPACING;
        }
        self.pending.retain(|p| p.left > 0);
    }
}

impl Engine {
    /// A packet from the peer on `conn` acknowledging `ack`: when that is our SYN's or
    /// SYN-ACK's ISN + 1 the peer has it, and its copies still due are not sent (on a path
    /// shorter than the spacing none are).
    pub(super) fn on_peer_handshake_ack(&mut self, conn: &ConnKey, ack: u32) {
        let ours = self.flows.get(conn).and_then(|f| f.local_isn);
        if ours.is_some_and(|isn| ack == isn.wrapping_add(1)) {
            self.handshake_copies.forget(conn);
        }
    }

    /// Sends the handshake protection copies due at `now`.
    pub(super) fn on_handshake_copy_timers(&mut self, now: Duration) {
        let mut copies = std::mem::take(&mut self.handshake_copies);
        copies.send_due(now, |packet| {
            self.bypass_local(packet);
            self.out.stats.handshake_copies += 1;
        });
        self.handshake_copies = copies;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{Endpoint, FlowKey};

    fn conn(port: u16) -> ConnKey {
        let key = FlowKey {
            src: Endpoint::new("10.0.0.1".parse().unwrap(), port),
            dst: Endpoint::new("10.0.0.2".parse().unwrap(), 80),
        };
        key.normalize().0
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn copies_follow_one_spacing_apart_and_a_forgotten_connection_sends_none() {
        let mut c = HandshakeCopies::default();
        c.schedule(ms(0), conn(1), vec![1]);
        c.schedule(ms(3), conn(2), vec![2]);
        c.schedule(ms(4), conn(3), vec![3]);
        c.forget(&conn(3));
        let spacing = HANDSHAKE_COPY_SPACING;
        let mut sent = Vec::new();
        while let Some(now) = c.deadline() {
            c.send_due(now, |p| sent.push((now, p[0])));
        }
        let expect: Vec<(Duration, u8)> = (1..HANDSHAKE_COPIES as u32)
            .flat_map(|k| [(spacing * k, 1), (ms(3) + spacing * k, 2)])
            .collect();
        assert_eq!(sent, expect);
    }
}
