//! A lab (topology + scratch directory + the `tcpnc` binary) and a session on it: the relay
//! (`tcpnc link`) in the emulator namespace and a gateway (`tcpnc up`) in each host
//! namespace, started with readiness checks and stopped with their final counters read.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::child::Child;
use crate::emulator::relay_args;
use crate::error::{LabError, Result};
use crate::guard::ScratchDir;
use crate::netns::{self, Proto, in_netns};
use serde::Serialize;
use tcpnc_gateway::config::RawConfig;
use tcpnc_gateway::security::CipherSetting;
use tcpnc_gateway::stats::Snapshot;

use crate::fault::{GatewayFault, GatewaySide};
pub use crate::gateway_config::{GatewayAddrs, gateway_config};
use crate::settings::{PathMode, PathSettings, PolicyOverrides};
use crate::topo::{self, Topology};
use crate::tunnel_mode::{TunnelMode, session_keys, tun_mtu};

/// Tunnel address of the client gateway's TUN.
pub const TUN_CLI: Ipv4Addr = Ipv4Addr::new(10, 202, 0, 1);
/// Tunnel address of the server gateway's TUN.
pub const TUN_SRV: Ipv4Addr = Ipv4Addr::new(10, 202, 0, 2);
/// TUN device name in both host namespaces.
pub const TUN_DEV: &str = "nc0";
/// UDP port of both gateways.
pub const GATEWAY_PORT: u16 = 51820;
/// UDP port of the relay's A (client-facing) socket.
pub const RELAY_A_PORT: u16 = 7001;
/// UDP port of the relay's B (server-facing) socket.
pub const RELAY_B_PORT: u16 = 7002;
/// How long a started process may take to become ready.
const READY: Duration = Duration::from_secs(10);

/// The environment variable that overrides the `tcpnc` binary the lab starts.
pub const BIN_ENV: &str = "TCPNC_BIN";

/// The `tcpnc` binary to start in the namespaces: `$TCPNC_BIN`, else this executable.
pub fn tcpnc_exe() -> Result<PathBuf> {
    match std::env::var_os(BIN_ENV) {
        Some(p) => Ok(PathBuf::from(p)),
        None => std::env::current_exe().map_err(|e| LabError::Os {
            what: "locating the tcpnc executable".into(),
            source: e,
        }),
    }
}

/// A topology, a scratch directory for configs, logs and stats, and the binary to run.
pub struct Lab {
    /// Namespaces (dropped after everything that runs in them).
    pub topo: Topology,
    /// The `tcpnc` binary.
    pub exe: PathBuf,
    /// How the gateways protect the tunnel (default: keys).
    pub tunnel: TunnelMode,
    /// A gateway to kill and restart during each session (fault injection), if any.
    pub fault: Option<GatewayFault>,
    /// Run a spoofing attacker (`crate::spoof`) against the server gateway for this long.
    pub spoof: Option<Duration>,
    /// Join the two gateways directly (`tcpnc lab speed`): each one's endpoint is the other's
    /// UDP address, routed by the emulator namespace's kernel forwarding; no relay runs.
    pub direct_gateways: bool,
    /// The gateways' `queue_packets` (their default when `None`).
    pub queue_packets: Option<usize>,
    /// The gateways' `tun_offload` (their default when `None`).
    pub tun_offload: Option<bool>,
    /// The gateways' `udp_gso` (their default when `None`).
    pub udp_gso: Option<bool>,
    /// The gateways' `udp_gro` (their default when `None`).
    pub udp_gro: Option<bool>,
    /// The gateways' `workers` (default 1, docs/gateway.md "Engine workers"; `None`: theirs).
    pub workers: Option<usize>,
    /// The gateways' `tun_queues` (their default when `None`).
    pub tun_queues: Option<usize>,
    /// The gateways' `cipher` with keys (their default, `auto`, when `None`).
    pub cipher: Option<CipherSetting>,
    dir: ScratchDir,
    runs: AtomicU32,
}

