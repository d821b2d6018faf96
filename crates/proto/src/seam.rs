//! The one sans-IO seam between a packet element and the loop that drives it.
//!
//! [`Seam`] is the surface every driver uses: the gateway's event loop (one element per peer),
//! the simulator's event loop (one element beside each TCP endpoint) and the `tcpnc link` relay
//! (its channel: one link model per direction). It follows quinn-proto's sans-IO style: inputs
//! go in with `handle_*` and the time passed in, outputs come out with `poll_*` until `None`, and
//! [`Seam::handle_timeout`] runs once the driver's clock reaches [`Seam::poll_timeout`].
//! Implementations never read a clock, sleep or touch the OS.
//!
//! "Local" is the side of the hosts' IP stack (whole IP packets); "remote" is the side of the
//! path (opaque datagrams). Implemented here by [`Engine`] (the TCP/NC engine, §II–V of
//! Sundararajan et al.) and [`PassThrough`] (no coding); fakes for tests are in
//! [`crate::testing`].

use std::collections::HashMap;
use std::collections::VecDeque;
use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

use tcpnc_wire::{KeepalivePacket, KeepaliveRepr};

use crate::{Engine, Event};

/// One named counter.
pub type Counter = (&'static str, u64);

/// A snapshot of an element's counters: totals and one list per flow, as `(name, value)` pairs.
///
/// A name may contain dots (`to_peer.packets`): renderers nest on them (the gateway's stats
/// file writes `{"to_peer": {"packets": ..}}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// What produced the counters (`"tcpnc-proto"`, `"pass-through"`, ...).
    pub engine: &'static str,
    /// Element-wide counters.
    pub totals: Vec<Counter>,
    /// Per-flow counters, labelled by flow.
    pub flows: Vec<(String, Vec<Counter>)>,
}

impl Counters {
    /// The total named `name`, if present.
    pub fn total(&self, name: &str) -> Option<u64> {
        self.totals
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
    }
}

/// A sans-IO packet element driven with explicit time (see the module docs).
pub trait Seam {
    /// An IP packet from the local side at `now`.
    fn handle_local(&mut self, now: Duration, ip_packet: &[u8]);
    /// A datagram from the remote side at `now`.
    fn handle_remote(&mut self, now: Duration, datagram: &[u8]);
    /// Next datagram for the remote side.
    fn poll_remote(&mut self) -> Option<Vec<u8>>;
    /// Next IP packet for the local side.
    fn poll_local(&mut self) -> Option<Vec<u8>>;
    /// Earliest time [`Seam::handle_timeout`] must be called, if any.
    fn poll_timeout(&self) -> Option<Duration>;
    /// Runs what is due at `now`.
    fn handle_timeout(&mut self, now: Duration);
    /// Current counters.
    fn counters(&self) -> Counters;
    /// Next notable event (none by default).
    fn poll_event(&mut self) -> Option<Event> {
        None
    }
    /// The peer lost its state (it restarted): reset every connection that depended on it
    /// (nothing to do by default: an element without per-connection state).
    fn reset_flows(&mut self, now: Duration) {
        let _ = now;
    }
    /// Hands back a polled datagram or packet the caller is done with, for reuse (dropped by
    /// default).
    fn recycle(&mut self, buf: Vec<u8>) {
        drop(buf);
    }
}

