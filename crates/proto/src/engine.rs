//! The sans-IO engine: one instance per tunnel peer, flows keyed by the TCP 4-tuple.
//!
//! quinn-proto style: the embedding program feeds packets with `handle_local` (an IP packet from
//! the local TCP, e.g. read from a TUN) and `handle_datagram` (a UDP payload from the peer
//! gateway), drains `poll_transmit` / `poll_local` / `poll_event`, and calls `handle_timeout` at
//! `poll_timeout`. Time is a `Duration` from an arbitrary origin; randomness comes from the seed.
//! `handle_*` never panic and never fail: per-packet problems are counted in [`EngineStats`].
//!
//! Routing of local packets (Sundararajan et al. §III-A, §IV-A; `docs/engine.md`):
//!
//! | local packet | action |
//! | --- | --- |
//! | coding off, non-TCP, fragment, mixed families | BYPASS unchanged |
//! | SYN / SYN-ACK | options rewritten (MSS clamp, SACK-permitted and timestamps removed), window scale learnt, BYPASS |
//! | RST | BYPASS, flow removed |
//! | payload or FIN | its ack/window feed the receiver half, then the sender half codes it (DATA frames) |
//! | pure ACK | receiver half: window and delivery confirmation; suppressed, except before any peer data (handshake) and answers to probes |
//! | probe (no payload, seq below the NC ack) | BYPASS |

mod handshake_copies;
mod reset;
pub use reset::{PROVOKE_EVERY, PROVOKES, RESET_MEMORY};

use std::collections::BTreeMap;
use std::time::Duration;

use tcpnc_wire::{AckRepr, DataPacket, DataRepr, FlowId, FrameRepr, FrameType, KeepaliveRepr};

use crate::config::{ConfigError, EngineConfig, HANDSHAKE_DEDUPE};
use crate::connection::Connection;
use crate::context::Call;
use crate::event::{CloseReason, DropReason, Event};
use crate::flow_id_conversion::{flow_id, flow_key};
use crate::output::Output;
use crate::path_memory::PathEstimate;
use crate::rng::EngineRng;
use crate::stats::EngineStats;
use crate::tcp::{
    ConnKey, SynPolicy, TcpError, TcpFlags, TcpPacket, rewrite_syn, scan_options, seq_lt,
};

/// The TCP/NC engine for one peer.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
    rng: EngineRng,
    flows: BTreeMap<ConnKey, Connection>,
    out: Output,
    /// What the flows learned of the path, for the flows that start later.
    path: PathEstimate,
    /// Connections reset because the peer lost its state (`engine/reset.rs`).
    reset_conns: BTreeMap<ConnKey, reset::ResetConn>,
    /// Handshake protection copies still to send (`engine/handshake_copies.rs`).
    handshake_copies: handshake_copies::HandshakeCopies,
    /// The header of the DATA frame being received, parsed in place
    /// ([`DataRepr::parse_into`]: no allocation per frame).
    rx_header: DataRepr,
}

impl Engine {
    /// A new engine; fails if the configuration is invalid.
    pub fn new(config: EngineConfig, seed: u64) -> Result<Engine, ConfigError> {
        config.validate()?;
        Ok(Engine {
            out: Output::new(config.limits.clone(), config.tunnel_mtu),
            config,
            rng: EngineRng::new(seed),
            path: PathEstimate::default(),
            flows: BTreeMap::new(),
            reset_conns: BTreeMap::new(),
            handshake_copies: Default::default(),
            rx_header: DataRepr::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Counters and a snapshot of every live flow's counters, computed now (the engine keeps
    /// each flow's counters in the flow; nothing is copied per packet).
    pub fn stats(&self) -> EngineStats {
        let mut stats = self.out.stats.clone();
        stats.flows = self.flows.values().map(|f| (f.out_id, f.stats())).collect();
        stats
    }

    /// A live flow and the per-call context for it.
    fn flow_call(&mut self, conn: &ConnKey, now: Duration) -> Option<(&mut Connection, Call<'_>)> {
        let flow = self.flows.get_mut(conn)?;
        let call = Call {
            now,
            config: &self.config,
            rng: &mut self.rng,
            out: &mut self.out,
            path: &mut self.path,
        };
        Some((flow, call))
    }

    /// Next datagram for the peer.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.out.pop_transmit()
    }

    /// Next IP packet for the local TCP.
    pub fn poll_local(&mut self) -> Option<Vec<u8>> {
        self.out.pop_local()
    }

    /// Hands back a datagram or packet from [`Engine::poll_transmit`] / [`Engine::poll_local`]
    /// once the caller is done with it: later frames and packets are built into it instead of
    /// a new allocation (`output.rs`). Optional; the output is the same either way.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.out.recycle(buf);
    }

    /// Next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.out.pop_event()
    }

