//! The sans-IO heart of the relay: what to send, where, and when. Time is passed in.
//!
//! [`RelayCore`] drives a [`Seam`] channel (normally [`Channel`], two link models) whose local
//! side is the A socket and whose remote side is the B socket, and adds what a relay knows
//! beyond the path: the two peers' addresses and per-direction counters.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tcpnc_io::counters_json::pairs_json;
use tcpnc_proto::seam::Seam;

use crate::channel::Channel;

/// One of the relay's two sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Side {
    /// The A socket (faces the data sender by convention).
    A,
    /// The B socket.
    B,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// Relay counters of one direction (`from` side's socket → `to` side's peer).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct DirectionCounters {
    /// Datagrams received on the ingress socket.
    pub received: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Datagrams handed out for sending on the egress socket.
    pub forwarded: u64,
    /// Bytes handed out.
    pub forwarded_bytes: u64,
    /// Deliveries dropped because the egress peer address is not known yet.
    pub no_peer: u64,
    /// Sends that failed (counted by the I/O driver).
    pub send_errors: u64,
}

/// The relay core: the channel and the two peers' addresses.
pub struct RelayCore<C: Seam = Channel> {
    channel: C,
    peers: [Option<SocketAddr>; 2],
    learn: [bool; 2],
    counters: [DirectionCounters; 2],
}

fn idx(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

impl<C: Seam> RelayCore<C> {
    /// `channel` carries what arrives on the A socket (its local side) to `b_peer` and what
    /// arrives on the B socket (its remote side) to `a_peer`. A peer given as `None` is learned
    /// from the source of the datagrams arriving on its side.
    pub fn new(channel: C, a_peer: Option<SocketAddr>, b_peer: Option<SocketAddr>) -> Self {
        RelayCore {
            channel,
            peers: [a_peer, b_peer],
            learn: [a_peer.is_none(), b_peer.is_none()],
            counters: [DirectionCounters::default(); 2],
        }
    }

    /// A datagram from `from` arrived on `side`'s socket at `now`.
    pub fn on_receive(&mut self, now: Duration, side: Side, from: SocketAddr, datagram: Vec<u8>) {
        let i = idx(side);
        if self.learn[i] {
            self.peers[i] = Some(from);
        }
        let c = &mut self.counters[i];
        c.received += 1;
        c.received_bytes += datagram.len() as u64;
        match side {
            Side::A => self.channel.handle_local(now, &datagram),
            Side::B => self.channel.handle_remote(now, &datagram),
        }
    }

    /// The next datagram due at `now`: the socket to send it from, the destination, the bytes.
    pub fn poll_send(&mut self, now: Duration) -> Option<(Side, SocketAddr, Vec<u8>)> {
        if self.channel.poll_timeout().is_some_and(|t| t <= now) {
            self.channel.handle_timeout(now);
        }
        loop {
            let (ingress, packet) = if let Some(p) = self.channel.poll_remote() {
                (Side::A, p)
            } else {
                (Side::B, self.channel.poll_local()?)
            };
            let egress = ingress.other();
            let c = &mut self.counters[idx(ingress)];
            match self.peers[idx(egress)] {
                Some(to) => {
                    c.forwarded += 1;
                    c.forwarded_bytes += packet.len() as u64;
                    return Some((egress, to, packet));
                }
                None => c.no_peer += 1,
            }
        }
    }

    /// When [`RelayCore::poll_send`] next has something.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.channel.poll_timeout()
    }

    /// Records a failed send of a datagram that came in on `ingress`.
    pub fn count_send_error(&mut self, ingress: Side) {
        self.counters[idx(ingress)].send_errors += 1;
    }

    /// Counters and channel statistics for both directions: `{"a_to_b": {"relay": {..},
    /// "link": {..}, "peer": ..}, "b_to_a": {..}}`.
    pub fn stats_json(&self) -> Value {
        let mut v = Value::Object(pairs_json(&self.channel.counters().totals));
        for (dir, i, peer) in [("a_to_b", 0, 1), ("b_to_a", 1, 0)] {
            let relay = serde_json::to_value(self.counters[i]).unwrap_or(Value::Null);
            v[dir]["relay"] = relay;
            v[dir]["peer"] = self.peers[peer].map(|a| a.to_string()).into();
        }
        v
    }

    /// Relay counters of the direction entering at `ingress`.
    pub fn counters(&self, ingress: Side) -> DirectionCounters {
        self.counters[idx(ingress)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcpnc_link::{Link, LinkConfig, LossModel};

    fn addr(p: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], p))
    }

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn delivers_at_model_time_on_the_other_side() {
        let ab = Link::new(LinkConfig::new().with_delay(ms(10)), 1).unwrap();
        let ba = Link::new(LinkConfig::new().with_delay(ms(3)), 2).unwrap();
        let mut r = RelayCore::new(Channel::new(ab, ba), Some(addr(1)), Some(addr(2)));
        r.on_receive(ms(0), Side::A, addr(1), b"to-b".to_vec());
        r.on_receive(ms(1), Side::B, addr(2), b"to-a".to_vec());
        assert_eq!(r.poll_timeout(), Some(ms(4)));
        assert!(r.poll_send(ms(3)).is_none());
        assert_eq!(
            r.poll_send(ms(4)),
            Some((Side::A, addr(1), b"to-a".to_vec()))
        );
        assert_eq!(r.poll_timeout(), Some(ms(10)));
        assert!(r.poll_send(ms(9)).is_none());
        assert_eq!(
            r.poll_send(ms(10)),
            Some((Side::B, addr(2), b"to-b".to_vec()))
        );
        assert_eq!(r.poll_timeout(), None);
        assert_eq!(r.counters(Side::A).forwarded, 1);
    }

    #[test]
    fn learns_peers_and_counts_unknown() {
        let l = || Link::new(LinkConfig::new(), 3).unwrap();
        let mut r = RelayCore::new(Channel::new(l(), l()), None, None);
        r.on_receive(ms(0), Side::A, addr(7), b"x".to_vec());
        assert!(r.poll_send(ms(0)).is_none());
        assert_eq!(r.counters(Side::A).no_peer, 1);
        r.on_receive(ms(1), Side::B, addr(8), b"y".to_vec());
        assert_eq!(r.poll_send(ms(1)), Some((Side::A, addr(7), b"y".to_vec())));
        r.on_receive(ms(2), Side::A, addr(7), b"z".to_vec());
        assert_eq!(r.poll_send(ms(2)), Some((Side::B, addr(8), b"z".to_vec())));
    }

    #[test]
    fn loss_only_where_configured() {
        let lossy = Link::new(LinkConfig::new().with_loss(LossModel::bernoulli(1.0)), 4).unwrap();
        let clean = Link::new(LinkConfig::new(), 5).unwrap();
        let mut r = RelayCore::new(Channel::new(lossy, clean), Some(addr(1)), Some(addr(2)));
        for t in 0..10 {
            r.on_receive(ms(t), Side::A, addr(1), vec![0; 100]);
            r.on_receive(ms(t), Side::B, addr(2), vec![1; 100]);
        }
        let mut got = Vec::new();
        while let Some((side, _, _)) = r.poll_send(ms(100)) {
            got.push(side);
        }
        assert_eq!(got, vec![Side::A; 10]);
        let j = r.stats_json();
        assert_eq!(j["a_to_b"]["link"]["dropped_loss"], 10);
        assert_eq!(j["b_to_a"]["relay"]["forwarded"], 10);
        assert_eq!(j["a_to_b"]["peer"], "127.0.0.1:2");
        assert_eq!(j["b_to_a"]["link"]["delivered"], 10);
    }
}
