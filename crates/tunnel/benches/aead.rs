//! CPU cost per datagram of the tunnel envelope: sealing and opening a transport datagram
//! (ChaCha20-Poly1305 and AES-256-GCM via snow and ring, plus the header and the replay window)
//! against the integrity mode's CRC-32C, at 64 B and at a full 1400 B frame; and one handshake
//! (both messages).
//!
//! `cargo bench -p tcpnc-tunnel`; figures in docs/lab.md ("Tunnel security: what it costs").

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tcpnc_tunnel::handshake::{
    InitiationFields, initiate, read_initiation, read_response, respond, tai64n,
};
use tcpnc_tunnel::outer::{Outer, parse};
use tcpnc_tunnel::session::{Session, Timers};
use tcpnc_tunnel::{Cipher, Key, integrity};

fn sessions(cipher: Cipher) -> (Session, Session) {
    handshake(&Key::generate().unwrap(), &Key::generate().unwrap(), cipher)
}

/// A whole handshake between static keys `a` and `b`: the sessions of both sides.
fn handshake(a: &Key, b: &Key, cipher: Cipher) -> (Session, Session) {
    let psk = Key([0; 32]);
    let fields = InitiationFields {
        sender: 1,
        timestamp: tai64n(Duration::from_secs(1_700_000_000)),
        boot_id: 1,
        cipher,
    };
    let (init, m1) = initiate(a, &b.public().unwrap(), &psk, fields, None).unwrap();
    let Ok(Outer::Initiation(p1)) = parse(&m1) else {
        unreachable!()
    };
    let acc = read_initiation(b, &p1, &[cipher], None).unwrap();
    let (kb, m2) = respond(acc, &psk, 2, 2).unwrap();
    let Ok(Outer::Response(p2)) = parse(&m2) else {
        unreachable!()
    };
    let (ka, _) = read_response(init, &p2).unwrap();
    let t = Timers::default();
    (
        Session::new(ka, 1, 2, Duration::ZERO, &t),
        Session::new(kb, 2, 1, Duration::ZERO, &t),
    )
}

fn bench(c: &mut Criterion) {
    let t = Timers::default();
    for size in [64usize, 1400] {
        let frame = vec![0x5a; size];
        let mut g = c.benchmark_group(format!("envelope_{size}B"));
        g.throughput(Throughput::Bytes(size as u64));
        for cipher in Cipher::ALL {
            let (mut a, _) = sessions(cipher);
            g.bench_function(format!("seal_{cipher}"), |bch| {
                bch.iter(|| a.seal(black_box(&frame)).unwrap())
            });
            let (mut a, mut b) = sessions(cipher);
            g.bench_function(format!("seal_open_{cipher}"), |bch| {
                bch.iter(|| {
                    let d = a.seal(black_box(&frame)).unwrap();
                    let Ok(Outer::Transport(x)) = parse(&d) else {
                        unreachable!()
                    };
                    b.open(x.counter, x.sealed, Duration::ZERO, &t).unwrap()
                })
            });
        }
        g.bench_function("seal_open_crc32c", |bch| {
            bch.iter(|| {
                let d = integrity::seal(black_box(&frame));
                integrity::open(&d).unwrap().len()
            })
        });
        g.finish();
    }
    let (ka, kb) = (Key::generate().unwrap(), Key::generate().unwrap());
    c.bench_function("handshake_both_messages", |bch| {
        bch.iter(|| handshake(&ka, &kb, Cipher::default()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
