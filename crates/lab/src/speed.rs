//! `tcpnc lab speed`: the gateway data path at full speed.
//!
//! The two gateways are joined directly ([`Lab::direct_gateways`]: each one's endpoint is the
//! other's UDP address, routed by the kernel in the emulator namespace; no relay, no
//! impairment). Kernel TCP with the built-in source and sink crosses them once per case, all
//! cases in one run on one topology. Each case reports:
//!
//! * goodput (the transfer's, see [`crate::transfer`]) and integrity;
//! * the gateways' CPU time, `utime + stime` of `/proc/<pid>/stat` (every thread) read just
//!   before the source starts and just after the sink's last byte, per GB received
//!   (10^9 bytes) for the pair;
//! * packets per system call on the TUN and UDP sides (the gateways' own `*_calls` counters);
//! * the gateways' own drops (input queue full, TUN write and read errors, UDP send errors,
//!   the engines' transmit and local queues);
//! * whether both gateways ran their TUN with offloads (`tun_offload`, [`Lab::tun_offload`]),
//!   sent with UDP GSO (`udp_gso`) and received with UDP GRO (`udp_gro`), and datagrams per
//!   kernel message each way (`udp_tx_per_message`, `udp_rx_per_message`);
//! * with [`SpeedOptions::iperf3`], iperf3's figures over the same case in a second session
//!   ([`crate::iperf::run_iperf3`], `{"skipped": ..}` when it is not installed);
//! * with [`SpeedOptions::profile_dir`], for each nc case a `perf` profile of the sending
//!   side's (client) gateway over a second run of the built-in transfer ([`crate::profile`]).
//!   The figures above come from an unprofiled run: perf record costs the gateways CPU (on
//!   a 2-vCPU machine nc's goodput fell 9 to 34 % while profiled, docs/speed.md), so the
//!   profiled transfer's goodput is reported apart, in `profile`.

use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use serde::Serialize;
use serde_json::Value;
pub use tcpnc_gateway::stats::GatewayDrops;
use tcpnc_gateway::stats::{GatewayCounters, Snapshot};
use tcpnc_settings::{
    CodingScheme, PathMode, PathSpec, Policies, PolicyOverrides, RedundancyPolicy, Switch,
};
use tcpnc_tunnel::Cipher;

use crate::error::{LabError, Result};
use crate::iperf::run_iperf3;
use crate::profile::{self, ProfileFiles, Profiler};
use crate::session::{Lab, Session};
use crate::settings::{PathSettings, TransferSettings};
use crate::transfer::run_transfer;

/// One case of a speed run: gateway coding off, or nc with a window, a fixed redundancy and
/// ACK coalescing on or off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpeedCase {
    /// `plain` (gateways with `mode = "off"`) or `nc`.
    pub mode: PathMode,
    /// Coding window W (nc only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u16>,
    /// Fixed redundancy R (nc only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redundancy: Option<f64>,
    /// The `coalesce_acks` policy (nc only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coalesce_acks: Option<Switch>,
    /// The coding scheme (nc only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<CodingScheme>,
}

impl SpeedCase {
    /// `off`, `nc W12 R1.0`, with ` sys` for the systematic scheme and ` ca-off` with ACK
    /// coalescing off.
    pub fn label(&self) -> String {
        match (self.mode, self.window, self.redundancy) {
            (PathMode::Nc, Some(w), Some(r)) => {
                let sys = match self.scheme {
                    Some(CodingScheme::Systematic) => " sys",
                    _ => "",
                };
                let ca = match self.coalesce_acks {
                    Some(Switch::Off) => " ca-off",
                    _ => "",
                };
                format!("nc W{w} R{r:.1}{sys}{ca}")
            }
            _ => "off".into(),
        }
    }