impl Seam for Engine {
    fn handle_local(&mut self, now: Duration, ip_packet: &[u8]) {
        Engine::handle_local(self, now, ip_packet)
    }
    fn handle_remote(&mut self, now: Duration, datagram: &[u8]) {
        Engine::handle_datagram(self, now, datagram)
    }
    fn poll_remote(&mut self) -> Option<Vec<u8>> {
        Engine::poll_transmit(self)
    }
    fn poll_local(&mut self) -> Option<Vec<u8>> {
        Engine::poll_local(self)
    }
    fn poll_timeout(&self) -> Option<Duration> {
        Engine::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Duration) {
        Engine::handle_timeout(self, now)
    }
    fn reset_flows(&mut self, now: Duration) {
        Engine::reset_flows(self, now)
    }
    /// The engine-wide counters, then the sums over live flows of `redundant_sent`,
    /// `innovative` and `non_innovative` (as `redundant_sent`, `innovative_received`,
    /// `non_innovative_received`); one entry per live flow.
    fn counters(&self) -> Counters {
        let s = self.stats();
        let mut totals = s.counters();
        let (mut redundant, mut innovative, mut non_innovative) = (0, 0, 0);
        for f in s.flows.values() {
            redundant += f.redundant_sent;
            innovative += f.innovative;
            non_innovative += f.non_innovative;
        }
        totals.push(("redundant_sent", redundant));
        totals.push(("innovative_received", innovative));
        totals.push(("non_innovative_received", non_innovative));
        let flows = s
            .flows
            .iter()
            .map(|(id, f)| (format!("{id:?}"), f.counters()))
            .collect();
        Counters {
            engine: "tcpnc-proto",
            totals,
            flows,
        }
    }
    fn poll_event(&mut self) -> Option<Event> {
        Engine::poll_event(self)
    }
    fn recycle(&mut self, buf: Vec<u8>) {
        Engine::recycle(self, buf)
    }
}

/// First byte of every datagram of a [`Framing::Tagged`] pass-through.
pub const PASS_THROUGH_TAG: u8 = 0x50;
/// Most flows a pass-through keeps individual counters for.
pub const MAX_TRACKED_FLOWS: usize = 4096;

/// A flow identity (protocol, addresses, ports) of any IP packet, for counters. Ports are zero
/// for protocols without ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowTuple {
    /// IP protocol number (6 = TCP, 17 = UDP, 1 = ICMP, ...).
    pub protocol: u8,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
}

impl FlowTuple {
    /// The same flow seen from the other end.
    pub fn reversed(self) -> FlowTuple {
        FlowTuple {
            protocol: self.protocol,
            src: self.dst,
            dst: self.src,
            src_port: self.dst_port,
            dst_port: self.src_port,
        }
    }
}

impl fmt::Display for FlowTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = match self.protocol {
            6 => "tcp".to_string(),
            17 => "udp".to_string(),
            1 => "icmp".to_string(),
            58 => "icmpv6".to_string(),
            n => format!("proto{n}"),
        };
        let addr = |ip: IpAddr, port: u16| match ip {
            IpAddr::V4(a) => format!("{a}:{port}"),
            IpAddr::V6(a) => format!("[{a}]:{port}"),
        };
        write!(
            f,
            "{proto} {} -> {}",
            addr(self.src, self.src_port),
            addr(self.dst, self.dst_port)
        )
    }
}

/// What a tagged pass-through needs to know about an IP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketFacts {
    /// Length the IP header claims (IPv4 total length, 40 + IPv6 payload length).
    pub claimed_len: usize,
    /// The packet's flow, when its header can be read.
    pub flow: Option<FlowTuple>,
}

/// Reads [`PacketFacts`] from an IP packet; `None` if it is not IPv4/IPv6.
pub type Inspector = fn(&[u8]) -> Option<PacketFacts>;

/// How a [`PassThrough`] puts packets on the remote side.
#[derive(Debug, Clone, Copy)]
pub enum Framing {
    /// Packets cross unchanged and unchecked (the simulator's plain mode).
    Raw,
    /// Each packet travels as `[PASS_THROUGH_TAG] ++ packet`; local packets that are not IP are
    /// refused, datagrams whose packet length disagrees with its IP header are malformed, and
    /// flows are counted (the gateway's `coding.mode = "off"`).
    Tagged(Inspector),
}

/// Per-direction packet and byte counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Packets.
    pub packets: u64,
    /// Bytes (IP packet bytes).
    pub bytes: u64,
}

impl Tally {
    fn add(&mut self, len: usize) {
        self.packets += 1;
        self.bytes += len as u64;
    }
}

/// Counters of one flow through a pass-through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowTally {
    /// Packets from the local side towards the remote side.
    pub to_peer: Tally,
    /// Packets from the remote side handed to the local side.
    pub from_peer: Tally,
}

