//! Prometheus metrics of a gateway: a [`Recorder`] that turns each stats [`Sample`] into
//! metrics of the `metrics` crate, rendered in the Prometheus text format (0.0.4) by
//! `metrics-exporter-prometheus` (no hand-written formatter) and served on `/metrics` by
//! [`crate::metrics_http`].
//!
//! Labels are bounded: `interface` (global), `peer` (config), and fixed words (`direction`,
//! `type`, `reason`); flows appear only in aggregate (per-peer sums, histograms at close).
//! Every name is in [`METRICS`]; `docs/deploy.md` lists them and `contrib/grafana/` uses them.

use std::collections::HashMap;

use metrics::{Label, Unit, counter, describe_counter, describe_gauge, describe_histogram};
use metrics::{gauge, histogram, with_local_recorder};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::monitor::{FlowSummary, PeerSample, Recorder, Sample};

/// Kind of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Monotonic counter (`_total`).
    Counter,
    /// Current value.
    Gauge,
    /// Distribution with buckets.
    Histogram,
}

/// Every metric: name, kind, help.
pub const METRICS: &[(&str, Kind, &str)] = &[
    (
        "tcpnc_uptime_seconds",
        Kind::Gauge,
        "Seconds since the gateway started.",
    ),
    (
        "tcpnc_tun_packets_total",
        Kind::Counter,
        "IP packets read from (rx) or written to (tx) the TUN device.",
    ),
    (
        "tcpnc_tun_bytes_total",
        Kind::Counter,
        "Bytes read from (rx) or written to (tx) the TUN device.",
    ),
    (
        "tcpnc_udp_datagrams_total",
        Kind::Counter,
        "Tunnel datagrams received (rx) or sent (tx) on the UDP socket, keepalives excluded on tx.",
    ),
    (
        "tcpnc_udp_bytes_total",
        Kind::Counter,
        "Tunnel bytes received (rx) or sent (tx) on the UDP socket.",
    ),
    (
        "tcpnc_keepalives_total",
        Kind::Counter,
        "KEEPALIVE frames received (rx) or sent (tx).",
    ),
    (
        "tcpnc_gateway_drops_total",
        Kind::Counter,
        "Packets dropped by the gateway, by reason.",
    ),
    (
        "tcpnc_peer_up",
        Kind::Gauge,
        "1 while datagrams arrive from the peer, 0 before the first or after 3 silent keepalive periods.",
    ),
    (
        "tcpnc_peer_keepalive_rtt_seconds",
        Kind::Gauge,
        "Round-trip time of the latest answered KEEPALIVE probe.",
    ),
    (
        "tcpnc_peer_datagrams_total",
        Kind::Counter,
        "Tunnel datagrams exchanged with the peer (keepalives excluded).",
    ),
    (
        "tcpnc_peer_local_packets_total",
        Kind::Counter,
        "Local IP packets routed to the peer.",
    ),
    (
        "tcpnc_peer_local_bytes_total",
        Kind::Counter,
        "Local bytes routed to the peer.",
    ),
    (
        "tcpnc_peer_delivered_packets_total",
        Kind::Counter,
        "IP packets from the peer written to the TUN device.",
    ),
    (
        "tcpnc_peer_delivered_bytes_total",
        Kind::Counter,
        "TCP payload bytes decoded and delivered to local TCP (goodput).",
    ),
    (
        "tcpnc_peer_frames_total",
        Kind::Counter,
        "Tunnel frames by type (data, ack, bypass) and direction.",
    ),
    (
        "tcpnc_peer_drops_total",
        Kind::Counter,
        "Packets dropped by the peer's engine, by reason.",
    ),
    (
        "tcpnc_peer_redundant_sent_total",
        Kind::Counter,
        "DATA frames sent beyond the first for their packet (redundancy and repairs).",
    ),
    (
        "tcpnc_peer_repairs_total",
        Kind::Counter,
        "Deficit repair combinations sent.",
    ),
    (
        "tcpnc_peer_innovative_total",
        Kind::Counter,
        "DATA frames received that were innovative.",
    ),
    (
        "tcpnc_peer_non_innovative_total",
        Kind::Counter,
        "DATA frames received that were not innovative.",
    ),
    (
        "tcpnc_peer_retransmissions_absorbed_total",
        Kind::Counter,
        "Local TCP retransmissions absorbed because repairs cover them.",
    ),
    (
        "tcpnc_peer_congestion_signals_total",
        Kind::Counter,
        "Congestion signals given to the local TCP.",
    ),
    (
        "tcpnc_peer_losses_visible_total",
        Kind::Counter,
        "Duplicate TCP ACKs given to the local sender: losses the code could not mask.",
    ),
    (
        "tcpnc_peer_flows_opened_total",
        Kind::Counter,
        "TCP flows opened through the peer.",
    ),
    (
        "tcpnc_peer_flows_active",
        Kind::Gauge,
        "TCP flows live now.",
    ),
    (
        "tcpnc_peer_coding_buffer_packets",
        Kind::Gauge,
        "Packets in the coding buffers of live flows.",
    ),
    (
        "tcpnc_peer_loss_estimate_ratio",
        Kind::Gauge,
        "Loss rate estimated from NC-ACK bitmaps (busiest flow).",
    ),
    (
        "tcpnc_peer_redundancy",
        Kind::Gauge,
        "Current redundancy R, coded packets per new packet (busiest flow).",
    ),
    (
        "tcpnc_peer_window",
        Kind::Gauge,
        "Coding window W (configured).",
    ),
    (
        "tcpnc_peer_repairs_per_second",
        Kind::Gauge,
        "Repair combinations sent per second over the last stats interval.",
    ),
    (
        "tcpnc_peer_goodput_bytes_per_second",
        Kind::Gauge,
        "Delivered TCP payload bytes per second over the last stats interval.",
    ),
    (
        "tcpnc_flow_duration_seconds",
        Kind::Histogram,
        "Lifetime of closed flows.",
    ),
    (
        "tcpnc_flow_delivered_bytes",
        Kind::Histogram,
        "Bytes delivered by closed flows.",
    ),
    (
        "tcpnc_flow_loss_ratio",
        Kind::Histogram,
        "Loss estimate of closed flows at close.",
    ),
];

