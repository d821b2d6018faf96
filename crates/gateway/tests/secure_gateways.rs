//! Two gateways with keys on fake TUNs and a fake UDP network (no privileges): packets cross
//! encrypted; a spoofing host's garbage, bit-flipped, truncated and replayed datagrams reach no
//! engine and are never answered; a client that changes its source address keeps its tunnel.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tcpnc_gateway::config::Config;
use tcpnc_gateway::io::{FakeNet, FakeTunHandle, FakeUdp, Udp, fake_tun};
use tcpnc_gateway::peer_engine::{PeerEngine, pass_through};
use tcpnc_gateway::{Gateway, GatewayHandle, GatewayOptions};
use tcpnc_tunnel::Key;

const A: [u8; 4] = [10, 77, 0, 1];
const B: [u8; 4] = [10, 77, 0, 2];

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

fn config(
    me: &str,
    listen: SocketAddr,
    own: &Key,
    peer: &Key,
    endpoint: Option<SocketAddr>,
    allowed: &str,
) -> Config {
    let endpoint = endpoint
        .map(|e| format!("endpoint = \"{e}\""))
        .unwrap_or_default();
    Config::parse(&format!(
        r#"
        [interface]
        name = "fake"
        address = "{me}"
        listen = "{listen}"
        routes = false
        private_key = "{own}"
        [coding]
        mode = "off"
        [[peer]]
        {endpoint}
        allowed_ips = ["{allowed}"]
        public_key = "{}"
        "#,
        peer.public().unwrap()
    ))
    .unwrap()
}

/// A UDP socket that records what it sends and can move to another address (a NAT
/// rebinding: the test replaces the shared socket).
struct Tap {
    socket: Arc<Mutex<Arc<FakeUdp>>>,
    sent: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Tap {
    fn now(&self) -> Arc<FakeUdp> {
        self.socket.lock().unwrap().clone()
    }
}

impl Udp for Tap {
    fn recv_from(
        &self,
        buf: &mut [u8],
        timeout: Duration,
    ) -> std::io::Result<Option<(usize, SocketAddr)>> {
        self.now().recv_from(buf, timeout)
    }
    fn send_to(&self, d: &[u8], to: SocketAddr) -> std::io::Result<()> {
        self.sent.lock().unwrap().push(d.to_vec());
        self.now().send_to(d, to)
    }
    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.now().local_addr()
    }
}

fn start<U: Udp>(cfg: &Config, udp: U) -> (GatewayHandle, FakeTunHandle) {
    let engines = cfg
        .peers
        .iter()
        .map(|_| Box::new(pass_through(4096)) as PeerEngine);
    start_with(cfg, udp, engines)
}

/// A gateway for `cfg` on `udp` with one engine per peer, its peers probed.
fn start_with<U: Udp>(
    cfg: &Config,
    udp: U,
    engines: impl Iterator<Item = PeerEngine>,
) -> (GatewayHandle, FakeTunHandle) {
    let (tun, handle) = fake_tun();
    let opts = GatewayOptions {
        interface: cfg.interface.name.clone(),
        mode: cfg.coding.mode,
        stats_file: None,
        stats_interval: Duration::from_millis(100),
        queue_packets: cfg.interface.queue_packets,
        security: cfg.security.clone(),
    };
    let peers = cfg.peers.iter().cloned().zip(engines).collect();
    let mut gw = Gateway::new(opts, tun, udp, peers).unwrap();
    gw.probe_peers().unwrap();
    (gw.spawn(), handle)
}

fn recv_n(h: &FakeTunHandle, n: usize) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got = Vec::new();
    while got.len() < n {
        match h
            .written
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(p) => got.push(p),
            Err(_) => break,
        }
    }
    got
}

struct Setup {
    net: FakeNet,
    ga: GatewayHandle,
    gb: GatewayHandle,
    ha: FakeTunHandle,
    hb: FakeTunHandle,
    a_socket: Arc<Mutex<Arc<FakeUdp>>>,
    a_sent: Arc<Mutex<Vec<Vec<u8>>>>,
}

