//! `tcpnc stats --watch` prints a refreshing table of at most 80 columns; `--json` prints the
//! snapshot file as it is.

use std::process::Command;

use tcpnc_gateway::stats::{GatewayCounters, PeerCounters, PeerSnapshot, STATS_VERSION, Snapshot};

const BIN: &str = env!("CARGO_BIN_EXE_tcpnc");

fn snapshot() -> Snapshot {
    Snapshot {
        version: STATS_VERSION,
        interface: "tcpnc0".into(),
        listen: "192.0.2.1:51900".into(),
        mode: "nc".into(),
        pid: 1,
        uptime_secs: 5.0,
        unix_time: 1e9,
        stopped: false,
        gateway: GatewayCounters::default(),
        peers: vec![PeerSnapshot {
            name: "right".into(),
            endpoint: "192.0.2.2:51900".into(),
            allowed_ips: vec!["10.77.0.2/32".into()],
            counters: PeerCounters::default(),
            engine: serde_json::json!({"totals": {"coding_buffer_drops": 4}, "flows": [
                {"flow": "f", "counters": {"data_sent": 9, "loss_rate_estimate_ppm": 25000,
                 "redundancy_permille": 1300, "repairs_sent": 6}}]}),
        }],
        window: Some(16),
        buffers: None,
        tun_offload: false,
        udp_gso: false,
        udp_gro: false,
        workers: 1,
        worker_items: Vec::new(),
        tun_queues: 1,
        tun_queue_packets: Vec::new(),
        tunnel: serde_json::Value::Null,
    }
}

#[test]
fn watch_refreshes_a_table_within_80_columns_and_json_is_the_file() {
    let dir = std::env::temp_dir().join(format!("tcpnc-watch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tcpnc0.json");
    tcpnc_gateway::stats::write_snapshot(&file, &snapshot()).unwrap();
    let f = file.to_str().unwrap();
    let out = Command::new(BIN)
        .args([
            "stats",
            "--file",
            f,
            "--watch",
            "--interval",
            "0.05",
            "--count",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("\x1b[H\x1b[2J").count(), 2, "{text}");
    let table = text.rsplit("\x1b[2J").next().unwrap();
    assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("right"))
        .expect("a row for the peer");
    let cols: Vec<&str> = row.split_whitespace().collect();
    // peer, goodput (2 words), loss, R, W, repairs, rep/s, drops, flows
    assert_eq!(
        cols,
        [
            "right", "0", "b/s", "2.50%", "1.30", "16", "6", "0.0", "4", "1"
        ]
    );

    let json = Command::new(BIN)
        .args(["stats", "--file", f, "--json"])
        .output()
        .unwrap();
    let back: Snapshot = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(back, snapshot());
    std::fs::remove_dir_all(&dir).unwrap();
}
