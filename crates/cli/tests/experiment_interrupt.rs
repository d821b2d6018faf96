//! `tcpnc experiment run` of a lab plan, interrupted: SIGINT stops it at once (the lab's own
//! handler, `tcpnc_lab::guard`), leaves none of the lab's namespaces, processes or scratch
//! directories behind and no row for the run it cut short (a resume runs it again). Needs
//! root and `ip` (skips with a reason otherwise); bounded waits.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::lab::{
    BIN, await_namespaces, exit_within_20s, lab_capable, namespaces_of, scratch_dirs_of,
};

/// A lab plan whose one transfer takes long enough to be interrupted in the middle.
const PLAN: &str = r#"name = "interrupt-check"
backend = "lab"
repetitions = 1
[fixed]
mode = "nc"
cc = "cubic"
rate_mbit = 20.0
delay_ms = 20.0
queue_packets = 67
loss_position = "after_queue"
loss = 0.1
bytes = 200_000_000
timeout_s = 60.0
"#;

/// Processes whose command line names the scratch directory of `pid`'s lab (its gateways,
/// relay, source and sink all do).
fn processes_of(pid: u32) -> usize {
    let mark = format!("tcpnc-lab-{pid}-");
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
                .filter(|c| String::from_utf8_lossy(c).contains(&mark))
                .count()
        })
        .unwrap_or(0)
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
}

#[test]
fn an_interrupted_lab_plan_stops_at_once_and_leaves_nothing_behind() {
    if !lab_capable("an_interrupted_lab_plan_stops_at_once_and_leaves_nothing_behind") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tcpnc-interrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let mut child = Command::new(BIN)
        .args(["experiment", "run", "--quiet", "--out"])
        .arg(dir.join("out"))
        .arg(&plan)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tcpnc");
    let pid = child.id();
    assert_eq!(await_namespaces(pid), 3, "the lab made no namespaces");
    // Let the gateways, relay and transfer start.
    std::thread::sleep(Duration::from_secs(2));
    signal(pid, "-INT");
    let status = exit_within_20s(&mut child, "tcpnc experiment");
    assert_eq!(status.code(), Some(130));
    assert!(
        namespaces_of(pid).is_empty(),
        "left {:?}",
        namespaces_of(pid)
    );
    assert_eq!(scratch_dirs_of(pid), 0, "scratch directories left behind");
    assert_eq!(processes_of(pid), 0, "lab processes left running");
    let runs = std::fs::read_to_string(dir.join("out").join("runs.csv")).unwrap_or_default();
    assert!(runs.lines().count() <= 1, "a row for the cut run: {runs}");
    let _ = std::fs::remove_dir_all(&dir);
}
