//! [`Channel`]: the relay's path, two one-way [`Link`] models as one [`Seam`] element.
//!
//! A link direction is a one-way element: a packet goes in at one side and comes out at the
//! other when the model says it is due. Side A is the channel's "local" side and side B its
//! "remote" side: what arrives on A ([`Seam::handle_local`]) crosses the a→b model and comes
//! out at B ([`Seam::poll_remote`]); what arrives on B crosses the b→a model and comes out at A
//! ([`Seam::poll_local`]). [`Seam::handle_timeout`] releases the packets due.

use std::collections::VecDeque;
use std::time::Duration;

use tcpnc_link::{Link, LinkStats};
use tcpnc_proto::seam::{Counter, Counters, Seam};

/// Two link models, a→b and b→a.
#[derive(Debug)]
pub struct Channel {
    ab: Link,
    ba: Link,
    to_b: VecDeque<Vec<u8>>,
    to_a: VecDeque<Vec<u8>>,
}

impl Channel {
    /// `ab` carries what arrives on side A to side B; `ba` the reverse.
    pub fn new(ab: Link, ba: Link) -> Self {
        Channel {
            ab,
            ba,
            to_b: VecDeque::new(),
            to_a: VecDeque::new(),
        }
    }
}

/// A link model's statistics in the order of the names below.
fn link_values(s: &LinkStats) -> [u64; 10] {
    [
        s.sent,
        s.sent_bytes,
        s.delivered,
        s.delivered_bytes,
        s.dropped_loss,
        s.dropped_queue,
        s.duplicated,
        s.corrupted,
        s.max_queue_packets,
        s.max_queue_bytes,
    ]
}

/// The counter names of [`Channel::counters`] (static, as [`Counter`] needs).
const AB_NAMES: [&str; 10] = [
    "a_to_b.link.sent",
    "a_to_b.link.sent_bytes",
    "a_to_b.link.delivered",
    "a_to_b.link.delivered_bytes",
    "a_to_b.link.dropped_loss",
    "a_to_b.link.dropped_queue",
    "a_to_b.link.duplicated",
    "a_to_b.link.corrupted",
    "a_to_b.link.max_queue_packets",
    "a_to_b.link.max_queue_bytes",
];
const BA_NAMES: [&str; 10] = [
    "b_to_a.link.sent",
    "b_to_a.link.sent_bytes",
    "b_to_a.link.delivered",
    "b_to_a.link.delivered_bytes",
    "b_to_a.link.dropped_loss",
    "b_to_a.link.dropped_queue",
    "b_to_a.link.duplicated",
    "b_to_a.link.corrupted",
    "b_to_a.link.max_queue_packets",
    "b_to_a.link.max_queue_bytes",
];

fn named(names: &[&'static str; 10], s: &LinkStats) -> Vec<Counter> {
    names.iter().copied().zip(link_values(s)).collect()
}

impl Seam for Channel {
    fn handle_local(&mut self, now: Duration, packet: &[u8]) {
        self.ab.send(now, packet.to_vec());
    }
    fn handle_remote(&mut self, now: Duration, packet: &[u8]) {
        self.ba.send(now, packet.to_vec());
    }
    fn poll_remote(&mut self) -> Option<Vec<u8>> {
        self.to_b.pop_front()
    }
    fn poll_local(&mut self) -> Option<Vec<u8>> {
        self.to_a.pop_front()
    }
    fn poll_timeout(&self) -> Option<Duration> {
        match (self.ab.poll_timeout(), self.ba.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn handle_timeout(&mut self, now: Duration) {
        while let Some(p) = self.ab.poll_deliver(now) {
            self.to_b.push_back(p);
        }
        while let Some(p) = self.ba.poll_deliver(now) {
            self.to_a.push_back(p);
        }
    }
    /// Both models' statistics, `a_to_b.link.*` and `b_to_a.link.*`.
    fn counters(&self) -> Counters {
        let mut totals = named(&AB_NAMES, &self.ab.stats());
        totals.extend(named(&BA_NAMES, &self.ba.stats()));
        Counters {
            engine: "link",
            totals,
            flows: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcpnc_link::LinkConfig;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn each_direction_delivers_on_its_own_timer() {
        let ab = Link::new(LinkConfig::new().with_delay(ms(10)), 1).unwrap();
        let ba = Link::new(LinkConfig::new().with_delay(ms(3)), 2).unwrap();
        let mut c = Channel::new(ab, ba);
        c.handle_local(ms(0), b"to-b");
        c.handle_remote(ms(1), b"to-a");
        assert_eq!(c.poll_timeout(), Some(ms(4)));
        c.handle_timeout(ms(4));
        assert_eq!(
            (c.poll_local(), c.poll_remote()),
            (Some(b"to-a".to_vec()), None)
        );
        assert_eq!(c.poll_timeout(), Some(ms(10)));
        c.handle_timeout(ms(10));
        assert_eq!(c.poll_remote(), Some(b"to-b".to_vec()));
        let k = c.counters();
        assert_eq!(k.total("a_to_b.link.delivered"), Some(1));
        assert_eq!(k.total("b_to_a.link.sent_bytes"), Some(4));
    }
}