const DURATION_BUCKETS: &[f64] = &[0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0];
const BYTES_BUCKETS: &[f64] = &[1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];
const LOSS_BUCKETS: &[f64] = &[0.0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5];

/// Engine counter → drop reason (both engines: `tcpnc-proto`, `pass-through`).
pub const DROP_REASONS: &[(&str, &str)] = &[
    ("local_malformed", "malformed_local"),
    ("not_ip", "malformed_local"),
    ("datagrams_malformed", "malformed_datagram"),
    ("malformed", "malformed_datagram"),
    ("decode_errors", "decode_error"),
    ("coding_buffer_drops", "coding_buffer_full"),
    ("decoding_buffer_drops", "decoding_buffer_full"),
    ("transmit_queue_drops", "transmit_queue_full"),
    ("local_queue_drops", "local_queue_full"),
    ("queue_drops", "queue_full"),
    ("event_queue_drops", "event_queue_full"),
    ("rebuild_errors", "rebuild"),
    ("redeliveries_abandoned", "redelivery_abandoned"),
    ("flow_table_full", "flow_table_full"),
    ("acks_unknown_flow", "ack_unknown_flow"),
];

/// Engine counter → (frame type, direction).
const FRAMES: &[(&str, &str, &str)] = &[
    ("data_sent", "data", "tx"),
    ("data_received", "data", "rx"),
    ("acks_sent", "ack", "tx"),
    ("acks_received", "ack", "rx"),
    ("bypass_sent", "bypass", "tx"),
    ("bypass_received", "bypass", "rx"),
];

fn value(counters: &[(&str, u64)], name: &str) -> Option<u64> {
    counters.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
}

/// The last totals seen per peer, for rates.
#[derive(Debug, Clone, Copy, Default)]
struct Last {
    secs: f64,
    repairs: u64,
    bytes: u64,
}

/// The last totals seen per peer (rates are differences between samples).
#[derive(Debug, Default)]
struct Rates(HashMap<String, Last>);

/// The Prometheus exporter of one gateway (see the module docs).
pub struct PrometheusExporter {
    recorder: metrics_exporter_prometheus::PrometheusRecorder,
    handle: PrometheusHandle,
    rates: Rates,
}

impl std::fmt::Debug for PrometheusExporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusExporter").finish_non_exhaustive()
    }
}