impl FlowTally {
    fn counters(&self) -> Vec<Counter> {
        vec![
            ("to_peer.packets", self.to_peer.packets),
            ("to_peer.bytes", self.to_peer.bytes),
            ("from_peer.packets", self.from_peer.packets),
            ("from_peer.bytes", self.from_peer.bytes),
        ]
    }
}

/// Pass-through counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassThroughStats {
    /// Local packets handed in (accepted or not).
    pub local_in: u64,
    /// Remote datagrams handed in (accepted or not).
    pub remote_in: u64,
    /// Local packets queued for the remote side.
    pub to_peer: Tally,
    /// Remote packets queued for the local side.
    pub from_peer: Tally,
    /// Datagrams that were not pass-through frames or held no valid IP packet.
    pub malformed: u64,
    /// Local packets that were not IPv4/IPv6.
    pub not_ip: u64,
    /// Packets dropped because a queue was full.
    pub queue_drops: u64,
    /// Packets of flows beyond [`MAX_TRACKED_FLOWS`] (counted in the totals only).
    pub untracked_flow_packets: u64,
    /// KEEPALIVE probes answered (tagged framing only).
    pub keepalive_replies: u64,
    /// KEEPALIVE replies received (tagged framing only).
    pub keepalive_replies_received: u64,
}

/// The KEEPALIVE frame (wire `keepalive.rs`) in `datagram`, if it is one.
pub fn parse_keepalive(datagram: &[u8]) -> Option<KeepaliveRepr> {
    KeepaliveRepr::parse(&KeepalivePacket::new_unchecked(datagram)).ok()
}

/// `repr` as a datagram.
pub fn keepalive_frame(repr: KeepaliveRepr) -> Vec<u8> {
    let mut buf = vec![0u8; repr.buffer_len()];
    // `emit` fails only on a buffer shorter than `buffer_len`.
    let emitted = repr.emit(&mut KeepalivePacket::new_unchecked(&mut buf[..]));
    debug_assert!(emitted.is_ok());
    buf
}

/// The element without coding: packets cross unchanged (or tagged), through bounded queues.
#[derive(Debug)]
pub struct PassThrough {
    framing: Framing,
    queue_limit: usize,
    to_remote: VecDeque<Vec<u8>>,
    to_local: VecDeque<Vec<u8>>,
    stats: PassThroughStats,
    flows: HashMap<FlowTuple, FlowTally>,
}

impl PassThrough {
    /// A pass-through with `framing`; each of its two queues holds at most `queue_limit`
    /// packets.
    pub fn new(framing: Framing, queue_limit: usize) -> Self {
        PassThrough {
            framing,
            queue_limit: queue_limit.max(1),
            to_remote: VecDeque::new(),
            to_local: VecDeque::new(),
            stats: PassThroughStats::default(),
            flows: HashMap::new(),
        }
    }

    /// Tagged framing read with the engine's IP header reader ([`crate::tcp::packet_facts`]):
    /// the gateway's `coding.mode = "off"`; queues of `queue_limit` packets.
    pub fn tagged(queue_limit: usize) -> Self {
        PassThrough::new(Framing::Tagged(crate::tcp::packet_facts), queue_limit)
    }

    /// Raw framing with unbounded queues (the simulator drains them after every input).
    pub fn raw() -> Self {
        PassThrough::new(Framing::Raw, usize::MAX)
    }

    /// Current counters.
    pub fn stats(&self) -> &PassThroughStats {
        &self.stats
    }

    fn count_flow(&mut self, key: FlowTuple, to_peer: bool, len: usize) {
        if self.flows.len() >= MAX_TRACKED_FLOWS && !self.flows.contains_key(&key) {
            self.stats.untracked_flow_packets += 1;
            return;
        }
        let f = self.flows.entry(key).or_default();
        if to_peer {
            f.to_peer.add(len);
        } else {
            f.from_peer.add(len);
        }
    }

