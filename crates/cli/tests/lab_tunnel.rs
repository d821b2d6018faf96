//! `tcpnc lab` with the tunnel's security: encrypted and integrity-only transfers, and gateways
//! killed (`kill -9`) and restarted mid-transfer. Root only (namespaces); elsewhere each test
//! prints why it skips and passes. Everything runs inside namespaces the lab creates.

mod common;

use common::lab::{json_of, lab_capable, tcpnc};
use serde_json::Value;

fn sum_drops(tunnel: &Value) -> u64 {
    tunnel["drops"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

/// Both tunnel modes carry a lossy transfer intact; with keys every datagram was sealed and
/// opened by the tunnel (a session established at each end, nothing dropped on a clean path).
#[test]
fn encrypted_and_integrity_only_transfers_are_intact() {
    if !lab_capable("encrypted_and_integrity_only_transfers_are_intact") {
        return;
    }
    for tunnel in ["secure", "insecure"] {
        let v = json_of(&tcpnc(&[
            "lab",
            "--tunnel",
            tunnel,
            "run",
            "--bytes",
            "3MB",
            "--loss",
            "0.05",
            "--timeout-s",
            "60",
            "--json",
        ]));
        assert_eq!(v["integrity_ok"], true, "{tunnel}");
        assert_eq!(v["settings"]["tunnel"], tunnel);
        for side in ["client", "server"] {
            let t = &v["gateways"][side]["tunnel"];
            assert_eq!(sum_drops(t), 0, "{tunnel} {side}: {t}");
            if tunnel == "secure" {
                assert!(t["opened"].as_u64().unwrap() > 1000, "{t}");
                // Either end may complete the handshake: its own initiation answered, or the
                // peer's (crossing it, e.g. when its own was lost) confirmed.
                let sessions = ["sessions_initiated", "sessions_confirmed"]
                    .map(|k| t[k].as_u64().unwrap())
                    .iter()
                    .sum::<u64>();
                assert!(sessions >= 1, "{t}");
            } else {
                assert!(t.get("opened").is_none(), "{t}");
            }
        }
    }
}

/// `tcpnc lab --cipher C` reaches both gateways' `cipher`: every session of the run, at both
/// ends, is under C (the per-cipher session counters), and the transfer is intact.
#[test]
fn the_cipher_flag_sets_both_gateways_sessions() {
    if !lab_capable("the_cipher_flag_sets_both_gateways_sessions") {
        return;
    }
    let names = ["chacha20-poly1305", "aes-256-gcm"];
    for (i, cipher) in names.iter().enumerate() {
        let v = json_of(&tcpnc(&[
            "lab", "--cipher", cipher, "run", "--bytes", "1MB", "--json",
        ]));
        assert_eq!(v["integrity_ok"], true, "{cipher}");
        for side in ["client", "server"] {
            let t = &v["gateways"][side]["tunnel"];
            let sessions = |name: &str| t[format!("sessions_{}", name.replace('-', "_"))].as_u64();
            assert!(sessions(cipher).unwrap() >= 1, "{cipher} {side}: {t}");
            assert_eq!(sessions(names[1 - i]), Some(0), "{cipher} {side}: {t}");
        }
    }
}

/// `kill -9` of either gateway 3 s into a 20 Mbit/s transfer, restarted at once: the transfer
/// completes intact, or both applications see a reset within 10 s of the kill (the restarted
/// gateway's new boot id makes its peer reset every connection; docs/gateway.md, "Restarts").
#[test]
fn a_gateway_killed_and_restarted_mid_transfer_never_stalls() {
    if !lab_capable("a_gateway_killed_and_restarted_mid_transfer_never_stalls") {
        return;
    }
    for side in ["client", "server"] {
        let out = tcpnc(&[
            "lab",
            "run",
            "--bytes",
            "30MB",
            "--rate-mbit",
            "20",
            "--loss",
            "0.01",
            "--kill-gateway",
            side,
            "--kill-after-s",
            "3",
            "--timeout-s",
            "60",
            "--json",
        ]);
        if out.status.success() {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["integrity_ok"], true, "{side}: completed but corrupted");
            continue;
        }
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let times: Vec<f64> = err
            .split("(+")
            .skip(1)
            .map(|t| t.split(' ').next().unwrap().parse().unwrap())
            .collect();
        assert!(
            err.contains("sink:") && err.contains("source:"),
            "{side}: {err}"
        );
        assert_eq!(
            err.matches("reset").count(),
            2,
            "{side}: both applications reset: {err}"
        );
        assert_eq!(times.len(), 2, "{side}: {err}");
        assert!(times.iter().all(|t| *t < 10.0), "{side}: {err}");
    }
}

/// A host on the path captures every datagram sent to the server gateway and sends replayed,
/// bit-flipped, truncated and garbage copies of each from its own address during a transfer:
/// the transfer is intact, no forged datagram is opened (the server opened no more datagrams
/// than the client sealed, and its engine got exactly the opened ones), none is answered, and
/// the server's endpoint for the client does not move.
#[test]
fn a_spoofing_host_gets_nothing_in_and_nothing_back() {
    if !lab_capable("a_spoofing_host_gets_nothing_in_and_nothing_back") {
        return;
    }
    let v = json_of(&tcpnc(&[
        "lab",
        "run",
        "--bytes",
        "20MB",
        "--loss",
        "0.02",
        "--spoof-s",
        "6",
        "--timeout-s",
        "90",
        "--json",
    ]));
    assert_eq!(v["integrity_ok"], true);
    let spoof = &v["spoof"];
    let sent = spoof["sent"].as_u64().unwrap();
    assert!(sent > 1000, "{spoof}");
    assert_eq!(
        spoof["answers"], 0,
        "a forged datagram was answered: {spoof}"
    );
    let (client, server) = (&v["gateways"]["client"], &v["gateways"]["server"]);
    let opened = server["tunnel"]["opened"].as_u64().unwrap();
    assert!(opened <= client["tunnel"]["sealed"].as_u64().unwrap());
    let empty = server["tunnel"]["keepalives_received"].as_u64().unwrap();
    let engine_in = server["peers"][0]["engine"]["totals"]["datagrams_received"]
        .as_u64()
        .unwrap();
    assert_eq!(
        engine_in,
        opened - empty,
        "only opened datagrams reach the engine"
    );
    let drops = sum_drops(&server["tunnel"]);
    assert!(
        drops as f64 >= 0.9 * sent as f64,
        "{drops} of {sent}: {}",
        server["tunnel"]
    );
    assert_eq!(
        server["peers"][0]["endpoint"], "10.201.2.2:7002",
        "the relay, not the spoofer"
    );
}
