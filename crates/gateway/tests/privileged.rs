//! Privileged tests: a real TUN device and two real gateways, each inside network namespaces
//! the test creates (and deletes). They skip with a message when not root or without
//! `/dev/net/tun` or `ip`.

mod common;

use std::fs::File;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tcpnc_gateway::config::Config;
use tcpnc_gateway::io::Tun;
use tcpnc_gateway::sys::{SysTun, SysUdp, is_root};
use tcpnc_gateway::tun_batch::{TunRead, TunRx, TunTx};
use tcpnc_gateway::up::{UpOptions, up};
use tcpnc_gateway::{GatewayError, cidr::Cidr};
use tcpnc_io::BindError;

fn skip_reason() -> Option<&'static str> {
    if !is_root() {
        return Some("not root");
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun");
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("no `ip` (iproute2)");
    }
    None
}

fn ip(args: &[&str]) -> std::process::Output {
    Command::new("ip").args(args).output().expect("run ip")
}

fn ip_ok(args: &[&str]) {
    let out = ip(args);
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace deleted on drop.
struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Netns {
        let name = format!("tcpnc-{tag}-{}", std::process::id());
        let _ = ip(&["netns", "del", &name]);
        ip_ok(&["netns", "add", &name]);
        ip_ok(&["netns", "exec", &name, "ip", "link", "set", "lo", "up"]);
        Netns(name)
    }

    /// Moves the calling thread into this namespace.
    fn enter(&self) {
        let f = File::open(format!("/var/run/netns/{}", self.0)).expect("open netns");
        // SAFETY: setns on a valid namespace fd affects only the calling thread.
        let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
    }

    fn exec(&self, args: &[&str]) -> std::process::Output {
        let mut all = vec!["netns", "exec", &self.0, "ip"];
        all.extend_from_slice(args);
        ip(&all)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.0]);
    }
}

#[test]
fn tun_device_lifecycle() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED tun_device_lifecycle: {why}");
        return;
    }
    let ns = Netns::new("smoke");
    let ns_ref = &ns;
    thread::scope(|s| {
        s.spawn(move || {
            ns_ref.enter();
            let addr: Cidr = "10.213.0.1/24".parse().unwrap();
            let tun = SysTun::create("tncsmoke0", addr, 1400, false, 1).expect("create TUN");
            let show = ns_ref.exec(&["addr", "show", "dev", "tncsmoke0"]);
            let text = String::from_utf8_lossy(&show.stdout).to_string();
            assert!(text.contains("10.213.0.1/24"), "{text}");
            assert!(text.contains("mtu 1400"), "{text}");
            assert!(text.contains(",UP"), "{text}");
            // Write an echo request to our own address; read the kernel's echo reply.
            let req = common::icmp_echo([10, 213, 0, 2], [10, 213, 0, 1], 0x4242, b"tcpnc");
            tun.send(&req).unwrap();
            let mut buf = [0u8; 2048];
            let deadline = Instant::now() + Duration::from_secs(3);
            let mut reply = None;
            while Instant::now() < deadline {
                if let Some(n) = tun.recv(&mut buf, Duration::from_millis(100)).unwrap() {
                    let p = &buf[..n];
                    if p[0] >> 4 == 4 && p[9] == 1 && p[20] == 0 {
                        reply = Some(p.to_vec());
                        break;
                    }
                }
            }
            let reply = reply.expect("echo reply from the kernel");
            assert_eq!(&reply[12..16], &[10, 213, 0, 1]);
            assert_eq!(&reply[reply.len() - 5..], b"tcpnc");
            drop(tun);
            let gone = ns_ref.exec(&["link", "show", "tncsmoke0"]);
            assert!(!gone.status.success(), "TUN must be removed when dropped");
        })
        .join()
        .unwrap();
    });
}

/// Reads from `tun` until a read holds a TCP packet matching `want`; returns that packet and
/// how many IP packets the read gave.
fn read_tcp(tun: &SysTun, rx: &mut TunRx, want: impl Fn(&[u8]) -> bool) -> (Vec<u8>, usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let TunRead::Packets = tun.recv_batch(0, rx, Duration::from_millis(100)).unwrap() {
            let hit = rx
                .packets()
                .find(|p| p.len() >= 40 && p[0] >> 4 == 4 && p[9] == 6 && want(p));
            if let Some(p) = hit {
                return (p.to_vec(), rx.len());
            }
        }
    }
    panic!("no matching TCP packet read from the TUN");
}

