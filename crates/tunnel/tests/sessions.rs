//! Two tunnels with fake time: handshake, transport, replay and tamper drops, rekey on time and
//! on message count, retries with backoff, a restarted peer, roaming, bounded state.

use std::net::SocketAddr;
use std::time::Duration;

use tcpnc_tunnel::{
    Cipher, Drop, Key, Limits, PeerKeys, Received, Timers, Transmit, Tunnel, TunnelConfig,
    TunnelEvent,
};

const A_ADDR: &str = "192.0.2.1:5000";
const B_ADDR: &str = "192.0.2.2:5000";

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

struct Pair {
    a: Tunnel,
    b: Tunnel,
    a_key: Key,
    b_key: Key,
}

fn config(private: Key, peer: Key, timers: Timers, seed: u64, cipher: Cipher) -> TunnelConfig {
    TunnelConfig {
        private,
        peers: vec![PeerKeys::new(peer, None)],
        timers,
        limits: Limits::default(),
        seed,
        unix_origin: Duration::from_secs(1_700_000_000),
        boot_id: seed,
        cipher,
    }
}

fn pair(timers: Timers) -> Pair {
    pair_preferring(timers, Cipher::default(), Cipher::default())
}

/// A pair whose tunnels prefer ciphers `ca` and `cb`.
fn pair_preferring(timers: Timers, ca: Cipher, cb: Cipher) -> Pair {
    let (a_key, b_key) = (Key::generate().unwrap(), Key::generate().unwrap());
    let a = Tunnel::new(
        config(a_key, b_key.public().unwrap(), timers, 1, ca),
        Duration::ZERO,
    )
    .unwrap();
    let b = Tunnel::new(
        config(b_key, a_key.public().unwrap(), timers, 2, cb),
        Duration::ZERO,
    )
    .unwrap();
    Pair { a, b, a_key, b_key }
}

fn drain(t: &mut Tunnel) -> Vec<Transmit> {
    std::iter::from_fn(|| t.poll_transmit()).collect()
}

/// Delivers everything queued both ways until quiet; returns frames received by (a, b).
fn exchange(p: &mut Pair, now: Duration) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (mut at_a, mut at_b) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let from_a = drain(&mut p.a);
        let from_b = drain(&mut p.b);
        if from_a.is_empty() && from_b.is_empty() {
            break;
        }
        for t in from_a {
            if let Ok(Received::Frame { frame, .. }) = p.b.receive(now, addr(A_ADDR), &t.datagram) {
                at_b.push(frame);
            }
        }
        for t in from_b {
            if let Ok(Received::Frame { frame, .. }) = p.a.receive(now, addr(B_ADDR), &t.datagram) {
                at_a.push(frame);
            }
        }
    }
    (at_a, at_b)
}

#[test]
fn handshake_then_frames_both_ways_and_staged_frames_are_delivered() {
    let mut p = pair(Timers::default());
    p.a.send(ms(0), 0, b"first");
    p.a.send(ms(0), 0, b"second");
    assert!(!p.a.has_session(0, ms(0)));
    let (_, at_b) = exchange(&mut p, ms(1));
    assert_eq!(at_b, vec![b"first".to_vec(), b"second".to_vec()]);
    assert!(p.a.has_session(0, ms(1)));
    // B sends on its `next` session only once A used it (it did: the staged frames).
    assert!(p.b.has_session(0, ms(1)));
    p.b.send(ms(2), 0, b"reply");
    let (at_a, _) = exchange(&mut p, ms(2));
    assert_eq!(at_a, vec![b"reply".to_vec()]);
    assert_eq!(p.a.stats().sessions_initiated, 1);
    assert_eq!(p.b.stats().sessions_confirmed, 1);
    assert_eq!(p.a.stats().drops.total() + p.b.stats().drops.total(), 0);
}

