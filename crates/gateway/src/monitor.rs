//! What the gateway tells its operator, fed from the counters and events it already has:
//! peer liveness (up/down, KEEPALIVE round-trip time), one log line per notable event (peer
//! up/down, flow opened/closed with a summary) and periodic [`Sample`]s handed to
//! [`Recorder`]s (the Prometheus exporter, [`crate::metrics`]).
//!
//! The engine reports `FlowOpened` / `FlowClosed` events but not a flow's counters at close, so
//! the monitor keeps each live flow's latest counters (refreshed at most every
//! [`FLOW_REFRESH`] and at every sample) and logs those: a summary is at most that old. Flow
//! counters that survive the flow (bytes delivered, repairs, ...) are summed over closed flows
//! so that the per-peer totals stay monotonic (Prometheus counters).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use tcpnc_proto::Event;
use tcpnc_proto::seam::{Counter, Counters};
use tcpnc_wire::FlowId;

use crate::config::Peer;
use crate::stats::{Buffers, GatewayCounters, PeerCounters};

/// How often a peer's live-flow counters are refreshed for flow summaries.
pub const FLOW_REFRESH: Duration = Duration::from_millis(100);
/// A peer with keepalives is declared down after this many keepalive periods without a datagram.
pub const DOWN_AFTER_KEEPALIVES: u32 = 3;

/// Per-flow counters summed over the peer's flows, closed ones included (monotonic).
pub const FLOW_TOTALS: [&str; 8] = [
    "bytes_delivered",
    "data_sent",
    "redundant_sent",
    "repairs_sent",
    "innovative",
    "non_innovative",
    "retransmissions_absorbed",
    "congestion_signals",
];

/// One peer in a [`Sample`].
#[derive(Debug)]
pub struct PeerSample<'a> {
    /// Peer name.
    pub name: &'a str,
    /// Gateway counters of the peer.
    pub counters: &'a PeerCounters,
    /// The engine's counters.
    pub engine: &'a Counters,
    /// [`FLOW_TOTALS`] summed over closed and live flows.
    pub flow_totals: Vec<Counter>,
    /// Counters of the live flow that has sent the most DATA frames (its loss estimate and R
    /// are the peer's current ones), if any flow sends.
    pub busiest: Option<&'a [Counter]>,
    /// `Some(true)` once a datagram arrived and none is overdue; `None` before any.
    pub up: Option<bool>,
    /// Latest KEEPALIVE round-trip time.
    pub rtt: Option<Duration>,
}

/// The counters at one stats tick.
#[derive(Debug)]
pub struct Sample<'a> {
    /// Time since the gateway started.
    pub uptime: Duration,
    /// Interface-wide counters.
    pub gateway: &'a GatewayCounters,
    /// Configured coding window W (`None` for the uncoded mode).
    pub window: Option<u16>,
    /// Peers in config order.
    pub peers: Vec<PeerSample<'a>>,
}

/// A flow's summary at close (counters as of at most [`FLOW_REFRESH`] before).
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSummary {
    /// How long the flow lived.
    pub duration: Duration,
    /// Payload bytes delivered to the local TCP.
    pub bytes_delivered: u64,
    /// DATA frames sent.
    pub data_sent: u64,
    /// Deficit repairs sent.
    pub repairs_sent: u64,
    /// Loss rate last estimated (0..1).
    pub loss: f64,
}

/// Receives the gateway's samples and flow summaries (the metrics exporter implements it).
pub trait Recorder: Send {
    /// A stats tick.
    fn sample(&mut self, sample: &Sample<'_>);
    /// A flow of `peer` closed.
    fn flow_closed(&mut self, _peer: &str, _summary: &FlowSummary) {}
}

#[derive(Debug, Default)]
struct FlowTrack {
    opened: Duration,
    last: Vec<Counter>,
}

#[derive(Debug)]
struct PeerLive {
    name: String,
    keepalive: Duration,
    last_rx: Option<Duration>,
    up: Option<bool>,
    probe: Option<(u64, Duration)>,
    rtt: Option<Duration>,
    flows: HashMap<String, FlowTrack>,
    closed: [u64; FLOW_TOTALS.len()],
    next_refresh: Duration,
}

/// Liveness, flow tracking, event log and recorders of one gateway.
pub struct Monitor {
    peers: Vec<PeerLive>,
    window: Option<u16>,
    buffers: Option<Buffers>,
    recorders: Vec<Box<dyn Recorder>>,
}

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor")
            .field("peers", &self.peers)
            .field("recorders", &self.recorders.len())
            .finish()
    }
}

