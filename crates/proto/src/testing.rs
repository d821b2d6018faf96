//! Fake [`Seam`] elements for testing drivers (the gateway loop, the simulator, the relay)
//! without the coding engine, in the manner of s2n-quic's `io/testing.rs`.
//!
//! * [`Hold`]: forwards local packets to the remote side after a fixed hold time, released by
//!   its timer, and remote datagrams to the local side at once: exercises a driver's timer
//!   path.
//! * [`Recorder`]: swallows everything and records what it was handed and when: lets a test
//!   check what a driver fed its element.
//! * [`ipv4_udp`]: a minimal IPv4/UDP packet for tests of IP-level handling.

use std::collections::VecDeque;
use std::time::Duration;

use crate::seam::{Counters, Seam};

/// An IPv4/UDP packet `src:sp -> dst:dp` carrying `data` (checksums left zero; a zero UDP
/// checksum is legal in IPv4).
pub fn ipv4_udp(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, data: &[u8]) -> Vec<u8> {
    let total = 28 + data.len();
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 17;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    p[20..22].copy_from_slice(&sp.to_be_bytes());
    p[22..24].copy_from_slice(&dp.to_be_bytes());
    p[24..26].copy_from_slice(&((8 + data.len()) as u16).to_be_bytes());
    p[28..].copy_from_slice(data);
    p
}

/// Holds local packets for a fixed time (see the module docs).
#[derive(Debug, Default)]
pub struct Hold {
    hold: Duration,
    pending: VecDeque<(Duration, Vec<u8>)>,
    to_remote: VecDeque<Vec<u8>>,
    to_local: VecDeque<Vec<u8>>,
    fired: u64,
}

impl Hold {
    /// Holds every local packet for `hold`.
    pub fn new(hold: Duration) -> Self {
        Hold {
            hold,
            ..Hold::default()
        }
    }

    /// How often [`Seam::handle_timeout`] ran.
    pub fn fired(&self) -> u64 {
        self.fired
    }
}

impl Seam for Hold {
    fn handle_local(&mut self, now: Duration, ip_packet: &[u8]) {
        self.pending
            .push_back((now + self.hold, ip_packet.to_vec()));
    }
    fn handle_remote(&mut self, _now: Duration, datagram: &[u8]) {
        self.to_local.push_back(datagram.to_vec());
    }
    fn poll_remote(&mut self) -> Option<Vec<u8>> {
        self.to_remote.pop_front()
    }
    fn poll_local(&mut self) -> Option<Vec<u8>> {
        self.to_local.pop_front()
    }
    fn poll_timeout(&self) -> Option<Duration> {
        self.pending.front().map(|(t, _)| *t)
    }
    fn handle_timeout(&mut self, now: Duration) {
        self.fired += 1;
        while let Some((t, _)) = self.pending.front()
            && *t <= now
        {
            if let Some((_, p)) = self.pending.pop_front() {
                self.to_remote.push_back(p);
            }
        }
    }
    fn counters(&self) -> Counters {
        Counters {
            engine: "testing-hold",
            totals: vec![("fired", self.fired)],
            flows: Vec::new(),
        }
    }
}

/// Which side an input came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// [`Seam::handle_local`].
    Local,
    /// [`Seam::handle_remote`].
    Remote,
}

/// Records every input and emits nothing (see the module docs).
#[derive(Debug, Default)]
pub struct Recorder {
    /// Inputs in arrival order: when, from where, the bytes.
    pub inputs: Vec<(Duration, Side, Vec<u8>)>,
    /// Times [`Seam::handle_timeout`] ran.
    pub timeouts: Vec<Duration>,
    /// What [`Seam::poll_timeout`] answers (set by the test).
    pub next_timeout: Option<Duration>,
}

impl Recorder {
    /// The recorded inputs from `side`, bytes only.
    pub fn from(&self, side: Side) -> Vec<&[u8]> {
        self.inputs
            .iter()
            .filter(|(_, s, _)| *s == side)
            .map(|(_, _, b)| b.as_slice())
            .collect()
    }
}

impl Seam for Recorder {
    fn handle_local(&mut self, now: Duration, ip_packet: &[u8]) {
        self.inputs.push((now, Side::Local, ip_packet.to_vec()));
    }
    fn handle_remote(&mut self, now: Duration, datagram: &[u8]) {
        self.inputs.push((now, Side::Remote, datagram.to_vec()));
    }
    fn poll_remote(&mut self) -> Option<Vec<u8>> {
        None
    }
    fn poll_local(&mut self) -> Option<Vec<u8>> {
        None
    }
    fn poll_timeout(&self) -> Option<Duration> {
        self.next_timeout
    }
    fn handle_timeout(&mut self, now: Duration) {
        self.timeouts.push(now);
        self.next_timeout = None;
    }
    fn counters(&self) -> Counters {
        Counters {
            engine: "testing-recorder",
            totals: vec![("inputs", self.inputs.len() as u64)],
            flows: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn hold_releases_on_its_timer_only() {
        let mut h = Hold::new(ms(30));
        h.handle_local(ms(1), b"a");
        h.handle_remote(ms(1), b"b");
        assert_eq!(h.poll_local(), Some(b"b".to_vec()));
        assert_eq!(h.poll_timeout(), Some(ms(31)));
        assert_eq!(h.poll_remote(), None);
        h.handle_timeout(ms(30));
        assert_eq!(h.poll_remote(), None);
        h.handle_timeout(ms(31));
        assert_eq!(h.poll_remote(), Some(b"a".to_vec()));
        assert_eq!(h.poll_timeout(), None);
        assert_eq!(h.counters().total("fired"), Some(2));
    }

    #[test]
    fn recorder_records() {
        let mut r = Recorder {
            next_timeout: Some(ms(5)),
            ..Recorder::default()
        };
        r.handle_local(ms(1), b"x");
        r.handle_remote(ms(2), b"y");
        r.handle_timeout(ms(5));
        assert_eq!(r.from(Side::Remote), vec![&b"y"[..]]);
        assert_eq!(r.inputs[0].0, ms(1));
        assert_eq!((r.timeouts.clone(), r.poll_timeout()), (vec![ms(5)], None));
    }
}
