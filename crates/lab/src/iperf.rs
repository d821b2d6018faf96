//! iperf3 across the same path, when it is installed (`--iperf3`): a second opinion on the
//! built-in source/sink (no integrity check: iperf3 sends no verifiable content).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::child::Line;
use crate::error::{LabError, Result};
use crate::session::{Session, wait_listening};
use crate::settings::TransferSettings;

/// TCP port of the iperf3 server.
pub const IPERF_PORT: u16 = 5202;

/// The iperf3 binary on `PATH`, if any.
pub fn find_iperf3() -> Option<PathBuf> {
    crate::child::find_on_path("iperf3")
}

/// Runs `iperf3 -c` (client namespace) against `iperf3 -s -1` (server namespace) for
/// `t.bytes` with `t.cc`; returns its goodput, duration and retransmissions, or
/// `{"skipped": why}` when iperf3 is not installed.
pub fn run_iperf3(session: &mut Session<'_>, t: &TransferSettings) -> Result<Value> {
    let Some(bin) = find_iperf3() else {
        return Ok(json!({"skipped": "iperf3 is not installed"}));
    };
    let lab = session.lab();
    let ip = session.server_ip().to_string();
    let port = IPERF_PORT.to_string();
    let srv_args: Vec<String> = ["-s", "-1", "-B", &ip, "-p", &port]
        .map(String::from)
        .to_vec();
    let mut server = lab.spawn_program("iperf3 server", &lab.topo.srv, &bin, &srv_args)?;
    wait_listening(
        &mut server,
        "iperf3 -s to listen",
        &lab.topo.srv,
        IPERF_PORT,
        Duration::from_secs(10),
    )?;
    let cli_args: Vec<String> = [
        "-c",
        &ip,
        "-p",
        &port,
        "-n",
        &t.bytes.to_string(),
        "-C",
        t.cc.name(),
        "-J",
        "--connect-timeout",
        "10000",
    ]
    .map(String::from)
    .to_vec();
    let mut client = lab.spawn_program("iperf3 client", &lab.topo.cli, &bin, &cli_args)?;
    let deadline = Instant::now() + Duration::from_secs_f64(t.timeout_s);
    let mut out = String::new();
    loop {
        match client.poll_line(Duration::from_millis(100)) {
            Line::Text(l) => {
                out.push_str(&l);
                out.push('\n');
            }
            Line::Closed => break,
            Line::Nothing => {}
        }
        if Instant::now() >= deadline {
            return Err(LabError::Timeout {
                what: "iperf3 to finish".into(),
                secs: t.timeout_s,
                log: client.log_tail(),
            });
        }
        session.check_running()?;
    }
    client.wait(deadline + Duration::from_secs(5))?;
    server.stop();
    let v: Value = serde_json::from_str(&out).map_err(|e| LabError::Report {
        who: "iperf3".into(),
        detail: e.to_string(),
    })?;
    if let Some(err) = v.get("error") {
        return Err(LabError::Transfer(format!("iperf3: {err}")));
    }
    let end = &v["end"];
    Ok(json!({
        "goodput_mbit": end["sum_received"]["bits_per_second"].as_f64().unwrap_or(0.0) / 1e6,
        "seconds": end["sum_received"]["seconds"],
        "bytes_received": end["sum_received"]["bytes"],
        "retransmits": end["sum_sent"]["retransmits"],
        "cc": end["sender_tcp_congestion"],
    }))
}
