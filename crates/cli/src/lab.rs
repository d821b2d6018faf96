//! `tcpnc lab`: the one-machine testbed (wiring only; see the `tcpnc-lab` crate).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use clap::{Args, Subcommand};
use tcpnc_experiment::demo;
use tcpnc_lab::fault::{GatewayFault, GatewaySide};
use tcpnc_lab::settings::TransferSettings;
use tcpnc_lab::tunnel_mode::TunnelMode;
use tcpnc_lab::{Lab, guard, http, measure, progress};

pub use crate::lab_args::{CodingArgs, PathArgs, TransferArgs};
use tcpnc_gateway::security::CipherSetting;
use tcpnc_settings::{CongestionControl, PathMode, Switch};

/// Arguments of `tcpnc lab`.
#[derive(Debug, Clone, Args)]
pub struct LabArgs {
    /// How the gateways protect the tunnel: secure (fresh keys, Noise with an AEAD, see
    /// `--cipher`; the default, what a deployment runs) or insecure (CRC-32C integrity only).
    #[arg(long, global = true, value_enum, default_value_t = TunnelArg::Secure)]
    pub tunnel: TunnelArg,
    /// The gateways' `tun_offload` (`on` or `off`; default: theirs, on where the kernel has
    /// it): TUN offloads, docs/gateway.md.
    #[arg(long, global = true, value_name = "on|off")]
    pub tun_offload: Option<Switch>,
    /// The gateways' `udp_gso` (`on` or `off`; default: theirs, on where the kernel has
    /// it): UDP GSO sends, docs/gateway.md.
    #[arg(long, global = true, value_name = "on|off")]
    pub udp_gso: Option<Switch>,
    /// The gateways' `udp_gro` (`on` or `off`; default: theirs, on where the kernel has
    /// it): UDP GRO receives, docs/gateway.md.
    #[arg(long, global = true, value_name = "on|off")]
    pub udp_gro: Option<Switch>,
    /// The gateways' `workers`: engine threads their nc connections are sharded over (default
    /// 1 in the lab, where both gateways and both endpoints share this machine's cores: the
    /// engines run on each gateway's owner thread; a deployed gateway defaults to its number
    /// of cores), docs/gateway.md.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=tcpnc_gateway::config::MAX_WORKERS as i64))]
    pub workers: Option<u16>,
    /// The gateways' `tun_queues`: receive queues of each TUN (`IFF_MULTI_QUEUE`), one reader
    /// thread each (default: theirs, 1), docs/gateway.md.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=tcpnc_gateway::config::MAX_TUN_QUEUES as i64))]
    pub tun_queues: Option<u16>,
    /// The gateways' `cipher` with `--tunnel secure`: auto (their default: AES-256-GCM where
    /// the CPU has AES instructions, else ChaCha20-Poly1305), chacha20-poly1305 or
    /// aes-256-gcm; docs/gateway.md.
    #[arg(long, global = true, value_name = "auto|chacha20-poly1305|aes-256-gcm")]
    pub cipher: Option<CipherSetting>,
    /// What to do.
    #[command(subcommand)]
    pub command: LabCommand,
}

/// The gateway settings every lab command takes: `--tunnel`, `--tun-offload`, `--udp-gso`,
/// `--udp-gro`, `--workers`, `--tun-queues`, `--cipher`.
#[derive(Debug, Clone, Copy)]
pub struct LabGateways {
    /// `--tunnel`.
    pub tunnel: TunnelArg,
    /// `--tun-offload`.
    pub tun_offload: Option<Switch>,
    /// `--udp-gso`.
    pub udp_gso: Option<Switch>,
    /// `--udp-gro`.
    pub udp_gro: Option<Switch>,
    /// `--workers`.
    pub workers: Option<u16>,
    /// `--tun-queues`.
    pub tun_queues: Option<u16>,
    /// `--cipher`.
    pub cipher: Option<CipherSetting>,
}

/// `--tunnel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TunnelArg {
    /// Keys: authenticated encryption.
    Secure,
    /// `insecure = true`: integrity checks only.
    Insecure,
}