fn value(counters: &[Counter], name: &str) -> u64 {
    counters
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(0, |&(_, v)| v)
}

/// `src:port -> dst:port` of a flow, for logs.
pub fn flow_text(flow: &FlowId) -> String {
    let src = SocketAddr::new(flow.src_addr(), flow.src_port);
    let dst = SocketAddr::new(flow.dst_addr(), flow.dst_port);
    format!("{src}->{dst}")
}

impl Monitor {
    /// A monitor for `peers` (config order); `window` is the configured W, if coding.
    pub fn new(peers: &[Peer], window: Option<u16>) -> Monitor {
        let peers = peers
            .iter()
            .map(|p| PeerLive {
                name: p.name.clone(),
                keepalive: Duration::from_secs(p.keepalive_secs),
                last_rx: None,
                up: None,
                probe: None,
                rtt: None,
                flows: HashMap::new(),
                closed: [0; FLOW_TOTALS.len()],
                next_refresh: Duration::ZERO,
            })
            .collect();
        Monitor {
            peers,
            window,
            buffers: None,
            recorders: Vec::new(),
        }
    }

    /// The same monitor reporting `buffers`, the engines' buffers per flow (stats file).
    pub fn with_buffers(mut self, buffers: Option<Buffers>) -> Monitor {
        self.buffers = buffers;
        self
    }

    /// The configured buffers per flow, if coding.
    pub fn buffers(&self) -> Option<Buffers> {
        self.buffers
    }

    /// The configured coding window.
    pub fn window(&self) -> Option<u16> {
        self.window
    }

    /// Adds a recorder of samples.
    pub fn add_recorder(&mut self, recorder: Box<dyn Recorder>) {
        self.recorders.push(recorder);
    }

    /// A datagram (any frame) arrived from peer `i`.
    pub fn received(&mut self, i: usize, now: Duration) {
        let Some(p) = self.peers.get_mut(i) else {
            return;
        };
        p.last_rx = Some(now);
        if p.up != Some(true) {
            p.up = Some(true);
            tracing::info!(peer = %p.name, "peer up");
        }
    }

    /// A KEEPALIVE probe with `nonce` was sent to peer `i`.
    pub fn probe_sent(&mut self, i: usize, nonce: u64, now: Duration) {
        if let Some(p) = self.peers.get_mut(i) {
            p.probe = Some((nonce, now));
        }
    }

    /// An engine event of peer `i`.
    pub fn event(&mut self, i: usize, now: Duration, event: &Event) {
        let Some(p) = self.peers.get_mut(i) else {
            return;
        };
        match event {
            Event::KeepaliveReply { nonce } => {
                if let Some((sent_nonce, at)) = p.probe
                    && sent_nonce == *nonce
                {
                    p.rtt = Some(now.saturating_sub(at));
                    p.probe = None;
                }
            }
            Event::FlowOpened { flow } => {
                p.flows.insert(
                    format!("{flow:?}"),
                    FlowTrack {
                        opened: now,
                        last: Vec::new(),
                    },
                );
                tracing::info!(peer = %p.name, flow = %flow_text(flow), "flow opened");
            }
            Event::FlowClosed { flow, reason } => {
                let track = p.flows.remove(&format!("{flow:?}")).unwrap_or_default();
                for (k, name) in FLOW_TOTALS.iter().enumerate() {
                    p.closed[k] += value(&track.last, name);
                }
                let summary = FlowSummary {
                    duration: now.saturating_sub(track.opened),
                    bytes_delivered: value(&track.last, "bytes_delivered"),
                    data_sent: value(&track.last, "data_sent"),
                    repairs_sent: value(&track.last, "repairs_sent"),
                    loss: value(&track.last, "loss_rate_estimate_ppm") as f64 / 1e6,
                };
                tracing::info!(
                    peer = %p.name,
                    flow = %flow_text(flow),
                    reason = ?reason,
                    duration_s = format_args!("{:.3}", summary.duration.as_secs_f64()),
                    bytes_delivered = summary.bytes_delivered,
                    data_sent = summary.data_sent,
                    loss = format_args!("{:.4}", summary.loss),
                    repairs = summary.repairs_sent,
                    "flow closed"
                );
                for r in &mut self.recorders {
                    r.flow_closed(&p.name, &summary);
                }
            }
            Event::LossVisible { flow, ack } => {
                tracing::debug!(peer = %p.name, flow = %flow_text(flow), ack, "loss visible to TCP");
            }
            Event::Dropped { flow, reason } => {
                let flow = flow.as_ref().map(flow_text).unwrap_or_default();
                tracing::debug!(peer = %p.name, flow, reason = ?reason, "dropped");
            }
        }
    }