impl Lab {
    /// Creates the topology and the scratch directory.
    pub fn new(exe: PathBuf) -> Result<Lab> {
        let topo = Topology::create()?;
        let dir = ScratchDir::new(&topo.id)?;
        Ok(Lab {
            topo,
            exe,
            tunnel: TunnelMode::default(),
            fault: None,
            spoof: None,
            direct_gateways: false,
            queue_packets: None,
            tun_offload: None,
            udp_gso: None,
            udp_gro: None,
            workers: Some(1),
            tun_queues: None,
            cipher: None,
            dir,
            runs: AtomicU32::new(0),
        })
    }

    /// The scratch directory (removed with the lab).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A fresh file name in the scratch directory: `<stem>-<run>.<ext>`.
    pub fn file(&self, stem: &str, ext: &str) -> PathBuf {
        let n = self.runs.fetch_add(1, Ordering::SeqCst);
        self.dir().join(format!("{stem}-{n}.{ext}"))
    }

    /// Starts `tcpnc ARGS` in namespace `ns`, stderr to a log in the scratch directory.
    pub fn spawn(&self, name: &str, ns: &str, args: &[String]) -> Result<Child> {
        let log = self.file(&name.replace(' ', "-"), "log");
        Child::spawn(name, Some(ns), &self.exe, args, &log)
    }

    /// Starts any program in namespace `ns`.
    pub fn spawn_program(
        &self,
        name: &str,
        ns: &str,
        program: &Path,
        args: &[String],
    ) -> Result<Child> {
        let log = self.file(&name.replace(' ', "-"), "log");
        Child::spawn(name, Some(ns), program, args, &log)
    }
}

/// Waits until `check` holds, failing early (with its log) if `child` exits.
pub fn wait_ready(
    child: &mut Child,
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> Result<bool>,
) -> Result<()> {
    netns::wait_until(what, timeout, || {
        child.check_running()?;
        check()
    })
    .map_err(|e| match e {
        LabError::Timeout { what, secs, .. } => LabError::Timeout {
            what,
            secs,
            log: child.log_tail(),
        },
        e => e,
    })
}

/// Waits until `child`, running in namespace `ns`, listens on TCP `port` (a sink, an iperf3 or
/// HTTP server), failing early if it exits.
pub fn wait_listening(
    child: &mut Child,
    what: &str,
    ns: &str,
    port: u16,
    timeout: Duration,
) -> Result<()> {
    wait_ready(child, what, timeout, || {
        in_netns(ns, || netns::port_bound(Proto::Tcp, port))
    })
}

/// A running gateway and what it takes to start it again.
struct GatewayRun {
    child: Child,
    stats: PathBuf,
    config: PathBuf,
    name: &'static str,
    ns: String,
}

/// The relay and the two gateways of one run (none in [`PathMode::Direct`]).
pub struct Session<'a> {
    lab: &'a Lab,
    mode: PathMode,
    relay: Option<(Child, PathBuf)>,
    gateways: Vec<GatewayRun>,
    spoofer: Option<Child>,
    started: Instant,
    killed_at: Option<Instant>,
}

/// The two gateways' final stats files, read back as the gateway's own [`Snapshot`] type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GatewayStats {
    /// The client-side gateway (data sender's side).
    pub client: Snapshot,
    /// The server-side gateway.
    pub server: Snapshot,
}

/// Counters collected when a session stops.
#[derive(Debug, Clone, Default)]
pub struct SessionStats {
    /// The gateways' final stats files (`{"client": .., "server": ..}` in JSON).
    pub gateways: Option<GatewayStats>,
    /// The relay's counters.
    pub link: Option<Value>,
    /// The spoofer's report (`crate::spoof::SpoofReport`), when one ran.
    pub spoof: Option<Value>,
}

