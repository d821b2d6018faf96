//! The [`PathBox`] trait (a middlebox beside each TCP endpoint) and [`Passthrough`].

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// A sans-IO middlebox between a TCP endpoint and the link, e.g. a TCP/NC engine.
///
/// "Local" is the side of its own TCP endpoint (IPv4 packets); "remote" is the link side
/// (opaque datagrams). The simulator feeds packets in with `handle_*`, drains output with
/// `poll_*` after every input (until `None`), and calls [`PathBox::handle_timeout`] once
/// the virtual time reaches [`PathBox::poll_timeout`]. Time is the simulator's virtual
/// clock; implementations must not read a real clock.
pub trait PathBox {
    /// An IPv4 packet emitted by the local TCP endpoint at `now`.
    fn handle_local(&mut self, now: Duration, ip_packet: &[u8]);
    /// A datagram that arrived from the link at `now`.
    fn handle_remote(&mut self, now: Duration, datagram: &[u8]);
    /// Next datagram to put on the link, if any.
    fn poll_remote(&mut self) -> Option<Vec<u8>>;
    /// Next IPv4 packet to hand to the local TCP endpoint, if any.
    fn poll_local(&mut self) -> Option<Vec<u8>>;
    /// The next instant at which the box wants [`PathBox::handle_timeout`], if any.
    fn poll_timeout(&self) -> Option<Duration>;
    /// Called when the virtual time has reached the instant from `poll_timeout`.
    fn handle_timeout(&mut self, now: Duration);
    /// Named counters for the report (stable names; a `BTreeMap` keeps output ordered).
    fn counters(&self) -> BTreeMap<String, u64>;
}

/// Plain mode: IP packets cross the link unchanged, in both directions.
#[derive(Debug, Default)]
pub struct Passthrough {
    to_remote: VecDeque<Vec<u8>>,
    to_local: VecDeque<Vec<u8>>,
    local_in: u64,
    remote_in: u64,
}

impl Passthrough {
    /// A new, empty passthrough box.
    pub fn new() -> Self {
        Self::default()
    }
}

impl PathBox for Passthrough {
    fn handle_local(&mut self, _now: Duration, ip_packet: &[u8]) {
        self.local_in += 1;
        self.to_remote.push_back(ip_packet.to_vec());
    }

    fn handle_remote(&mut self, _now: Duration, datagram: &[u8]) {
        self.remote_in += 1;
        self.to_local.push_back(datagram.to_vec());
    }

    fn poll_remote(&mut self) -> Option<Vec<u8>> {
        self.to_remote.pop_front()
    }

    fn poll_local(&mut self) -> Option<Vec<u8>> {
        self.to_local.pop_front()
    }

    fn poll_timeout(&self) -> Option<Duration> {
        None
    }

    fn handle_timeout(&mut self, _now: Duration) {}

    fn counters(&self) -> BTreeMap<String, u64> {
        BTreeMap::from([
            ("local_in".to_string(), self.local_in),
            ("remote_in".to_string(), self.remote_in),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passthrough_forwards_both_ways_in_order() {
        let mut b = Passthrough::new();
        b.handle_local(Duration::ZERO, &[1]);
        b.handle_local(Duration::ZERO, &[2]);
        b.handle_remote(Duration::ZERO, &[3]);
        assert_eq!(b.poll_remote(), Some(vec![1]));
        assert_eq!(b.poll_remote(), Some(vec![2]));
        assert_eq!(b.poll_remote(), None);
        assert_eq!(b.poll_local(), Some(vec![3]));
        assert_eq!(b.poll_local(), None);
        assert_eq!(b.poll_timeout(), None);
        assert_eq!(b.counters()["local_in"], 2);
        assert_eq!(b.counters()["remote_in"], 1);
    }
}