    fn local_tagged(&mut self, inspect: Inspector, ip_packet: &[u8]) {
        let Some(facts) = inspect(ip_packet) else {
            self.stats.not_ip += 1;
            return;
        };
        let packet = &ip_packet[..facts.claimed_len.min(ip_packet.len())];
        if self.to_remote.len() >= self.queue_limit {
            self.stats.queue_drops += 1;
            return;
        }
        let mut d = Vec::with_capacity(packet.len() + 1);
        d.push(PASS_THROUGH_TAG);
        d.extend_from_slice(packet);
        self.to_remote.push_back(d);
        self.stats.to_peer.add(packet.len());
        // The flow of the packet as sent (cut to its claimed length).
        if let Some(key) = inspect(packet).and_then(|f| f.flow) {
            self.count_flow(key, true, packet.len());
        }
    }

    /// Answers a KEEPALIVE probe as the coding engine does (the frame's first byte, the wire
    /// version, is never [`PASS_THROUGH_TAG`]).
    fn keepalive(&mut self, k: KeepaliveRepr) {
        if k.reply {
            self.stats.keepalive_replies_received += 1;
        } else if self.to_remote.len() >= self.queue_limit {
            self.stats.queue_drops += 1;
        } else {
            self.to_remote.push_back(keepalive_frame(k.to_reply()));
            self.stats.keepalive_replies += 1;
        }
    }

    fn remote_tagged(&mut self, inspect: Inspector, datagram: &[u8]) {
        if let Some(k) = parse_keepalive(datagram) {
            self.keepalive(k);
            return;
        }
        let Some((&PASS_THROUGH_TAG, packet)) = datagram.split_first() else {
            self.stats.malformed += 1;
            return;
        };
        let facts = match inspect(packet) {
            Some(f) if f.claimed_len == packet.len() => f,
            _ => {
                self.stats.malformed += 1;
                return;
            }
        };
        if self.to_local.len() >= self.queue_limit {
            self.stats.queue_drops += 1;
            return;
        }
        self.to_local.push_back(packet.to_vec());
        self.stats.from_peer.add(packet.len());
        // Key flows by the local side's view: the reply direction of what we sent.
        if let Some(key) = facts.flow {
            self.count_flow(key.reversed(), false, packet.len());
        }
    }

    fn push_raw(&mut self, to_remote: bool, packet: &[u8]) {
        let (queue, tally) = if to_remote {
            (&mut self.to_remote, &mut self.stats.to_peer)
        } else {
            (&mut self.to_local, &mut self.stats.from_peer)
        };
        if queue.len() >= self.queue_limit {
            self.stats.queue_drops += 1;
            return;
        }
        queue.push_back(packet.to_vec());
        tally.add(packet.len());
    }
}

impl Seam for PassThrough {
    fn handle_local(&mut self, _now: Duration, ip_packet: &[u8]) {
        self.stats.local_in += 1;
        match self.framing {
            Framing::Raw => self.push_raw(true, ip_packet),
            Framing::Tagged(inspect) => self.local_tagged(inspect, ip_packet),
        }
    }

