//! The per-peer engine contract the event loop drives, and the pass-through engine.
//!
//! [`PeerEngine`] mirrors the sans-IO surface of `tcpnc_proto::Engine` (`handle_*` /
//! `poll_*`, time passed in) so the loop and its tests do not depend on the coding engine's
//! internals. [`PassThrough`] is a complete engine of its own: it frames raw IP packets into
//! tunnel datagrams (one tag byte + the packet) and back, with bounded queues and per-flow
//! counters. It is what `coding.mode = "off"` runs when no coding engine is compiled in, and
//! what the in-process gateway tests use.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use serde::Serialize;

use crate::flow::FlowKey;

/// One peer's protocol engine, driven by the gateway event loop.
pub trait PeerEngine: Send {
    /// An IP packet read from the local TUN, routed to this peer.
    fn handle_local(&mut self, now: Duration, ip_packet: &[u8]);
    /// A datagram received from this peer's endpoint.
    fn handle_datagram(&mut self, now: Duration, datagram: &[u8]);
    /// Next datagram to send to the peer.
    fn poll_transmit(&mut self) -> Option<Vec<u8>>;
    /// Next IP packet to write to the local TUN.
    fn poll_local(&mut self) -> Option<Vec<u8>>;
    /// Earliest time [`PeerEngine::handle_timeout`] must be called, if any.
    fn poll_timeout(&self) -> Option<Duration>;
    /// Runs timers due at `now`.
    fn handle_timeout(&mut self, now: Duration);
    /// Counters as JSON (per peer and per flow), for the stats file.
    fn stats_json(&self) -> serde_json::Value;
    /// Next notable event, rendered for the log.
    fn poll_event(&mut self) -> Option<String>;
}

/// First byte of every pass-through datagram.
pub const PASS_THROUGH_TAG: u8 = 0x50;
/// Most flows the pass-through engine keeps individual counters for.
pub const MAX_TRACKED_FLOWS: usize = 4096;

/// Per-direction counters.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    /// Packets.
    pub packets: u64,
    /// Bytes (IP packet bytes).
    pub bytes: u64,
}

impl Counters {
    fn add(&mut self, len: usize) {
        self.packets += 1;
        self.bytes += len as u64;
    }
}

/// Counters of one flow.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct FlowCounters {
    /// Packets from the local TUN towards the peer.
    pub to_peer: Counters,
    /// Packets from the peer written to the local TUN.
    pub from_peer: Counters,
}

/// Pass-through engine statistics.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct PassThroughStats {
    /// Local packets framed and queued for the peer.
    pub to_peer: Counters,
    /// Peer packets unframed and queued for the TUN.
    pub from_peer: Counters,
    /// Datagrams that were not pass-through frames or held no valid IP packet.
    pub malformed: u64,
    /// Local packets that were not IPv4/IPv6.
    pub not_ip: u64,
    /// Packets dropped because a queue was full.
    pub queue_drops: u64,
    /// Packets of flows beyond [`MAX_TRACKED_FLOWS`] (counted in the totals only).
    pub untracked_flow_packets: u64,
}

/// An uncoded tunnel engine: frames each IP packet as `[PASS_THROUGH_TAG] ++ packet`.
#[derive(Debug)]
pub struct PassThrough {
    queue_limit: usize,
    transmit: VecDeque<Vec<u8>>,
    local: VecDeque<Vec<u8>>,
    stats: PassThroughStats,
    flows: HashMap<FlowKey, FlowCounters>,
}

impl PassThrough {
    /// A pass-through engine whose two queues each hold at most `queue_limit` packets.
    pub fn new(queue_limit: usize) -> Self {
        PassThrough {
            queue_limit: queue_limit.max(1),
            transmit: VecDeque::new(),
            local: VecDeque::new(),
            stats: PassThroughStats::default(),
            flows: HashMap::new(),
        }
    }

    /// Current counters.
    pub fn stats(&self) -> &PassThroughStats {
        &self.stats
    }

    fn flow_entry(&mut self, key: FlowKey) -> Option<&mut FlowCounters> {
        if self.flows.len() >= MAX_TRACKED_FLOWS && !self.flows.contains_key(&key) {
            self.stats.untracked_flow_packets += 1;
            return None;
        }
        Some(self.flows.entry(key).or_default())
    }
}

