//! The CI speed smoke test: `tcpnc lab speed` (two gateways joined directly, no emulator) at
//! full speed for a few seconds, modes off and nc, two rounds (the cases alternate; the summary
//! divides each nc run by the off run of its own round): every byte arrives intact and the gateways'
//! own queues drop nothing (input queue, engine transmit/local queues, TUN write and read
//! errors, UDP send errors). No rate is asserted (rates belong to the benchmark's figures,
//! docs/speed.md).
//!
//! TUN offloads (`IFF_VNET_HDR`, the gateways' default): the kernel hands the TUN large TCP
//! segments during a bulk transfer, so one TUN read gives more than one IP packet on average.
//! With `--tun-offload off` every read gives exactly one and the assertion fails.
//!
//! UDP GSO (`udp_gso`, the gateways' default): a flush's same-size datagrams to the peer leave
//! as trains, so a kernel message carries more than one datagram on average. With
//! `--udp-gso off` it carries exactly one and the assertion fails.
//!
//! UDP GRO (`udp_gro`, the gateways' default): the lab's path carries a GSO train whole (its
//! veths do not cut it), and a socket with `UDP_GRO` takes it as one message, so a received
//! message carries more than one datagram on average. With `--udp-gro off` (or `--udp-gso
//! off`: nothing coalesces on the lab's veths, docs/speed.md "UDP GRO") it carries exactly one
//! and the assertion fails.
//!
//! Buffers: each coding gateway's stats file reports the buffers per flow it runs with
//! (`buffers`, the gateway's defaults here: the lab sets none), and a gateway with coding off
//! reports none.
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
        "30MB",
        "--rounds",
        "2",
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
    assert_eq!(results.len(), 4, "off and nc W12 R1.0, two rounds: {v}");
    assert_rounds_and_summary(&v);
    for r in results {
        assert_eq!(r["integrity_ok"], true, "{r}");
        for k in [
            "queue",
            "tun_write_errors",
            "tun_read_errors",
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
        assert_eq!(
            r["tun_offload"], true,
            "the gateways' TUNs run with offloads: {r}"
        );
        let tun_rx = p["tun_rx"].as_f64().unwrap_or(0.0);
        assert!(tun_rx > 1.0, "packets per TUN read with offloads: {p}");
        assert_eq!(r["udp_gso"], true, "the gateways send with UDP GSO: {r}");
        let per_message = p["udp_tx_per_message"].as_f64().unwrap_or(0.0);
        assert!(per_message > 1.0, "datagrams per UDP message with GSO: {p}");
        assert_eq!(r["udp_gro"], true, "the gateways receive with UDP GRO: {r}");
        let rx_per_message = p["udp_rx_per_message"].as_f64().unwrap_or(0.0);
        assert!(
            rx_per_message > 1.0,
            "datagrams per received UDP message with GRO: {p}"
        );
        assert_buffers(r);
    }
}

/// Each run carries its round, the cases alternating; the summary gives each case's runs and
/// nc's goodput over off's of the same round.
fn assert_rounds_and_summary(v: &serde_json::Value) {
    let results = v["results"].as_array().expect("results");
    let rounds: Vec<u64> = results.iter().filter_map(|r| r["round"].as_u64()).collect();
    assert_eq!(rounds, [1, 1, 2, 2], "the cases alternate round by round");
    let summary = v["summary"].as_array().expect("summary");
    assert_eq!(summary.len(), 2, "{v}");
    assert_eq!(
        (&summary[0]["case"], &summary[0]["runs"]),
        (&"off".into(), &2.into())
    );
    assert!(summary[0]["over_off"].is_null());
    let over = &summary[1]["over_off"];
    let (lo, mid, hi) = (
        over["min"].as_f64(),
        over["median"].as_f64(),
        over["max"].as_f64(),
    );
    assert!(
        matches!((lo, mid, hi), (Some(a), Some(b), Some(c)) if 0.0 < a && a <= b && b <= c),
        "nc over off per round: {over}"
    );
}

/// A coding gateway reports the buffers it runs with (the gateway's defaults here: the lab
/// sets none); a gateway with coding off reports none.
fn assert_buffers(r: &serde_json::Value) {
    use tcpnc_gateway::coding_config as cc;
    for side in ["client", "server"] {
        let b = &r["gateways"][side]["buffers"];
        if r["mode"] == "nc" {
            let want = [
                ("buffer_packets", cc::DEFAULT_BUFFER_PACKETS),
                ("buffer_bytes", cc::DEFAULT_BUFFER_BYTES),
                (
                    "decoding_buffer_packets",
                    cc::DEFAULT_DECODING_BUFFER_PACKETS,
                ),
                ("decoding_buffer_bytes", cc::DEFAULT_DECODING_BUFFER_BYTES),
            ];
            for (k, v) in want {
                assert_eq!(b[k].as_u64(), Some(v as u64), "{side} `buffers.{k}`: {b}");
            }
        } else {
            assert!(b.is_null(), "{side}: no buffers with coding off: {b}");
        }
    }
}