    fn handle_remote(&mut self, _now: Duration, datagram: &[u8]) {
        self.stats.remote_in += 1;
        match self.framing {
            Framing::Raw => self.push_raw(false, datagram),
            Framing::Tagged(inspect) => self.remote_tagged(inspect, datagram),
        }
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

    fn counters(&self) -> Counters {
        let s = &self.stats;
        let totals = vec![
            ("local_in", s.local_in),
            ("remote_in", s.remote_in),
            ("to_peer.packets", s.to_peer.packets),
            ("to_peer.bytes", s.to_peer.bytes),
            ("from_peer.packets", s.from_peer.packets),
            ("from_peer.bytes", s.from_peer.bytes),
            ("malformed", s.malformed),
            ("not_ip", s.not_ip),
            ("queue_drops", s.queue_drops),
            ("untracked_flow_packets", s.untracked_flow_packets),
            ("keepalive_replies", s.keepalive_replies),
            ("keepalive_replies_received", s.keepalive_replies_received),
        ];
        let flows = self
            .flows
            .iter()
            .map(|(k, f)| (k.to_string(), f.counters()))
            .collect();
        Counters {
            engine: "pass-through",
            totals,
            flows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    /// A test inspector: byte 0 = claimed length, byte 1 = protocol (not a real IP parser).
    fn toy(p: &[u8]) -> Option<PacketFacts> {
        let (&len, rest) = p.split_first()?;
        let protocol = *rest.first()?;
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        Some(PacketFacts {
            claimed_len: usize::from(len),
            flow: Some(FlowTuple {
                protocol,
                src: a,
                dst: a,
                src_port: 1,
                dst_port: 2,
            }),
        })
    }

    #[test]
    fn raw_forwards_both_ways_in_order() {
        let mut b = PassThrough::raw();
        b.handle_local(Duration::ZERO, &[1]);
        b.handle_local(Duration::ZERO, &[2]);
        b.handle_remote(Duration::ZERO, &[3]);
        assert_eq!(b.poll_remote(), Some(vec![1]));
        assert_eq!(b.poll_remote(), Some(vec![2]));
        assert_eq!(b.poll_remote(), None);
        assert_eq!(b.poll_local(), Some(vec![3]));
        assert_eq!(b.poll_local(), None);
        assert_eq!(b.poll_timeout(), None);
        let c = b.counters();
        assert_eq!(c.total("local_in"), Some(2));
        assert_eq!(c.total("remote_in"), Some(1));
        assert!(c.flows.is_empty());
    }

    #[test]
    fn tagged_frames_checks_and_bounds() {
        let mut a = PassThrough::new(Framing::Tagged(toy), 1);
        let mut b = PassThrough::new(Framing::Tagged(toy), 8);
        a.handle_local(Duration::ZERO, &[3, 17, 9, 99]);
        let d = a.poll_remote().unwrap();
        assert_eq!(
            d,
            vec![PASS_THROUGH_TAG, 3, 17, 9],
            "cut to the claimed length"
        );
        b.handle_remote(Duration::ZERO, &d);
        assert_eq!(b.poll_local(), Some(vec![3, 17, 9]));
        b.handle_remote(Duration::ZERO, &[0x00, 2, 6]);
        b.handle_remote(Duration::ZERO, &[PASS_THROUGH_TAG, 9, 6]);
        b.handle_remote(Duration::ZERO, &[]);
        assert_eq!(b.stats().malformed, 3);
        a.handle_local(Duration::ZERO, &[]);
        assert_eq!(a.stats().not_ip, 1);
        a.handle_local(Duration::ZERO, &[2, 6]);
        a.handle_local(Duration::ZERO, &[2, 6]);
        assert_eq!(a.stats().queue_drops, 1);
        let c = b.counters();
        assert_eq!(c.engine, "pass-through");
        assert_eq!(c.total("from_peer.packets"), Some(1));
        assert_eq!(c.flows.len(), 1);
        assert_eq!(c.flows[0].0, "udp 127.0.0.1:2 -> 127.0.0.1:1");
    }

    #[test]
    fn tagged_answers_keepalive_probes() {
        let mut a = PassThrough::new(Framing::Tagged(toy), 8);
        let probe = keepalive_frame(KeepaliveRepr::probe(42));
        a.handle_remote(Duration::ZERO, &probe);
        let reply = parse_keepalive(&a.poll_remote().unwrap()).unwrap();
        assert_eq!(reply, KeepaliveRepr::probe(42).to_reply());
        a.handle_remote(Duration::ZERO, &keepalive_frame(reply));
        assert_eq!(a.poll_remote(), None);
        assert_eq!(a.stats().keepalive_replies, 1);
        assert_eq!(a.stats().keepalive_replies_received, 1);
        assert_eq!(a.stats().malformed, 0);
        let mut raw = PassThrough::raw();
        raw.handle_remote(Duration::ZERO, &probe);
        assert_eq!(
            raw.poll_local(),
            Some(probe),
            "raw framing carries anything"
        );
    }

    #[test]
    fn flow_tuple_display_and_reverse() {
        let k = FlowTuple {
            protocol: 58,
            src: "::1".parse().unwrap(),
            dst: "::2".parse().unwrap(),
            src_port: 0,
            dst_port: 0,
        };
        assert_eq!(k.to_string(), "icmpv6 [::1]:0 -> [::2]:0");
        assert_eq!(k.reversed().reversed(), k);
    }
}
