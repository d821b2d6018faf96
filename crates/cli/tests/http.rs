//! A real application across the tunnel, unchanged: `python3 -m http.server` and `curl`
//! through two gateways with TCP/NC over a lossy emulated path (`tcpnc lab http`).
//! Needs root; skips with a message elsewhere or when python3/curl are missing.

use std::process::Command;

use serde_json::Value;
use tcpnc_gateway::sys::is_root;

fn have(prog: &str, arg: &str) -> bool {
    Command::new(prog).arg(arg).output().is_ok()
}

#[test]
fn stock_http_download_crosses_the_nc_tunnel() {
    if !is_root() {
        eprintln!("skipping: tcpnc lab needs root (network namespaces); run the tests as root");
        return;
    }
    for (prog, arg) in [
        ("ip", "-V"),
        ("python3", "--version"),
        ("curl", "--version"),
    ] {
        if !have(prog, arg) {
            eprintln!("skipping: {prog} is not installed");
            return;
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tcpnc"))
        .args([
            "lab",
            "http",
            "--mode",
            "nc",
            "--loss",
            "0.05",
            "--bytes",
            "1MB",
            "--timeout-s",
            "90",
            "--json",
        ])
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run tcpnc");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["integrity_ok"], true);
    assert_eq!(v["bytes_received"], 1_000_000);
    assert_eq!(v["mode"], "nc");
    assert_eq!(v["gateways"]["client"]["mode"], "nc");
    let coded = v["gateways"]["client"]["peers"][0]["engine"]["totals"]["data_sent"]
        .as_u64()
        .unwrap_or(0);
    assert!(coded > 0, "the download did not go through the coder");
}