    /// `off` then every nc combination of `windows` × `redundancies` × `schemes` × `coalesce`
    /// (off included when `with_off`).
    pub fn set(
        with_off: bool,
        windows: &[u16],
        redundancies: &[f64],
        schemes: &[CodingScheme],
        coalesce: &[Switch],
    ) -> Vec<SpeedCase> {
        let off = SpeedCase {
            mode: PathMode::Plain,
            window: None,
            redundancy: None,
            coalesce_acks: None,
            scheme: None,
        };
        let mut cases: Vec<SpeedCase> = with_off.then_some(off).into_iter().collect();
        for &w in windows {
            for &r in redundancies {
                for &scheme in schemes {
                    cases.extend(coalesce.iter().map(|&c| SpeedCase {
                        mode: PathMode::Nc,
                        window: Some(w),
                        redundancy: Some(r),
                        coalesce_acks: Some(c),
                        scheme: Some(scheme),
                    }));
                }
            }
        }
        cases
    }

    fn coding(&self) -> PolicyOverrides {
        PolicyOverrides {
            window: self.window,
            redundancy: self.redundancy.map(RedundancyPolicy::Fixed),
            coalesce_acks: self.coalesce_acks,
            scheme: self.scheme,
            ..PolicyOverrides::default()
        }
    }
}

/// Packets per system call, over both gateways.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PacketsPerCall {
    /// Packets read from the TUNs per read call.
    pub tun_rx: f64,
    /// Packets written to the TUNs per write call.
    pub tun_tx: f64,
    /// Datagrams received per receive call.
    pub udp_rx: f64,
    /// Datagrams sent per send call.
    pub udp_tx: f64,
    /// Datagrams sent per kernel message (above 1 only with UDP GSO trains).
    pub udp_tx_per_message: f64,
    /// Datagrams received per kernel message (above 1 only when UDP GRO coalesced them).
    pub udp_rx_per_message: f64,
}

/// The figures of one case.
#[derive(Debug, Clone, Serialize)]
pub struct SpeedResult {
    /// The case.
    #[serde(flatten)]
    pub case: SpeedCase,
    /// Goodput, Mbit/s.
    pub goodput_mbit: f64,
    /// Bytes and sha256 equal at both ends.
    pub integrity_ok: bool,
    /// Sender's TCP retransmissions.
    pub retransmits: u32,
    /// CPU seconds of the client and the server gateway over the transfer.
    pub cpu_s: [f64; 2],
    /// CPU seconds of the pair per GB (10^9 bytes) received.
    pub cpu_s_per_gb: f64,
    /// Packets per system call.
    pub packets_per_call: PacketsPerCall,
    /// The gateways' own drops.
    pub drops: GatewayDrops,
    /// Both gateways ran their TUN with offloads (`IFF_VNET_HDR`).
    pub tun_offload: bool,
    /// Both gateways ended the run sending with UDP GSO (`udp_gso`).
    pub udp_gso: bool,
    /// Both gateways ended the run receiving with UDP GRO (`udp_gro`).
    pub udp_gro: bool,
    /// The engine workers each gateway ran (`workers`; the client's, the server's).
    pub workers: [usize; 2],
    /// The TUN queues each gateway ran (`tun_queues`; the client's, the server's).
    pub tun_queues: [usize; 2],
    /// The cipher of the client gateway's tunnel sessions (`chacha20-poly1305`,
    /// `aes-256-gcm`, `mixed`; `null` without keys): `--cipher` as the gateways resolved it.
    pub cipher: Option<&'static str>,
    /// The whole policy set the nc gateways ran with (the product's with the case's keys);
    /// absent for `off`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policies: Option<Policies>,
    /// The gateways' final counters (`{"client": .., "server": ..}`).
    pub gateways: Value,
    /// iperf3's figures in a second session of the same case (with `--iperf3`), or
    /// `{"skipped": why}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iperf3: Option<Value>,
    /// The sending side's gateway profile over a second, profiled transfer (nc cases with
    /// `--profile`): files, top symbols, that transfer's goodput and integrity; or
    /// `{"skipped": why}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Value>,
}