impl PrometheusExporter {
    /// An exporter whose every series carries `interface="<interface>"`.
    pub fn new(interface: &str) -> PrometheusExporter {
        let mut builder = PrometheusBuilder::new().add_global_label("interface", interface);
        for (name, buckets) in [
            ("tcpnc_flow_duration_seconds", DURATION_BUCKETS),
            ("tcpnc_flow_delivered_bytes", BYTES_BUCKETS),
            ("tcpnc_flow_loss_ratio", LOSS_BUCKETS),
        ] {
            builder = builder
                .set_buckets_for_metric(Matcher::Full(name.into()), buckets)
                .expect("bucket lists are constant and non-empty");
        }
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        with_local_recorder(&recorder, || {
            for &(name, kind, help) in METRICS {
                let unit = if name.ends_with("_seconds") {
                    Unit::Seconds
                } else if name.ends_with("_bytes") || name.ends_with("_bytes_total") {
                    Unit::Bytes
                } else {
                    Unit::Count
                };
                match kind {
                    Kind::Counter => describe_counter!(name, unit, help),
                    Kind::Gauge => describe_gauge!(name, unit, help),
                    Kind::Histogram => describe_histogram!(name, unit, help),
                }
            }
        });
        PrometheusExporter {
            recorder,
            handle,
            rates: Rates::default(),
        }
    }

    /// A handle that renders the current page (for the HTTP server).
    pub fn handle(&self) -> PrometheusHandle {
        self.handle.clone()
    }

    /// The page in the Prometheus text format.
    pub fn render(&self) -> String {
        self.handle.render()
    }
}

fn record_gateway(s: &Sample<'_>) {
    let g = s.gateway;
    gauge!("tcpnc_uptime_seconds").set(s.uptime.as_secs_f64());
    for (name, rx, tx) in [
        (
            "tcpnc_tun_packets_total",
            g.tun_rx_packets,
            g.tun_tx_packets,
        ),
        ("tcpnc_tun_bytes_total", g.tun_rx_bytes, g.tun_tx_bytes),
        (
            "tcpnc_udp_datagrams_total",
            g.udp_rx_datagrams,
            g.udp_tx_datagrams,
        ),
        ("tcpnc_udp_bytes_total", g.udp_rx_bytes, g.udp_tx_bytes),
        ("tcpnc_keepalives_total", g.keepalives_rx, g.keepalives_tx),
    ] {
        counter!(name, "direction" => "rx").absolute(rx);
        counter!(name, "direction" => "tx").absolute(tx);
    }
    for (reason, v) in [
        ("no_peer", g.no_peer_drops),
        ("unknown_source", g.unknown_source_drops),
        ("queue_full", g.queue_drops),
        ("tun_write_error", g.tun_write_errors),
        ("tun_read_error", g.tun_read_errors),
        ("udp_send_error", g.udp_send_errors),
    ] {
        counter!("tcpnc_gateway_drops_total", "reason" => reason).absolute(v);
    }
}

impl Rates {
    fn record_peer(&mut self, secs: f64, window: Option<u16>, p: &PeerSample<'_>) {
        let peer = vec![Label::new("peer", p.name.to_string())];
        let with = |k: &'static str, v: &'static str| {
            let mut l = peer.clone();
            l.push(Label::new(k, v));
            l
        };
        let c = p.counters;
        gauge!("tcpnc_peer_up", peer.clone()).set(if p.up == Some(true) { 1.0 } else { 0.0 });
        if let Some(rtt) = p.rtt {
            gauge!("tcpnc_peer_keepalive_rtt_seconds", peer.clone()).set(rtt.as_secs_f64());
        }
        counter!("tcpnc_peer_datagrams_total", with("direction", "rx")).absolute(c.datagrams_rx);
        counter!("tcpnc_peer_datagrams_total", with("direction", "tx")).absolute(c.datagrams_tx);
        counter!("tcpnc_peer_local_packets_total", peer.clone()).absolute(c.local_packets);
        counter!("tcpnc_peer_local_bytes_total", peer.clone()).absolute(c.local_bytes);
        counter!("tcpnc_peer_delivered_packets_total", peer.clone()).absolute(c.delivered_packets);
        let totals = &p.engine.totals;
        let mut drops: HashMap<&str, u64> = HashMap::new();
        for &(counter, reason) in DROP_REASONS {
            if let Some(v) = value(totals, counter) {
                *drops.entry(reason).or_default() += v;
            }
        }
        for (reason, v) in drops {
            counter!("tcpnc_peer_drops_total", with("reason", reason)).absolute(v);
        }
        for &(counter, kind, dir) in FRAMES {
            if let Some(v) = value(totals, counter) {
                let mut l = with("type", kind);
                l.push(Label::new("direction", dir));
                counter!("tcpnc_peer_frames_total", l).absolute(v);
            }
        }
        if let Some(v) = value(totals, "dup_acks_synthesized") {
            counter!("tcpnc_peer_losses_visible_total", peer.clone()).absolute(v);
        }
        if let Some(v) = value(totals, "flows_opened") {
            counter!("tcpnc_peer_flows_opened_total", peer.clone()).absolute(v);
        }
        let flows = &p.engine.flows;
        gauge!("tcpnc_peer_flows_active", peer.clone()).set(flows.len() as f64);
        let buffered: u64 = flows
            .iter()
            .filter_map(|(_, f)| value(f, "coding_buffer_len"))
            .sum();
        gauge!("tcpnc_peer_coding_buffer_packets", peer.clone()).set(buffered as f64);
        self.record_flow_totals(secs, window, p, &peer);
    }

