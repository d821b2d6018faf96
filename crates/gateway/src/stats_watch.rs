//! `tcpnc stats --watch`: one table per refresh, one row per peer, at most 80 columns, computed
//! from two consecutive stats snapshots (rates are differences over the time between them).
//!
//! Columns: goodput (TCP payload delivered to the local side, from the live flows'
//! `bytes_delivered`; a flow that closed between the two snapshots is left out of that
//! refresh), the loss estimate and R of the peer's busiest flow (most DATA frames sent), W (the
//! configured window), repairs (live flows' total) and repairs per second, engine drops (every
//! drop counter of [`crate::metrics::DROP_REASONS`]) and live flows.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::metrics::DROP_REASONS;
use crate::stats::{PeerSnapshot, Snapshot};

/// Widest line the table prints.
pub const MAX_WIDTH: usize = 80;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// `flow label → counters` of a peer's live flows.
fn flows(p: &PeerSnapshot) -> HashMap<&str, &Value> {
    p.engine["flows"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| Some((f["flow"].as_str()?, &f["counters"])))
                .collect()
        })
        .unwrap_or_default()
}

/// Sum over flows present in `cur` of the growth of `field` since `prev` (new flows count whole).
fn growth(prev: Option<&PeerSnapshot>, cur: &PeerSnapshot, field: &str) -> u64 {
    let before = prev.map(flows).unwrap_or_default();
    flows(cur)
        .iter()
        .map(|(k, c)| {
            let was = before.get(k).map_or(0, |b| u(&b[field]));
            u(&c[field]).saturating_sub(was)
        })
        .sum()
}

/// One peer's row values.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerRow {
    /// Peer name.
    pub name: String,
    /// Payload bytes per second delivered to the local TCP.
    pub goodput_bytes_s: f64,
    /// Loss estimate of the busiest flow (0..1).
    pub loss: Option<f64>,
    /// R of the busiest flow.
    pub redundancy: Option<f64>,
    /// Repairs sent by live flows.
    pub repairs: u64,
    /// Repairs per second.
    pub repairs_s: f64,
    /// Engine drops (all reasons).
    pub drops: u64,
    /// Live flows.
    pub flows: usize,
}

/// The rows of `cur`, with rates against `prev` (zero without one).
pub fn rows(prev: Option<&Snapshot>, cur: &Snapshot) -> Vec<PeerRow> {
    let dt = prev.map_or(0.0, |p| cur.unix_time - p.unix_time);
    let rate = |n: u64| if dt > 0.0 { n as f64 / dt } else { 0.0 };
    cur.peers
        .iter()
        .map(|p| {
            let before = prev.and_then(|s| s.peers.iter().find(|q| q.name == p.name));
            let live = flows(p);
            let busiest = live
                .values()
                .filter(|c| u(&c["data_sent"]) > 0)
                .max_by_key(|c| u(&c["data_sent"]));
            let totals = &p.engine["totals"];
            PeerRow {
                name: p.name.clone(),
                goodput_bytes_s: rate(growth(before, p, "bytes_delivered")),
                loss: busiest.map(|c| u(&c["loss_rate_estimate_ppm"]) as f64 / 1e6),
                redundancy: busiest.map(|c| u(&c["redundancy_permille"]) as f64 / 1e3),
                repairs: live.values().map(|c| u(&c["repairs_sent"])).sum(),
                repairs_s: rate(growth(before, p, "repairs_sent")),
                drops: DROP_REASONS.iter().map(|(k, _)| u(&totals[*k])).sum(),
                flows: live.len(),
            }
        })
        .collect()
}

fn bits(bytes_s: f64) -> String {
    let b = bytes_s * 8.0;
    match b {
        b if b >= 1e9 => format!("{:.2} Gb/s", b / 1e9),
        b if b >= 1e6 => format!("{:.2} Mb/s", b / 1e6),
        b if b >= 1e3 => format!("{:.1} kb/s", b / 1e3),
        b => format!("{b:.0} b/s"),
    }
}