/// Length an IP packet claims in its header, if it is IPv4 or IPv6.
fn ip_claimed_len(packet: &[u8]) -> Option<usize> {
    match packet.first()? >> 4 {
        4 if packet.len() >= 20 => Some(usize::from(u16::from_be_bytes([packet[2], packet[3]]))),
        6 if packet.len() >= 40 => {
            Some(40 + usize::from(u16::from_be_bytes([packet[4], packet[5]])))
        }
        _ => None,
    }
}

impl PeerEngine for PassThrough {
    fn handle_local(&mut self, _now: Duration, ip_packet: &[u8]) {
        let Some(claimed) = ip_claimed_len(ip_packet) else {
            self.stats.not_ip += 1;
            return;
        };
        let packet = &ip_packet[..claimed.min(ip_packet.len())];
        if self.transmit.len() >= self.queue_limit {
            self.stats.queue_drops += 1;
            return;
        }
        let mut d = Vec::with_capacity(packet.len() + 1);
        d.push(PASS_THROUGH_TAG);
        d.extend_from_slice(packet);
        self.transmit.push_back(d);
        self.stats.to_peer.add(packet.len());
        if let Some(key) = FlowKey::parse(packet)
            && let Some(f) = self.flow_entry(key)
        {
            f.to_peer.add(packet.len());
        }
    }

    fn handle_datagram(&mut self, _now: Duration, datagram: &[u8]) {
        let Some((&PASS_THROUGH_TAG, packet)) = datagram.split_first() else {
            self.stats.malformed += 1;
            return;
        };
        match ip_claimed_len(packet) {
            Some(n) if n == packet.len() => {}
            _ => {
                self.stats.malformed += 1;
                return;
            }
        }
        if self.local.len() >= self.queue_limit {
            self.stats.queue_drops += 1;
            return;
        }
        self.local.push_back(packet.to_vec());
        self.stats.from_peer.add(packet.len());
        // Key flows by the local side's view: the reply direction of what we sent.
        if let Some(key) = FlowKey::parse(packet).map(FlowKey::reversed)
            && let Some(f) = self.flow_entry(key)
        {
            f.from_peer.add(packet.len());
        }
    }

    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    fn poll_local(&mut self) -> Option<Vec<u8>> {
        self.local.pop_front()
    }

    fn poll_timeout(&self) -> Option<Duration> {
        None
    }

    fn handle_timeout(&mut self, _now: Duration) {}

    fn stats_json(&self) -> serde_json::Value {
        let flows: Vec<serde_json::Value> = self
            .flows
            .iter()
            .map(|(k, c)| serde_json::json!({ "flow": k.to_string(), "counters": c }))
            .collect();
        serde_json::json!({ "engine": "pass-through", "totals": self.stats, "flows": flows })
    }

    fn poll_event(&mut self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::tests::ipv4_udp;

    #[test]
    fn frames_and_unframes() {
        let mut a = PassThrough::new(8);
        let mut b = PassThrough::new(8);
        let p = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1000, 53, b"hello");
        a.handle_local(Duration::ZERO, &p);
        let d = a.poll_transmit().unwrap();
        assert_eq!(d[0], PASS_THROUGH_TAG);
        b.handle_datagram(Duration::ZERO, &d);
        assert_eq!(b.poll_local().unwrap(), p);
        assert_eq!(a.stats().to_peer.packets, 1);
        assert_eq!(b.stats().from_peer.bytes, p.len() as u64);
        assert_eq!(a.stats_json()["flows"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn rejects_garbage_and_bounds_queues() {
        let mut e = PassThrough::new(1);
        e.handle_datagram(Duration::ZERO, &[]);
        e.handle_datagram(Duration::ZERO, &[0x00, 0x45]);
        e.handle_datagram(Duration::ZERO, &[PASS_THROUGH_TAG, 0x45, 0]);
        let p = ipv4_udp([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"x");
        let mut truncated = vec![PASS_THROUGH_TAG];
        truncated.extend_from_slice(&p[..p.len() - 1]);
        e.handle_datagram(Duration::ZERO, &truncated);
        assert_eq!(e.stats().malformed, 4);
        e.handle_local(Duration::ZERO, b"\x00not ip");
        assert_eq!(e.stats().not_ip, 1);
        e.handle_local(Duration::ZERO, &p);
        e.handle_local(Duration::ZERO, &p);
        assert_eq!(e.stats().queue_drops, 1);
        assert!(e.poll_transmit().is_some());
        assert!(e.poll_transmit().is_none());
    }
}
