//! `tcpnc bench gateway`'s driver (`tcpnc_gateway::bench_driver`): a few MB through one real
//! gateway on the fake devices, in modes off and nc. Integrity and the gateway's coding are
//! asserted, never a rate (rates belong to the benchmark's figures, docs/speed.md).

use std::time::Duration;

use tcpnc_gateway::bench_driver::{DriverError, DriverOptions, DriverReport, run};
use tcpnc_gateway::security::CipherSetting;
use tcpnc_proto::settings::CodingMode;
use tcpnc_tunnel::cipher::Cipher;

fn opts(mode: CodingMode, flows: usize, workers: usize) -> DriverOptions {
    DriverOptions {
        mode,
        flows,
        workers,
        bytes: 3_000_000,
        timeout: Duration::from_secs(60),
        ..DriverOptions::default()
    }
}

fn clean(r: &DriverReport) {
    assert!(r.integrity_ok, "{r:#?}");
    assert_eq!(
        r.transfer.delivered_bytes,
        r.bytes_per_flow * r.flows as u64
    );
    assert_eq!(r.transfer.mismatched_bytes, 0);
    assert_eq!(r.drops.total(), 0, "{:?}", r.drops);
    assert!(r.goodput_mbit > 0.0 && r.seconds > 0.0);
    assert!(r.cpu.process_s >= r.cpu.driver_s);
}

#[test]
fn nc_codes_every_byte_through_the_gateway() {
    let r = run(&opts(CodingMode::Nc, 1, 1)).unwrap();
    clean(&r);
    assert_eq!(r.case, "nc W12 R1.0");
    // Every segment went out coded: at least one DATA frame per segment.
    let segments = r.bytes_per_flow.div_ceil(u64::from(r.mss));
    assert!(
        r.nc_data_sent >= segments,
        "{} < {segments}",
        r.nc_data_sent
    );
    assert_eq!(r.workers, 1);
}

/// With `cipher`, the gateway and the driver's peer hold fresh keys: the transfer runs over a
/// Noise session of that cipher, every datagram sealed and opened, none refused.
#[test]
fn nc_through_a_secure_tunnel_of_each_cipher() {
    for (cipher, sessions) in [
        (Cipher::ChaCha20Poly1305, "sessions_chacha20_poly1305"),
        (Cipher::Aes256Gcm, "sessions_aes_256_gcm"),
    ] {
        let r = run(&DriverOptions {
            cipher: Some(CipherSetting::Only(cipher)),
            ..opts(CodingMode::Nc, 1, 1)
        })
        .unwrap();
        clean(&r);
        assert_eq!(r.tunnel, format!("secure (Noise IKpsk2, {cipher})"));
        let t = &r.gateway_tunnel;
        assert!(t[sessions].as_u64().unwrap_or(0) >= 1, "{t}");
        let sealed = t["sealed"].as_u64().unwrap_or(0);
        assert!(sealed >= r.nc_data_sent, "{sealed} < {}", r.nc_data_sent);
        assert!(t["opened"].as_u64().unwrap_or(0) > 0, "{t}");
        assert_eq!(r.transfer.refused, 0);
    }
}

#[test]
fn off_carries_every_byte_uncoded() {
    let r = run(&opts(CodingMode::Off, 2, 2)).unwrap();
    clean(&r);
    assert_eq!(r.nc_data_sent, 0);
    assert!(r.bypass_sent >= r.transfer.delivered_bytes / u64::from(r.mss));
    // Mode off runs its engine on the owner thread whatever `workers` says.
    assert_eq!(r.workers, 1);
}

#[test]
fn nc_with_two_workers_and_four_flows() {
    let r = run(&opts(CodingMode::Nc, 4, 2)).unwrap();
    clean(&r);
    assert!(r.nc_data_sent > 0);
    assert_eq!(r.workers, 2);
    assert_eq!(r.worker_items.len(), 2);
}

#[test]
fn bad_options_are_named() {
    let e = run(&DriverOptions {
        flows: 0,
        ..DriverOptions::default()
    })
    .unwrap_err();
    assert!(
        matches!(e, DriverError::Invalid { name: "flows", .. }),
        "{e}"
    );
    let e = run(&DriverOptions {
        inflight: 100,
        ..DriverOptions::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("inflight"), "{e}");
    // W out of range: the gateway's own configuration check names the key.
    let e = run(&DriverOptions {
        window: 0,
        ..DriverOptions::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("coding.window"), "{e}");
}
