//! The gateway's statistics: the snapshot (stats file, `tcpnc show`) and the monitor's
//! samples, from one reading of the engines' counters.

use std::time::{SystemTime, UNIX_EPOCH};

use tcpnc_proto::seam::Counters;

use super::Gateway;
use crate::io::{Tun, Udp};
use crate::stats::{GatewayCounters, PeerSnapshot, STATS_VERSION, Snapshot, counters_json};

impl<T: Tun, U: Udp> Gateway<T, U> {
    /// The current statistics.
    pub fn snapshot(&self, stopped: bool) -> Snapshot {
        self.snapshot_of(stopped, &self.engine_counters())
    }

    fn snapshot_of(&self, stopped: bool, engines: &[Counters]) -> Snapshot {
        let gateway = self.gateway_counters();
        Snapshot {
            version: STATS_VERSION,
            interface: self.opts.interface.clone(),
            listen: self
                .udp
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default(),
            mode: self.opts.mode.name().into(),
            pid: std::process::id(),
            uptime_secs: self.now().as_secs_f64(),
            unix_time: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
            stopped,
            gateway,
            peers: self
                .peers
                .iter()
                .zip(engines)
                .map(|(s, engine)| PeerSnapshot {
                    name: s.peer.name.clone(),
                    endpoint: s.endpoint.map(|e| e.to_string()).unwrap_or_default(),
                    allowed_ips: s.peer.allowed_ips.iter().map(|c| c.to_string()).collect(),
                    counters: s.counters,
                    engine: counters_json(engine),
                })
                .collect(),
            window: self.monitor.window(),
            buffers: self.monitor.buffers(),
            tun_offload: self.tun.offload(),
            udp_gso: self.udp.gso(),
            udp_gro: self.udp.gro(),
            workers: self.engines.shards(),
            worker_items: self.engines.fed(),
            tun_queues: self.tun.queues(),
            tun_queue_packets: if self.tun_queue_packets.len() > 1 {
                self.tun_queue_packets.clone()
            } else {
                Vec::new()
            },
            tunnel: tcpnc_io::counters_json::pairs_json(&self.envelope.counters()).into(),
        }
    }

    /// Every peer's engine counters (over every shard).
    fn engine_counters(&self) -> Vec<Counters> {
        (0..self.peers.len())
            .map(|i| self.engines.counters(i))
            .collect()
    }

    /// The gateway's counters with the readers' and the workers' added.
    fn gateway_counters(&self) -> GatewayCounters {
        let mut gateway = self.counters;
        self.readers.add_to(&mut gateway);
        gateway.queue_drops += self.engines.drops();
        gateway
    }

    /// A stats tick: the snapshot file and the monitor's sample (metrics) from one reading of
    /// the engines' counters.
    pub(super) fn write_stats(&mut self, stopped: bool) {
        let engines = self.engine_counters();
        let peers: Vec<_> = self
            .peers
            .iter()
            .map(|s| &s.counters)
            .zip(&engines)
            .collect();
        let gateway = self.gateway_counters();
        self.monitor.sample(self.now(), &gateway, &peers);
        if let Some(path) = &self.opts.stats_file
            && let Err(e) = crate::stats::write_snapshot(path, &self.snapshot_of(stopped, &engines))
        {
            tracing::warn!("{e}");
        }
    }
}
