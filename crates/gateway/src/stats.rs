//! The stats snapshot the gateway writes (JSON, atomically replaced every second and on
//! exit) and its human-readable rendering for `tcpnc stats`.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
pub use tcpnc_io::counters_json::counters_json;

use crate::error::GatewayError;

/// Snapshot format version.
pub const STATS_VERSION: u32 = 1;

/// Gateway-level counters (whole interface).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct GatewayCounters {
    /// IP packets read from the TUN.
    pub tun_rx_packets: u64,
    /// Bytes read from the TUN.
    pub tun_rx_bytes: u64,
    /// IP packets written to the TUN.
    pub tun_tx_packets: u64,
    /// Bytes written to the TUN.
    pub tun_tx_bytes: u64,
    /// Datagrams received on the UDP socket.
    pub udp_rx_datagrams: u64,
    /// Bytes received on the UDP socket.
    pub udp_rx_bytes: u64,
    /// Datagrams sent.
    pub udp_tx_datagrams: u64,
    /// Bytes sent.
    pub udp_tx_bytes: u64,
    /// Local packets whose destination matched no peer's allowed_ips (or were not IP).
    pub no_peer_drops: u64,
    /// Datagrams from an address that is no peer's endpoint.
    pub unknown_source_drops: u64,
    /// Inputs dropped because the owner's queue was full.
    pub queue_drops: u64,
    /// TUN writes that failed.
    pub tun_write_errors: u64,
    /// UDP sends that failed.
    pub udp_send_errors: u64,
    /// KEEPALIVE frames sent: the gateway's probes and its engines' replies.
    pub keepalives_tx: u64,
    /// KEEPALIVE frames received from peers (probes and replies).
    pub keepalives_rx: u64,
    /// System calls that read the TUN (one per packet, or one per batch); the readiness
    /// `poll(2)` before a read is not counted. Packets per call = `tun_rx_packets` / this.
    #[serde(default)]
    pub tun_rx_calls: u64,
    /// System calls that wrote the TUN.
    #[serde(default)]
    pub tun_tx_calls: u64,
    /// System calls that received on the UDP socket (`recvfrom` or `recvmmsg`).
    #[serde(default)]
    pub udp_rx_calls: u64,
    /// Messages those calls took from the kernel: one per datagram, or one per coalesced run
    /// of datagrams with UDP GRO (`interface.udp_gro`). Datagrams per message =
    /// `udp_rx_datagrams` / this (0 in snapshots from before this counter).
    #[serde(default)]
    pub udp_rx_messages: u64,
    /// System calls that sent on the UDP socket (`sendto` or `sendmmsg`).
    #[serde(default)]
    pub udp_tx_calls: u64,
    /// Messages those calls handed the kernel: one per datagram, or one per train of
    /// datagrams with UDP GSO (`interface.udp_gso`). Datagrams per message =
    /// `udp_tx_datagrams` / this (0 in snapshots from before this counter).
    #[serde(default)]
    pub udp_tx_messages: u64,
    /// TUN reads dropped because they could not be cut into IP packets (an offloading TUN's
    /// bad virtio header, more segments than slots).
    #[serde(default)]
    pub tun_read_errors: u64,
}

/// Per-peer gateway counters.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct PeerCounters {
    /// Local packets routed to this peer.
    pub local_packets: u64,
    /// Local bytes routed to this peer.
    pub local_bytes: u64,
    /// Datagrams received from the peer (keepalives excluded).
    pub datagrams_rx: u64,
    /// Datagrams sent to the peer (keepalives excluded).
    pub datagrams_tx: u64,
    /// Packets the engine handed to the local TUN.
    pub delivered_packets: u64,
}

/// One peer in the snapshot.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PeerSnapshot {
    /// Peer name.
    pub name: String,
    /// UDP endpoint.
    pub endpoint: String,
    /// Allowed prefixes.
    pub allowed_ips: Vec<String>,
    /// Gateway counters for this peer.
    pub counters: PeerCounters,
    /// The engine's own statistics (per peer and per flow), as the engine reports them.
    pub engine: serde_json::Value,
}

