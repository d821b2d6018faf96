//! Adapter from the TCP/NC engine ([`tcpnc_proto::Engine`]) to [`PeerEngine`], and the
//! mapping of the gateway config onto [`EngineConfig`].

use std::time::Duration;

use tcpnc_proto::{
    CodingScheme, CoefficientTransport, Engine, EngineConfig, EngineStats, FlowStats,
    RedundancyPolicy,
};

use crate::config::{Coefficients, Config, Mode, Scheme};
use crate::engine::PeerEngine;
use crate::error::GatewayError;

/// The engine configuration for `config` (coding on/off, W, R, scheme, tunnel MTU, buffers).
pub fn engine_config(config: &Config) -> EngineConfig {
    let c = &config.coding;
    let mut e = EngineConfig {
        coding: c.mode == Mode::Nc,
        coding_window: usize::from(c.window),
        redundancy: RedundancyPolicy::Fixed(c.redundancy),
        scheme: match c.scheme {
            Scheme::Dense => CodingScheme::Dense,
            Scheme::Systematic => CodingScheme::Systematic,
        },
        coefficients: match c.coefficients {
            Coefficients::Explicit => CoefficientTransport::Explicit,
            Coefficients::Seeded => CoefficientTransport::Seeded,
        },
        tunnel_mtu: config.tunnel_payload(),
        ..EngineConfig::default()
    };
    e.limits.coding_buffer_packets = c.buffer_packets;
    e.limits.coding_buffer_bytes = c.buffer_bytes;
    e.limits.transmit_queue = config.interface.queue_packets;
    e.limits.local_queue = config.interface.queue_packets;
    e
}

/// Builds the TCP/NC engine for peer `index` (seed = `coding.seed + index`).
pub fn build(config: &Config, index: usize) -> Result<Box<dyn PeerEngine>, GatewayError> {
    let seed = config.coding.seed.wrapping_add(index as u64);
    let engine = Engine::new(engine_config(config), seed).map_err(|e| GatewayError::Engine {
        peer: config.peers[index].name.clone(),
        reason: e.to_string(),
    })?;
    Ok(Box::new(engine))
}

macro_rules! json_fields {
    ($s:expr; $($f:ident),* $(,)?) => {{
        let mut m = serde_json::Map::new();
        $( m.insert(stringify!($f).to_string(), serde_json::json!($s.$f)); )*
        m
    }};
}

fn flow_json(f: &FlowStats) -> serde_json::Map<String, serde_json::Value> {
    json_fields!(f; segments_from_local, packets_buffered, coding_buffer_drops, data_sent,
        redundant_sent, acks_received, tcp_acks_synthesized, dup_acks_synthesized,
        coding_buffer_len, loss_rate_estimate_ppm, data_received, innovative, non_innovative,
        acks_sent, segments_delivered, bytes_delivered, redeliveries, pure_acks_suppressed)
}

/// [`EngineStats`] as JSON: totals plus one entry per live flow.
pub fn stats_json(s: &EngineStats) -> serde_json::Value {
    let totals = json_fields!(s; local_packets, local_malformed, local_bypassed, local_coded,
        pure_acks_suppressed, pure_acks_forwarded, syn_rewritten, datagrams_received,
        datagrams_malformed, data_received, decode_errors, acks_received, acks_unknown_flow,
        bypass_received, keepalive_replies, keepalive_replies_received, datagrams_sent,
        data_sent, acks_sent, bypass_sent, oversize_datagrams, local_sent,
        tcp_acks_synthesized, dup_acks_synthesized, segments_delivered, redeliveries,
        redeliveries_abandoned, rebuild_errors, coding_buffer_drops, decoding_buffer_drops,
        transmit_queue_drops, local_queue_drops, event_queue_drops, flow_table_full,
        receiver_resets, flows_opened, flows_closed, flows_expired, flows_active);
    let flows: Vec<serde_json::Value> = s
        .flows
        .iter()
        .map(|(id, f)| serde_json::json!({ "flow": format!("{id:?}"), "counters": flow_json(f) }))
        .collect();
    serde_json::json!({ "engine": "tcpnc-proto", "totals": totals, "flows": flows })
}

impl PeerEngine for Engine {
    fn handle_local(&mut self, now: Duration, ip_packet: &[u8]) {
        Engine::handle_local(self, now, ip_packet)
    }
    fn handle_datagram(&mut self, now: Duration, datagram: &[u8]) {
        Engine::handle_datagram(self, now, datagram)
    }
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
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
    fn stats_json(&self) -> serde_json::Value {
        stats_json(Engine::stats(self))
    }
    fn poll_event(&mut self) -> Option<String> {
        Engine::poll_event(self).map(|e| format!("{e:?}"))
    }
}
