//! Running `tcpnc` in the root lab tests (`lab.rs`, `lab_tunnel.rs`).

use std::process::{Child, Command, ExitStatus, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use tcpnc_gateway::sys::is_root;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_tcpnc");

/// Whether this process is root and `ip` is present; prints why not.
pub fn lab_capable(test: &str) -> bool {
    if !is_root() {
        eprintln!(
            "skipping {test}: tcpnc lab needs root (network namespaces); run the tests as root"
        );
        return false;
    }
    if Command::new("ip").arg("-V").output().is_err() {
        eprintln!("skipping {test}: the `ip` command (iproute2) is not installed");
        return false;
    }
    true
}

/// Runs `tcpnc ARGS` to completion.
pub fn tcpnc(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run tcpnc")
}

/// The one JSON object a successful run printed.
pub fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "tcpnc failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

/// Namespaces whose name starts with `tcpnc-<pid>-`: those a lab run of process `pid` made.
pub fn namespaces_of(pid: u32) -> Vec<String> {
    let prefix = format!("tcpnc-{pid}-");
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits (up to 20 s) until process `pid`'s lab has made its three namespaces; their count.
pub fn await_namespaces(pid: u32) -> usize {
    let deadline = Instant::now() + Duration::from_secs(20);
    while namespaces_of(pid).len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    namespaces_of(pid).len()
}

/// Waits up to 20 s for `child` (`what`) to exit after a signal; kills it and fails after.
pub fn exit_within_20s(child: &mut Child, what: &str) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("{what} did not exit after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Scratch directories `tcpnc-lab-<pid>-*` of process `pid`'s lab left in the temp directory.
pub fn scratch_dirs_of(pid: u32) -> usize {
    std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("tcpnc-lab-{pid}-"))
                })
                .count()
        })
        .unwrap_or(0)
}
