//! The Prometheus page: every metric of `tcpnc_gateway::metrics::METRICS` is on a scrape of a
//! fully fed exporter, values follow the counters (closed flows included), the Grafana
//! dashboard in `contrib/grafana/` uses only names a scrape has, and the page passes
//! `promtool check metrics` (required when CI=true; `scripts/test` installs it).

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Command, Stdio};
use std::time::Duration;

use tcpnc_gateway::config::Peer;
use tcpnc_gateway::metrics::{METRICS, PrometheusExporter};
use tcpnc_gateway::monitor::Monitor;
use tcpnc_gateway::stats::{GatewayCounters, PeerCounters};
use tcpnc_proto::seam::Counters;
use tcpnc_proto::{CloseReason, Event};
use tcpnc_wire::FlowId;

const DASHBOARD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../contrib/grafana/tcpnc-gateway.json"
);

fn flow(port: u16) -> FlowId {
    FlowId::v4(
        Ipv4Addr::new(10, 0, 0, 1),
        port,
        Ipv4Addr::new(10, 0, 0, 2),
        5001,
    )
}

fn engine(flows: &[(FlowId, u64)]) -> Counters {
    let names = [
        "local_malformed",
        "datagrams_malformed",
        "decode_errors",
        "coding_buffer_drops",
        "decoding_buffer_drops",
        "transmit_queue_drops",
        "local_queue_drops",
        "event_queue_drops",
        "rebuild_errors",
        "redeliveries_abandoned",
        "flow_table_full",
        "acks_unknown_flow",
        "data_sent",
        "data_received",
        "acks_sent",
        "acks_received",
        "bypass_sent",
        "bypass_received",
        "dup_acks_synthesized",
        "flows_opened",
    ];
    Counters {
        engine: "tcpnc-proto",
        totals: names.iter().map(|n| (*n, 3)).collect(),
        flows: flows
            .iter()
            .map(|(f, bytes)| {
                let c = vec![
                    ("data_sent", 100),
                    ("redundant_sent", 25),
                    ("repairs_sent", 4),
                    ("bytes_delivered", *bytes),
                    ("loss_rate_estimate_ppm", 50_000),
                    ("redundancy_permille", 1250),
                    ("coding_buffer_len", 7),
                ];
                (format!("{f:?}"), c)
            })
            .collect(),
    }
}

/// An exporter fed like a gateway: probe answered, a flow opened, sampled, closed, sampled.
fn fed_page() -> String {
    let peer = Peer {
        name: "right".into(),
        endpoint: Some(SocketAddr::from(([192, 0, 2, 1], 51900))),
        allowed_ips: vec![],
        keepalive_secs: 25,
        public_key: None,
        preshared_key: None,
    };
    let exporter = PrometheusExporter::new("tcpnc0");
    let handle = exporter.handle();
    let mut m = Monitor::new(&[peer], Some(12));
    m.add_recorder(Box::new(exporter));
    let s = Duration::from_secs;
    let (g, pc) = (
        GatewayCounters {
            tun_rx_packets: 42,
            ..Default::default()
        },
        PeerCounters::default(),
    );
    m.probe_sent(0, 1, s(0));
    m.received(0, s(0) + Duration::from_millis(30));
    m.event(
        0,
        s(0) + Duration::from_millis(30),
        &Event::KeepaliveReply { nonce: 1 },
    );
    m.event(0, s(1), &Event::FlowOpened { flow: flow(1) });
    m.event(0, s(1), &Event::FlowOpened { flow: flow(2) });
    m.sample(
        s(2),
        &g,
        &[(&pc, &engine(&[(flow(1), 1000), (flow(2), 500)]))],
    );
    let reason = CloseReason::Finished;
    m.event(
        0,
        s(3),
        &Event::FlowClosed {
            flow: flow(1),
            reason,
        },
    );
    m.sample(s(4), &g, &[(&pc, &engine(&[(flow(2), 700)]))]);
    handle.render()
}

/// Names declared by `# TYPE` lines, and every sample name.
fn names(page: &str) -> BTreeSet<String> {
    page.lines()
        .filter_map(|l| match l.strip_prefix("# TYPE ") {
            Some(rest) => rest.split_whitespace().next(),
            None if !l.starts_with('#') => l.split(['{', ' ']).next(),
            None => None,
        })
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

fn sample_value(page: &str, prefix: &str) -> f64 {
    let line = page
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no sample {prefix} in\n{page}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn every_metric_is_on_the_page_with_the_counters_values() {
    let page = fed_page();
    let declared = names(&page);
    for (name, _, _) in METRICS {
        assert!(declared.contains(*name), "{name} missing from\n{page}");
    }
    assert_eq!(
        sample_value(
            &page,
            r#"tcpnc_tun_packets_total{interface="tcpnc0",direction="rx"}"#
        ),
        42.0
    );
    // 1000 B from the closed flow + 700 B from the live one: monotonic over closes.
    assert_eq!(
        sample_value(
            &page,
            r#"tcpnc_peer_delivered_bytes_total{interface="tcpnc0",peer="right"}"#
        ),
        1700.0
    );
    // (700 - 500) B over the 2 s between samples: 100 B/s.
    assert_eq!(
        sample_value(
            &page,
            r#"tcpnc_peer_goodput_bytes_per_second{interface="tcpnc0",peer="right"}"#
        ),
        100.0
    );
    assert_eq!(
        sample_value(&page, r#"tcpnc_peer_loss_estimate_ratio{"#),
        0.05
    );
    assert_eq!(sample_value(&page, r#"tcpnc_peer_redundancy{"#), 1.25);
    assert_eq!(sample_value(&page, r#"tcpnc_peer_window{"#), 12.0);
    assert_eq!(
        sample_value(&page, r#"tcpnc_peer_keepalive_rtt_seconds{"#),
        0.03
    );
    assert_eq!(
        sample_value(&page, r#"tcpnc_flow_duration_seconds_count{"#),
        1.0
    );
    assert!(page.contains(
        r#"tcpnc_peer_drops_total{interface="tcpnc0",peer="right",reason="coding_buffer_full"} 3"#
    ));
}

#[test]
fn dashboard_uses_only_names_on_the_page() {
    let page = fed_page();
    let declared = names(&page);
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(DASHBOARD).unwrap()).unwrap();
    let mut used = BTreeSet::new();
    let text = dashboard.to_string();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text[i..].find("tcpnc_") {
        let start = i + at;
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        used.insert(text[start..end].to_string());
        i = end;
    }
    assert!(
        used.len() >= 20,
        "the dashboard should chart most metrics: {used:?}"
    );
    let missing: Vec<_> = used.iter().filter(|n| !declared.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "dashboard names not on a scrape: {missing:?}"
    );
    assert!(!declared.contains("tcpnc_not_a_metric"));
}

/// `promtool` from PATH or from `PROMTOOL` (scripts/test extracts it from Debian's package).
pub fn promtool() -> Option<String> {
    let candidate = std::env::var("PROMTOOL").unwrap_or_else(|_| "promtool".into());
    let found = Command::new(&candidate)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    found.then_some(candidate)
}

#[test]
fn page_passes_promtool_check_metrics() {
    let Some(promtool) = promtool() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but promtool is missing: scripts/test installs it"
        );
        eprintln!(
            "skipping page_passes_promtool_check_metrics: promtool not found (apt-get install prometheus, or run scripts/test)"
        );
        return;
    };
    let page = fed_page();
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}\n{page}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