impl<'a> Session<'a> {
    /// Starts the relay and the gateways for `mode` and waits until each is ready.
    pub fn start(
        lab: &'a Lab,
        mode: PathMode,
        path: &PathSettings,
        coding: &PolicyOverrides,
    ) -> Result<Session<'a>> {
        let mut s = Session {
            lab,
            mode,
            relay: None,
            gateways: Vec::new(),
            spoofer: None,
            started: Instant::now(),
            killed_at: None,
        };
        if mode == PathMode::Direct {
            return Ok(s);
        }
        if !lab.direct_gateways {
            s.relay = Some(start_relay(lab, path)?);
        }
        let t = &lab.topo;
        let (cli_end, srv_end) = endpoints(lab);
        let sides = [
            (
                "client gateway",
                &t.cli,
                GatewayAddrs {
                    me: TUN_CLI,
                    peer: TUN_SRV,
                    listen: SocketAddr::from((topo::CLI_ADDR, GATEWAY_PORT)),
                    endpoint: cli_end,
                },
            ),
            (
                "server gateway",
                &t.srv,
                GatewayAddrs {
                    me: TUN_SRV,
                    peer: TUN_CLI,
                    listen: SocketAddr::from((topo::SRV_ADDR, GATEWAY_PORT)),
                    endpoint: srv_end,
                },
            ),
        ];
        let keys = session_keys(lab)?;
        for (i, (name, ns, addrs)) in sides.into_iter().enumerate() {
            let stats = lab.file(&name.replace(' ', "-"), "json");
            let mut config = gateway_config(mode, coding, path, &addrs, &stats);
            config.interface.mtu = Some(tun_mtu(lab.tunnel));
            config.interface.queue_packets = lab.queue_packets;
            config.interface.tun_offload = lab.tun_offload;
            config.interface.udp_gso = lab.udp_gso;
            config.interface.udp_gro = lab.udp_gro;
            config.interface.workers = lab.workers;
            config.interface.tun_queues = lab.tun_queues;
            if let Some((files, publics)) = &keys {
                config.interface.insecure = None;
                config.interface.private_key_file = Some(files[i].display().to_string());
                config.peer[0].public_key = Some(publics[1 - i].to_string());
                config.interface.cipher = lab.cipher.map(|c| c.to_string());
            }
            let file = write_config(lab, name, &config)?;
            let child = start_gateway(lab, name, ns, &file, &stats)?;
            s.gateways.push(GatewayRun {
                child,
                stats,
                config: file,
                name,
                ns: ns.clone(),
            });
        }
        if let Some(d) = lab.spoof {
            s.spoofer = Some(start_spoofer(lab, d)?);
        }
        s.started = Instant::now();
        Ok(s)
    }

    /// The address the server listens on for this session's mode.
    pub fn server_ip(&self) -> Ipv4Addr {
        match self.mode {
            PathMode::Direct => topo::SRV_ADDR,
            _ => TUN_SRV,
        }
    }

    /// The lab this session runs on.
    pub fn lab(&self) -> &Lab {
        self.lab
    }

    /// Process ids of the running gateways, client first.
    pub fn gateway_pids(&self) -> Vec<u32> {
        self.gateways.iter().map(|g| g.child.pid()).collect()
    }

    /// Injects the lab's fault when it is due, then fails if the relay or a gateway has died.
    pub fn check_running(&mut self) -> Result<()> {
        self.inject_fault()?;
        for (c, _) in self.relay.iter_mut() {
            c.check_running()?;
        }
        for g in &mut self.gateways {
            g.child.check_running()?;
        }
        Ok(())
    }

    /// Kills and restarts the faulty gateway once its time has come.
    fn inject_fault(&mut self) -> Result<()> {
        let Some(f) = self.lab.fault else {
            return Ok(());
        };
        if self.killed_at.is_some() || self.started.elapsed() < f.after {
            return Ok(());
        }
        let i = match f.side {
            GatewaySide::Client => 0,
            GatewaySide::Server => 1,
        };
        let lab = self.lab;
        let Some(g) = self.gateways.get_mut(i) else {
            return Ok(());
        };
        g.child.kill9();
        self.killed_at = Some(Instant::now());
        g.child = start_gateway(lab, g.name, &g.ns, &g.config, &g.stats)?;
        Ok(())
    }

    /// The injected fault and how long ago the gateway was killed, if it was.
    pub fn since_fault(&self) -> Option<(GatewaySide, Duration)> {
        Some((self.lab.fault?.side, self.killed_at?.elapsed()))
    }

    /// Stops the gateways and the relay (SIGTERM; they write final counters) and reads
    /// their counters.
    pub fn finish(mut self) -> Result<SessionStats> {
        if self.mode == PathMode::Direct {
            return Ok(SessionStats::default());
        }
        let spoof = match self.spoofer.take() {
            Some(mut c) => Some(spoof_report(&mut c)?),
            None => None,
        };
        let mut snaps = Vec::new();
        for mut g in std::mem::take(&mut self.gateways) {
            g.child.stop();
            snaps.push(read_snapshot(&g.stats, g.child.name())?);
        }
        let link = match self.relay.take() {
            Some((mut relay, stats)) => {
                relay.stop();
                Some(read_json(&stats, "relay")?)
            }
            None => None,
        };
        let mut it = snaps.into_iter();
        let gateways = match (it.next(), it.next()) {
            (Some(client), Some(server)) => Some(GatewayStats { client, server }),
            _ => None,
        };
        Ok(SessionStats {
            gateways,
            link,
            spoof,
        })
    }
}

