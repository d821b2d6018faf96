//! UDP GRO receives across loopback (no root): a GSO sender's trains reach a socket with
//! `UDP_GRO` on as coalesced messages (loopback passes the GSO train whole, and a GRO socket
//! takes it as one message), and the batched receive hands out exactly the datagrams sent, in
//! order, each with its source, in fewer kernel messages than datagrams; with GRO off the
//! same datagrams arrive one per message.

use std::net::SocketAddr;
use std::time::Duration;

use tcpnc_io::{RecvSlots, SysUdp, Udp};

fn bind() -> SysUdp {
    SysUdp::bind("127.0.0.1:0".parse().unwrap()).unwrap()
}

/// Distinct contents: datagram `i` is `len` bytes of `i` (its first two bytes its index when
/// it has room).
fn datagram(i: usize, len: usize) -> Vec<u8> {
    let mut d = vec![i as u8; len];
    if len >= 2 {
        d[..2].copy_from_slice(&(i as u16).to_be_bytes());
    }
    d
}

/// Sends `batch` with repeated `send_batch` calls; returns the kernel messages used.
fn send_all(tx: &SysUdp, batch: &[(Vec<u8>, SocketAddr)]) -> usize {
    let (mut at, mut messages) = (0, 0);
    while at < batch.len() {
        let s = tx.send_batch(&batch[at..]).unwrap();
        assert!(s.datagrams > 0);
        at += s.datagrams;
        messages += s.messages;
    }
    messages
}

/// Receives until `want` datagrams arrived or a second passes without one; returns them with
/// their sources and the kernel messages they came in.
fn receive(rx: &SysUdp, want: usize) -> (Vec<(Vec<u8>, SocketAddr)>, usize) {
    let mut slots = RecvSlots::new(8, 65536);
    let (mut got, mut messages) = (Vec::new(), 0);
    while got.len() < want {
        rx.recv_batch(&mut slots, Duration::from_secs(1)).unwrap();
        if slots.is_empty() {
            break;
        }
        messages += slots.messages();
        for i in 0..slots.len() {
            let (d, from) = slots.get(i).unwrap();
            got.push((d.to_vec(), from));
        }
    }
    (got, messages)
}

/// What one run sent and received.
struct Run {
    want: Vec<(Vec<u8>, SocketAddr)>,
    got: Vec<(Vec<u8>, SocketAddr)>,
    rx_messages: usize,
    tx_messages: usize,
}

/// A GSO sender's trains (same size, a shorter last one; 64 × 1000 B, the most the sender
/// puts in one message; odd singles) and a second, plain sender's datagrams (one empty) in
/// between, to a receiver with GRO `gro`; everything received.
fn run(gro: bool) -> Run {
    let (tx, plain, rx) = (bind(), bind(), bind());
    assert!(
        tx.set_gso(true),
        "the kernel has UDP_SEGMENT (Linux >= 4.18)"
    );
    assert_eq!(
        rx.set_gro(gro),
        gro,
        "the kernel has UDP_GRO (Linux >= 5.0)"
    );
    assert_eq!(rx.gro(), gro);
    let to = rx.local_addr().unwrap();
    let (a, b) = (tx.local_addr().unwrap(), plain.local_addr().unwrap());
    let first: Vec<usize> = [vec![1200; 30], vec![700, 1300], vec![300; 40], vec![100, 5]].concat();
    let second: Vec<usize> = [vec![1000; 64], vec![1200, 1200, 1199, 33]].concat();
    let make = |sizes: &[usize], base: usize| -> Vec<(Vec<u8>, SocketAddr)> {
        let d = sizes.iter().enumerate();
        d.map(|(i, &len)| (datagram(base + i, len), to)).collect()
    };
    let (one, two) = (make(&first, 0), make(&second, first.len()));
    let between = [datagram(200, 77), Vec::new(), datagram(201, 1500)];
    // Each part is received before the next is sent: without GRO the trains arrive as single
    // datagrams, which would overflow a default (unprivileged) receive buffer at once.
    let (mut want, mut got, mut rx_messages) = (Vec::new(), Vec::new(), 0);
    let mut take = |sent: Vec<(Vec<u8>, SocketAddr)>| {
        let (g, m) = receive(&rx, sent.len());
        want.extend(sent);
        got.extend(g);
        rx_messages += m;
    };
    let mut tx_messages = send_all(&tx, &one);
    take(one.into_iter().map(|(d, _)| (d, a)).collect());
    for d in &between {
        plain.send_to(d, to).unwrap();
    }
    take(between.into_iter().map(|d| (d, b)).collect());
    tx_messages += send_all(&tx, &two);
    take(two.into_iter().map(|(d, _)| (d, a)).collect());
    assert!(tx.gso(), "loopback takes GSO sends");
    Run {
        want,
        got,
        rx_messages,
        tx_messages,
    }
}

/// With GRO on: every datagram arrives once, intact, in order, with its sender's address,
/// and the kernel coalesced the trains (fewer messages than datagrams).
#[test]
fn gro_hands_out_every_datagram_separately() {
    let r = run(true);
    assert_eq!(r.got.len(), r.want.len(), "every datagram arrives once");
    assert!(r.got == r.want, "intact, in order, with the right sources");
    eprintln!(
        "GRO on: {} datagrams in {} received messages ({} sent messages)",
        r.want.len(),
        r.rx_messages,
        r.tx_messages
    );
    assert!(
        r.rx_messages < r.want.len(),
        "loopback coalesces GSO trains for a GRO socket: {} messages for {} datagrams",
        r.rx_messages,
        r.want.len()
    );
}

/// With GRO off: the same datagrams, one per message.
#[test]
fn without_gro_the_same_datagrams_arrive() {
    let r = run(false);
    assert_eq!(r.got.len(), r.want.len(), "every datagram arrives once");
    assert!(r.got == r.want, "intact, in order, with the right sources");
    assert_eq!(r.rx_messages, r.want.len(), "one datagram per message");
}