impl From<TunnelArg> for TunnelMode {
    fn from(t: TunnelArg) -> Self {
        match t {
            TunnelArg::Secure => TunnelMode::Secure,
            TunnelArg::Insecure => TunnelMode::Insecure,
        }
    }
}

/// `tcpnc lab` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum LabCommand {
    /// Plain (gateway coding off) then TCP/NC on the same emulated path.
    Compare(CompareArgs),
    /// The gateway data path at full speed: two gateways joined directly (no emulator), modes
    /// off and nc in one run; goodput, CPU seconds per GB, packets per system call.
    Speed(crate::lab_speed::SpeedArgs),
    /// One transfer in one mode.
    Run(RunArgs),
    /// A video-like stream (frames at their times, TCP_NODELAY) over the same path by plain
    /// reno, cubic and bbr and by nc with a fixed window and with VBNC: per-frame latency,
    /// jitter, stalls and goodput side by side (issue 12).
    ///
    /// Each case runs on a fresh relay and gateways with the same path seed. The frame source
    /// writes frame i at its scheduled time into one TCP connection; the frame sink stamps each
    /// frame's last byte with the machine's monotonic clock and checks its SHA-256. Latency =
    /// last byte read − scheduled write time. Needs root (docs/streaming.md).
    Stream(Box<crate::lab_stream::StreamArgs>),
    /// The built-in demonstration: plain reno/cubic/bbr and nc at a few loss rates, a
    /// table and a plot.
    Demo(DemoArgs),
    /// A stock HTTP server (python3 -m http.server) and client (curl) across the tunnel.
    Http(HttpArgs),
    /// Remove leftover tcpnc-* namespaces (and the processes in them) of dead lab runs.
    Clean(CleanArgs),
    /// (internal) The built-in receiver.
    #[command(hide = true)]
    Sink(SinkArgs),
    /// (internal) The built-in sender.
    #[command(hide = true)]
    Source(SourceArgs),
    /// (internal) The frame sink of `lab stream`.
    #[command(hide = true)]
    StreamSink(crate::lab_stream::FrameSinkArgs),
    /// (internal) The frame source of `lab stream`.
    #[command(hide = true)]
    StreamSource(crate::lab_stream::FrameSourceArgs),
    /// (internal) The spoofing attacker of `lab run --spoof-s`.
    #[command(hide = true)]
    Spoof(SpoofArgs),
}

/// `tcpnc lab compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub transfer: TransferArgs,
    #[command(flatten)]
    pub coding: CodingArgs,
    /// Also measure with iperf3 when it is installed.
    #[arg(long)]
    pub iperf3: bool,
    /// Print one JSON object {"plain": {...}, "nc": {...}}.
    #[arg(long)]
    pub json: bool,
}

/// `--kill-gateway`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SideArg {
    /// The client's (data sender's) gateway.
    Client,
    /// The server's gateway.
    Server,
}

