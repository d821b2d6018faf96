//! The CI speed smoke test: `tcpnc lab speed` (two gateways joined directly, no emulator) at
//! full speed for a few seconds, modes off and nc: every byte arrives intact and the gateways'
//! own queues drop nothing (input queue, engine transmit/local queues, TUN write and UDP send
//! errors). No rate is asserted (rates belong to the benchmark's figures, docs/speed.md).
//!
//! Needs root (network namespaces, TUN) and `ip`; elsewhere it prints why it skips and passes.

mod common;

use common::lab::{json_of, lab_capable, tcpnc};

#[test]
fn full_speed_is_intact_without_gateway_drops() {
    if !lab_capable("full_speed_is_intact_without_gateway_drops") {
        return;
    }
    let out = tcpnc(&[
        "lab",
        "speed",
        "--bytes",
        "60MB",
        "--windows",
        "12",
        "--redundancy",
        "1.0",
        "--timeout-s",
        "120",
        "--json",
    ]);
    let v = json_of(&out);
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "off and nc W12 R1.0: {v}");
    for r in results {
        assert_eq!(r["integrity_ok"], true, "{r}");
        for k in [
            "queue",
            "tun_write_errors",
            "udp_send_errors",
            "engine_queue",
        ] {
            assert_eq!(r["drops"][k], 0, "gateway drop `{k}`: {}", r["drops"]);
        }
        // The counters the figures come from are present and moved.
        let p = &r["packets_per_call"];
        for k in ["tun_rx", "tun_tx", "udp_rx", "udp_tx"] {
            assert!(p[k].as_f64().unwrap_or(0.0) >= 1.0, "{k}: {p}");
        }
        assert!(r["cpu_s_per_gb"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
    }
}