/// Starts the spoofing attacker against the server gateway for `d`.
fn start_spoofer(lab: &Lab, d: Duration) -> Result<Child> {
    let target = format!("{}:{GATEWAY_PORT}", topo::SRV_ADDR);
    let args = [
        "lab",
        "spoof",
        "--target",
        &target,
        "--duration-s",
        &d.as_secs_f64().to_string(),
    ];
    let args: Vec<String> = args.map(String::from).to_vec();
    lab.spawn("spoofer", &lab.topo.emu, &args)
}

/// The client and server gateways' peer endpoints: the relay's sockets, or each other's UDP
/// address when the lab joins them directly.
fn endpoints(lab: &Lab) -> (SocketAddr, SocketAddr) {
    if lab.direct_gateways {
        (
            SocketAddr::from((topo::SRV_ADDR, GATEWAY_PORT)),
            SocketAddr::from((topo::CLI_ADDR, GATEWAY_PORT)),
        )
    } else {
        (
            SocketAddr::from((topo::EMU_CLI_ADDR, RELAY_A_PORT)),
            SocketAddr::from((topo::EMU_SRV_ADDR, RELAY_B_PORT)),
        )
    }
}

/// Waits (at most 30 s) for the spoofer's one-line JSON report.
fn spoof_report(c: &mut Child) -> Result<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        match c.poll_line(Duration::from_millis(100)) {
            crate::child::Line::Text(l) => {
                return serde_json::from_str(&l).map_err(|e| LabError::Report {
                    who: "spoofer".into(),
                    detail: e.to_string(),
                });
            }
            crate::child::Line::Closed => break,
            crate::child::Line::Nothing => {}
        }
    }
    c.stop();
    Err(LabError::Child {
        what: "the spoofer gave no report".into(),
        log: c.log_tail(),
    })
}

/// A gateway's stats file as the gateway's [`Snapshot`]: a renamed or retyped field fails here.
fn read_snapshot(path: &Path, who: &str) -> Result<Snapshot> {
    let text = std::fs::read_to_string(path).map_err(|e| LabError::file(path, e))?;
    serde_json::from_str(&text).map_err(|e| LabError::Report {
        who: who.to_string(),
        detail: e.to_string(),
    })
}

fn read_json(path: &Path, who: &str) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| LabError::file(path, e))?;
    serde_json::from_str(&text).map_err(|e| LabError::Report {
        who: who.to_string(),
        detail: e.to_string(),
    })
}