    fn record_flow_totals(
        &mut self,
        secs: f64,
        window: Option<u16>,
        p: &PeerSample<'_>,
        peer: &[Label],
    ) {
        let t = &p.flow_totals;
        let get = |n| value(t, n).unwrap_or(0);
        for (name, field) in [
            ("tcpnc_peer_delivered_bytes_total", "bytes_delivered"),
            ("tcpnc_peer_redundant_sent_total", "redundant_sent"),
            ("tcpnc_peer_repairs_total", "repairs_sent"),
            ("tcpnc_peer_innovative_total", "innovative"),
            ("tcpnc_peer_non_innovative_total", "non_innovative"),
            (
                "tcpnc_peer_retransmissions_absorbed_total",
                "retransmissions_absorbed",
            ),
            ("tcpnc_peer_congestion_signals_total", "congestion_signals"),
        ] {
            counter!(name, peer.to_vec()).absolute(get(field));
        }
        if let Some(f) = p.busiest {
            let loss = value(f, "loss_rate_estimate_ppm").unwrap_or(0) as f64 / 1e6;
            gauge!("tcpnc_peer_loss_estimate_ratio", peer.to_vec()).set(loss);
            let r = value(f, "redundancy_permille").unwrap_or(0) as f64 / 1e3;
            gauge!("tcpnc_peer_redundancy", peer.to_vec()).set(r);
        }
        if let Some(w) = window {
            gauge!("tcpnc_peer_window", peer.to_vec()).set(f64::from(w));
        }
        let now = Last {
            secs,
            repairs: get("repairs_sent"),
            bytes: get("bytes_delivered"),
        };
        let last = self.0.insert(p.name.to_string(), now);
        let (repairs_s, goodput) = match last {
            Some(l) if secs > l.secs => {
                let dt = secs - l.secs;
                (
                    now.repairs.saturating_sub(l.repairs) as f64 / dt,
                    now.bytes.saturating_sub(l.bytes) as f64 / dt,
                )
            }
            _ => (0.0, 0.0),
        };
        gauge!("tcpnc_peer_repairs_per_second", peer.to_vec()).set(repairs_s);
        gauge!("tcpnc_peer_goodput_bytes_per_second", peer.to_vec()).set(goodput);
    }
}

impl Recorder for PrometheusExporter {
    fn sample(&mut self, s: &Sample<'_>) {
        let rates = &mut self.rates;
        with_local_recorder(&self.recorder, || {
            record_gateway(s);
            for p in &s.peers {
                rates.record_peer(s.uptime.as_secs_f64(), s.window, p);
            }
        });
        self.handle.run_upkeep();
    }

    fn flow_closed(&mut self, peer: &str, summary: &FlowSummary) {
        let labels = vec![Label::new("peer", peer.to_string())];
        with_local_recorder(&self.recorder, || {
            histogram!("tcpnc_flow_duration_seconds", labels.clone())
                .record(summary.duration.as_secs_f64());
            histogram!("tcpnc_flow_delivered_bytes", labels.clone())
                .record(summary.bytes_delivered as f64);
            histogram!("tcpnc_flow_loss_ratio", labels).record(summary.loss);
        });
    }
}