    /// When `handle_timeout` must next be called.
    pub fn poll_timeout(&self) -> Option<Duration> {
        let flows = self.flows.values().map(|f| f.deadline(&self.config)).min();
        [
            flows,
            self.reset_deadline(),
            self.handshake_copies.deadline(),
            self.out.next_release(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs the timers due at `now`: paced datagrams (`pacer.rs`), redeliveries (§IV-C),
    /// repair probes, idle expiry, finished-flow linger, handshake protection copies.
    pub fn handle_timeout(&mut self, now: Duration) {
        self.out.release(now);
        self.note_early_departures();
        self.on_reset_timers(now);
        self.on_handshake_copy_timers(now);
        let keys: Vec<ConnKey> = self
            .flows
            .iter()
            .filter(|(_, f)| f.deadline(&self.config) <= now)
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            let Some(flow) = self.flows.get(&key) else {
                continue;
            };
            if flow.last_activity + self.config.idle_timeout <= now {
                self.out.stats.flows_expired += 1;
                self.remove_flow(&key, CloseReason::Idle);
                continue;
            }
            if flow
                .finished_at
                .is_some_and(|t| t + self.config.closed_linger <= now)
            {
                self.remove_flow(&key, CloseReason::Finished);
                continue;
            }
            if let Some((flow, call)) = self.flow_call(&key, now) {
                flow.on_timeout(call);
            }
            self.note_finished(&key, now);
        }
    }

    /// Takes one IP packet written by the local TCP.
    pub fn handle_local(&mut self, now: Duration, ip_packet: &[u8]) {
        self.out.stats.local_packets += 1;
        if !self.config.coding {
            self.bypass_local(ip_packet);
            return;
        }
        let pkt = match TcpPacket::parse(ip_packet) {
            Ok(p) => p,
            Err(TcpError::NotTcp(_) | TcpError::Fragment { .. }) => {
                self.bypass_local(ip_packet);
                return;
            }
            Err(_) => {
                self.out.stats.local_malformed += 1;
                self.out.event(Event::Dropped {
                    flow: None,
                    reason: DropReason::MalformedLocal,
                });
                return;
            }
        };
        let key = pkt.flow();
        let Some(out_id) = flow_id(&key) else {
            self.bypass_local(ip_packet);
            return;
        };
        let (conn, _) = key.normalize();
        if self.answer_reset_conn(now, &pkt, conn) {
            return;
        }
        let flags = pkt.tcp.flags;
        if flags.contains(TcpFlags::RST) {
            self.bypass_local(ip_packet);
            if self.flows.contains_key(&conn) {
                self.remove_flow(&conn, CloseReason::Reset);
            }
            return;
        }
        if flags.contains(TcpFlags::SYN) {
            self.local_syn(now, &pkt, ip_packet, conn, out_id);
            return;
        }
        let data_bearing = !pkt.payload().is_empty() || flags.contains(TcpFlags::FIN);
        if !data_bearing {
            self.local_pure(now, &pkt, ip_packet, conn);
            return;
        }
        if !self.ensure_flow(conn, out_id, now) {
            self.bypass_local(ip_packet);
            return;
        }
        self.out.stats.local_coded += 1;
        if let Some((flow, call)) = self.flow_call(&conn, now) {
            flow.last_activity = now;
            flow.on_local_data(call, &pkt);
        }
        self.note_finished(&conn, now);
    }

    /// Takes one datagram from the peer gateway.
    pub fn handle_datagram(&mut self, now: Duration, datagram: &[u8]) {
        self.out.stats.datagrams_received += 1;
        if datagram.get(1) == Some(&u8::from(FrameType::Data)) {
            self.data_datagram(now, datagram);
            return;
        }
        let frame = match FrameRepr::parse(datagram) {
            Ok(f) => f,
            Err(_) => {
                self.out.stats.datagrams_malformed += 1;
                self.out.event(Event::Dropped {
                    flow: None,
                    reason: DropReason::MalformedDatagram,
                });
                return;
            }
        };
        match frame {
            FrameRepr::Data { header, payload } => self.peer_data(now, &header, payload),
            FrameRepr::Ack(ack) => self.peer_nc_ack(now, &ack),
            FrameRepr::Bypass(b) => {
                self.out.stats.bypass_received += 1;
                self.peer_bypass(now, b.packet());
            }
            FrameRepr::Keepalive(k) => self.peer_keepalive(k),
        }
    }

    /// A datagram of type DATA, its header parsed into the reused `rx_header`.
    fn data_datagram(&mut self, now: Duration, datagram: &[u8]) {
        let mut header = std::mem::take(&mut self.rx_header);
        let packet = DataPacket::new_unchecked(datagram);
        match DataRepr::parse_into(&packet, &mut header) {
            Ok(()) => self.peer_data(now, &header, &datagram[packet.header_len()..]),
            Err(_) => {
                self.out.stats.datagrams_malformed += 1;
                self.out.event(Event::Dropped {
                    flow: None,
                    reason: DropReason::MalformedDatagram,
                });
            }
        }
        self.rx_header = header;
    }

    /// A DATA frame from the peer: the receiver half of its flow (created on demand).
    fn peer_data(&mut self, now: Duration, header: &DataRepr, payload: &[u8]) {
        self.out.stats.data_received += 1;
        let out_id = header.flow.reversed();
        let (conn, _) = flow_key(&out_id).normalize();
        if !self.ensure_flow(conn, out_id, now) {
            self.out.stats.decoding_buffer_drops += 1;
            return;
        }
        if let Some((flow, call)) = self.flow_call(&conn, now) {
            flow.last_activity = now;
            flow.on_data(call, header, payload);
        }
        self.note_finished(&conn, now);
    }

    /// An NC-ACK from the peer: the sender half of its flow.
    fn peer_nc_ack(&mut self, now: Duration, ack: &AckRepr) {
        self.out.stats.acks_received += 1;
        self.note_early_departures();
        let (conn, _) = flow_key(&ack.flow).normalize();
        let handled = match self.flow_call(&conn, now) {
            Some((flow, call)) => flow.on_nc_ack(call, ack),
            None => false,
        };
        if handled {
            self.note_finished(&conn, now);
        } else {
            self.out.stats.acks_unknown_flow += 1;
        }
    }

    /// Moves the departures of paced combinations that left before their forecasts
    /// (`Output::take_early_departure`) to when they left: before any NC-ACK is read, since
    /// one can echo them, and after the timer that released them.
    fn note_early_departures(&mut self) {
        while let Some((flow, pid, at)) = self.out.take_early_departure() {
            let (conn, _) = flow_key(&flow).normalize();
            if let Some(sender) = self.flows.get_mut(&conn).and_then(|c| c.sender.as_mut()) {
                sender.departed(pid, at);
            }
        }
    }

    /// A KEEPALIVE from the peer: a probe is answered, a reply reported.
    fn peer_keepalive(&mut self, k: KeepaliveRepr) {
        if k.reply {
            self.out.stats.keepalive_replies_received += 1;
            self.out.event(Event::KeepaliveReply { nonce: k.nonce });
        } else if self.out.transmit_frame(&FrameRepr::Keepalive(k.to_reply())) {
            self.out.stats.keepalive_replies += 1;
        }
    }

    /// Local SYN or SYN-ACK: rewrite options, learn the scale and ISN, BYPASS.
    fn local_syn(
        &mut self,
        now: Duration,
        pkt: &TcpPacket<'_>,
        ip_packet: &[u8],
        conn: ConnKey,
        out_id: FlowId,
    ) {
        let mss = self.config.mss_clamp(out_id.ip_version()).clamp(0, 65_535) as u16;
        let mut copy = ip_packet.to_vec();
        let scale = match rewrite_syn(&mut copy, &SynPolicy::new(mss)) {
            Ok(r) => {
                if r.modified {
                    self.out.stats.syn_rewritten += 1;
                }
                r.window_scale
            }
            Err(_) => scan_options(pkt.options())
                .ok()
                .and_then(|o| o.window_scale),
        };
        let syn_ack = pkt.tcp.flags.contains(TcpFlags::ACK);
        if !syn_ack
            && let Some(f) = self.flows.get(&conn)
            && f.local_isn.is_some_and(|i| i != pkt.tcp.seq)
        {
            // A new connection on the same 4-tuple.
            self.remove_flow(&conn, CloseReason::Reset);
        }
        if self.ensure_flow(conn, out_id, now)
            && let Some((flow, call)) = self.flow_call(&conn, now)
        {
            flow.last_activity = now;
            flow.local_wscale = scale;
            flow.local_isn = Some(pkt.tcp.seq);
            if syn_ack {
                flow.on_local_ack(call, pkt);
            }
            self.note_finished(&conn, now);
        }
        self.bypass_local(&copy);
        if self.config.policies.protect_handshake.is_on() {
            self.handshake_copies.schedule(now, conn, copy);
        }
    }

    /// Local segment without payload, SYN, FIN or RST.
    fn local_pure(&mut self, now: Duration, pkt: &TcpPacket<'_>, ip_packet: &[u8], conn: ConnKey) {
        let Some(flow) = self.flows.get_mut(&conn) else {
            self.bypass_local(ip_packet);
            return;
        };
        flow.last_activity = now;
        if flow
            .sender
            .as_ref()
            .is_some_and(|s| s.is_probe(pkt.tcp.seq))
        {
            self.out.stats.pure_acks_forwarded += 1;
            self.bypass_local(ip_packet);
            return;
        }
        if pkt.tcp.flags.contains(TcpFlags::ACK)
            && let Some((flow, call)) = self.flow_call(&conn, now)
        {
            flow.on_local_ack(call, pkt);
        }
        let suppressed = match self.flows.get_mut(&conn) {
            // §IV-A: the receiver TCP's ACKs are not sent to the sender.
            Some(flow) if flow.receiver.started() => {
                flow.count_pure_ack_suppressed();
                true
            }
            _ => false,
        };
        self.note_finished(&conn, now);
        if suppressed {
            self.out.stats.pure_acks_suppressed += 1;
        } else {
            // No coded data from the peer yet: this ACK completes the handshake (or
            // acknowledges uncoded data); the peer TCP needs it.
            self.out.stats.pure_acks_forwarded += 1;
            self.bypass_local(ip_packet);
        }
    }

    /// An uncoded IP packet from the peer: learn from SYN/RST, deliver it.
    fn peer_bypass(&mut self, now: Duration, packet: &[u8]) {
        if let Ok(pkt) = TcpPacket::parse(packet)
            && let Some(in_id) = flow_id(&pkt.flow())
        {
            let out_id = in_id.reversed();
            let (conn, _) = pkt.flow().normalize();
            let flags = pkt.tcp.flags;
            if flags.contains(TcpFlags::ACK) {
                self.on_peer_handshake_ack(&conn, pkt.tcp.ack);
            }
            if flags.contains(TcpFlags::RST) {
                self.remote_reset_seen(&conn);
                if self.flows.contains_key(&conn) {
                    self.remove_flow(&conn, CloseReason::Reset);
                }
            } else if flags.contains(TcpFlags::SYN) && self.config.coding {
                if self.handshake_copy(&conn, pkt.tcp.seq, now) {
                    self.out.stats.handshake_duplicates += 1;
                    return;
                }
                let syn_ack = flags.contains(TcpFlags::ACK);
                if !syn_ack
                    && let Some(f) = self.flows.get(&conn)
                    && f.remote_isn.is_some_and(|i| i != pkt.tcp.seq)
                {
                    self.remove_flow(&conn, CloseReason::Reset);
                }
                if self.ensure_flow(conn, out_id, now) {
                    let scale = scan_options(pkt.options())
                        .ok()
                        .and_then(|o| o.window_scale);
                    let flow = self.flows.get_mut(&conn).expect("ensured");
                    flow.last_activity = now;
                    flow.remote_wscale = scale;
                    flow.remote_isn = Some(pkt.tcp.seq);
                    flow.remote_syn_at = Some(now);
                    flow.receiver.on_remote_syn(pkt.tcp.seq);
                    self.note_finished(&conn, now);
                }
            } else if let Some(flow) = self.flows.get_mut(&conn) {
                flow.last_activity = now;
                // A keepalive or zero-window probe re-sends an old byte (seq below the
                // sender's next one); the handshake ACK does not.
                let old_seq = flow
                    .receiver
                    .next_remote_seq()
                    .is_some_and(|n| seq_lt(pkt.tcp.seq, n));
                if pkt.payload().is_empty() && !flags.contains(TcpFlags::FIN) && old_seq {
                    flow.receiver.on_probe();
                }
            }
        }
        self.out.deliver_local_copy(packet, None);
    }

    /// Whether a SYN (or SYN-ACK) from the peer with `isn` is a copy of one delivered less
    /// than [`HANDSHAKE_DEDUPE`] ago (handshake protection).
    fn handshake_copy(&self, conn: &ConnKey, isn: u32, now: Duration) -> bool {
        self.config.policies.protect_handshake.is_on()
            && self.flows.get(conn).is_some_and(|f| {
                f.remote_isn == Some(isn)
                    && f.remote_syn_at
                        .is_some_and(|t| now.saturating_sub(t) < HANDSHAKE_DEDUPE)
            })
    }

    fn bypass_local(&mut self, ip_packet: &[u8]) {
        if self.out.bypass(ip_packet) {
            self.out.stats.local_bypassed += 1;
        } else {
            self.out.stats.local_malformed += 1;
        }
    }

    /// Makes sure a flow exists; `false` if the table is full.
    fn ensure_flow(&mut self, conn: ConnKey, out_id: FlowId, now: Duration) -> bool {
        if self.flows.contains_key(&conn) {
            return true;
        }
        if self.flows.len() >= self.config.limits.max_flows {
            self.out.stats.flow_table_full += 1;
            return false;
        }
        self.flows.insert(conn, Connection::new(out_id, now));
        self.out.stats.flows_opened += 1;
        self.out.stats.flows_active = self.flows.len();
        self.out.event(Event::FlowOpened { flow: out_id });
        true
    }

    fn remove_flow(&mut self, conn: &ConnKey, reason: CloseReason) {
        self.handshake_copies.forget(conn);
        if let Some(flow) = self.flows.remove(conn) {
            if let Some(sender) = &flow.sender {
                let (flight, estimate) = sender.reported();
                self.path.flight_share.forget(flight, estimate);
            }
            self.out.stats.flows_closed += 1;
            self.out.stats.flows_active = self.flows.len();
            self.out.event(Event::FlowClosed {
                flow: flow.out_id,
                reason,
            });
        }
    }

    /// Notes when a flow finished (after every packet or timer that touched it).
    fn note_finished(&mut self, conn: &ConnKey, now: Duration) {
        if let Some(flow) = self.flows.get_mut(conn)
            && flow.finished_at.is_none()
            && flow.both_finished()
        {
            flow.finished_at = Some(now);
        }
    }
}