/// Starts the relay in the emulator namespace and waits until both its sockets are bound.
fn start_relay(lab: &Lab, path: &PathSettings) -> Result<(Child, PathBuf)> {
    let t = &lab.topo;
    let stats = lab.file("link", "json");
    let mut args = vec!["link".to_string()];
    args.extend(relay_args(path, &stats).to_args());
    let mut relay = lab.spawn("relay", &t.emu, &args)?;
    wait_ready(&mut relay, "the relay's sockets", READY, || {
        in_netns(&t.emu, || {
            Ok(netns::port_bound(Proto::Udp, RELAY_A_PORT)?
                && netns::port_bound(Proto::Udp, RELAY_B_PORT)?)
        })
    })?;
    Ok((relay, stats))
}

/// Writes `config` to the scratch directory.
fn write_config(lab: &Lab, name: &str, config: &RawConfig) -> Result<PathBuf> {
    let file = lab.file(&name.replace(' ', "-"), "toml");
    let text = config
        .to_toml()
        .map_err(|e| LabError::Invalid(e.to_string()))?;
    std::fs::write(&file, text).map_err(|e| LabError::file(&file, e))?;
    Ok(file)
}

/// Starts `tcpnc up` with the config `file` in `ns` and waits for its TUN and socket.
fn start_gateway(lab: &Lab, name: &str, ns: &str, file: &Path, stats: &Path) -> Result<Child> {
    let args = [
        "up".into(),
        "--config".into(),
        file.display().to_string(),
        "--stats-file".into(),
        stats.display().to_string(),
    ];
    let mut gw = lab.spawn(name, ns, &args)?;
    wait_ready(
        &mut gw,
        &format!("the {name} (TUN {TUN_DEV} up)"),
        READY,
        || {
            in_netns(ns, || {
                Ok(netns::iface_up(TUN_DEV)? && netns::port_bound(Proto::Udp, GATEWAY_PORT)?)
            })
        },
    )?;
    // A gateway with TUN offloads (its default) takes TSO/GSO super-packets and cuts them into
    // MSS-sized segments itself; without, the TUN must carry MSS-sized segments only (a plain
    // TUN reports its offloads off already; this checks it).
    if lab.tun_offload == Some(false) {
        in_netns(ns, || netns::offloads_off(TUN_DEV))?;
    }
    Ok(gw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::PathSpec;
    use tcpnc_gateway::Config;
    use tcpnc_settings::{Policies, RepairPolicy};

    fn path() -> PathSettings {
        PathSettings::new(PathSpec::lab(), 5)
    }

    fn addrs() -> GatewayAddrs {
        GatewayAddrs {
            me: Ipv4Addr::new(10, 9, 0, 1),
            peer: Ipv4Addr::new(10, 9, 0, 2),
            listen: "10.8.1.1:51820".parse().unwrap(),
            endpoint: "10.8.1.2:40001".parse().unwrap(),
        }
    }

    /// The lab's gateway config is read back by the gateway's own parser with the policies
    /// the lab asked for (the typed contract: a renamed key fails here, not at lab time).
    #[test]
    fn gateway_reads_the_lab_config() {
        let coding = PolicyOverrides {
            window: Some(8),
            repair: Some(RepairPolicy::Off),
            ..PolicyOverrides::default()
        };
        let stats = Path::new("/tmp/x.json");
        let raw = gateway_config(PathMode::Nc, &coding, &path(), &addrs(), stats);
        let c = Config::parse(&raw.to_toml().unwrap()).unwrap();
        assert_eq!(c.coding.policies, Policies::product().with(&coding));
        assert_eq!(c.coding.seed, 5);
        assert_eq!(c.interface.mtu, tun_mtu(TunnelMode::Insecure));
        assert_eq!(c.peers[0].endpoint, Some(addrs().endpoint));
        let raw = gateway_config(PathMode::Plain, &coding, &path(), &addrs(), stats);
        let c = Config::parse(&raw.to_toml().unwrap()).unwrap();
        assert_eq!(c.coding.mode, tcpnc_settings::CodingMode::Off);
    }
}