#[cfg(test)]
impl SpeedResult {
    /// A result of `case` with these figures, intact, and nothing else measured (unit tests).
    pub(crate) fn for_test(case: SpeedCase, goodput_mbit: f64, cpu_s_per_gb: f64) -> Self {
        SpeedResult {
            case,
            goodput_mbit,
            integrity_ok: true,
            retransmits: 0,
            cpu_s: [0.0; 2],
            cpu_s_per_gb,
            packets_per_call: PacketsPerCall::default(),
            drops: GatewayDrops::default(),
            tun_offload: true,
            udp_gso: true,
            udp_gro: true,
            workers: [1, 1],
            tun_queues: [1, 1],
            cipher: None,
            policies: None,
            gateways: Value::Null,
            iperf3: None,
            profile: None,
        }
    }
}

/// What a speed run measures besides the built-in source and sink.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpeedOptions {
    /// Run iperf3 (when installed) over each case, in a second session.
    pub iperf3: bool,
    /// Write a `perf` profile of each nc case's client gateway into this directory.
    pub profile_dir: Option<PathBuf>,
}

impl SpeedOptions {
    /// The profile of `case` goes to these files (nc cases, with a profile directory).
    fn profile_files(&self, case: &SpeedCase) -> Option<ProfileFiles> {
        let dir = self.profile_dir.as_ref()?;
        (case.mode == PathMode::Nc).then(|| ProfileFiles::new(dir, &case.label()))
    }
}

/// Runs every case on `lab` (whose `direct_gateways` this sets) with transfer `t`, and what
/// `opts` adds.
pub fn run_speed(
    lab: &mut Lab,
    cases: &[SpeedCase],
    t: &TransferSettings,
    opts: &SpeedOptions,
    bar: &ProgressBar,
) -> Result<Vec<SpeedResult>> {
    lab.direct_gateways = true;
    // The path settings are unused without a relay; the seed goes to the nc gateways.
    let path = PathSettings::new(PathSpec::lab(), 1);
    let mut out = Vec::with_capacity(cases.len());
    for case in cases {
        bar.set_prefix(case.label());
        out.push(run_case(lab, case, &path, t, opts, bar)?);
    }
    Ok(out)
}

fn run_case(
    lab: &Lab,
    case: &SpeedCase,
    path: &PathSettings,
    t: &TransferSettings,
    opts: &SpeedOptions,
    bar: &ProgressBar,
) -> Result<SpeedResult> {
    let mut session = Session::start(lab, case.mode, path, &case.coding())?;
    let pids = session.gateway_pids();
    let before = cpu_seconds(&pids)?;
    let transfer = run_transfer(&mut session, t, bar)?;
    let after = cpu_seconds(&pids)?;
    let stats = session.finish()?;
    let profile = match opts.profile_files(case) {
        Some(files) => Some(profile_case(lab, case, path, t, files, bar)?),
        None => None,
    };
    let iperf3 = if opts.iperf3 {
        let mut session = Session::start(lab, case.mode, path, &case.coding())?;
        let r = run_iperf3(&mut session, t)?;
        session.finish()?;
        Some(r)
    } else {
        None
    };
    let g = stats
        .gateways
        .ok_or_else(|| LabError::Invalid("no gateway counters".into()))?;
    let cpu_s = [after[0] - before[0], after[1] - before[1]];
    let gb = transfer.bytes_received.max(1) as f64 / 1e9;
    Ok(SpeedResult {
        case: *case,
        goodput_mbit: transfer.goodput_mbit,
        integrity_ok: transfer.integrity_ok,
        retransmits: transfer.retransmits,
        cpu_s,
        cpu_s_per_gb: (cpu_s[0] + cpu_s[1]) / gb,
        packets_per_call: per_call(&g.client.gateway, &g.server.gateway),
        drops: drops(&[&g.client, &g.server]),
        tun_offload: g.client.tun_offload && g.server.tun_offload,
        udp_gso: g.client.udp_gso && g.server.udp_gso,
        udp_gro: g.client.udp_gro && g.server.udp_gro,
        workers: [g.client.workers, g.server.workers],
        tun_queues: [g.client.tun_queues, g.server.tun_queues],
        cipher: session_cipher(&g.client.tunnel),
        policies: (case.mode == PathMode::Nc).then(|| Policies::product().with(&case.coding())),
        gateways: serde_json::to_value(&g).unwrap_or(Value::Null),
        iperf3,
        profile,
    })
}

