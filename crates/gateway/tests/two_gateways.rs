//! Two gateways in one process on fake TUNs and a fake UDP network (no privileges).

mod common;

use std::net::SocketAddr;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use tcpnc_gateway::config::Config;
use tcpnc_gateway::io::{FakeNet, FakeTunHandle, FakeUdp, Udp, fake_tun_queues};
use tcpnc_gateway::peer_engine::{PeerEngine, pass_through};
use tcpnc_gateway::stats::{Snapshot, read_snapshot};
use tcpnc_gateway::{Gateway, GatewayHandle, GatewayOptions};
use tcpnc_proto::seam::{keepalive_frame, parse_keepalive};
use tcpnc_proto::shard::local_shard;
use tcpnc_relay::{Relay, RelayOptions};
use tcpnc_tunnel::integrity;
use tcpnc_wire::KeepaliveRepr;

const A: [u8; 4] = [10, 77, 0, 1];
const B: [u8; 4] = [10, 77, 0, 2];

fn config(addr: &str, listen: SocketAddr, peer: SocketAddr, allowed: &str) -> Config {
    Config::parse(&format!(
        r#"
        [interface]
        name = "fake"
        address = "{addr}"
        listen = "{listen}"
        routes = false
        insecure = true
        [coding]
        mode = "off"
        [[peer]]
        name = "far"
        endpoint = "{peer}"
        allowed_ips = [{allowed}]
        "#
    ))
    .unwrap()
}

type Engines = fn(&Config) -> Vec<PeerEngine>;

fn pass_throughs(c: &Config) -> Vec<PeerEngine> {
    c.peers
        .iter()
        .map(|_| Box::new(pass_through(4096)) as PeerEngine)
        .collect()
}

fn start(
    cfg: &Config,
    udp: FakeUdp,
    engines: Engines,
    stats: Option<std::path::PathBuf>,
) -> (GatewayHandle, FakeTunHandle) {
    start_sharded(cfg, udp, engines, stats, (1, 1))
}

/// [`start`] with `shards` engine workers (1 = engines on the owner thread) and a TUN with
/// `queues` receive queues.
fn start_sharded(
    cfg: &Config,
    udp: FakeUdp,
    engines: Engines,
    stats: Option<std::path::PathBuf>,
    (shards, queues): (usize, usize),
) -> (GatewayHandle, FakeTunHandle) {
    let (tun, handle) = fake_tun_queues(queues);
    let opts = GatewayOptions {
        interface: cfg.interface.name.clone(),
        mode: cfg.coding.mode,
        stats_file: stats,
        stats_interval: Duration::from_millis(100),
        queue_packets: cfg.interface.queue_packets,
        security: cfg.security.clone(),
    };
    let shards = (0..shards).map(|_| engines(cfg)).collect();
    let mut gw = Gateway::with_shards(opts, tun, udp, cfg.peers.clone(), shards).unwrap();
    gw.probe_peers().unwrap();
    (gw.spawn(), handle)
}

/// Collects `n` packets (or fewer, on a 5 s deadline).
fn collect(rx: &Receiver<Vec<u8>>, n: usize) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got = Vec::new();
    while got.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(p) => got.push(p),
            Err(_) => break,
        }
    }
    got
}

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

#[test]
fn many_flows_and_non_tcp_cross_both_ways() {
    many_flows_cross(1, 1);
}

/// The same through gateways whose engines are sharded over three workers: every packet
/// arrives, each flow's in order, the counters of the shards add up, and every worker had
/// some of the 64 flows.
#[test]
fn many_flows_cross_gateways_with_three_workers() {
    many_flows_cross(3, 1);
}

/// The same with a two-queue TUN read by two reader threads (each packet on its connection's
/// queue, as the kernel steers them) and two workers: every packet arrives, each flow's in
/// order, and the snapshot counts each queue's packets, both used.
#[test]
fn many_flows_cross_a_two_queue_tun() {
    many_flows_cross(2, 2);
}

/// 64 TCP flows x 4 segments, one ICMP echo, one UDP datagram to a routed subnet.
fn flows_and_non_tcp() -> Vec<Vec<u8>> {
    let mut sent = Vec::new();
    for flow in 0..64u16 {
        for seg in 0..4u32 {
            let data = vec![(flow as u8) ^ (seg as u8); 100 + usize::from(flow)];
            sent.push(common::tcp(A, B, 40000 + flow, 80, seg * 1000, &data));
        }
    }
    sent.push(common::icmp_echo(A, B, 7, b"ping"));
    sent.push(common::udp(A, [10, 88, 3, 4], 5353, 53, b"query"));
    sent
}

/// The TCP packets of `ps` from source port `port`, in order.
fn of_flow(ps: &[Vec<u8>], port: u16) -> Vec<Vec<u8>> {
    let p = port.to_be_bytes();
    ps.iter()
        .filter(|x| x[9] == 6 && x[20..22] == p)
        .cloned()
        .collect()
}

