//! `tcpnc lab speed --iperf3 --profile DIR` (issue 14, a benchmark anyone can re-run): iperf3
//! beside the built-in source and sink for every case, a `perf` profile of each nc case's
//! sending-side gateway (over a second, profiled transfer) next to the results; without iperf3 or perf each case says why and
//! the run goes on; perf never outlives the run (not even an interrupted one).
//!
//! Needs root (network namespaces, TUN) and `ip`; elsewhere it prints why it skips and passes.
//! Whether iperf3 and perf are installed decides what the first test expects; the second hides
//! them (a `PATH` holding only `ip`).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::lab::{BIN, exit_within_20s, json_of, lab_capable, namespaces_of, scratch_dirs_of};
use serde_json::Value;

/// A fresh directory for this test's files.
fn test_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcpnc-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("test directory");
    d
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Runs `tcpnc lab speed ARGS` (5 MB per case, JSON) with `path` as `PATH` when given; checks
/// that its lab is gone afterwards.
fn speed(args: &[&str], path: Option<&Path>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "lab",
        "speed",
        "--bytes",
        "5MB",
        "--timeout-s",
        "60",
        "--json",
    ])
    .args(args)
    .env_remove("RUST_BACKTRACE");
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tcpnc");
    let pid = child.id();
    let out = child.wait_with_output().expect("wait for tcpnc");
    assert!(namespaces_of(pid).is_empty(), "{:?}", namespaces_of(pid));
    assert_eq!(scratch_dirs_of(pid), 0, "scratch directories left");
    out
}

/// `perf` processes whose command line mentions `dir` (the profile directory: `-o`/`-i`).
fn perf_on(dir: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let raw = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let is_perf = args
            .first()
            .is_some_and(|a| a == "perf" || a.ends_with("/perf"));
        if is_perf && args.iter().any(|a| a.contains(dir)) {
            found.push(args.join(" "));
        }
    }
    found
}

fn case<'a>(v: &'a Value, label_mode: &str) -> &'a Value {
    let results = v["results"].as_array().expect("results");
    results
        .iter()
        .find(|r| r["mode"] == label_mode)
        .unwrap_or_else(|| panic!("no {label_mode} case: {v}"))
}

#[test]
fn iperf3_and_profiles_beside_the_built_in_figures() {
    if !lab_capable("iperf3_and_profiles_beside_the_built_in_figures") {
        return;
    }
    let dir = test_dir("speed-profile");
    let d = dir.to_str().expect("utf-8 temp dir");
    let v = json_of(&speed(&["--iperf3", "--profile", d], None));
    for r in v["results"].as_array().expect("results") {
        let i = &r["iperf3"];
        if on_path("iperf3").is_some() {
            assert!(i["goodput_mbit"].as_f64().unwrap_or(0.0) > 0.0, "{i}");
        } else {
            assert_eq!(i["skipped"], "iperf3 is not installed", "{i}");
        }
    }
    assert!(
        case(&v, "plain").get("profile").is_none(),
        "off is not profiled"
    );
    let p = &case(&v, "nc")["profile"];
    match p["skipped"].as_str() {
        None => {
            for f in ["nc-w12-r1.0.perf.data", "nc-w12-r1.0.perf.txt"] {
                let len = std::fs::metadata(dir.join(f)).map_or(0, |m| m.len());
                assert!(len > 0, "{f} written: {p}");
            }
            assert!(!p["top"].as_array().expect("top").is_empty(), "{p}");
            // A second, profiled transfer: its own figures, apart from the case's.
            assert_eq!(p["integrity_ok"], true, "{p}");
            assert!(p["goodput_mbit"].as_f64().unwrap_or(0.0) > 0.0, "{p}");
        }
        // Installed but not permitted (a container's seccomp filter, say): a reason, not a
        // failed run.
        Some(why) if on_path("perf").is_some() => assert_ne!(why, "perf is not installed"),
        Some(why) => assert_eq!(why, "perf is not installed"),
    }
    assert!(perf_on(d).is_empty(), "perf left running");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_iperf3_and_perf_each_case_says_skipped() {
    if !lab_capable("without_iperf3_and_perf_each_case_says_skipped") {
        return;
    }
    let bin = test_dir("speed-no-tools");
    let ip = on_path("ip").expect("ip on PATH (lab_capable)");
    std::os::unix::fs::symlink(ip, bin.join("ip")).expect("symlink ip");
    let prof = bin.join("profiles");
    let prof = prof.to_str().expect("utf-8 temp dir");
    let v = json_of(&speed(&["--iperf3", "--profile", prof], Some(&bin)));
    for r in v["results"].as_array().expect("results") {
        assert_eq!(r["iperf3"]["skipped"], "iperf3 is not installed", "{r}");
        assert_eq!(r["integrity_ok"], true, "{r}");
    }
    let p = &case(&v, "nc")["profile"];
    assert_eq!(p, &serde_json::json!({"skipped": "perf is not installed"}));
    let _ = std::fs::remove_dir_all(&bin);
}

/// SIGINT while perf records: nothing of the run is left, perf included (the run's signal
/// cleanup kills it with the gateways; `perf record -p` would also end when its target does,
/// so this checks the outcome, not which of the two ended it).
#[test]
fn interrupted_profile_leaves_no_perf() {
    if !lab_capable("interrupted_profile_leaves_no_perf") {
        return;
    }
    if on_path("perf").is_none() {
        eprintln!("skipping interrupted_profile_leaves_no_perf: perf is not installed");
        return;
    }
    let dir = test_dir("speed-interrupt");
    let d = dir.to_str().expect("utf-8 temp dir");
    // The profiled transfer follows the case's own one (500 MB, some 3 s here).
    let mut child = Command::new(BIN)
        .args(["lab", "speed", "--no-off", "--bytes", "500MB"])
        .args(["--profile", d, "--timeout-s", "60", "--json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run tcpnc");
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut ended = None;
    while perf_on(d).is_empty() && ended.is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        ended = child.try_wait().expect("wait");
    }
    let recording = !perf_on(d).is_empty();
    if ended.is_none() {
        let _ = Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status();
    }
    exit_within_20s(&mut child, "tcpnc lab speed --profile");
    std::thread::sleep(Duration::from_millis(200));
    assert!(perf_on(d).is_empty(), "perf outlived the run");
    assert!(namespaces_of(pid).is_empty(), "{:?}", namespaces_of(pid));
    assert_eq!(scratch_dirs_of(pid), 0, "scratch directories left");
    let _ = std::fs::remove_dir_all(&dir);
    if !recording {
        eprintln!("note: perf was never seen recording (not permitted here, or too quick)");
    }
}
