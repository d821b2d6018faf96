//! Operating a real gateway pair (root; network namespaces the test creates and deletes):
//! `tcpnc up NAME` reads `$TCPNC_CONFIG_DIR/NAME.toml`, tells a `NOTIFY_SOCKET` READY=1 and
//! STOPPING=1, serves `/metrics` (scraped with curl, validated by `promtool check metrics`),
//! logs peer up and flow opened/closed with their summary, `tcpnc stats --watch` shows the peer,
//! and a tcpdump capture of the transfer decodes with the Wireshark dissector with no malformed
//! frame. Skips (with the reason) without root or the tools; the tools are required under
//! CI=true (scripts/test installs them).

mod common;

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::run_with_input;
use tcpnc_gateway::sys::is_root;

const BIN: &str = env!("CARGO_BIN_EXE_tcpnc");
const LUA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../contrib/wireshark/tcpnc.lua"
);
const BYTES: u64 = 2_000_000;

fn have(prog: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {prog}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn promtool() -> Option<String> {
    let p = std::env::var("PROMTOOL").unwrap_or_else(|_| "promtool".into());
    have(&p).then_some(p)
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn ip(args: &[&str]) {
    run(Command::new("ip").args(args));
}

/// Two namespaces joined by a veth pair, processes started in them; all removed on drop.
struct Net {
    ns: [String; 2],
    children: Vec<Child>,
    dir: PathBuf,
}

impl Net {
    fn new(tag: &str) -> Net {
        let pid = std::process::id();
        let ns = [
            format!("tcpnc-{tag}-{pid}-a"),
            format!("tcpnc-{tag}-{pid}-b"),
        ];
        let dir = std::env::temp_dir().join(format!("tcpnc-{tag}-{pid}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let net = Net {
            ns: ns.clone(),
            children: Vec::new(),
            dir,
        };
        for n in &ns {
            ip(&["netns", "add", n]);
            ip(&["-n", n, "link", "set", "lo", "up"]);
        }
        ip(&[
            "-n", &ns[0], "link", "add", "wan0", "type", "veth", "peer", "name", "wan1", "netns",
            &ns[1],
        ]);
        for (i, n) in ns.iter().enumerate() {
            let dev = format!("wan{i}");
            ip(&[
                "-n",
                n,
                "addr",
                "add",
                &format!("192.0.2.{}/24", i + 1),
                "dev",
                &dev,
            ]);
            let v6 = format!("fd00:2::{}/64", i + 1);
            ip(&["-n", n, "-6", "addr", "add", &v6, "dev", &dev, "nodad"]);
            ip(&["-n", n, "link", "set", &dev, "up"]);
        }
        net
    }

    fn cmd(&self, i: usize, prog: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns[i], prog]);
        c
    }

    fn spawn(&mut self, mut cmd: Command, log: &str) -> usize {
        let err = std::fs::File::create(self.dir.join(log)).unwrap();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .unwrap();
        self.children.push(child);
        self.children.len() - 1
    }

    /// SIGTERM (or `sig`) to child `k`, then waits up to 10 s.
    fn stop(&mut self, k: usize, sig: &str) -> bool {
        let pid = self.children[k].id().to_string();
        let _ = Command::new("kill").args([sig, &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.children[k].try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for n in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(me: usize, dir: &Path) -> String {
    let other = 1 - me;
    format!(
        r#"
[interface]
name = "tcpnc0"
address = "10.77.0.{a}/24"
listen = "192.0.2.{a}:51900"
stats_file = "{stats}"
metrics_listen = "127.0.0.1:9617"
log_level = "info"
# CRC-32C integrity envelope: its frames stay readable for the dissector check.
insecure = true
# One frame per captured datagram: with UDP GSO the capture holds the unsegmented super-datagrams
# (docs/deploy.md, section 6).
udp_gso = false

[[peer]]
name = "side{o}"
endpoint = "192.0.2.{b}:51900"
allowed_ips = ["10.77.0.{b}/32"]
keepalive_secs = 1
"#,
        a = me + 1,
        b = other + 1,
        o = other,
        stats = dir.join(format!("stats{me}.json")).display()
    )
}

/// Waits for `READY=1` (or another state) from `n` gateways on the notify socket.
fn wait_notify(sock: &UnixDatagram, state: &str, n: usize) -> bool {
    let mut seen = 0;
    let mut buf = [0u8; 512];
    let deadline = Instant::now() + Duration::from_secs(15);
    while seen < n && Instant::now() < deadline {
        if let Ok(len) = sock.recv(&mut buf) {
            let msg = String::from_utf8_lossy(&buf[..len]).to_string();
            seen += usize::from(msg.lines().any(|l| l == state));
        }
    }
    seen == n
}

fn scrape(net: &Net, i: usize) -> String {
    let out = run(net
        .cmd(i, "curl")
        .args(["-sf", "http://127.0.0.1:9617/metrics"]));
    String::from_utf8(out.stdout).unwrap()
}

fn value(page: &str, prefix: &str) -> f64 {
    page.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {prefix} in\n{page}"))
}

fn check_with_promtool(promtool: &str, page: &str) {
    let out = run_with_input(
        Command::new(promtool).args(["check", "metrics"]),
        page.as_bytes(),
    );
    assert!(
        out.status.success(),
        "promtool: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Why this machine cannot run the test, if it cannot.
fn skip_reason() -> Option<String> {
    if !is_root() {
        return Some("not root".into());
    }
    let missing: Vec<_> = ["ip", "curl", "tcpdump", "tshark"]
        .into_iter()
        .filter(|p| !have(p))
        .collect();
    let mut missing: Vec<String> = missing.into_iter().map(String::from).collect();
    if promtool().is_none() {
        missing.push("promtool".into());
    }
    if missing.is_empty() {
        return None;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but {missing:?} missing"
    );
    Some(format!(
        "{missing:?} not installed (scripts/test installs them)"
    ))
}

/// Starts tcpdump on side 0's WAN interface; returns its child index once it listens.
fn start_capture(net: &mut Net, capture: &Path) -> usize {
    let mut dump = net.cmd(0, "tcpdump");
    dump.args(["-i", "wan0", "-U", "-w"])
        .arg(capture)
        .arg("udp port 51900");
    let tcpdump = net.spawn(dump, "tcpdump.log");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !net.log("tcpdump.log").contains("listening on") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    tcpdump
}

/// `tcpnc up sideI` in each namespace, as `tcpnc@sideI.service` would run it.
fn start_gateways(net: &mut Net, notify: &Path) -> Vec<usize> {
    let dir = net.dir.clone();
    (0..2)
        .map(|i| {
            std::fs::write(dir.join(format!("side{i}.toml")), config(i, &dir)).unwrap();
            let mut up = net.cmd(i, BIN);
            // A bare NAME: read from the config directory.
            up.args(["up", &format!("side{i}")])
                .env("TCPNC_CONFIG_DIR", &dir)
                .env("NOTIFY_SOCKET", notify)
                .env_remove("RUST_LOG");
            if i == 1 {
                // As under systemd: the journal stamps lines itself.
                up.env("JOURNAL_STREAM", "8:12345");
            }
            net.spawn(up, &format!("gw{i}.log"))
        })
        .collect()
}

/// `tcpnc lab sink` on side 1, `tcpnc lab source` on side 0, BYTES through the tunnel.
fn transfer(net: &mut Net, to: &str) {
    let mut sink = net.cmd(1, BIN);
    sink.args(["lab", "sink", "--listen", to, "--timeout-s", "30"]);
    let sink = net.spawn(sink, "sink.log");
    std::thread::sleep(Duration::from_millis(300));
    let bytes = BYTES.to_string();
    run(net.cmd(0, BIN).args([
        "lab",
        "source",
        "--connect",
        to,
        "--bytes",
        &bytes,
        "--cc",
        "cubic",
        "--timeout-s",
        "30",
    ]));
    let deadline = Instant::now() + Duration::from_secs(10);
    while net.children[sink].try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Both pages pass promtool; goodput on the receiving side; peers up; RTT measured.
/// Waits (at most 10 s) until side 0's metrics page shows a keepalive round trip: the first
/// keepalive goes after a second of silence and the page is refreshed once per stats
/// interval, so on a loaded machine a fixed sleep was sometimes too short.
fn wait_for_keepalive_rtt(net: &Net) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !scrape(net, 0).contains("tcpnc_peer_keepalive_rtt_seconds{") && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn check_metrics(net: &Net) {
    let promtool = promtool().unwrap();
    let (page_a, page_b) = (scrape(net, 0), scrape(net, 1));
    check_with_promtool(&promtool, &page_a);
    check_with_promtool(&promtool, &page_b);
    let delivered = value(
        &page_b,
        r#"tcpnc_peer_delivered_bytes_total{interface="tcpnc0",peer="side0"}"#,
    );
    assert!(delivered >= BYTES as f64, "delivered {delivered}\n{page_b}");
    assert_eq!(value(&page_a, "tcpnc_peer_up{"), 1.0);
    assert!(value(&page_a, "tcpnc_peer_keepalive_rtt_seconds{") > 0.0);
    let data_tx =
        r#"tcpnc_peer_frames_total{interface="tcpnc0",peer="side1",type="data",direction="tx"}"#;
    assert!(value(&page_a, data_tx) > 100.0);
}

/// The receiving side's log has one line per notable event, without colour codes.
fn check_log(log: &str) {
    for want in [
        "serving Prometheus metrics",
        "peer up",
        "flow opened",
        "flow closed",
        "bytes_delivered=",
        "duration_s=",
        "repairs=",
        "peer down",
    ] {
        assert!(log.contains(want), "{want:?} not in the log:\n{log}");
    }
    // JOURNAL_STREAM set: no timestamp, no colour; the level first.
    let plain = |l: &str| {
        ["INFO ", "WARN ", "ERROR ", "DEBUG "]
            .iter()
            .any(|p| l.trim_start().starts_with(p))
    };
    assert!(
        log.lines().all(plain),
        "journal lines start with the level:\n{log}"
    );
    assert!(
        log.lines().all(|l| !l.contains('\x1b')),
        "no colour codes in the journal"
    );
    eprintln!("gateway side1 log:\n{log}");
}

/// Every tunnel datagram of the capture decodes, none malformed, every frame type seen.
fn check_capture(capture: &Path) {
    let count = |filter: &str| -> usize {
        let out = run(Command::new("tshark")
            .args(["-n", "-X", &format!("lua_script:{LUA}"), "-r"])
            .arg(capture)
            .args(["-Y", filter, "-T", "fields", "-e", "frame.number"]));
        String::from_utf8(out.stdout).unwrap().lines().count()
    };
    let udp = count("udp.port == 51900");
    assert!(udp > 200, "{udp} datagrams captured");
    assert_eq!(
        count("tcpnc"),
        udp,
        "every tunnel datagram is a tcpnc frame"
    );
    assert_eq!(
        count("_ws.malformed || tcpnc.malformed"),
        0,
        "malformed frames"
    );
    for (kind, min) in [("0x01", 100), ("0x02", 10), ("0x03", 1), ("0x04", 2)] {
        let n = count(&format!("tcpnc.type == {kind}"));
        assert!(n >= min, "type {kind}: {n} frames");
    }
    let syn = count("tcpnc.type == 0x03 && tcp.flags.syn == 1");
    assert!(syn >= 1, "the SYN travels in BYPASS");
}

#[test]
fn gateway_pair_is_operable_with_its_tools() {
    if let Some(why) = skip_reason() {
        eprintln!("skipping gateway_pair_is_operable_with_its_tools: {why}");
        return;
    }
    let mut net = Net::new("ops");
    let dir = net.dir.clone();
    let notify = dir.join("notify.sock");
    let sock = UnixDatagram::bind(&notify).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let capture = dir.join("wan.pcap");
    let tcpdump = start_capture(&mut net, &capture);
    let gws = start_gateways(&mut net, &notify);
    let ready = wait_notify(&sock, "READY=1", 2);
    assert!(ready, "READY=1 from both: {}", net.log("gw0.log"));
    transfer(&mut net, "10.77.0.2:5001");
    wait_for_keepalive_rtt(&net);
    check_metrics(&net);

    // The live table shows the peer.
    let stats = dir.join("stats1.json");
    let watch = run(Command::new(BIN)
        .arg("stats")
        .arg("--file")
        .arg(&stats)
        .args(["--watch", "--count", "1"]));
    let table = String::from_utf8(watch.stdout).unwrap();
    assert!(table.lines().any(|l| l.starts_with("side0")), "{table}");

    // Flows close after the linger time (4 s): the summary line appears.
    let deadline = Instant::now() + Duration::from_secs(15);
    while !net.log("gw1.log").contains("flow closed") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    // Side 0 stops: side 1 declares it down after 3 silent keepalive periods (3 s).
    assert!(
        net.stop(gws[0], "-TERM"),
        "gateway exits cleanly on SIGTERM"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !net.log("gw1.log").contains("peer down") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_millis(1200)); // the next stats tick
    assert_eq!(value(&scrape(&net, 1), "tcpnc_peer_up{"), 0.0);
    assert!(
        net.stop(gws[1], "-TERM"),
        "gateway exits cleanly on SIGTERM"
    );
    assert!(wait_notify(&sock, "STOPPING=1", 2));
    check_log(&net.log("gw1.log"));
    assert!(net.stop(tcpdump, "-INT"));
    check_capture(&capture);
}

/// Fixed key pairs (private, public) of the IPv6 test's two sides (test keys, never deployed).
const V6_KEYS: [(&str, &str); 2] = [
    (
        "5evIJunAx7pVJ1MIhykqwfDs9MG/ufpRSMfKl/thO0A=",
        "OzrWGjr6mPxqQk8XwasUq8Q86LDXPncEBr0oZlSCxVI=",
    ),
    (
        "THJsllvhAV+7FU0udK7+fiwxXix++mj9mpFcNb+C3+4=",
        "a7xTkU0tw8KGqyJI/LYR5J5Yk2lgYmE4fRsumneIJVo=",
    ),
];

/// The IPv6 configuration of side `me`: IPv6 underlay (UDP over fd00:2::/64) and IPv6 inside
/// the tunnel (fd77::/64), with keys (encrypted tunnel over IPv6).
fn config_v6(me: usize, dir: &Path) -> String {
    format!(
        r#"
[interface]
name = "tcpnc0"
address = "fd77::{a}/64"
listen = "[fd00:2::{a}]:51900"
stats_file = "{stats}"
private_key = "{own}"

[[peer]]
endpoint = "[fd00:2::{b}]:51900"
allowed_ips = ["fd77::{b}/128"]
public_key = "{peer}"
"#,
        a = me + 1,
        b = 2 - me,
        stats = dir.join(format!("stats{me}.json")).display(),
        own = V6_KEYS[me].0,
        peer = V6_KEYS[1 - me].1,
    )
}

/// The `sha256` of the last JSON event a `tcpnc lab source|sink` printed.
fn sha256_of(out: &[u8]) -> String {
    fn find(v: &serde_json::Value) -> Option<String> {
        match v {
            serde_json::Value::Object(m) => m
                .get("sha256")
                .and_then(|s| s.as_str().map(str::to_string))
                .or_else(|| m.values().find_map(find)),
            _ => None,
        }
    }
    let text = String::from_utf8_lossy(out);
    let last = text
        .lines()
        .rev()
        .find(|l| l.contains("sha256"))
        .unwrap_or_else(|| panic!("no sha256 in {text}"));
    find(&serde_json::from_str(last).unwrap()).expect("a sha256 field")
}

/// Waits until both TUNs are up with their IPv6 address usable (not tentative).
fn wait_v6_tuns(net: &Net) {
    let deadline = Instant::now() + Duration::from_secs(15);
    let ready = |i: usize| {
        let out = net
            .cmd(i, "ip")
            .args(["-6", "addr", "show", "dev", "tcpnc0"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.contains(&format!("fd77::{}", i + 1)) && !text.contains("tentative")
    };
    while !(ready(0) && ready(1)) {
        assert!(
            Instant::now() < deadline,
            "TUNs not up: {}",
            net.log("gw0.log")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn ipv6_underlay_and_ipv6_inside_carry_a_transfer_intact() {
    if !is_root() || !have("ip") {
        eprintln!(
            "skipping ipv6_underlay_and_ipv6_inside_carry_a_transfer_intact: needs root and ip"
        );
        return;
    }
    let mut net = Net::new("v6");
    let dir = net.dir.clone();
    for i in 0..2 {
        let file = dir.join(format!("v6side{i}.toml"));
        std::fs::write(&file, config_v6(i, &dir)).unwrap();
        let mut up = net.cmd(i, BIN);
        up.arg("up").arg(&file);
        net.spawn(up, &format!("gw{i}.log"));
    }
    wait_v6_tuns(&net);
    let mut sink = net.cmd(1, BIN);
    sink.args([
        "lab",
        "sink",
        "--listen",
        "[fd77::2]:5001",
        "--timeout-s",
        "30",
    ]);
    let sink = sink
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let bytes = BYTES.to_string();
    let source = run(net.cmd(0, BIN).args([
        "lab",
        "source",
        "--connect",
        "[fd77::2]:5001",
        "--bytes",
        &bytes,
        "--cc",
        "cubic",
        "--timeout-s",
        "30",
    ]));
    let sink = sink.wait_with_output().unwrap();
    assert!(
        sink.status.success(),
        "sink: {}",
        String::from_utf8_lossy(&sink.stderr)
    );
    assert_eq!(
        sha256_of(&sink.stdout),
        sha256_of(&source.stdout),
        "integrity over IPv6"
    );
    // The bytes crossed IPv6 UDP and were decoded by side 1's engine.
    std::thread::sleep(Duration::from_millis(1200));
    let stats = tcpnc_gateway::stats::read_snapshot(&dir.join("stats1.json")).unwrap();
    assert!(stats.listen.starts_with("[fd00:2::2]"), "{}", stats.listen);
    assert!(stats.gateway.udp_rx_datagrams > 1000, "{:?}", stats.gateway);
    let totals = &stats.peers[0].engine["totals"];
    assert!(totals["data_received"].as_u64().unwrap() > 1000, "{totals}");
    assert!(
        totals["segments_delivered"].as_u64().unwrap() > 1000,
        "{totals}"
    );
}
