//! `tcpnc lab` end to end: namespaces, gateways, relay, built-in source/sink.
//!
//! These need root (network namespaces, veth, TUN) and `ip`; elsewhere each test prints why
//! it skips and passes. Everything runs inside namespaces the lab creates; every loop is
//! bounded.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::lab::{
    BIN, await_namespaces, exit_within_20s, json_of, lab_capable, namespaces_of, scratch_dirs_of,
    tcpnc,
};
use tcpnc_gateway::sys::is_root;

#[test]
fn refuses_clearly_without_root() {
    // As root, drop to nobody to see the refusal; otherwise run as we are.
    let out = if is_root() {
        if Command::new("setpriv").arg("--version").output().is_err() {
            eprintln!("skipping refuses_clearly_without_root: setpriv is not installed");
            return;
        }
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
            .args(["lab", "compare", "--bytes", "1MB"])
            .output()
            .expect("run setpriv")
    } else {
        tcpnc(&["lab", "compare", "--bytes", "1MB"])
    };
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    if err.starts_with("setpriv:") {
        // e.g. the test binary's directory is not searchable by nobody.
        eprintln!("skipping refuses_clearly_without_root: nobody cannot run {BIN}: {err}");
        return;
    }
    assert!(err.contains("tcpnc lab needs root"), "stderr: {err}");
}

#[test]
fn direct_transfer_is_checked_end_to_end() {
    if !lab_capable("direct_transfer_is_checked_end_to_end") {
        return;
    }
    let v = json_of(&tcpnc(&[
        "lab",
        "run",
        "--mode",
        "direct",
        "--bytes",
        "3MB",
        "--cc",
        "reno",
        "--timeout-s",
        "30",
        "--json",
    ]));
    assert_eq!(v["integrity_ok"], true);
    assert_eq!(v["bytes_received"], 3_000_000);
    assert_eq!(v["sha256_sent"], v["sha256_received"]);
    assert_eq!(v["cc"], "reno");
    assert!(v["goodput_mbit"].as_f64().unwrap() > 0.0);
}

/// The CI comparison: 20 Mbit/s, 20 ms one way, 10% loss on the data direction, cubic.
/// Asserts integrity and a wide margin of nc over plain (a property, not a timing).
/// The coding settings are pinned (W 16, dense, R 1.2) so the property does not move with
/// the gateway's defaults.
#[test]
fn nc_beats_plain_by_a_wide_margin_at_10pct_loss() {
    if !lab_capable("nc_beats_plain_by_a_wide_margin_at_10pct_loss") {
        return;
    }
    let v = json_of(&tcpnc(&[
        "lab",
        "compare",
        "--rate-mbit",
        "20",
        "--delay-ms",
        "20",
        "--loss",
        "0.1",
        "--bytes",
        "2MB",
        "--cc",
        "cubic",
        "--timeout-s",
        "90",
        "--json",
    ]));
    let obj = v.as_object().expect("object");
    assert_eq!(obj.len(), 2, "exactly plain and nc: {:?}", obj.keys());
    for k in ["plain", "nc"] {
        let r = &v[k];
        assert_eq!(r["integrity_ok"], true, "{k} integrity");
        for f in [
            "goodput_mbit",
            "completion_s",
            "retransmits",
            "gateways",
            "link",
        ] {
            assert!(!r[f].is_null(), "{k}.{f} missing");
        }
        assert_eq!(r["settings"]["mode"], k);
    }
    assert_eq!(v["plain"]["gateways"]["client"]["mode"], "off");
    assert_eq!(v["nc"]["gateways"]["client"]["mode"], "nc");
    let plain = v["plain"]["goodput_mbit"].as_f64().unwrap();
    let nc = v["nc"]["goodput_mbit"].as_f64().unwrap();
    assert!(
        nc >= 3.0 * plain,
        "nc {nc:.2} Mbit/s is not well above plain {plain:.2} Mbit/s"
    );
}

#[test]
fn interrupt_removes_everything() {
    if !lab_capable("interrupt_removes_everything") {
        return;
    }
    // Also when stderr is a pipe nobody reads any more (a `| head` that ended): the handler
    // must not die writing to it before it cleans up.
    for closed_stderr in [false, true] {
        let mut child = Command::new(BIN)
            .args([
                "lab",
                "compare",
                "--loss",
                "0.1",
                "--bytes",
                "50MB",
                "--timeout-s",
                "60",
            ])
            .stdout(Stdio::null())
            .stderr(match closed_stderr {
                true => Stdio::piped(),
                false => Stdio::null(),
            })
            .spawn()
            .expect("spawn tcpnc");
        drop(child.stderr.take());
        let pid = child.id();
        assert_eq!(
            await_namespaces(pid),
            3,
            "the lab did not create its namespaces"
        );
        // Let the gateways and relay start too.
        std::thread::sleep(Duration::from_secs(2));
        let _ = Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status();
        let status = exit_within_20s(&mut child, "tcpnc lab");
        assert!(!status.success());
        assert!(
            namespaces_of(pid).is_empty(),
            "closed stderr {closed_stderr}: left {:?}",
            namespaces_of(pid)
        );
        assert_eq!(scratch_dirs_of(pid), 0, "scratch directories left behind");
    }
}

#[test]
fn clean_removes_leftover_namespaces() {
    if !lab_capable("clean_removes_leftover_namespaces") {
        return;
    }
    // A pid that cannot be running (above the kernel's pid_max limit of 2^22).
    let name = "tcpnc-4194305-0-cli";
    struct Remove(&'static str);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = Command::new("ip")
                .args(["netns", "delete", self.0])
                .output();
        }
    }
    let _guard = Remove(name);
    assert!(
        Command::new("ip")
            .args(["netns", "add", name])
            .status()
            .unwrap()
            .success()
    );
    let out = tcpnc(&["lab", "clean"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(name));
    assert!(!std::path::Path::new("/run/netns").join(name).exists());
}