/// The buffers per flow the engines run with (`[coding]`; docs/gateway.md, "Buffers and the
/// window"): the coding buffer bounds a flow's packets not yet seen by the peer, the decoding
/// buffer the window advertised to the sending TCP.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Buffers {
    /// `coding.buffer_packets`.
    pub buffer_packets: usize,
    /// `coding.buffer_bytes`.
    pub buffer_bytes: usize,
    /// `coding.decoding_buffer_packets`.
    pub decoding_buffer_packets: usize,
    /// `coding.decoding_buffer_bytes`.
    pub decoding_buffer_bytes: usize,
}

/// The whole stats file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Snapshot {
    /// Format version ([`STATS_VERSION`]).
    pub version: u32,
    /// TUN name.
    pub interface: String,
    /// UDP listen address.
    pub listen: String,
    /// `"nc"` or `"off"`.
    pub mode: String,
    /// Process id of the gateway.
    pub pid: u32,
    /// Seconds since the gateway started.
    pub uptime_secs: f64,
    /// Wall-clock time of the snapshot (seconds since the Unix epoch).
    pub unix_time: f64,
    /// `true` in the final snapshot written on exit.
    pub stopped: bool,
    /// Interface-wide counters.
    pub gateway: GatewayCounters,
    /// Peers, in config order.
    pub peers: Vec<PeerSnapshot>,
    /// The coding window W the engines use (absent when coding is off; added after version 1
    /// without a version change: readers of version 1 ignore it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u16>,
    /// The buffers per flow (absent when coding is off; added without a version change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffers: Option<Buffers>,
    /// Whether the TUN runs with `IFF_VNET_HDR` offloads (`interface.tun_offload` and the
    /// kernel accepted them; added without a version change).
    #[serde(default)]
    pub tun_offload: bool,
    /// Whether batched UDP sends use GSO (`interface.udp_gso`, the kernel has `UDP_SEGMENT`
    /// and no send was refused; added without a version change).
    #[serde(default)]
    pub udp_gso: bool,
    /// Whether the UDP socket receives with GRO (`interface.udp_gro` and the kernel has
    /// `UDP_GRO`; added without a version change).
    #[serde(default)]
    pub udp_gro: bool,
    /// Engine workers the connections are sharded over (`interface.workers`; 1 = on the
    /// owner thread; 0 in snapshots from before this field).
    #[serde(default)]
    pub workers: usize,
    /// Packets and frames handed to each engine worker so far (empty with one worker): how
    /// evenly the connections' hash spread the load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worker_items: Vec<u64>,
    /// Receive queues of the TUN (`interface.tun_queues`; 0 in snapshots from before this
    /// field).
    #[serde(default)]
    pub tun_queues: usize,
    /// IP packets read on each TUN queue so far (empty with one queue): how evenly the
    /// kernel's steering spread the connections.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tun_queue_packets: Vec<u64>,
    /// The tunnel envelope's counters (`crates/tunnel`): drops by reason (`drops.*`) and,
    /// with keys, handshakes, sessions, sealed/opened datagrams.
    #[serde(default)]
    pub tunnel: serde_json::Value,
}

