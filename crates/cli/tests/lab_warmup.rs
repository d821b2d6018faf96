//! Root lab test of `tcpnc lab run --warmup-bytes`: an unmeasured transfer through the same
//! gateways before the measured one, so that a short transfer is measured on a path the
//! gateways already know (issue 10, "short flows"). Skipped (with a message) unless run as
//! root.

mod common;

use common::lab::{json_of, lab_capable, tcpnc};

#[test]
fn the_measured_transfer_follows_a_warm_up_through_the_same_gateways() {
    if !lab_capable("the_measured_transfer_follows_a_warm_up_through_the_same_gateways") {
        return;
    }
    let v = json_of(&tcpnc(&[
        "lab",
        "run",
        "--mode",
        "nc",
        "--loss",
        "0.05",
        "--bytes",
        "500kB",
        "--warmup-bytes",
        "1MB",
        "--path-seed",
        "3",
        "--timeout-s",
        "60",
        "--json",
    ]));
    assert_eq!(v["integrity_ok"], true, "integrity: {v}");
    assert_eq!(
        v["bytes_received"], 500_000,
        "only the measured transfer is reported"
    );
    assert_eq!(v["settings"]["warmup_bytes"], 1_000_000);
    for side in ["client", "server"] {
        let opened = &v["gateways"][side]["peers"][0]["engine"]["totals"]["flows_opened"];
        assert_eq!(
            opened, 2,
            "{side}: the warm-up's flow and the measured one, same gateways"
        );
    }
}