/// TUN offloads on a real device. A local TCP connection through the TUN (the test plays the
/// far end's handshake) sends a burst: with offloads the kernel hands it over as one large
/// segment and one read gives several MSS-sized IP packets; a batch of 8 consecutive segments
/// of one flow written back is coalesced (GRO) into one write. The same steps on a plain TUN
/// give one packet per read and 8 writes, so the offload assertions fail without offloads.
#[test]
fn tun_offload_cuts_reads_and_coalesces_writes() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED tun_offload_cuts_reads_and_coalesces_writes: {why}");
        return;
    }
    let ns = Netns::new("offload");
    let ns_ref = &ns;
    thread::scope(|s| {
        s.spawn(move || {
            ns_ref.enter();
            for offload in [true, false] {
                let (reads, writes) = offload_round(offload);
                if offload {
                    assert!(reads > 1, "packets in the first data read: {reads}");
                    assert_eq!(
                        writes, 1,
                        "8 segments of one flow in one write (reads {reads})"
                    );
                } else {
                    assert_eq!((reads, writes), (1, 8), "a plain TUN");
                }
            }
        })
        .join()
        .unwrap();
    });
}

/// One round of [`tun_offload_cuts_reads_and_coalesces_writes`]: (packets in the read that
/// held the first data segment, write calls for 8 segments).
fn offload_round(offload: bool) -> (usize, u64) {
    use std::io::Write;
    let (me, far) = ([10, 214, 0, 1], [10, 214, 0, 2]);
    let tun = SysTun::create(
        "tncoff0",
        "10.214.0.1/24".parse().unwrap(),
        1400,
        offload,
        1,
    )
    .expect("create TUN");
    assert_eq!(
        tun.offload(),
        offload,
        "offloads as asked (kernel accepts them)"
    );
    let mut rx = tun.rx_slots();
    let client = thread::spawn(|| {
        let mut c = std::net::TcpStream::connect_timeout(
            &"10.214.0.2:5001".parse().unwrap(),
            Duration::from_secs(5),
        )
        .expect("connect through the TUN");
        // Nobody acknowledges the data: the write stops when the send buffer is full.
        c.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
        let _ = c.write_all(&[0x5a; 100_000]);
    });
    let (syn, _) = read_tcp(&tun, &mut rx, |p| p[33] & 0x02 != 0);
    let sport = u16::from_be_bytes([syn[20], syn[21]]);
    let isn = u32::from_be_bytes([syn[24], syn[25], syn[26], syn[27]]);
    let mss = [2, 4, 0x05, 0x28]; // MSS 1320
    let syn_ack = common::tcp_segment(far, me, (5001, sport), (7000, isn + 1), 0x12, &mss, &[]);
    tun.send(&syn_ack).unwrap();
    let (_, reads) = read_tcp(&tun, &mut rx, |p| p.len() > 40 + 20);
    // 8 consecutive ACK-only segments from the far end to an unused port of ours.
    let mut tx = TunTx::default();
    for i in 0..8u32 {
        let seq = 1 + i * 1000;
        tx.push(&common::tcp_segment(
            far,
            me,
            (6000, 6001),
            (seq, 1),
            0x10,
            &[],
            &[i as u8; 1000],
        ));
    }
    let sent = tun.send_batch(&mut tx);
    assert_eq!((sent.written, sent.failed), (8, 0), "{:?}", sent.error);
    drop(tun);
    let _ = client.join();
    (reads, sent.calls)
}

/// A two-queue TUN (`IFF_MULTI_QUEUE`), plain and with offloads: each TCP connection is read on the queue its packets
/// were written to (the connection's hash, `local_shard`), since the kernel's automatic
/// steering sends a flow where its last write came from. (The handshake's ACK, sent while the
/// kernel still processes the written SYN-ACK, goes before the steering learns: the test
/// reads the client's data, sent later.) Connections are opened until both queues had one
/// (at most 32). Writing everything on the first queue fails it: connections hashed to the
/// second are then read on the first.
#[test]
fn multi_queue_tun_reads_each_connection_on_its_writes_queue() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED multi_queue_tun_reads_each_connection_on_its_writes_queue: {why}");
        return;
    }
    let ns = Netns::new("mq");
    let ns_ref = &ns;
    thread::scope(|s| {
        s.spawn(move || {
            ns_ref.enter();
            for offload in [false, true] {
                let hits = multi_queue_round(offload);
                assert!(!hits.contains(&0), "offload {offload}: per queue {hits:?}");
            }
        })
        .join()
        .unwrap();
    });
}

