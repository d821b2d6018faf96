//! Golden vectors of the tunnel envelope: the ```hex envelope:NAME blocks of docs/wire.md §10
//! must be exactly what this crate produces from the documented keys, ephemerals, timestamp,
//! indices and frames, and must open again to those frames.

use std::time::Duration;

use tcpnc_tunnel::handshake::{
    InitiationFields, initiate, read_initiation, read_response, respond, tai64n,
};
use tcpnc_tunnel::outer::{Outer, parse};
use tcpnc_tunnel::session::{Session, Timers};
use tcpnc_tunnel::{Cipher, Key, integrity};

fn hex32(s: &str) -> Key {
    Key(hex(s).try_into().unwrap())
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// (name, bytes) of every envelope block of docs/wire.md.
fn blocks() -> Vec<(String, Vec<u8>)> {
    let doc = include_str!("../../../docs/wire.md");
    tcpnc_wire::spec_vectors::hex_blocks(doc, "envelope").unwrap()
}

/// The KEEPALIVE probe of docs/wire.md §6 (`keepalive-probe`).
const PROBE: [u8; 12] = [2, 4, 0, 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef];

/// Everything the vectors are made of, as docs/wire.md §10.7 lists it: the ChaCha20-Poly1305
/// handshake and transport datagrams, then the AES-256-GCM ones (names prefixed `aes-`).
fn vectors() -> Vec<(String, Vec<u8>)> {
    let mut v = vec![("integrity-keepalive".into(), integrity::seal(&PROBE))];
    v.extend(sealed(Cipher::ChaCha20Poly1305, ""));
    v.extend(
        sealed(Cipher::Aes256Gcm, "aes-")
            .into_iter()
            .filter(|(n, _)| !n.ends_with("-empty")),
    );
    v
}

/// The handshake and transport vectors under `cipher`, their names prefixed `prefix`.
fn sealed(cipher: Cipher, prefix: &str) -> Vec<(String, Vec<u8>)> {
    // RFC 7748 §6.1 keys: Alice initiates, Bob responds.
    let alice = hex32("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    let bob = hex32("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
    let (e_i, e_r) = (Key([0x11; 32]), Key([0x22; 32]));
    let psk = Key([0; 32]);
    let stamp = tai64n(Duration::from_secs(1_700_000_000));
    let fields = InitiationFields {
        sender: 0x0102_0304,
        timestamp: stamp,
        boot_id: 0x1111_2222_3333_4444,
        cipher,
    };
    let (init, m1) = initiate(&alice, &bob.public().unwrap(), &psk, fields, Some(&e_i)).unwrap();
    let Ok(Outer::Initiation(p1)) = parse(&m1) else {
        panic!("initiation")
    };
    // The responder prefers the other cipher: it still reads the initiation, in the
    // initiator's.
    let other = &cipher.preference()[1..];
    assert!(read_initiation(&bob, &p1, other, None).is_err());
    let mut order = cipher.preference();
    order.reverse();
    let accepted = read_initiation(&bob, &p1, &order, Some(&e_r)).unwrap();
    assert_eq!(accepted.cipher, cipher);
    assert_eq!(accepted.remote, alice.public().unwrap());
    assert_eq!(
        (accepted.timestamp, accepted.boot_id),
        (stamp, 0x1111_2222_3333_4444)
    );
    let (keys_r, m2) = respond(accepted, &psk, 0x0a0b_0c0d, 0x5555_6666_7777_8888).unwrap();
    let Ok(Outer::Response(p2)) = parse(&m2) else {
        panic!("response")
    };
    let (keys_i, boot_r) = read_response(init, &p2).unwrap();
    assert_eq!(boot_r, 0x5555_6666_7777_8888);
    let t = Timers::default();
    let mut a = Session::new(keys_i, 0x0102_0304, 0x0a0b_0c0d, Duration::ZERO, &t);
    let mut b = Session::new(keys_r, 0x0a0b_0c0d, 0x0102_0304, Duration::ZERO, &t);
    let t0 = a.seal(&PROBE).unwrap();
    let t1 = a.seal(&PROBE).unwrap();
    let empty = b.seal(&[]).unwrap();
    // Each opens on the other side.
    let open = |s: &mut Session, d: &[u8]| {
        let Ok(Outer::Transport(x)) = parse(d) else {
            panic!("transport")
        };
        s.open(x.counter, x.sealed, Duration::ZERO, &t).unwrap()
    };
    assert_eq!(open(&mut b, &t0), PROBE);
    assert_eq!(open(&mut b, &t1), PROBE);
    assert!(open(&mut a, &empty).is_empty());
    [
        ("initiation", m1),
        ("response", m2),
        ("transport-keepalive-0", t0),
        ("transport-keepalive-1", t1),
        ("transport-empty", empty),
    ]
    .into_iter()
    .map(|(n, b)| (format!("{prefix}{n}"), b))
    .collect()
}

#[test]
fn envelope_vectors_match_the_document() {
    let computed = vectors();
    if std::env::var_os("PRINT_ENVELOPE_VECTORS").is_some() {
        for (name, bytes) in &computed {
            println!("{name}:");
            for chunk in bytes.chunks(16) {
                println!(
                    "{}",
                    chunk
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
            }
        }
    }
    assert_eq!(blocks(), computed);
}