/// The initiator chooses the cipher: tunnels preferring different ones connect either way, and
/// the session is in the initiator's (counted at both ends).
#[test]
fn tunnels_preferring_different_ciphers_connect_in_the_initiators() {
    for (ca, cb) in [
        (Cipher::Aes256Gcm, Cipher::ChaCha20Poly1305),
        (Cipher::ChaCha20Poly1305, Cipher::Aes256Gcm),
        (Cipher::Aes256Gcm, Cipher::Aes256Gcm),
    ] {
        let mut p = pair_preferring(Timers::default(), ca, cb);
        p.a.send(ms(0), 0, b"first");
        let (_, at_b) = exchange(&mut p, ms(1));
        assert_eq!(at_b, vec![b"first".to_vec()], "{ca} to {cb}");
        p.b.send(ms(2), 0, b"reply");
        let (at_a, _) = exchange(&mut p, ms(2));
        assert_eq!(at_a, vec![b"reply".to_vec()], "{ca} to {cb}");
        let aes = |t: &Tunnel| t.stats().sessions_aes_256_gcm;
        let chacha = |t: &Tunnel| t.stats().sessions_chacha20_poly1305;
        let want = u64::from(ca == Cipher::Aes256Gcm);
        assert_eq!((aes(&p.a), aes(&p.b)), (want, want), "{ca} to {cb}");
        assert_eq!((chacha(&p.a), chacha(&p.b)), (1 - want, 1 - want));
    }
}

#[test]
fn replays_tampering_truncation_and_garbage_are_dropped_unanswered() {
    let mut p = pair(Timers::default());
    p.a.send(ms(0), 0, b"x");
    exchange(&mut p, ms(0));
    p.a.send(ms(1), 0, b"payload");
    let d = drain(&mut p.a).remove(0).datagram;
    assert!(matches!(
        p.b.receive(ms(1), addr(A_ADDR), &d),
        Ok(Received::Frame { .. })
    ));
    assert_eq!(p.b.receive(ms(1), addr(A_ADDR), &d), Err(Drop::Replayed));
    for bit in 0..d.len() * 8 {
        let mut bad = d.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        assert!(p.b.receive(ms(1), addr(A_ADDR), &bad).is_err(), "bit {bit}");
    }
    for cut in 0..d.len() {
        assert!(p.b.receive(ms(1), addr(A_ADDR), &d[..cut]).is_err());
    }
    let mut fake_init = vec![0x21, 0, 0, 0];
    fake_init.resize(tcpnc_tunnel::outer::INITIATION_LEN, 7);
    for junk in [&b""[..], b"\x01\x01garbage", &[0x24; 40], &fake_init] {
        assert!(p.b.receive(ms(1), addr(A_ADDR), junk).is_err());
    }
    assert!(drain(&mut p.b).is_empty(), "nothing answered");
    let drops = p.b.stats().drops;
    assert!(drops.get(Drop::BadTag) > 0 && drops.get(Drop::UnknownIndex) > 0);
    assert!(drops.get(Drop::Malformed) > 0 && drops.get(Drop::BadMac) > 0);
    assert!(
        drops.get(Drop::Replayed) >= 1,
        "the replay, and flips outside the tag that keep the counter"
    );
}

#[test]
fn a_replayed_initiation_is_stale_and_unanswered() {
    let mut p = pair(Timers::default());
    p.a.send(ms(0), 0, b"x");
    let init = drain(&mut p.a).remove(0).datagram;
    assert!(p.b.receive(ms(0), addr(A_ADDR), &init).is_ok());
    assert_eq!(drain(&mut p.b).len(), 1);
    assert_eq!(
        p.b.receive(ms(5), addr(A_ADDR), &init),
        Err(Drop::StaleInitiation)
    );
    assert!(drain(&mut p.b).is_empty());
    // A stranger that knows B's public key but is no peer.
    let stranger = Key::generate().unwrap();
    let mut s = Tunnel::new(
        config(
            stranger,
            p.b_key.public().unwrap(),
            Timers::default(),
            9,
            Cipher::default(),
        ),
        ms(0),
    )
    .unwrap();
    s.send(ms(0), 0, b"hi");
    let init = drain(&mut s).remove(0).datagram;
    assert_eq!(
        p.b.receive(ms(6), addr("198.51.100.1:1"), &init),
        Err(Drop::UnknownPeer)
    );
    assert!(drain(&mut p.b).is_empty());
    let _ = p.a_key;
}