/// One round of [`multi_queue_tun_reads_each_connection_on_its_writes_queue`] on a plain or
/// an offloading TUN: connections per queue.
fn multi_queue_round(offload: bool) -> [usize; 2] {
    let tun = SysTun::create("tncmq0", "10.216.0.1/24".parse().unwrap(), 1400, offload, 2)
        .expect("create a two-queue TUN");
    assert_eq!((tun.queues(), tun.offload()), (2, offload));
    let mut hits = [0usize; 2];
    let mut clients = Vec::new();
    while hits.contains(&0) && clients.len() < 32 {
        clients.push(thread::spawn(|| {
            use std::io::Write;
            let c = std::net::TcpStream::connect_timeout(
                &"10.216.0.2:5001".parse().unwrap(),
                Duration::from_secs(5),
            );
            thread::sleep(Duration::from_millis(50));
            if let Ok(mut c) = c {
                let _ = c.write_all(b"data after the handshake");
                thread::sleep(Duration::from_millis(300));
            }
        }));
        let (q, read) = handshake_on_queues(&tun);
        assert_eq!(
            read, q,
            "the connection's data is read on the SYN-ACK's queue"
        );
        hits[q] += 1;
    }
    drop(tun);
    for c in clients {
        let _ = c.join();
    }
    hits
}

/// Answers the next new connection's SYN read from `tun` with a SYN-ACK; returns the queue the
/// SYN-ACK was written to and the queue the connection's first data segment was read from.
fn handshake_on_queues(tun: &SysTun) -> (usize, usize) {
    let (me, far) = ([10, 216, 0, 1], [10, 216, 0, 2]);
    let is_syn = |p: &[u8]| p[33] & 0x12 == 0x02;
    let (_, syn) = read_on_queues(tun, |p| is_syn(p));
    let sport = u16::from_be_bytes([syn[20], syn[21]]);
    let isn = u32::from_be_bytes([syn[24], syn[25], syn[26], syn[27]]);
    let syn_ack = common::tcp_segment(far, me, (5001, sport), (7000, isn + 1), 0x12, &[], &[]);
    let queue = tcpnc_proto::shard::local_shard(&syn_ack, tun.queues());
    let mut tx = TunTx::default();
    tx.push(&syn_ack);
    let sent = tun.send_batch(&mut tx);
    assert_eq!(sent.written, 1, "{:?}", sent.error);
    let (read, _) = read_on_queues(tun, |p| p.len() > 40 && p[20..22] == sport.to_be_bytes());
    (queue, read)
}

/// Polls every queue of `tun` in turn until a TCP packet matching `want` is read; returns its
/// queue and the packet.
fn read_on_queues(tun: &SysTun, want: impl Fn(&[u8]) -> bool) -> (usize, Vec<u8>) {
    let mut rx = tun.rx_slots();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        for q in 0..tun.queues() {
            if let TunRead::Packets = tun
                .recv_batch(q, &mut rx, Duration::from_millis(10))
                .unwrap()
            {
                let hit = rx
                    .packets()
                    .find(|p| p.len() >= 40 && p[0] >> 4 == 4 && p[9] == 6 && want(p));
                if let Some(p) = hit {
                    return (q, p.to_vec());
                }
            }
        }
    }
    panic!("no matching TCP packet read from the TUN's queues");
}

#[test]
fn udp_address_in_use_is_reported() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    assert!(matches!(SysUdp::bind(addr), Err(BindError::AddrInUse(a)) if a == addr));
    let e = GatewayError::from(SysUdp::bind(addr).unwrap_err());
    assert!(matches!(e, GatewayError::AddrInUse(a) if a == addr));
}

fn gw_config(own: &str, listen: &str, peer: &str, allowed: &str, stats: &str) -> Config {
    Config::parse(&format!(
        r#"
        [interface]
        name = "tnc0"
        address = "{own}"
        listen = "{listen}"
        stats_file = "{stats}"
        insecure = true
        [coding]
        mode = "off"
        [[peer]]
        endpoint = "{peer}"
        allowed_ips = [{allowed}]
        "#
    ))
    .unwrap()
}

