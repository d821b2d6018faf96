//! `RelayArgs::to_args` against the real `tcpnc link` parser: the binary must accept every flag
//! the typed builder writes (it then fails only at binding a socket that is taken).

use std::net::{SocketAddr, UdpSocket};
use std::process::Command;

use tcpnc_relay::RelayArgs;

#[test]
fn the_binary_accepts_the_typed_argv() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let a_listen = taken.local_addr().unwrap();
    let b_listen: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let args = RelayArgs {
        a_peer: Some("127.0.0.1:9".parse().unwrap()),
        b_peer: Some("127.0.0.1:10".parse().unwrap()),
        delay_ms: Some(20.5),
        jitter_ms: Some(1.0),
        reorder: true,
        rate_mbit: Some(10.0),
        burst_bytes: Some(3000),
        queue_packets: Some(100),
        loss_before_queue: true,
        loss: Some(0.1),
        ge: Some("0.01,0.3".into()),
        dup: Some(0.001),
        corrupt: Some(0.0001),
        ab: vec!["jitter-ms=2".into()],
        ba: vec!["loss=0.05".into()],
        seed: 7,
        stats_file: Some(std::env::temp_dir().join("tcpnc-link-args-test.json")),
        ..RelayArgs::new(a_listen, b_listen)
    };
    let out = Command::new(env!("CARGO_BIN_EXE_tcpnc"))
        .arg("link")
        .args(args.to_args())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!("UDP address {a_listen} is already in use")),
        "the argv must parse and fail only at bind: {stderr}"
    );
}