#[test]
fn rekey_after_messages_and_after_time_keep_traffic_flowing() {
    let timers = Timers {
        rekey_after_messages: 5,
        rekey_after_time: Duration::from_secs(10),
        ..Timers::default()
    };
    let mut p = pair(timers);
    let mut got = 0;
    for i in 0..20u64 {
        p.a.send(ms(i), 0, &i.to_be_bytes());
        got += exchange(&mut p, ms(i)).1.len();
    }
    assert_eq!(got, 20);
    assert!(p.a.stats().sessions_initiated >= 3, "{:?}", p.a.stats());
    let before = p.a.stats().sessions_initiated;
    p.a.send(Duration::from_secs(11), 0, b"late");
    let (_, at_b) = exchange(&mut p, Duration::from_secs(11));
    assert_eq!(at_b, vec![b"late".to_vec()]);
    assert_eq!(
        p.a.stats().sessions_initiated,
        before + 1,
        "rekeyed on time"
    );
    assert_eq!(p.a.poll_event(), None, "a rekey is no restart");
    assert_eq!(p.b.poll_event(), None);
    let (sessions, _, _) = p.a.state_size();
    assert!(sessions <= 3);
}

#[test]
fn retries_back_off_then_give_up() {
    let mut p = pair(Timers::default());
    p.a.send(ms(0), 0, b"x");
    drain(&mut p.a); // lost
    let mut sent_at = Vec::new();
    let mut now = ms(0);
    while now < Duration::from_secs(100) {
        now =
            p.a.poll_timeout()
                .unwrap_or(now + Duration::from_secs(1))
                .max(now + ms(1));
        p.a.handle_timeout(now);
        if !drain(&mut p.a).is_empty() {
            sent_at.push(now.as_millis() as u64);
        }
    }
    let gaps: Vec<u64> = sent_at.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(&gaps[..3], &[2000, 4000, 5000], "{sent_at:?}");
    assert_eq!(sent_at[0], 1000);
    assert!(*sent_at.last().unwrap() <= 90_000);
    assert_eq!(p.a.stats().handshakes_given_up, 1);
    assert_eq!(p.a.state_size().1, 0, "staged frames dropped on give-up");
}

/// Both ends initiate; A's initiation is lost and B's completes. Once B's first datagram
/// confirms the session at A, A stops retrying its own initiation and sends the frame it had
/// staged for it at once, not after its 1 s retry and a second round trip.
#[test]
fn a_confirmed_responder_session_ends_the_crossing_initiation() {
    let mut p = pair(Timers::default());
    p.a.send(ms(0), 0, b"from a");
    drain(&mut p.a); // A's initiation, lost
    p.b.send(ms(0), 0, b"from b");
    let (at_a, at_b) = exchange(&mut p, ms(10));
    assert_eq!(at_a, vec![b"from b".to_vec()]);
    assert_eq!(
        at_b,
        vec![b"from a".to_vec()],
        "staged frame sent on confirmation"
    );
    assert_eq!(p.a.stats().sessions_confirmed, 1);
    assert_eq!(p.b.stats().sessions_initiated, 1);
    assert_eq!(p.a.state_size().1, 0, "nothing left staged");
    p.a.handle_timeout(Duration::from_secs(3));
    let sent = drain(&mut p.a);
    assert!(
        sent.is_empty(),
        "no retry of the spent initiation: {:?}",
        p.a.stats()
    );
    assert_eq!(p.a.stats().initiations_sent, 1);
}

