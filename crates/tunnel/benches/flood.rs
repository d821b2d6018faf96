//! What each kind of unauthenticated datagram costs a gateway with keys, per datagram: garbage,
//! a replayed or forged transport datagram, a handshake initiation without our public key
//! (bad mac1), and a well-formed initiation over the rate limit; against an authenticated one.
//! With these costs a flood's share of one core is rate × cost (docs/lab.md, "Tunnel security: what it costs").
//!
//! `cargo bench -p tcpnc-tunnel --bench flood`.

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use tcpnc_tunnel::handshake::{InitiationFields, initiate, tai64n};
use tcpnc_tunnel::{Cipher, Key, Limits, PeerKeys, Received, Timers, Tunnel, TunnelConfig};

fn tunnel(private: Key, peer: Key, limits: Limits) -> Tunnel {
    let config = TunnelConfig {
        private,
        peers: vec![PeerKeys::new(peer.public().unwrap(), None)],
        timers: Timers::default(),
        limits,
        seed: 1,
        unix_origin: Duration::from_secs(1_700_000_000),
        boot_id: 1,
        cipher: Cipher::default(),
    };
    Tunnel::new(config, Duration::ZERO).unwrap()
}

/// Two tunnels with a session; `a` has `n` sealed 1400-byte datagrams for `b`.
fn pair(n: usize) -> (Tunnel, Tunnel, Vec<Vec<u8>>, Key, Key) {
    let (ka, kb) = (Key::generate().unwrap(), Key::generate().unwrap());
    let (mut a, mut b) = (
        tunnel(ka, kb, Limits::default()),
        tunnel(kb, ka, Limits::default()),
    );
    let from: SocketAddr = "192.0.2.1:1".parse().unwrap();
    a.send(Duration::ZERO, 0, b"hello");
    for _ in 0..4 {
        while let Some(t) = a.poll_transmit() {
            let _ = b.receive(Duration::ZERO, from, &t.datagram);
        }
        while let Some(t) = b.poll_transmit() {
            let _ = a.receive(Duration::ZERO, from, &t.datagram);
        }
    }
    let frame = vec![7u8; 1400];
    let sealed = (0..n)
        .map(|_| {
            a.send(Duration::ZERO, 0, &frame);
            a.poll_transmit().unwrap().datagram
        })
        .collect();
    (a, b, sealed, ka, kb)
}

fn bench(c: &mut Criterion) {
    let from: SocketAddr = "198.51.100.7:9".parse().unwrap();
    let mut g = c.benchmark_group("per_datagram");
    let (mut a, mut b, sealed, ka, kb) = pair(2);
    let frame = vec![7u8; 1400];
    g.bench_function("authenticated_1400B", |bch| {
        bch.iter_batched(
            || {
                a.send(Duration::ZERO, 0, &frame);
                a.poll_transmit().unwrap().datagram
            },
            |d| {
                matches!(
                    b.receive(Duration::ZERO, from, &d),
                    Ok(Received::Frame { .. })
                )
            },
            BatchSize::SmallInput,
        )
    });
    let replay = sealed[0].clone();
    g.bench_function("replayed_1400B", |bch| {
        bch.iter(|| b.receive(Duration::ZERO, from, black_box(&replay)).is_err())
    });
    let mut forged = sealed[1].clone();
    forged[20] ^= 1;
    let mut counter = 10_000_000u64;
    g.bench_function("forged_1400B", |bch| {
        bch.iter(|| {
            counter += 1;
            forged[8..16].copy_from_slice(&counter.to_be_bytes());
            b.receive(Duration::ZERO, from, black_box(&forged)).is_err()
        })
    });
    let garbage = vec![0x5au8; 1400];
    g.bench_function("garbage_1400B", |bch| {
        bch.iter(|| {
            b.receive(Duration::ZERO, from, black_box(&garbage))
                .is_err()
        })
    });
    let stranger = Key::generate().unwrap();
    let stamp = tai64n(Duration::from_secs(1_700_000_001));
    let fields = InitiationFields {
        sender: 1,
        timestamp: stamp,
        boot_id: 1,
        cipher: Cipher::default(),
    };
    let (_, bad_mac) = initiate(
        &stranger,
        &stranger.public().unwrap(),
        &Key([0; 32]),
        fields,
        None,
    )
    .unwrap();
    g.bench_function("initiation_bad_mac1", |bch| {
        bch.iter(|| {
            b.receive(Duration::ZERO, from, black_box(&bad_mac))
                .is_err()
        })
    });
    let (_, valid) = initiate(&ka, &kb.public().unwrap(), &Key([0; 32]), fields, None).unwrap();
    let limits = Limits {
        global_rate: 0.0,
        global_burst: 0.0,
        ..Limits::default()
    };
    let mut limited = tunnel(kb, ka, limits);
    g.bench_function("initiation_rate_limited", |bch| {
        bch.iter(|| {
            limited
                .receive(Duration::ZERO, from, black_box(&valid))
                .is_err()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