/// The cipher of the sessions a gateway's tunnel counters (`Cipher::sessions_counter`) show.
fn session_cipher(tunnel: &Value) -> Option<&'static str> {
    let used: Vec<&'static str> = Cipher::ALL
        .into_iter()
        .filter(|c| tunnel[c.sessions_counter()].as_u64().unwrap_or(0) > 0)
        .map(Cipher::name)
        .collect();
    match used.as_slice() {
        [] => None,
        [one] => Some(one),
        _ => Some("mixed"),
    }
}

/// A second session of `case` whose built-in transfer runs under `perf record` of the client
/// gateway (perf from `PATH`, stopped after the last byte): the report with the profiled
/// transfer's goodput and integrity, or `{"skipped": why}` (then no transfer runs).
fn profile_case(
    lab: &Lab,
    case: &SpeedCase,
    path: &PathSettings,
    t: &TransferSettings,
    files: ProfileFiles,
    bar: &ProgressBar,
) -> Result<Value> {
    let mut session = Session::start(lab, case.mode, path, &case.coding())?;
    let perf = crate::child::find_on_path("perf");
    let log = lab.file("perf-record", "log");
    let started = match session.gateway_pids().first() {
        Some(&pid) => Profiler::start(perf.as_deref(), pid, files, &log),
        None => Err("no client gateway to profile".into()),
    };
    let profiler = match started {
        Ok(p) => p,
        Err(why) => {
            session.finish()?;
            return Ok(profile::skipped(why));
        }
    };
    bar.set_prefix(format!("{} (profiled)", case.label()));
    let transfer = run_transfer(&mut session, t, bar)?;
    let recording = profiler.stop();
    session.finish()?;
    Ok(match recording {
        Ok(rec) => {
            let mut v = rec.report(&lab.file("perf-report", "log"));
            if let Some(o) = v.as_object_mut().filter(|o| !o.contains_key("skipped")) {
                o.insert("goodput_mbit".into(), transfer.goodput_mbit.into());
                o.insert("integrity_ok".into(), transfer.integrity_ok.into());
            }
            v
        }
        Err(why) => profile::skipped(why),
    })
}

fn per_call(a: &GatewayCounters, b: &GatewayCounters) -> PacketsPerCall {
    let ratio = |p: u64, c: u64| if c == 0 { 0.0 } else { p as f64 / c as f64 };
    PacketsPerCall {
        tun_rx: ratio(
            a.tun_rx_packets + b.tun_rx_packets,
            a.tun_rx_calls + b.tun_rx_calls,
        ),
        tun_tx: ratio(
            a.tun_tx_packets + b.tun_tx_packets,
            a.tun_tx_calls + b.tun_tx_calls,
        ),
        udp_rx: ratio(
            a.udp_rx_datagrams + b.udp_rx_datagrams,
            a.udp_rx_calls + b.udp_rx_calls,
        ),
        udp_tx: ratio(
            a.udp_tx_datagrams + b.udp_tx_datagrams,
            a.udp_tx_calls + b.udp_tx_calls,
        ),
        udp_tx_per_message: ratio(
            a.udp_tx_datagrams + b.udp_tx_datagrams,
            a.udp_tx_messages + b.udp_tx_messages,
        ),
        udp_rx_per_message: ratio(
            a.udp_rx_datagrams + b.udp_rx_datagrams,
            a.udp_rx_messages + b.udp_rx_messages,
        ),
    }
}