#[test]
fn a_restarted_peer_is_rehandshaken_within_the_dead_peer_time() {
    let timers = Timers::default();
    let mut p = pair(timers);
    p.a.send(ms(0), 0, b"x");
    exchange(&mut p, ms(0));
    // B restarts: new tunnel, same key, no sessions.
    p.b = Tunnel::new(
        config(
            p.b_key,
            p.a_key.public().unwrap(),
            timers,
            3,
            Cipher::default(),
        ),
        ms(100),
    )
    .unwrap();
    let mut delivered_at = None;
    for step in 1..200u64 {
        let now = ms(100 * step);
        p.a.send(now, 0, b"data");
        p.a.handle_timeout(now);
        if !exchange(&mut p, now).1.is_empty() {
            delivered_at = Some(now);
            break;
        }
    }
    let t = delivered_at.expect("delivered again");
    assert!(t <= timers.dead_after + ms(200), "{t:?}");
    assert!(p.b.stats().drops.get(Drop::UnknownIndex) > 0);
    // A learns that B restarted (another boot id); B, fresh, has nothing to compare.
    assert_eq!(
        p.a.poll_event(),
        Some(TunnelEvent::PeerRestarted { peer: 0 })
    );
    assert_eq!(p.a.poll_event(), None);
    assert_eq!(p.b.poll_event(), None);
}

#[test]
fn roaming_the_peer_is_known_by_its_keys_not_its_address() {
    let mut p = pair(Timers::default());
    p.a.send(ms(0), 0, b"x");
    let init = drain(&mut p.a).remove(0).datagram;
    assert_eq!(
        p.b.receive(ms(0), addr("203.0.113.9:777"), &init),
        Ok(Received::Control { peer: 0 })
    );
    let resp = drain(&mut p.b).remove(0);
    assert_eq!(resp.peer, 0);
    p.a.receive(ms(0), addr(B_ADDR), &resp.datagram).unwrap();
    for t in drain(&mut p.a) {
        // Same session from yet another address.
        assert!(
            p.b.receive(ms(1), addr("203.0.113.10:1"), &t.datagram)
                .is_ok()
        );
    }
}

#[test]
fn a_handshake_flood_is_rate_limited_and_state_stays_bounded() {
    let mut p = pair(Timers::default());
    // Valid initiations (the real peer's key, each with a fresh timestamp) from many addresses.
    let b_pub = p.b_key.public().unwrap();
    let psk = Key([0; 32]);
    let mut answered = 0;
    for i in 0..2000u64 {
        let now = ms(i);
        let stamp = tcpnc_tunnel::handshake::tai64n(Duration::from_secs(1_700_000_000) + now);
        let fields = tcpnc_tunnel::handshake::InitiationFields {
            sender: i as u32,
            timestamp: stamp,
            boot_id: 1,
            cipher: tcpnc_tunnel::Cipher::default(),
        };
        let (_, init) =
            tcpnc_tunnel::handshake::initiate(&p.a_key, &b_pub, &psk, fields, None).unwrap();
        let from: SocketAddr = format!("10.{}.{}.1:9", i % 200, i / 200).parse().unwrap();
        if p.b.receive(now, from, &init).is_ok() {
            answered += 1;
        }
        drain(&mut p.b);
    }
    // 2 s of flood: at most the global burst plus 2 s at the global rate.
    let l = Limits::default();
    assert!(
        answered as f64 <= l.global_burst + 2.0 * l.global_rate + 1.0,
        "{answered}"
    );
    assert!(p.b.stats().drops.get(Drop::RateLimited) > 0);
    let (sessions, staged, sources) = p.b.state_size();
    assert!(sessions <= 3 && staged == 0 && sources <= l.max_sources);
}

proptest::proptest! {
    /// The fuzz targets' drivers on random input (the fuzzers run them for longer).
    #[test]
    fn fuzz_drivers_hold_on_random_input(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
        tcpnc_tunnel::fuzzing::receive_any(&data);
        tcpnc_tunnel::fuzzing::handshake_any(&data);
    }
}