    /// Whether peer `i`'s flow counters are due for a refresh (see [`Monitor::refresh_flows`]).
    pub fn flows_due(&self, i: usize, now: Duration) -> bool {
        self.peers
            .get(i)
            .is_some_and(|p| !p.flows.is_empty() && now >= p.next_refresh)
    }

    /// Keeps the latest counters of peer `i`'s live flows (for their summary at close).
    pub fn refresh_flows(&mut self, i: usize, now: Duration, engine: &Counters) {
        let Some(p) = self.peers.get_mut(i) else {
            return;
        };
        p.next_refresh = now + FLOW_REFRESH;
        // A flow the engine no longer has was closed (its event is drained before any
        // refresh); keeping it would leak if the event was dropped (`event_queue_drops`).
        let live: std::collections::HashSet<&str> =
            engine.flows.iter().map(|(k, _)| k.as_str()).collect();
        p.flows.retain(|k, _| live.contains(k.as_str()));
        for (key, counters) in &engine.flows {
            let track = p.flows.entry(key.clone()).or_insert_with(|| FlowTrack {
                opened: now,
                last: Vec::new(),
            });
            track.last.clone_from(counters);
        }
    }

    /// Declares overdue peers down (only peers with keepalives: a silent link without them
    /// is not a sign of anything).
    pub fn tick(&mut self, now: Duration) {
        for p in &mut self.peers {
            let overdue = p.keepalive * DOWN_AFTER_KEEPALIVES;
            if p.up == Some(true)
                && !overdue.is_zero()
                && p.last_rx.is_some_and(|t| now.saturating_sub(t) > overdue)
            {
                p.up = Some(false);
                tracing::warn!(
                    peer = %p.name,
                    silent_s = now.saturating_sub(p.last_rx.unwrap_or_default()).as_secs(),
                    "peer down: no datagram for {DOWN_AFTER_KEEPALIVES} keepalive periods"
                );
            }
        }
    }

