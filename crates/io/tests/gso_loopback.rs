//! UDP GSO sends across loopback (no root): every datagram of a batch arrives intact, in
//! order, as the datagram it was sent as, in fewer kernel messages than datagrams; a socket
//! the kernel refuses GSO on falls back to plain `sendmmsg` and still delivers everything.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Duration;

use tcpnc_io::{RecvSlots, SysUdp, Udp};

fn bind() -> SysUdp {
    SysUdp::bind("127.0.0.1:0".parse().unwrap()).unwrap()
}

/// Distinct contents: datagram `i` is `len` bytes of `i` (its first two bytes its index).
fn datagram(i: usize, len: usize) -> Vec<u8> {
    let mut d = vec![i as u8; len];
    d[..2].copy_from_slice(&(i as u16).to_be_bytes());
    d
}

/// Receives datagrams until `want` arrived or a second passes without one.
fn receive(rx: &SysUdp, want: usize) -> Vec<(Vec<u8>, SocketAddr)> {
    let mut slots = RecvSlots::new(64, 70_000);
    let mut got = Vec::new();
    while got.len() < want {
        rx.recv_batch(&mut slots, Duration::from_secs(1)).unwrap();
        if slots.is_empty() {
            break;
        }
        for i in 0..slots.len() {
            let (d, from) = slots.get(i).unwrap();
            got.push((d.to_vec(), from));
        }
    }
    got
}

/// Sends `batch` with repeated `send_batch` calls; returns (datagrams, messages, calls).
fn send_all(tx: &SysUdp, batch: &[(Vec<u8>, SocketAddr)]) -> (usize, usize, usize) {
    let (mut at, mut messages, mut calls) = (0, 0, 0);
    while at < batch.len() {
        let s = tx.send_batch(&batch[at..]).unwrap();
        assert!(s.datagrams > 0);
        at += s.datagrams;
        messages += s.messages;
        calls += 1;
    }
    (at, messages, calls)
}

/// A mixed batch: a train of 20 × 1200 bytes ending in a 700-byte one, a longer single, a
/// train of 40 × 300 to a second receiver, singles; every datagram arrives as sent (a wrong
/// grouping would merge or cut datagrams at the receiver), in fewer messages.
#[test]
fn gso_batch_arrives_intact_and_in_order() {
    let (tx, rx1, rx2) = (bind(), bind(), bind());
    assert!(
        tx.set_gso(true),
        "the kernel has UDP_SEGMENT (Linux >= 4.18)"
    );
    let (a, b) = (rx1.local_addr().unwrap(), rx2.local_addr().unwrap());
    let mut spec: Vec<(usize, SocketAddr)> = Vec::new();
    spec.extend((0..20).map(|_| (1200, a)));
    spec.push((700, a));
    spec.push((1300, a));
    spec.extend((0..40).map(|_| (300, b)));
    spec.extend([(100, a), (1200, a), (1200, a), (5, b)]);
    let batch: Vec<(Vec<u8>, SocketAddr)> = spec
        .iter()
        .enumerate()
        .map(|(i, &(len, to))| (datagram(i, len), to))
        .collect();
    let (sent, messages, _) = send_all(&tx, &batch);
    assert_eq!(sent, batch.len());
    assert!(tx.gso(), "loopback takes GSO sends");
    for (rx, to) in [(&rx1, a), (&rx2, b)] {
        let want: Vec<Vec<u8>> = batch
            .iter()
            .filter(|(_, t)| *t == to)
            .map(|(d, _)| d.clone())
            .collect();
        let got: Vec<Vec<u8>> = receive(rx, want.len())
            .into_iter()
            .map(|(d, _)| d)
            .collect();
        assert_eq!(got.len(), want.len(), "every datagram to {to} arrives once");
        assert_eq!(got, want, "intact and in order");
    }
    // Trains: 21 × 1200/700, 1300, 40 × 300, 100, 2 × 1200, 5.
    assert_eq!(messages, 6, "one message per train");
}

/// With GSO off (not asked for, or refused by the kernel: `SO_NO_CHECK` makes it answer
/// EINVAL), every datagram goes in its own message and still arrives.
#[test]
fn refused_gso_falls_back_to_plain_sends() {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let one: libc::c_int = 1;
    // SAFETY: a valid socket descriptor, an int option value that outlives the call.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_NO_CHECK,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
    let (tx, rx) = (SysUdp::from_socket(sock), bind());
    assert!(tx.set_gso(true));
    let to = rx.local_addr().unwrap();
    let batch: Vec<(Vec<u8>, SocketAddr)> = (0..10).map(|i| (datagram(i, 500), to)).collect();
    let (sent, messages, _) = send_all(&tx, &batch);
    assert_eq!((sent, messages), (10, 10));
    assert!(!tx.gso(), "a refused GSO send turns GSO off");
    let got: Vec<Vec<u8>> = receive(&rx, 10).into_iter().map(|(d, _)| d).collect();
    let want: Vec<Vec<u8>> = batch.into_iter().map(|(d, _)| d).collect();
    assert_eq!(got, want);
}