/// Both gateways' own drops, added.
fn drops(snaps: &[&Snapshot]) -> GatewayDrops {
    snaps
        .iter()
        .map(|s| GatewayDrops::of(s))
        .fold(GatewayDrops::default(), |a, b| a + b)
}

/// Clock ticks per second of `/proc/<pid>/stat`'s `utime` and `stime`: Linux reports them in
/// USER_HZ, which is 100 on every architecture (the value `sysconf(_SC_CLK_TCK)` returns; proc(5)).
const USER_HZ: f64 = 100.0;

/// `utime + stime` of each process, seconds.
fn cpu_seconds(pids: &[u32]) -> Result<Vec<f64>> {
    let hz = USER_HZ;
    pids.iter()
        .map(|pid| {
            let file = format!("/proc/{pid}/stat");
            let text =
                std::fs::read_to_string(&file).map_err(|e| LabError::file(Path::new(&file), e))?;
            let ticks = stat_cpu_ticks(&text)
                .ok_or_else(|| LabError::Invalid(format!("cannot parse {file}")))?;
            Ok(ticks as f64 / hz)
        })
        .collect()
}

/// `utime + stime` (fields 14 and 15) of a `/proc/<pid>/stat` line; the command name (field 2)
/// may hold spaces and parentheses, so fields are counted after its last `)`.
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`).
pub fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_skip_odd_command_names() {
        let line = "4242 (tc) pnc (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 37 5 0 0 20 0 3 0";
        assert_eq!(stat_cpu_ticks(line), Some(42));
        assert_eq!(stat_cpu_ticks("4242 (tcpnc) S 1"), None);
    }

    #[test]
    fn case_set_is_off_then_every_combination() {
        let dense = [CodingScheme::Dense];
        let s = SpeedCase::set(true, &[8, 12], &[1.0, 1.1], &dense, &[Switch::On]);
        assert_eq!(s.len(), 5);
        assert_eq!(s[0].label(), "off");
        assert_eq!(s[4].label(), "nc W12 R1.1");
        assert_eq!(s[4].coding().coalesce_acks, Some(Switch::On));
        assert_eq!(s[4].coding().scheme, Some(CodingScheme::Dense));
        let both = [Switch::On, Switch::Off];
        let s = SpeedCase::set(false, &[12], &[1.0], &dense, &both);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].label(), "nc W12 R1.0 ca-off");
        assert_eq!(s[1].coding().coalesce_acks, Some(Switch::Off));
        let schemes = [CodingScheme::Dense, CodingScheme::Systematic];
        let s = SpeedCase::set(false, &[12], &[1.0], &schemes, &[Switch::On]);
        assert_eq!(s[1].label(), "nc W12 R1.0 sys");
        assert_eq!(s[1].coding().scheme, Some(CodingScheme::Systematic));
    }

    /// Only nc cases are profiled, into `<dir>/<slug of the label>.perf.*`; `iperf3` and
    /// `profile` appear in the JSON only when asked for, `{"skipped": ..}` when unavailable.
    #[test]
    fn extras_per_case() {
        let cases = SpeedCase::set(true, &[12], &[1.0], &[CodingScheme::Dense], &[Switch::Off]);
        let opts = SpeedOptions {
            iperf3: true,
            profile_dir: Some(PathBuf::from("/p")),
        };
        assert_eq!(opts.profile_files(&cases[0]), None);
        let f = opts.profile_files(&cases[1]).expect("nc is profiled");
        assert_eq!(f.data, Path::new("/p/nc-w12-r1.0-ca-off.perf.data"));
        assert_eq!(SpeedOptions::default().profile_files(&cases[1]), None);
        let mut r = SpeedResult::for_test(cases[1], 1.0, 0.0);
        let v = serde_json::to_value(&r).unwrap_or_default();
        assert!(
            v.get("iperf3").is_none() && v.get("profile").is_none(),
            "{v}"
        );
        r.iperf3 = Some(serde_json::json!({"skipped": "iperf3 is not installed"}));
        r.profile = Some(profile::skipped("perf is not installed"));
        let v = serde_json::to_value(&r).unwrap_or_default();
        assert_eq!(v["iperf3"]["skipped"], "iperf3 is not installed");
        assert_eq!(v["profile"]["skipped"], "perf is not installed");
        assert_eq!(v["window"], 12);
    }

    /// The cipher a run used is read from the tunnel's per-cipher session counters.
    #[test]
    fn the_session_cipher_comes_from_the_tunnel_counters() {
        let t =
            |c, a| serde_json::json!({"sessions_chacha20_poly1305": c, "sessions_aes_256_gcm": a});
        assert_eq!(session_cipher(&t(0, 2)), Some("aes-256-gcm"));
        assert_eq!(session_cipher(&t(1, 0)), Some("chacha20-poly1305"));
        assert_eq!(session_cipher(&t(1, 1)), Some("mixed"));
        assert_eq!(session_cipher(&t(0, 0)), None);
        assert_eq!(session_cipher(&serde_json::json!({"drops": {}})), None);
    }

    fn snapshot(queue_drops: u64, engine: Value) -> Snapshot {
        Snapshot {
            version: tcpnc_gateway::stats::STATS_VERSION,
            interface: "nc0".into(),
            listen: String::new(),
            mode: "nc".into(),
            pid: 1,
            uptime_secs: 1.0,
            unix_time: 1.0,
            stopped: true,
            gateway: GatewayCounters {
                queue_drops,
                ..Default::default()
            },
            peers: vec![tcpnc_gateway::stats::PeerSnapshot {
                name: "p".into(),
                endpoint: String::new(),
                allowed_ips: vec![],
                counters: Default::default(),
                engine,
            }],
            window: None,
            buffers: None,
            tun_offload: false,
            udp_gso: false,
            udp_gro: false,
            workers: 1,
            worker_items: Vec::new(),
            tun_queues: 1,
            tun_queue_packets: Vec::new(),
            tunnel: Value::Null,
        }
    }

    /// The smoke test's "no gateway drops" reads the input queue and the engines' transmit
    /// and local queues of both gateways: a drop in any of them shows.
    #[test]
    fn drops_include_input_and_engine_queues() {
        let clean = snapshot(
            0,
            serde_json::json!({"totals": {"transmit_queue_drops": 0}}),
        );
        assert!(drops(&[&clean, &clean]).none());
        let engine =
            serde_json::json!({"totals": {"transmit_queue_drops": 2, "local_queue_drops": 3}});
        let d = drops(&[&clean, &snapshot(0, engine)]);
        assert_eq!(d.engine_queue, 5);
        assert!(!d.none());
        assert_eq!(drops(&[&snapshot(7, Value::Null), &clean]).queue, 7);
    }

    #[test]
    fn packets_per_call_over_both_gateways() {
        let a = GatewayCounters {
            udp_tx_datagrams: 300,
            udp_tx_calls: 10,
            udp_tx_messages: 30,
            udp_rx_datagrams: 90,
            udp_rx_messages: 3,
            ..Default::default()
        };
        let b = GatewayCounters {
            udp_tx_datagrams: 100,
            udp_tx_calls: 10,
            udp_tx_messages: 10,
            udp_rx_datagrams: 10,
            udp_rx_messages: 2,
            ..Default::default()
        };
        let p = per_call(&a, &b);
        assert_eq!(p.udp_tx, 20.0);
        assert_eq!(p.udp_tx_per_message, 10.0);
        assert_eq!(p.udp_rx_per_message, 20.0);
        assert_eq!(p.tun_rx, 0.0);
    }
}
