//! The per-peer engines the gateway loop drives, as [`Seam`] elements: the TCP/NC engine
//! ([`tcpnc_proto::Engine`]) or, for `coding.mode = "off"`, the tagged [`PassThrough`]; and the
//! mapping of the gateway config onto [`EngineConfig`].

use tcpnc_proto::seam::{PassThrough, Seam};
use tcpnc_proto::settings::CodingMode;
use tcpnc_proto::{Engine, EngineConfig};

use crate::config::Config;
use crate::error::GatewayError;

/// One peer's engine, driven by the gateway loop.
pub type PeerEngine = Box<dyn Seam + Send>;

/// The engine configuration for `config` (coding on/off, the policy set, tunnel MTU, buffers).
pub fn engine_config(config: &Config) -> EngineConfig {
    let c = &config.coding;
    let mut e = EngineConfig::new(&c.policies, config.tunnel_payload());
    e.coding = c.mode == CodingMode::Nc;
    e.limits.coding_buffer_packets = c.buffer_packets;
    e.limits.coding_buffer_bytes = c.buffer_bytes;
    e.limits.decoding_buffer_packets = c.decoding_buffer_packets;
    e.limits.decoding_buffer_bytes = c.decoding_buffer_bytes;
    e.limits.transmit_queue = config.interface.queue_packets;
    e.limits.local_queue = config.interface.queue_packets;
    e
}

/// Builds the TCP/NC engine for peer `index` of worker `shard` (seed = `coding.seed + index
/// + shard * 2^32`: shard 0 keeps the seed of an unsharded gateway).
pub fn build(config: &Config, index: usize, shard: usize) -> Result<PeerEngine, GatewayError> {
    let seed = config
        .coding
        .seed
        .wrapping_add(index as u64)
        .wrapping_add((shard as u64) << 32);
    let engine = Engine::new(engine_config(config), seed).map_err(|e| GatewayError::Engine {
        peer: config.peers[index].name.clone(),
        reason: e.to_string(),
    })?;
    Ok(Box::new(engine))
}

/// The uncoded engine: each IP packet framed as `[PASS_THROUGH_TAG] ++ packet`, checked and
/// counted per flow with the engine's IP header reader; queues of `queue_limit`.
pub fn pass_through(queue_limit: usize) -> PassThrough {
    PassThrough::tagged(queue_limit)
}

/// Builds the engine for peer `index` of `config` on worker `shard`.
///
/// `coding.mode = "nc"` needs the TCP/NC engine (`tcpnc-proto`); `"off"` carries packets
/// uncoded through the same tunnel.
pub fn engine_for(config: &Config, index: usize, shard: usize) -> Result<PeerEngine, GatewayError> {
    build(config, index, shard).or_else(|e| match config.coding.mode {
        CodingMode::Off => Ok(Box::new(pass_through(config.interface.queue_packets)) as PeerEngine),
        CodingMode::Nc => Err(e),
    })
}

/// Every worker's engines (`interface.workers` shards, each with one engine per peer, in
/// config order), for [`crate::Gateway::with_shards`]. With `coding.mode = "off"` one shard
/// whatever `workers` says: the uncoded pass-through has no per-connection work worth a
/// hand-over between threads.
pub fn shards_for(config: &Config) -> Result<Vec<Vec<PeerEngine>>, GatewayError> {
    let shards = match config.coding.mode {
        CodingMode::Nc => config.interface.workers,
        CodingMode::Off => 1,
    };
    (0..shards)
        .map(|k| {
            (0..config.peers.len())
                .map(|i| engine_for(config, i, k))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tcpnc_proto::seam::PASS_THROUGH_TAG;

    use super::*;
    use crate::stats::counters_json;
    use tcpnc_proto::testing::ipv4_udp;

    #[test]
    fn frames_and_unframes() {
        let mut a = pass_through(8);
        let mut b = pass_through(8);
        let p = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1000, 53, b"hello");
        a.handle_local(Duration::ZERO, &p);
        let d = a.poll_remote().unwrap();
        assert_eq!(d[0], PASS_THROUGH_TAG);
        b.handle_remote(Duration::ZERO, &d);
        assert_eq!(b.poll_local().unwrap(), p);
        assert_eq!(a.stats().to_peer.packets, 1);
        assert_eq!(b.stats().from_peer.bytes, p.len() as u64);
        let json = counters_json(&a.counters());
        assert_eq!(json["flows"].as_array().unwrap().len(), 1);
        assert_eq!(json["totals"]["to_peer"]["packets"], 1);
        assert_eq!(json["flows"][0]["counters"]["to_peer"]["bytes"], p.len());
    }

    #[test]
    fn rejects_garbage_and_bounds_queues() {
        let mut e = pass_through(1);
        e.handle_remote(Duration::ZERO, &[]);
        e.handle_remote(Duration::ZERO, &[0x00, 0x45]);
        e.handle_remote(Duration::ZERO, &[PASS_THROUGH_TAG, 0x45, 0]);
        let p = ipv4_udp([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"x");
        let mut truncated = vec![PASS_THROUGH_TAG];
        truncated.extend_from_slice(&p[..p.len() - 1]);
        e.handle_remote(Duration::ZERO, &truncated);
        assert_eq!(e.stats().malformed, 4);
        e.handle_local(Duration::ZERO, b"\x00not ip");
        assert_eq!(e.stats().not_ip, 1);
        e.handle_local(Duration::ZERO, &p);
        e.handle_local(Duration::ZERO, &p);
        assert_eq!(e.stats().queue_drops, 1);
        assert!(e.poll_remote().is_some());
        assert!(e.poll_remote().is_none());
    }
}
