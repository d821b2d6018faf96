//! `tcpnc genkey`, `tcpnc pubkey` and the `insecure = true` warning of `tcpnc up`.

mod common;

use std::process::Command;

use common::run_with_input;

const BIN: &str = env!("CARGO_BIN_EXE_tcpnc");

fn pubkey(private: &str) -> std::process::Output {
    run_with_input(Command::new(BIN).arg("pubkey"), private.as_bytes())
}

#[test]
fn genkey_and_pubkey_are_base64_curve25519() {
    let out = Command::new(BIN).arg("genkey").output().unwrap();
    assert!(out.status.success());
    let key = String::from_utf8(out.stdout).unwrap();
    assert_eq!(key.trim().len(), 44, "{key}");
    assert!(pubkey(&key).status.success());
    // RFC 7748 §6.1: Alice's private key gives Alice's public key.
    let out = pubkey("dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=\n");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\n"
    );
    let out = pubkey("not a key");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a key"));
}

#[test]
fn up_warns_about_insecure_configs() {
    let dir = std::env::temp_dir().join(format!("tcpnc-keys-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("up.toml");
    let config = |security: &str| {
        format!(
            "[interface]\nname = \"t0\"\naddress = \"10.0.0.1/24\"\nlisten = \"127.0.0.1:5000\"\n{security}\n[[peer]]\nendpoint = \"127.0.0.1:5001\"\nallowed_ips = [\"10.0.0.2/32\"]\n"
        )
    };
    std::fs::write(&file, config("insecure = true")).unwrap();
    let out = Command::new(BIN)
        .args(["up", "--check", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: insecure = true"));
    std::fs::write(&file, config("")).unwrap();
    let out = Command::new(BIN)
        .args(["up", "--check", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("interface.private_key"));
    std::fs::remove_dir_all(&dir).unwrap();
}