    /// A stats tick: refreshes the flow counters and hands a [`Sample`] to every recorder.
    pub fn sample(
        &mut self,
        now: Duration,
        gateway: &GatewayCounters,
        peers: &[(&PeerCounters, &Counters)],
    ) {
        for (i, (_, engine)) in peers.iter().enumerate() {
            self.refresh_flows(i, now, engine);
        }
        if self.recorders.is_empty() {
            return;
        }
        let samples = self
            .peers
            .iter()
            .zip(peers)
            .map(|(p, &(counters, engine))| PeerSample {
                name: &p.name,
                counters,
                engine,
                flow_totals: FLOW_TOTALS
                    .iter()
                    .enumerate()
                    .map(|(k, name)| {
                        let live: u64 = engine.flows.iter().map(|(_, c)| value(c, name)).sum();
                        (*name, p.closed[k] + live)
                    })
                    .collect(),
                busiest: engine
                    .flows
                    .iter()
                    .filter(|(_, c)| value(c, "data_sent") > 0)
                    .max_by_key(|(_, c)| value(c, "data_sent"))
                    .map(|(_, c)| c.as_slice()),
                up: p.up,
                rtt: p.rtt,
            })
            .collect();
        let sample = Sample {
            uptime: now,
            gateway,
            window: self.window,
            peers: samples,
        };
        for r in &mut self.recorders {
            r.sample(&sample);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;
    use std::sync::{Arc, Mutex};

    use tcpnc_proto::CloseReason;

    use super::*;

    /// Per sample: flow totals, up, RTT.
    type Row = (Vec<Counter>, Option<bool>, Option<Duration>);

    #[derive(Default, Clone)]
    struct Seen(Arc<Mutex<Vec<Row>>>);

    impl Recorder for Seen {
        fn sample(&mut self, s: &Sample<'_>) {
            let p = &s.peers[0];
            self.0
                .lock()
                .unwrap()
                .push((p.flow_totals.clone(), p.up, p.rtt));
        }
    }

    fn peer(keepalive_secs: u64) -> Peer {
        Peer {
            name: "right".into(),
            endpoint: Some("127.0.0.1:1".parse().unwrap()),
            allowed_ips: vec![],
            keepalive_secs,
            public_key: None,
            preshared_key: None,
        }
    }

    fn engine(flows: &[(FlowId, u64)]) -> Counters {
        Counters {
            engine: "test",
            totals: vec![],
            flows: flows
                .iter()
                .map(|(f, b)| (format!("{f:?}"), vec![("bytes_delivered", *b)]))
                .collect(),
        }
    }

    #[test]
    fn totals_survive_closed_flows_and_liveness_follows_datagrams() {
        let seen = Seen::default();
        let mut m = Monitor::new(&[peer(1)], Some(12));
        m.add_recorder(Box::new(seen.clone()));
        let f = FlowId::v4(Ipv4Addr::new(10, 0, 0, 1), 1, Ipv4Addr::new(10, 0, 0, 2), 2);
        let s = |secs| Duration::from_secs(secs);
        let (g, pc) = (GatewayCounters::default(), PeerCounters::default());
        m.probe_sent(0, 9, s(0));
        m.received(0, s(1));
        m.event(0, s(1), &Event::KeepaliveReply { nonce: 9 });
        m.event(0, s(1), &Event::FlowOpened { flow: f });
        m.sample(s(2), &g, &[(&pc, &engine(&[(f, 500)]))]);
        m.refresh_flows(0, s(3), &engine(&[(f, 800)]));
        let reason = CloseReason::Finished;
        m.event(0, s(3), &Event::FlowClosed { flow: f, reason });
        m.sample(s(4), &g, &[(&pc, &engine(&[]))]);
        m.tick(s(5));
        m.sample(s(5), &g, &[(&pc, &engine(&[]))]);
        let seen = seen.0.lock().unwrap();
        assert_eq!(value(&seen[0].0, "bytes_delivered"), 500);
        // The closed flow's bytes stay in the total.
        assert_eq!(value(&seen[1].0, "bytes_delivered"), 800);
        assert_eq!(seen[0].1, Some(true));
        assert_eq!(seen[0].2, Some(s(1)));
        // 3 keepalive periods (3 s) without a datagram: down.
        assert_eq!(seen[1].1, Some(true));
        assert_eq!(seen[2].1, Some(false));
    }

    #[test]
    fn flows_gone_from_the_engine_are_forgotten() {
        let mut m = Monitor::new(&[peer(0)], None);
        let f = FlowId::v4(Ipv4Addr::new(10, 0, 0, 1), 1, Ipv4Addr::new(10, 0, 0, 2), 2);
        m.event(0, Duration::ZERO, &Event::FlowOpened { flow: f });
        assert!(m.flows_due(0, Duration::ZERO));
        m.refresh_flows(0, Duration::from_secs(1), &engine(&[]));
        assert!(
            !m.flows_due(0, Duration::from_secs(2)),
            "no flow left to refresh"
        );
    }
}