/// Writes `snap` to `path` atomically (temporary file + rename), creating the directory.
pub fn write_snapshot(path: &Path, snap: &Snapshot) -> Result<(), GatewayError> {
    let err = |source| GatewayError::Stats {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let text = serde_json::to_string_pretty(snap).map_err(|e| err(std::io::Error::other(e)))?;
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// Reads a snapshot written by [`write_snapshot`].
pub fn read_snapshot(path: &Path) -> Result<Snapshot, GatewayError> {
    let err = |source| GatewayError::Stats {
        path: path.to_path_buf(),
        source,
    };
    let text = std::fs::read_to_string(path).map_err(err)?;
    serde_json::from_str(&text).map_err(|e| err(std::io::Error::other(e)))
}

/// `  {what} {n}: {counted} a / b / …` when there are more than one of them (workers, TUN
/// queues): how evenly the work spread.
fn spread_line(o: &mut String, what: &str, n: usize, counted: &str, counts: &[u64]) {
    if n > 1 {
        let counts: Vec<String> = counts.iter().map(u64::to_string).collect();
        let _ = writeln!(o, "  {what} {n}: {counted} {}", counts.join(" / "));
    }
}

/// Renders a snapshot for a terminal.
pub fn render(s: &Snapshot) -> String {
    let mut o = String::new();
    let g = &s.gateway;
    let state = if s.stopped { "stopped" } else { "running" };
    let _ = writeln!(
        o,
        "interface {} ({state}, pid {}), listen {}, mode {}, up {:.1} s",
        s.interface, s.pid, s.listen, s.mode, s.uptime_secs
    );
    let _ = writeln!(
        o,
        "  tun  rx {} pkts / {} B   tx {} pkts / {} B",
        g.tun_rx_packets, g.tun_rx_bytes, g.tun_tx_packets, g.tun_tx_bytes
    );
    spread_line(
        &mut o,
        "engine workers",
        s.workers,
        "items",
        &s.worker_items,
    );
    spread_line(
        &mut o,
        "tun queues",
        s.tun_queues,
        "packets read",
        &s.tun_queue_packets,
    );
    let _ = writeln!(
        o,
        "  udp  rx {} dgrams / {} B   tx {} dgrams / {} B   keepalives rx {} tx {}",
        g.udp_rx_datagrams,
        g.udp_rx_bytes,
        g.udp_tx_datagrams,
        g.udp_tx_bytes,
        g.keepalives_rx,
        g.keepalives_tx
    );
    let _ = writeln!(
        o,
        "  drops: no peer {}  unknown source {}  queue full {}  tun write errors {}  udp send errors {}",
        g.no_peer_drops,
        g.unknown_source_drops,
        g.queue_drops,
        g.tun_write_errors,
        g.udp_send_errors
    );
    for p in &s.peers {
        let c = &p.counters;
        let _ = writeln!(
            o,
            "peer {} at {} allowed {}",
            p.name,
            p.endpoint,
            p.allowed_ips.join(", ")
        );
        let _ = writeln!(
            o,
            "  local {} pkts / {} B -> {} dgrams tx;  {} dgrams rx -> {} pkts delivered",
            c.local_packets, c.local_bytes, c.datagrams_tx, c.datagrams_rx, c.delivered_packets
        );
        let engine = serde_json::to_string_pretty(&p.engine).unwrap_or_default();
        for line in engine.lines() {
            let _ = writeln!(o, "  {line}");
        }
    }
    o
}

impl Snapshot {
    /// The engines' total `key` (`data_sent`, `coding_buffer_drops`, …) over every peer; 0
    /// when absent.
    pub fn engine_total(&self, key: &str) -> u64 {
        self.peers
            .iter()
            .map(|p| p.engine["totals"][key].as_u64().unwrap_or(0))
            .sum()
    }
}

/// Drops a gateway caused itself (not the path), from its snapshot: its input and worker
/// queues, TUN and UDP errors, and its engines' transmit and local queues and coding buffers.
/// `tcpnc lab speed` adds both gateways'; `tcpnc bench gateway` reports its one gateway's.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct GatewayDrops {
    /// Inputs dropped because the owner's (or a worker's) queue was full (`queue_drops`).
    pub queue: u64,
    /// TUN writes that failed.
    pub tun_write_errors: u64,
    /// TUN reads that could not be cut into IP packets.
    pub tun_read_errors: u64,
    /// UDP sends that failed.
    pub udp_send_errors: u64,
    /// The engines' queues: `transmit_queue_drops` + `local_queue_drops`.
    pub engine_queue: u64,
    /// The engines' coding buffers (`coding_buffer_drops`).
    pub coding_buffer: u64,
}

impl GatewayDrops {
    /// The drops of the gateway whose snapshot `s` is.
    pub fn of(s: &Snapshot) -> GatewayDrops {
        let total = |key| s.engine_total(key);
        GatewayDrops {
            queue: s.gateway.queue_drops,
            tun_write_errors: s.gateway.tun_write_errors,
            tun_read_errors: s.gateway.tun_read_errors,
            udp_send_errors: s.gateway.udp_send_errors,
            engine_queue: total("transmit_queue_drops") + total("local_queue_drops"),
            coding_buffer: total("coding_buffer_drops"),
        }
    }

    /// Every drop.
    pub fn total(&self) -> u64 {
        self.queue
            + self.tun_write_errors
            + self.tun_read_errors
            + self.udp_send_errors
            + self.engine_queue
            + self.coding_buffer
    }

    /// Whether nothing was dropped.
    pub fn none(&self) -> bool {
        self.total() == 0
    }
}

impl std::ops::Add for GatewayDrops {
    type Output = GatewayDrops;

    fn add(self, o: GatewayDrops) -> GatewayDrops {
        GatewayDrops {
            queue: self.queue + o.queue,
            tun_write_errors: self.tun_write_errors + o.tun_write_errors,
            tun_read_errors: self.tun_read_errors + o.tun_read_errors,
            udp_send_errors: self.udp_send_errors + o.udp_send_errors,
            engine_queue: self.engine_queue + o.engine_queue,
            coding_buffer: self.coding_buffer + o.coding_buffer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_render() {
        let dir = std::env::temp_dir().join(format!("tcpnc-stats-test-{}", std::process::id()));
        let path = dir.join("sub/x.json");
        let snap = Snapshot {
            version: STATS_VERSION,
            interface: "tnc0".into(),
            listen: "127.0.0.1:1".into(),
            mode: "off".into(),
            pid: 1,
            uptime_secs: 1.5,
            unix_time: 0.0,
            stopped: true,
            gateway: GatewayCounters {
                no_peer_drops: 3,
                ..Default::default()
            },
            peers: vec![PeerSnapshot {
                name: "b".into(),
                endpoint: "127.0.0.1:2".into(),
                allowed_ips: vec!["10.0.0.0/24".into()],
                counters: PeerCounters::default(),
                engine: serde_json::json!({"x": 1}),
            }],
            window: Some(12),
            buffers: Some(Buffers {
                buffer_packets: 4096,
                buffer_bytes: 4 << 20,
                decoding_buffer_packets: 4096,
                decoding_buffer_bytes: 4 << 20,
            }),
            tun_offload: false,
            udp_gso: true,
            udp_gro: true,
            workers: 1,
            tun_queues: 1,
            tun_queue_packets: Vec::new(),
            worker_items: Vec::new(),
            tunnel: serde_json::json!({"drops": {"bad_tag": 1}}),
        };
        write_snapshot(&path, &snap).unwrap();
        let back = read_snapshot(&path).unwrap();
        assert_eq!(back, snap);
        let text = render(&back);
        assert!(text.contains("no peer 3"), "{text}");
        assert!(text.contains("peer b at 127.0.0.1:2"), "{text}");
        assert!(!text.contains("engine workers"), "{text}");
        assert!(!text.contains("tun queues"), "{text}");
        let sharded = Snapshot {
            workers: 2,
            worker_items: vec![10, 7],
            tun_queues: 2,
            tun_queue_packets: vec![5, 9],
            ..back
        };
        let text = render(&sharded);
        assert!(text.contains("engine workers 2: items 10 / 7"), "{text}");
        assert!(text.contains("tun queues 2: packets read 5 / 9"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(read_snapshot(&path).is_err());
    }
}