fn many_flows_cross(shards: usize, queues: usize) {
    let net = FakeNet::new();
    let (ua, ub) = (
        net.bind(addr(1), 8192).unwrap(),
        net.bind(addr(2), 8192).unwrap(),
    );
    let ca = config(
        "10.77.0.1/24",
        addr(1),
        addr(2),
        r#""10.77.0.2/32", "10.88.0.0/16""#,
    );
    let cb = config("10.77.0.2/24", addr(2), addr(1), r#""10.77.0.1/32""#);
    let dir = std::env::temp_dir().join(format!(
        "tcpnc-gw-test-{}-{shards}-{queues}",
        std::process::id()
    ));
    let stats_a = dir.join("a.json");
    let sizes = (shards, queues);
    let (ga, ha) = start_sharded(&ca, ua, pass_throughs, Some(stats_a.clone()), sizes);
    let (gb, hb) = start_sharded(&cb, ub, pass_throughs, None, sizes);

    let sent = flows_and_non_tcp();
    for p in &sent {
        ha.inject_queue[local_shard(p, queues)]
            .send(p.clone())
            .unwrap();
    }
    // No peer for this destination: counted and dropped.
    ha.inject
        .send(common::udp(A, [10, 99, 0, 1], 1, 2, b"x"))
        .unwrap();
    // A datagram from an address that is no peer.
    let stranger = net.bind(addr(3), 4).unwrap();
    stranger.send_to(b"\x50junk", addr(1)).unwrap();

    let got = collect(&hb.written, sent.len());
    assert_eq!(got.len(), sent.len());
    let (mut g, mut s) = (got.clone(), sent.clone());
    g.sort();
    s.sort();
    assert_eq!(g, s, "B's TUN must see exactly the packets A's TUN read");
    for port in 40000..40064 {
        assert_eq!(
            of_flow(&got, port),
            of_flow(&sent, port),
            "flow {port} in order"
        );
    }

    // Reverse direction.
    let reply = common::tcp(B, A, 80, 40000, 1, b"response");
    hb.inject.send(reply.clone()).unwrap();
    assert_eq!(collect(&ha.written, 1), vec![reply]);

    let sa: Snapshot = ga.stop().unwrap();
    let sb: Snapshot = gb.stop().unwrap();
    assert_eq!(sa.gateway.tun_rx_packets, sent.len() as u64 + 1);
    assert_eq!(sa.gateway.no_peer_drops, 1);
    assert_eq!(sa.gateway.unknown_source_drops, 1);
    // A's probe and its engine's reply to B's probe; B's probe and B's reply to A's probe.
    assert_eq!(sa.gateway.keepalives_tx, 2);
    assert_eq!(sa.gateway.keepalives_rx, 2);
    assert_eq!(sa.peers[0].counters.datagrams_tx, sent.len() as u64);
    assert_eq!(sa.peers[0].counters.delivered_packets, 1);
    assert_eq!(sb.gateway.tun_tx_packets, sent.len() as u64);
    let flows = sa.peers[0].engine["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 64 + 2, "64 TCP flows + ICMP + UDP");
    assert!(sa.stopped);
    assert_spread(&sa, shards, queues);

    let on_disk = read_snapshot(&stats_a).unwrap();
    assert!(on_disk.stopped);
    assert_eq!(on_disk.gateway.tun_rx_packets, sa.gateway.tun_rx_packets);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The snapshot names `shards` workers and `queues` TUN queues, and with more than one each
/// worker and each queue had some of the work.
fn assert_spread(s: &Snapshot, shards: usize, queues: usize) {
    assert_eq!(s.workers, shards);
    assert_eq!(s.tun_queues, queues);
    if queues > 1 {
        let q = &s.tun_queue_packets;
        assert!(q.len() == queues && q.iter().all(|&n| n > 0), "{q:?}");
        assert_eq!(q.iter().sum::<u64>(), s.gateway.tun_rx_packets);
    }
    if shards > 1 {
        let w = &s.worker_items;
        assert!(w.len() == shards && w.iter().all(|&n| n > 0), "{w:?}");
    }
}

#[test]
fn gateways_through_a_delaying_relay() {
    let net = FakeNet::new();
    let ua = net.bind(addr(11), 1024).unwrap();
    let ub = net.bind(addr(12), 1024).unwrap();
    let ra = net.bind(addr(21), 1024).unwrap();
    let rb = net.bind(addr(22), 1024).unwrap();
    let mut spec = tcpnc_relay::spec::DirectionSpec::default();
    spec.set("delay-ms", "20").unwrap();
    let link = spec.to_link_config().unwrap();
    let opts = RelayOptions {
        a_listen: addr(21),
        a_peer: Some(addr(11)),
        b_listen: addr(22),
        b_peer: Some(addr(12)),
        ab: link.clone(),
        ba: link,
        seed: 1,
        stats_file: None,
    };
    let relay = Relay::with_sockets(&opts, ra, rb).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let relay_thread = {
        let stop = stop.clone();
        std::thread::spawn(move || relay.run(stop))
    };
    // Each gateway's peer is the relay socket facing it.
    let ca = config("10.77.0.1/24", addr(11), addr(21), r#""10.77.0.2/32""#);
    let cb = config("10.77.0.2/24", addr(12), addr(22), r#""10.77.0.1/32""#);
    let dir = std::env::temp_dir().join(format!("tcpnc-relay-test-{}", std::process::id()));
    let (stats_a, stats_b) = (dir.join("a.json"), dir.join("b.json"));
    let (ga, ha) = start(&ca, ua, pass_throughs, Some(stats_a.clone()));
    let (gb, hb) = start(&cb, ub, pass_throughs, Some(stats_b.clone()));
    let p = common::tcp(A, B, 1234, 80, 0, b"through the relay");
    let t0 = Instant::now();
    ha.inject.send(p.clone()).unwrap();
    assert_eq!(collect(&hb.written, 1), vec![p]);
    assert!(
        t0.elapsed() >= Duration::from_millis(20),
        "{:?}",
        t0.elapsed()
    );
    // Each side has its probe answered through the relay: both saw a probe and a reply.
    for path in [&stats_a, &stats_b] {
        assert!(wait_for(
            || read_snapshot(path).is_ok_and(|s| s.gateway.keepalives_rx == 2)
        ));
    }
    ga.stop().unwrap();
    gb.stop().unwrap();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let stats = relay_thread.join().unwrap().unwrap();
    assert_eq!(
        stats["a_to_b"]["relay"]["forwarded"], 3,
        "probe + reply + packet"
    );
    assert_eq!(stats["b_to_a"]["relay"]["forwarded"], 2, "probe + reply");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Polls `cond` every 20 ms for at most 5 s.
fn wait_for(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Liveness is the wire KEEPALIVE frame: the gateway probes with it (never an empty
/// datagram), and the peer's engine, coding or not, answers a probe with the same nonce.
#[test]
fn keepalives_are_wire_frames_answered_by_the_engine() {
    for engines in [pass_throughs as Engines, proto_engines] {
        let net = FakeNet::new();
        let ua = net.bind(addr(41), 64).unwrap();
        let peer = net.bind(addr(42), 64).unwrap();
        let cfg = config("10.77.0.1/24", addr(41), addr(42), r#""10.77.0.2/32""#);
        let (gw, _tun) = start(&cfg, ua, engines, None);
        let mut buf = [0u8; 64];
        let (n, from) = peer
            .recv_from(&mut buf, Duration::from_secs(5))
            .unwrap()
            .unwrap();
        assert_eq!(from, addr(41));
        let probe = parse_keepalive(integrity::open(&buf[..n]).unwrap())
            .expect("the first probe is a KEEPALIVE frame");
        assert!(!probe.reply);
        let probe7 = integrity::seal(&keepalive_frame(KeepaliveRepr::probe(7)));
        peer.send_to(&probe7, addr(41)).unwrap();
        let (n, _) = peer
            .recv_from(&mut buf, Duration::from_secs(5))
            .unwrap()
            .unwrap();
        assert_eq!(
            parse_keepalive(integrity::open(&buf[..n]).unwrap()),
            Some(KeepaliveRepr::probe(7).to_reply())
        );
        let s = gw.stop().unwrap();
        assert_eq!((s.gateway.keepalives_tx, s.gateway.keepalives_rx), (2, 1));
        assert_eq!(s.peers[0].counters.datagrams_rx, 0);
        assert_eq!(s.peers[0].engine["totals"]["keepalive_replies"], 1);
    }
}

fn proto_engines(c: &Config) -> Vec<PeerEngine> {
    (0..c.peers.len())
        .map(|i| tcpnc_gateway::peer_engine::engine_for(c, i, 0).unwrap())
        .collect()
}

/// The TCP/NC engine with coding off: packets cross unchanged, many flows and ICMP.
#[test]
fn proto_engine_in_off_mode_carries_packets_unchanged() {
    let net = FakeNet::new();
    let (ua, ub) = (
        net.bind(addr(31), 4096).unwrap(),
        net.bind(addr(32), 4096).unwrap(),
    );
    let ca = config("10.77.0.1/24", addr(31), addr(32), r#""10.77.0.2/32""#);
    let cb = config("10.77.0.2/24", addr(32), addr(31), r#""10.77.0.1/32""#);
    let (ga, ha) = start(&ca, ua, proto_engines, None);
    let (gb, hb) = start(&cb, ub, proto_engines, None);
    let mut sent: Vec<Vec<u8>> = (0..16u16)
        .map(|f| common::tcp(A, B, 50000 + f, 443, 7, &[f as u8; 300]))
        .collect();
    sent.push(common::icmp_echo(A, B, 9, b"ping"));
    for p in &sent {
        ha.inject.send(p.clone()).unwrap();
    }
    let mut got = collect(&hb.written, sent.len());
    got.sort();
    sent.sort();
    assert_eq!(got, sent);
    let sa = ga.stop().unwrap();
    gb.stop().unwrap();
    assert_eq!(sa.peers[0].engine["engine"], "tcpnc-proto");
    assert!(
        sa.peers[0].engine["totals"]["datagrams_sent"]
            .as_u64()
            .unwrap()
            >= 17
    );
}