/// The table for one refresh (every line at most [`MAX_WIDTH`] columns).
pub fn table(prev: Option<&Snapshot>, cur: &Snapshot) -> String {
    let mut o = String::new();
    let state = if cur.stopped { "stopped" } else { "running" };
    let w = cur.window.map_or("-".to_string(), |w| w.to_string());
    let head = format!(
        "{} {state}, mode {}, W {w}, up {:.0} s, pid {}",
        cur.interface, cur.mode, cur.uptime_secs, cur.pid
    );
    let _ = writeln!(o, "{}", clip(&head));
    let _ = writeln!(
        o,
        "{:<12} {:>11} {:>7} {:>5} {:>3} {:>9} {:>7} {:>9} {:>5}",
        "peer", "goodput", "loss", "R", "W", "repairs", "rep/s", "drops", "flows"
    );
    for r in rows(prev, cur) {
        let loss = r.loss.map_or("-".into(), |l| format!("{:.2}%", l * 100.0));
        let red = r.redundancy.map_or("-".into(), |x| format!("{x:.2}"));
        let line = format!(
            "{:<12} {:>11} {:>7} {:>5} {:>3} {:>9} {:>7.1} {:>9} {:>5}",
            clip_to(&r.name, 12),
            bits(r.goodput_bytes_s),
            loss,
            red,
            w,
            r.repairs,
            r.repairs_s,
            r.drops,
            r.flows
        );
        let _ = writeln!(o, "{}", clip(&line));
    }
    o
}

fn clip_to(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn clip(s: &str) -> String {
    clip_to(s, MAX_WIDTH)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::stats::{GatewayCounters, PeerCounters, STATS_VERSION};

    fn snap(t: f64, delivered: u64, repairs: u64) -> Snapshot {
        let flow = |name: &str, sent: u64, loss: u64| {
            json!({"flow": name, "counters": {"data_sent": sent, "bytes_delivered": delivered,
                "repairs_sent": repairs, "loss_rate_estimate_ppm": loss, "redundancy_permille": 1250}})
        };
        Snapshot {
            version: STATS_VERSION,
            interface: "tcpnc0".into(),
            listen: "192.0.2.1:51900".into(),
            mode: "nc".into(),
            pid: 4242,
            uptime_secs: t,
            unix_time: 1000.0 + t,
            stopped: false,
            gateway: GatewayCounters::default(),
            peers: vec![PeerSnapshot {
                name: "a-peer-with-a-very-long-name".into(),
                endpoint: "192.0.2.2:51900".into(),
                allowed_ips: vec![],
                counters: PeerCounters::default(),
                engine: json!({"totals": {"coding_buffer_drops": 2, "decode_errors": 1,
                    "data_sent": 99}, "flows": [flow("f1", 10, 20_000), flow("f2", 50, 12_345)]}),
            }],
            window: Some(12),
            buffers: None,
            tun_offload: false,
            udp_gso: false,
            udp_gro: false,
            workers: 1,
            tun_queues: 1,
            tun_queue_packets: Vec::new(),
            worker_items: Vec::new(),
            tunnel: serde_json::Value::Null,
        }
    }

    #[test]
    fn rates_busiest_flow_and_width() {
        let (a, b) = (snap(1.0, 1000, 3), snap(3.0, 126_000, 7));
        let r = rows(Some(&a), &b);
        // Two flows, each 125 000 B more over 2 s: 125 000 B/s = 1.00 Mb/s.
        assert_eq!(r[0].goodput_bytes_s, 125_000.0);
        assert_eq!(r[0].loss, Some(0.012345));
        assert_eq!(r[0].redundancy, Some(1.25));
        assert_eq!(r[0].repairs, 14);
        assert_eq!(r[0].repairs_s, 4.0);
        assert_eq!(r[0].drops, 3);
        assert_eq!(r[0].flows, 2);
        let t = table(Some(&a), &b);
        assert!(t.contains("1.00 Mb/s"), "{t}");
        assert!(t.contains("1.23%"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= MAX_WIDTH), "{t}");
        assert!(t.lines().any(|l| l.chars().count() > 70), "{t}");
        // Without a previous snapshot there is no rate.
        assert_eq!(rows(None, &b)[0].goodput_bytes_s, 0.0);
    }
}
