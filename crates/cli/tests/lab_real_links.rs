//! Root lab tests on real-link impairments (issue 10): reordering jitter and Gilbert-Elliott
//! bursts. Each runs plain TCP (gateway coding off) with kernel BBR, plain CUBIC and nc with
//! kernel CUBIC on the same emulated path (20 Mbit/s, 20 ms one way, same path seed) and
//! asserts integrity and properties with wide margins, not timings: nc CUBIC far ahead of plain
//! CUBIC, and within a bounded factor of plain BBR (the figures beside these bounds are in
//! docs/lab.md, "Real links"). Skipped (with a message) unless run as root.

mod common;

use common::lab::{json_of, lab_capable, tcpnc};
use serde_json::Value;

/// One transfer of `mode` with `cc` over the path `path` (flags), 4 MB, path seed 7.
fn run(mode: &str, cc: &str, path: &[&str]) -> Value {
    let mut args = vec![
        "lab",
        "run",
        "--mode",
        mode,
        "--cc",
        cc,
        "--rate-mbit",
        "20",
        "--delay-ms",
        "20",
        "--bytes",
        "4MB",
        "--path-seed",
        "7",
        "--timeout-s",
        "120",
        "--json",
    ];
    args.extend_from_slice(path);
    let v = json_of(&tcpnc(&args));
    assert_eq!(v["integrity_ok"], true, "{mode} {cc} integrity: {v}");
    assert_eq!(v["bytes_received"], 4_000_000, "{mode} {cc}");
    v
}

fn goodput(v: &Value) -> f64 {
    v["goodput_mbit"].as_f64().expect("goodput_mbit")
}

/// nc CUBIC transfers measured per check: the median is compared. Single runs on a machine
/// shared with other work vary (and before the repair probe covered tail losses, some ended in
/// TCP timeouts at a quarter of the rest's goodput; docs/lab.md "Real links"); the median of
/// five measures the mechanism, and every run is still checked for integrity.
const NC_RUNS: usize = 5;

/// Plain BBR, plain CUBIC and nc CUBIC on `path`: the median of [`NC_RUNS`] nc CUBIC runs at
/// least `vs_cubic` × plain CUBIC and at least `vs_bbr` × plain BBR.
fn check(path: &[&str], vs_cubic: f64, vs_bbr: f64) {
    let bbr = goodput(&run("plain", "bbr", path));
    let cubic = goodput(&run("plain", "cubic", path));
    let mut runs: Vec<f64> = (0..NC_RUNS)
        .map(|_| goodput(&run("nc", "cubic", path)))
        .collect();
    runs.sort_by(f64::total_cmp);
    let ncg = runs[NC_RUNS / 2];
    eprintln!(
        "{path:?}: plain bbr {bbr:.2}, plain cubic {cubic:.2}, nc cubic {runs:.2?} (median {ncg:.2}) Mbit/s"
    );
    assert!(
        ncg >= vs_cubic * cubic,
        "nc cubic {ncg:.2} Mbit/s is not {vs_cubic}x plain cubic {cubic:.2}"
    );
    assert!(
        ncg >= vs_bbr * bbr,
        "nc cubic {ncg:.2} Mbit/s is below {vs_bbr}x plain bbr {bbr:.2}"
    );
}

/// 2 % loss with 10 ms of jitter that reorders: before the unordering adaptation (Ha & Tsuru
/// §3.1–3.3) nc CUBIC ran at 0.2–0.3× plain BBR here, with it at 0.8–0.95× (docs/lab.md; at
/// stop 27 this test measured 14.13 against 14.78, 0.96×). The bound, 0.7×, leaves room for a
/// loaded machine, where the user-space gateways lose more than kernel BBR.
#[test]
fn reordering_is_not_taken_for_loss() {
    if !lab_capable("reordering_is_not_taken_for_loss") {
        return;
    }
    check(
        &["--loss", "0.02", "--jitter-ms", "10", "--reorder"],
        3.0,
        0.7,
    );
}

/// Gilbert-Elliott loss, mean 5 % in bursts of 4 packets: plain CUBIC collapses (about 1 Mbit/s),
/// nc CUBIC keeps most of the link (0.94× plain BBR on the lab's 20 MB runs since the burst
/// window, docs/lab.md "Burst window, stop 27"; this test measured 15.78 against 16.48, 0.96×).
/// Bound 0.7×, as above.
#[test]
fn bursts_are_repaired_not_signalled() {
    if !lab_capable("bursts_are_repaired_not_signalled") {
        return;
    }
    check(&["--loss", "0.05", "--burst", "4"], 4.0, 0.7);
}

/// Kernel BBR over nc at 10 % random loss (issue 10 mechanism 7, docs/engine.md "Flight
/// cap"): without the flight cap BBR's bandwidth estimate ran above what the path carries
/// for TCP and the queue dropped about as many datagrams as the random loss did (10–20 % of
/// those sent on 20 MB runs); with it, next to none after BBR's start-up. Asserted: the
/// median run's queue drops below 10 % of the datagrams sent, and BBR over nc at least 0.8×
/// nc CUBIC's median (0.9–1.0× on the lab's 20 MB runs, docs/lab.md "The flight cap").
/// Measured on these 4 MB runs: 0–3.1 % with the cap (about a hundred drops in the
/// start-up of some runs, none in others), 26–43 % with `--flight-cap off`.
#[test]
fn bbr_over_nc_does_not_overfill_the_queue() {
    if !lab_capable("bbr_over_nc_does_not_overfill_the_queue") {
        return;
    }
    let path = ["--loss", "0.1"];
    let sorted = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    let bbr_runs: Vec<Value> = (0..3).map(|_| run("nc", "bbr", &path)).collect();
    let bbr = sorted(bbr_runs.iter().map(goodput).collect());
    let drops = sorted(
        bbr_runs
            .iter()
            .map(|v| {
                let link = &v["link"]["a_to_b"]["link"];
                link["dropped_queue"].as_f64().expect("dropped_queue")
                    / link["sent"].as_f64().expect("sent")
            })
            .collect(),
    );
    let cubic = sorted(
        (0..3)
            .map(|_| goodput(&run("nc", "cubic", &path)))
            .collect(),
    );
    eprintln!("nc bbr {bbr:.2?} (queue drop shares {drops:.3?}), nc cubic {cubic:.2?} Mbit/s");
    assert!(
        drops[1] < 0.1,
        "kernel BBR over nc overfills the queue: drop shares {drops:.3?}"
    );
    assert!(
        bbr[1] >= 0.8 * cubic[1],
        "nc bbr {:.2} Mbit/s is below 0.8x nc cubic {:.2}",
        bbr[1],
        cubic[1]
    );
}