/// A (client, roaming: no endpoint at B) and B (server) with fresh keys.
fn setup(base: u16) -> Setup {
    let net = FakeNet::new();
    let (ka, kb) = (Key::generate().unwrap(), Key::generate().unwrap());
    let ca = config(
        "10.77.0.1/24",
        addr(base),
        &ka,
        &kb,
        Some(addr(base + 1)),
        "10.77.0.2/32",
    );
    let cb = config(
        "10.77.0.2/24",
        addr(base + 1),
        &kb,
        &ka,
        None,
        "10.77.0.1/32",
    );
    let socket = Arc::new(Mutex::new(Arc::new(net.bind(addr(base), 4096).unwrap())));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let tap = Tap {
        socket: socket.clone(),
        sent: sent.clone(),
    };
    let (gb, hb) = start(&cb, net.bind(addr(base + 1), 4096).unwrap());
    let (ga, ha) = start(&ca, tap);
    Setup {
        net,
        ga,
        gb,
        ha,
        hb,
        a_socket: socket,
        a_sent: sent,
    }
}

fn packets(n: u16, from: [u8; 4], to: [u8; 4]) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| common::tcp(from, to, 4000 + i, 80, u32::from(i), &[i as u8; 300]))
        .collect()
}

#[test]
fn spoofed_datagrams_reach_no_engine_and_are_never_answered() {
    let s = setup(100);
    let first = packets(50, A, B);
    for p in &first {
        s.ha.inject.send(p.clone()).unwrap();
    }
    assert_eq!(recv_n(&s.hb, first.len()), first);
    // The spoofer: copies of everything A sent (handshake and transport), replayed as is,
    // with one bit flipped, truncated; and garbage.
    let spoofer = s.net.bind(addr(199), 4096).unwrap();
    let captured = s.a_sent.lock().unwrap().clone();
    let mut spoofed = 0u64;
    for (k, d) in captured.iter().enumerate() {
        let mut flipped = d.clone();
        let bit = (k * 37) % (d.len() * 8);
        flipped[bit / 8] ^= 1 << (bit % 8);
        for bad in [
            d.clone(),
            flipped,
            d[..d.len() / 2].to_vec(),
            vec![k as u8; 1 + k % 90],
        ] {
            spoofer.send_to(&bad, addr(101)).unwrap();
            spoofed += 1;
        }
    }
    // Legitimate traffic continues during and after the flood.
    let second = packets(50, A, B);
    for p in &second {
        s.ha.inject.send(p.clone()).unwrap();
    }
    assert_eq!(recv_n(&s.hb, second.len()), second);
    std::thread::sleep(Duration::from_millis(300));
    let mut buf = [0u8; 2048];
    assert!(
        spoofer
            .recv_from(&mut buf, Duration::from_millis(200))
            .unwrap()
            .is_none(),
        "answered a spoofer"
    );
    assert!(
        s.hb.written.try_recv().is_err(),
        "a spoofed datagram reached B's TUN"
    );
    let sa = s.ga.stop().unwrap();
    let sb = s.gb.stop().unwrap();
    let from_a = sa.peers[0].counters.datagrams_tx;
    assert_eq!(
        sb.peers[0].counters.datagrams_rx, from_a,
        "only A's datagrams reached B's engine"
    );
    assert_eq!(sb.peers[0].engine["totals"]["from_peer"]["packets"], 100);
    let drops: u64 = sb.tunnel["drops"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(drops, spoofed, "{}", sb.tunnel);
    assert_eq!(
        sb.peers[0].endpoint,
        addr(100).to_string(),
        "a spoofer cannot move the endpoint"
    );
}

#[test]
fn a_client_that_changes_address_keeps_its_tunnel() {
    let s = setup(300);
    let first = packets(20, A, B);
    for p in &first {
        s.ha.inject.send(p.clone()).unwrap();
    }
    assert_eq!(recv_n(&s.hb, first.len()), first);
    let reply = common::tcp(B, A, 80, 4000, 1, b"reply");
    s.hb.inject.send(reply.clone()).unwrap();
    assert_eq!(recv_n(&s.ha, 1), vec![reply]);
    // NAT rebinding: A's datagrams now come from another address.
    *s.a_socket.lock().unwrap() = Arc::new(s.net.bind(addr(333), 4096).unwrap());
    let second = packets(20, A, B);
    for p in &second {
        s.ha.inject.send(p.clone()).unwrap();
    }
    assert_eq!(recv_n(&s.hb, second.len()), second);
    // B answers at the new address.
    let reply = common::tcp(B, A, 80, 4000, 2, b"reply at the new address");
    s.hb.inject.send(reply.clone()).unwrap();
    assert_eq!(recv_n(&s.ha, 1), vec![reply]);
    let sb = s.gb.stop().unwrap();
    s.ga.stop().unwrap();
    assert_eq!(sb.peers[0].endpoint, addr(333).to_string());
}

/// A gateway that restarts (state lost) makes its peer reset every connection through it: the
/// survivor's local TCP gets an exact RST (its next expected sequence number) at once.
#[test]
fn a_restarted_peer_makes_the_survivor_reset_its_connections() {
    let net = FakeNet::new();
    let (ka, kb) = (Key::generate().unwrap(), Key::generate().unwrap());
    let nc = |c: String| Config::parse(&c.replace(r#"mode = "off""#, r#"mode = "nc""#)).unwrap();
    let text = |me: &str,
                listen: SocketAddr,
                own: &Key,
                peer: &Key,
                ep: Option<SocketAddr>,
                allowed: &str| {
        let ep = ep
            .map(|e| format!("endpoint = \"{e}\""))
            .unwrap_or_default();
        format!(
            "[interface]\nname = \"fake\"\naddress = \"{me}\"\nlisten = \"{listen}\"\nroutes = false\nprivate_key = \"{own}\"\n[coding]\nmode = \"off\"\n[[peer]]\n{ep}\nallowed_ips = [\"{allowed}\"]\npublic_key = \"{}\"\n",
            peer.public().unwrap()
        )
    };
    let cb = nc(text(
        "10.77.0.2/24",
        addr(501),
        &kb,
        &ka,
        None,
        "10.77.0.1/32",
    ));
    let (gb, hb) = start_nc(&cb, net.bind(addr(501), 4096).unwrap());
    let ca = nc(text(
        "10.77.0.1/24",
        addr(500),
        &ka,
        &kb,
        Some(addr(501)),
        "10.77.0.2/32",
    ));
    let (ga, ha) = start_nc(&ca, net.bind(addr(500), 4096).unwrap());
    // Five connections, one data segment each, delivered to B's local TCP.
    let sent = packets(5, A, B);
    for p in &sent {
        ha.inject.send(p.clone()).unwrap();
    }
    assert_eq!(recv_n(&hb, sent.len()).len(), sent.len());
    // A restarts: its state is gone; the new process (another boot id) comes back from
    // another address and handshakes at start-up.
    ga.stop().unwrap();
    drop(ha);
    let ca2 = nc(text(
        "10.77.0.1/24",
        addr(502),
        &ka,
        &kb,
        Some(addr(501)),
        "10.77.0.2/32",
    ));
    let t0 = Instant::now();
    let (ga2, _ha2) = start_nc(&ca2, net.bind(addr(502), 4096).unwrap());
    let got = recv_n(&hb, sent.len());
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    let mut rsts: Vec<(u16, u32)> = got
        .iter()
        .map(|p| {
            assert_eq!(p[33] & 0x04, 0x04, "an RST");
            (
                u16::from_be_bytes([p[20], p[21]]),
                u32::from_be_bytes([p[24], p[25], p[26], p[27]]),
            )
        })
        .collect();
    rsts.sort();
    let expected: Vec<(u16, u32)> = (0..5u16).map(|i| (4000 + i, u32::from(i) + 300)).collect();
    assert_eq!(
        rsts, expected,
        "one exact RST per connection: seq = next byte expected"
    );
    let sb = gb.stop().unwrap();
    ga2.stop().unwrap();
    assert_eq!(sb.tunnel["peer_restarts"], 1);
    assert_eq!(sb.peers[0].engine["totals"]["flows_reset"], 5);
}

fn start_nc(cfg: &Config, udp: FakeUdp) -> (GatewayHandle, FakeTunHandle) {
    let engines =
        (0..cfg.peers.len()).map(|i| tcpnc_gateway::peer_engine::engine_for(cfg, i, 0).unwrap());
    start_with(cfg, udp, engines)
}