/// Two `tcpnc up` gateways in two namespaces joined by a veth pair; UDP across the tunnel.
#[test]
fn two_real_gateways_in_namespaces() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED two_real_gateways_in_namespaces: {why}");
        return;
    }
    let (na, nb) = (Netns::new("gwa"), Netns::new("gwb"));
    let (va, vb) = (
        format!("tva{}", std::process::id() % 100000),
        format!("tvb{}", std::process::id() % 100000),
    );
    ip_ok(&["link", "add", &va, "type", "veth", "peer", "name", &vb]);
    ip_ok(&["link", "set", &va, "netns", &na.0]);
    ip_ok(&["link", "set", &vb, "netns", &nb.0]);
    for (ns, v, a) in [(&na, &va, "10.214.0.1/24"), (&nb, &vb, "10.214.0.2/24")] {
        assert!(ns.exec(&["addr", "add", a, "dev", v]).status.success());
        assert!(ns.exec(&["link", "set", v, "up"]).status.success());
    }
    let dir = std::env::temp_dir().join(format!("tcpnc-priv-{}", std::process::id()));
    let sa = dir.join("a.json");
    let ca = gw_config(
        "10.77.0.1/24",
        "10.214.0.1:51900",
        "10.214.0.2:51900",
        r#""10.77.0.2/32", "10.78.0.0/24""#,
        sa.to_str().unwrap(),
    );
    let cb = gw_config(
        "10.77.0.2/24",
        "10.214.0.2:51900",
        "10.214.0.1:51900",
        r#""10.77.0.1/32""#,
        dir.join("b.json").to_str().unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let opts = UpOptions {
        stats_file: None,
        stats_interval: Duration::from_millis(200),
    };
    let run = |ns: &Netns, cfg: Config| {
        ns.enter();
        up(&cfg, &opts, stop.clone())
    };
    thread::scope(|s| {
        let (run, na_r, nb_r) = (&run, &na, &nb);
        let ha = s.spawn(move || run(na_r, ca));
        let hb = s.spawn(move || run(nb_r, cb));
        let result = std::panic::catch_unwind(|| exchange_udp(&na, &nb));
        // The route for the prefix outside the interface's subnet must exist while up.
        let routes = na.exec(&["route", "show", "dev", "tnc0"]);
        stop.store(true, Ordering::SeqCst);
        let snap_a = ha.join().unwrap().expect("gateway A");
        let snap_b = hb.join().unwrap().expect("gateway B");
        result.unwrap();
        let routes = String::from_utf8_lossy(&routes.stdout).to_string();
        assert!(routes.contains("10.78.0.0/24"), "{routes}");
        assert!(snap_a.stopped && snap_b.stopped);
        assert!(snap_a.gateway.tun_rx_packets >= 1);
        assert!(snap_b.gateway.tun_tx_packets >= 1);
        assert!(snap_a.gateway.keepalives_rx >= 1);
        let on_disk = tcpnc_gateway::stats::read_snapshot(&sa).unwrap();
        assert!(on_disk.stopped);
        for ns in [&na, &nb] {
            assert!(
                !ns.exec(&["link", "show", "tnc0"]).status.success(),
                "TUN removed"
            );
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends UDP from 10.77.0.1 (namespace A) to 10.77.0.2:7000 (namespace B) and back.
fn exchange_udp(na: &Netns, nb: &Netns) {
    let deadline = Instant::now() + Duration::from_secs(5);
    // Wait for both TUN devices to exist.
    while [na, nb]
        .iter()
        .any(|n| !n.exec(&["link", "show", "tnc0"]).status.success())
    {
        assert!(Instant::now() < deadline, "gateways did not come up");
        thread::sleep(Duration::from_millis(50));
    }
    thread::scope(|s| {
        let server = s.spawn(|| {
            nb.enter();
            let sock = UdpSocket::bind("10.77.0.2:7000").unwrap();
            sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut buf = [0u8; 1500];
            let (n, from): (usize, SocketAddr) = sock.recv_from(&mut buf).unwrap();
            sock.send_to(&buf[..n], from).unwrap();
            buf[..n].to_vec()
        });
        let client = s.spawn(|| {
            na.enter();
            let sock = UdpSocket::bind("10.77.0.1:0").unwrap();
            sock.set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            let mut buf = [0u8; 1500];
            for _ in 0..15 {
                sock.send_to(b"across the tunnel", "10.77.0.2:7000")
                    .unwrap();
                if let Ok(n) = sock.recv(&mut buf) {
                    return buf[..n].to_vec();
                }
            }
            panic!("no echo across the tunnel");
        });
        assert_eq!(client.join().unwrap(), b"across the tunnel");
        assert_eq!(server.join().unwrap(), b"across the tunnel");
    });
}