/// `tcpnc lab run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Fault injection: `kill -9` this gateway during the transfer and start it again at once
    /// (same config and keys, state lost). The transfer must complete or both applications see
    /// a reset within seconds (docs/gateway.md, "Restarts").
    #[arg(long, value_enum)]
    pub kill_gateway: Option<SideArg>,
    /// When to kill it: seconds after the gateways started.
    #[arg(long, default_value_t = 3.0, value_name = "SECS")]
    pub kill_after_s: f64,
    /// Attack: for this many seconds from the start, a host on the path captures the datagrams
    /// sent to the server gateway and sends it replayed, bit-flipped, truncated and garbage
    /// copies of each from its own address; its report is the result's `spoof`.
    #[arg(long, value_name = "SECS")]
    pub spoof_s: Option<f64>,
    /// plain, nc or direct.
    #[arg(long, value_enum, default_value = "nc")]
    pub mode: PathMode,
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub transfer: TransferArgs,
    #[command(flatten)]
    pub coding: CodingArgs,
    /// Also measure with iperf3 when it is installed.
    #[arg(long)]
    pub iperf3: bool,
    /// Write the transfer's time series to FILE as CSV (one flow): per 0.1 s from the
    /// connect, goodput at the sink and the sender's TCP_INFO (retransmissions, cwnd, flight,
    /// RTT) and fast retransmits; the columns of `tcpnc sim --series` where they are the same.
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `tcpnc lab demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Directory under which `tcpnc-demo/` is written: the plot (tcpnc-demo.png, .svg), every
    /// run (runs.csv) and the summary (summary.json).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Bytes per transfer.
    #[arg(long, default_value = "2MB", value_parser = tcpnc_lab::parse_bytes)]
    pub bytes: u64,
    /// Loss rates to measure (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,0.05,0.1")]
    pub losses: Vec<f64>,
    /// Bottleneck rate in Mbit/s.
    #[arg(long, default_value_t = 20.0)]
    pub rate_mbit: f64,
    /// One-way delay in ms.
    #[arg(long, default_value_t = 20.0)]
    pub delay_ms: f64,
    /// Bound on each transfer, seconds.
    #[arg(long, default_value_t = 300.0)]
    pub timeout_s: f64,
    /// Print the results as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `tcpnc lab http`.
#[derive(Debug, Clone, Args)]
pub struct HttpArgs {
    /// plain or nc.
    #[arg(long, value_enum, default_value = "nc")]
    pub mode: PathMode,
    /// Size of the file served.
    #[arg(long, default_value = "2MB", value_parser = tcpnc_lab::parse_bytes)]
    pub bytes: u64,
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub coding: CodingArgs,
    /// Bound on the download, seconds.
    #[arg(long, default_value_t = 120.0)]
    pub timeout_s: f64,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `tcpnc lab clean`.
#[derive(Debug, Clone, Args)]
pub struct CleanArgs {
    /// Also remove namespaces whose lab process is still running.
    #[arg(long)]
    pub force: bool,
}

/// `tcpnc lab sink`.
#[derive(Debug, Clone, Args)]
pub struct SinkArgs {
    /// Address to listen on.
    #[arg(long)]
    pub listen: SocketAddr,
    /// Connections to accept and receive in parallel.
    #[arg(long, default_value_t = 1)]
    pub connections: usize,
    /// Bound on the accept and on each read, seconds.
    #[arg(long, default_value_t = 600.0)]
    pub timeout_s: f64,
    /// Print progress events.
    #[arg(long)]
    pub progress: bool,
    /// Print the bytes received every 0.1 s (`sink_sample` events; one connection).
    #[arg(long)]
    pub series: bool,
}

/// `tcpnc lab spoof`.
#[derive(Debug, Clone, Args)]
pub struct SpoofArgs {
    /// The gateway attacked (UDP address).
    #[arg(long)]
    pub target: std::net::SocketAddrV4,
    /// How long to capture and forge, seconds.
    #[arg(long, default_value_t = 5.0)]
    pub duration_s: f64,
    /// Most datagrams captured (each forged four ways).
    #[arg(long, default_value_t = 5000)]
    pub max_captured: u64,
}

/// `tcpnc lab source`.
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// Sink address.
    #[arg(long)]
    pub connect: SocketAddr,
    /// Bytes to send.
    #[arg(long, value_parser = tcpnc_lab::parse_bytes)]
    pub bytes: u64,
    /// Congestion control.
    #[arg(long, value_enum)]
    pub cc: CongestionControl,
    /// Data seed (connection i sends the stream of seed + i).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Parallel connections, each sending --bytes.
    #[arg(long, default_value_t = 1)]
    pub connections: usize,
    /// Bound on the connect and on each write or read, seconds.
    #[arg(long, default_value_t = 600.0)]
    pub timeout_s: f64,
    /// Print progress events.
    #[arg(long)]
    pub progress: bool,
    /// Print the socket's TCP_INFO every 0.1 s (`source_sample` events; one connection).
    #[arg(long)]
    pub series: bool,
}

fn secs(s: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(s).context("--timeout-s must be a positive number of seconds")
}

pub(crate) fn new_lab(gw: LabGateways) -> Result<Lab> {
    guard::require_root()?;
    let mut lab = Lab::new(tcpnc_lab::tcpnc_exe()?)?;
    lab.tunnel = gw.tunnel.into();
    lab.tun_offload = gw.tun_offload.map(Switch::is_on);
    lab.udp_gso = gw.udp_gso.map(Switch::is_on);
    lab.udp_gro = gw.udp_gro.map(Switch::is_on);
    if let Some(n) = gw.workers {
        lab.workers = Some(usize::from(n));
    }
    lab.tun_queues = gw.tun_queues.map(usize::from);
    ensure!(
        gw.cipher.is_none() || gw.tunnel == TunnelArg::Secure,
        "--cipher needs --tunnel secure (an insecure tunnel has no cipher)"
    );
    lab.cipher = gw.cipher;
    Ok(lab)
}

/// Runs `tcpnc lab`.
pub fn run(args: LabArgs) -> Result<()> {
    let gw = LabGateways {
        tunnel: args.tunnel,
        tun_offload: args.tun_offload,
        udp_gso: args.udp_gso,
        udp_gro: args.udp_gro,
        workers: args.workers,
        tun_queues: args.tun_queues,
        cipher: args.cipher,
    };
    match args.command {
        LabCommand::Sink(a) => std::process::exit(tcpnc_lab::sink_main(
            a.listen,
            a.connections,
            secs(a.timeout_s)?,
            a.progress,
            a.series,
        )),
        LabCommand::Source(a) => std::process::exit(tcpnc_lab::source_main(
            a.connect,
            a.bytes,
            a.cc.name(),
            a.seed,
            a.connections,
            secs(a.timeout_s)?,
            a.progress,
            a.series,
        )),
        LabCommand::Clean(a) => {
            let r = guard::clean(a.force)?;
            for ns in &r.deleted {
                println!("deleted {ns}");
            }
            for ns in &r.kept_live {
                println!("kept {ns} (its lab process is running; --force removes it)");
            }
            for d in &r.deleted_dirs {
                println!("deleted {}", d.display());
            }
            if r.deleted.is_empty() && r.kept_live.is_empty() && r.deleted_dirs.is_empty() {
                println!("nothing to clean");
            }
            Ok(())
        }
        LabCommand::Spoof(a) => std::process::exit(tcpnc_lab::spoof_main(
            a.target,
            secs(a.duration_s)?,
            a.max_captured,
        )),
        LabCommand::Compare(a) => compare(a, gw),
        LabCommand::Speed(a) => crate::lab_speed::run(a, new_lab(gw)?),
        LabCommand::Run(a) => run_one(a, gw),
        LabCommand::Stream(a) => crate::lab_stream::run(*a, gw),
        LabCommand::StreamSink(a) => std::process::exit(tcpnc_lab::frame_sink_main(
            a.listen,
            &a.trace,
            secs(a.timeout_s)?,
        )),
        LabCommand::StreamSource(a) => std::process::exit(tcpnc_lab::frame_source_main(
            a.connect,
            &a.trace,
            a.cc.name(),
            a.seed,
            secs(a.timeout_s)?,
        )),
        LabCommand::Demo(a) => {
            // The demo's runs go through the experiment crate's lab backend, which uses the
            // lab's default tunnel (keys).
            if args.tunnel != TunnelArg::Secure {
                bail!(
                    "tcpnc lab demo runs with the secure tunnel only; use lab run/compare --tunnel insecure"
                );
            }
            run_demo(a)
        }
        LabCommand::Http(a) => run_http(a, gw),
    }
}

fn compare(a: CompareArgs, gw: LabGateways) -> Result<()> {
    let lab = new_lab(gw)?;
    let bar = progress::bar(!a.json);
    let (path, coding, t) = (
        a.path.settings(),
        a.coding.resolved(a.path.settings().spec.loss),
        a.transfer.settings(),
    );
    let c = measure::compare(&lab, &path, &coding, &t, a.iperf3, &bar)?;
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        println!(
            "path {} Mbit/s, {} ms one way, loss {} on the data direction; {} bytes, {}",
            path.spec.rate_mbit, path.spec.delay_ms, path.spec.loss, t.bytes, t.cc
        );
        println!("{}", measure::describe("plain", &c.plain));
        println!("{}", measure::describe("nc", &c.nc));
        println!(
            "nc / plain goodput: {:.2}x (limit C(1-p) = {:.2} Mbit/s)",
            c.speedup(),
            path.spec.limit_mbit()
        );
    }
    if !(c.plain.transfer.integrity_ok && c.nc.transfer.integrity_ok) {
        bail!("integrity check failed (sha256 or byte count differ)");
    }
    Ok(())
}

fn run_one(a: RunArgs, gw: LabGateways) -> Result<()> {
    let mut lab = new_lab(gw)?;
    if let Some(s) = a.spoof_s {
        lab.spoof = Some(secs(s)?);
    }
    if let Some(side) = a.kill_gateway {
        ensure!(
            a.kill_after_s.is_finite() && a.kill_after_s >= 0.0,
            "--kill-after-s must be a number of seconds >= 0"
        );
        lab.fault = Some(GatewayFault {
            side: match side {
                SideArg::Client => GatewaySide::Client,
                SideArg::Server => GatewaySide::Server,
            },
            after: Duration::from_secs_f64(a.kill_after_s),
        });
    }
    let bar = progress::bar(!a.json);
    let m = a.mode;
    bar.set_prefix(format!("{} {}", m.name(), a.transfer.cc.name()));
    let transfer = TransferSettings {
        series: a.series.is_some(),
        ..a.transfer.settings()
    };
    let r = measure::measure(
        &lab,
        m,
        &a.path.settings(),
        &a.coding.resolved(a.path.settings().spec.loss),
        &transfer,
        a.iperf3,
        &bar,
    )?;
    bar.finish_and_clear();
    if let (Some(path), Some(series)) = (&a.series, &r.transfer.series) {
        std::fs::write(path, series.to_csv())
            .with_context(|| format!("writing --series {}", path.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!("{}", measure::describe(m.name(), &r));
    }
    if !r.transfer.integrity_ok {
        bail!("integrity check failed (sha256 or byte count differ)");
    }
    Ok(())
}

fn run_demo(a: DemoArgs) -> Result<()> {
    let options = demo::DemoOptions {
        rate_mbit: a.rate_mbit,
        delay_ms: a.delay_ms,
        losses: a.losses.clone(),
        bytes: a.bytes,
        timeout_s: a.timeout_s,
    };
    let plan = demo::plan(&options)?;
    guard::require_root()?;
    if !a.json {
        println!("{}", demo::intro(&options));
    }
    let out = a.out.join(&plan.name);
    let outcome = demo::run(&plan, &out, !a.json)?;
    if a.json {
        let v = demo::to_json(&options, &plan, &outcome);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("{}", demo::table_text(&options, &outcome.summary));
        for f in &outcome.files {
            println!("wrote {}", f.display());
        }
    }
    if outcome.interrupted {
        bail!("interrupted");
    }
    if !demo::all_counted(&outcome.summary) {
        bail!(
            "a run failed or its integrity check failed (runs.csv in {} says which)",
            out.display()
        );
    }
    Ok(())
}

fn run_http(a: HttpArgs, gw: LabGateways) -> Result<()> {
    let lab = new_lab(gw)?;
    let r = http::http_download(
        &lab,
        a.mode,
        &a.path.settings(),
        &a.coding.resolved(a.path.settings().spec.loss),
        a.bytes,
        a.timeout_s,
    )?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!(
            "curl fetched {} bytes from python3 -m http.server across the {} tunnel in {:.2} s ({:.2} Mbit/s); sha256 {}",
            r.bytes_received,
            r.mode,
            r.seconds,
            r.goodput_mbit,
            if r.integrity_ok { "matches" } else { "DIFFERS" }
        );
    }
    if !r.integrity_ok {
        bail!("the downloaded file differs from the served one");
    }
    Ok(())
}
