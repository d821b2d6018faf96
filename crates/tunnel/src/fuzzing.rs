//! Fuzzing drivers, shared by the cargo-fuzz targets (`fuzz/fuzz_targets/`) and a proptest in
//! the normal test suite. Not part of the stable API.

use std::time::Duration;

use crate::handshake::{mac1, mac1_key};
use crate::outer::{self, MAC_LEN, TYPE_INITIATION, TYPE_RESPONSE};
use crate::{Key, Limits, PeerKeys, Received, Timers, Tunnel, TunnelConfig};

const RESPONDER: Key = Key([0x5d; 32]);
const INITIATOR: Key = Key([0x77; 32]);

fn responder() -> Tunnel {
    let peer = INITIATOR.public().expect("curve25519");
    let config = TunnelConfig {
        private: RESPONDER,
        peers: vec![PeerKeys::new(peer, None)],
        timers: Timers::default(),
        limits: Limits {
            global_rate: 1e9,
            global_burst: 1e9,
            source_rate: 1e9,
            source_burst: 1e9,
            max_sources: 16,
        },
        seed: 1,
        unix_origin: Duration::from_secs(1_700_000_000),
        boot_id: 7,
        cipher: crate::Cipher::default(),
    };
    Tunnel::new(config, Duration::ZERO).expect("tunnel")
}

/// Any datagram: no panic; nothing is ever sent in answer to it unless it was a handshake
/// initiation that passed Noise; no frame comes out of an unauthenticated datagram.
///
/// # Panics
/// When one of those properties is violated.
pub fn receive_any(data: &[u8]) {
    let mut t = responder();
    let from = "192.0.2.1:1".parse().expect("address");
    let r = t.receive(Duration::from_secs(1), from, data);
    assert!(
        !matches!(r, Ok(Received::Frame { .. })),
        "a frame from a forged datagram"
    );
    let answered = t.poll_transmit().is_some();
    let initiation = data.first() == Some(&TYPE_INITIATION) && r.is_ok();
    assert_eq!(
        answered, initiation,
        "answered without a valid initiation: {r:?}"
    );
    let (sessions, staged, _) = t.state_size();
    assert!(sessions <= 1 && staged == 0);
}

/// `data` as the body of a handshake message (initiation if `data[0]` is even, else response)
/// with a valid mac1, so that the fuzzer reaches the Noise parser.
pub fn handshake_any(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let (ty, len) = if selector % 2 == 0 {
        (TYPE_INITIATION, outer::INITIATION_LEN)
    } else {
        (TYPE_RESPONSE, outer::RESPONSE_LEN)
    };
    let mut msg = vec![ty, 0, 0, 0];
    msg.extend_from_slice(body);
    msg.resize(len - MAC_LEN, 0);
    let responder_public = RESPONDER.public().expect("curve25519");
    let mac = mac1(&mac1_key(&responder_public), &msg);
    msg.extend_from_slice(&mac);
    receive_any(&msg);
}
