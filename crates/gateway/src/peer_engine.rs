//! Adapter from the TCP/NC engine ([`tcpnc_proto::Engine`]) to [`PeerEngine`], and the
//! mapping of the gateway config onto [`EngineConfig`].

use std::time::Duration;

use tcpnc_proto::{
    CodingScheme, CoefficientTransport, Engine, EngineConfig, EngineStats, RedundancyPolicy,
    RepairPolicy,
};

use crate::config::{Coefficients, Config, Mode, Redundancy, Repair, Scheme};
use crate::engine::PeerEngine;
use crate::error::GatewayError;

/// The engine configuration for `config` (coding on/off, W, R, scheme, tunnel MTU, buffers).
pub fn engine_config(config: &Config) -> EngineConfig {
    let c = &config.coding;
    let mut e = EngineConfig {
        coding: c.mode == Mode::Nc,
        coding_window: usize::from(c.window),
        redundancy: match c.redundancy {
            Redundancy::Auto => RedundancyPolicy::adaptive(),
            Redundancy::Fixed(r) => RedundancyPolicy::Fixed(r),
        },
        scheme: match c.scheme {
            Scheme::Dense => CodingScheme::Dense,
            Scheme::Systematic => CodingScheme::Systematic,
        },
        coefficients: match c.coefficients {
            Coefficients::Explicit => CoefficientTransport::Explicit,
            Coefficients::Seeded => CoefficientTransport::Seeded,
        },
        repair: match c.repair {
            Repair::Deficit => RepairPolicy::Deficit,
            Repair::Off => RepairPolicy::Off,
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

fn counters_json(counters: Vec<(&'static str, u64)>) -> serde_json::Map<String, serde_json::Value> {
    counters
        .into_iter()
        .map(|(name, value)| (name.to_string(), value.into()))
        .collect()
}

/// [`EngineStats`] as JSON: totals plus one entry per live flow.
pub fn stats_json(s: &EngineStats) -> serde_json::Value {
    let totals = counters_json(s.counters());
    let flows: Vec<serde_json::Value> = s
        .flows
        .iter()
        .map(|(id, f)| serde_json::json!({ "flow": format!("{id:?}"), "counters": counters_json(f.counters()) }))
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
