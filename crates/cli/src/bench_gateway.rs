//! `tcpnc bench gateway`: flags, the order of the cases and printing (wiring only; the gateway
//! and its in-process driver are `tcpnc_gateway::bench_driver`).

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use tcpnc_gateway::bench_driver::{self, DriverOptions, DriverReport};
use tcpnc_gateway::security::CipherSetting;
use tcpnc_lab::speed_summary::median;
use tcpnc_settings::CodingMode;

use crate::lab::TunnelArg;

/// Arguments of `tcpnc bench gateway`.
#[derive(Debug, Clone, clap::Args)]
pub struct GatewayArgs {
    /// Coding windows of the nc cases (comma-separated), e.g. 8,12,16.
    #[arg(long, value_delimiter = ',', default_value = "12")]
    pub windows: Vec<u16>,
    /// Fixed redundancies of the nc cases (comma-separated), e.g. 1.0,1.1.
    #[arg(long, value_delimiter = ',', default_value = "1.0")]
    pub redundancy: Vec<f64>,
    /// Leave out the `off` case (the gateway with coding off: BYPASS frames).
    #[arg(long)]
    pub no_off: bool,
    /// Leave out the nc cases.
    #[arg(long)]
    pub no_nc: bool,
    /// TCP flows, each sending --bytes; comma-separated for several cases, e.g. 1,4.
    #[arg(long, value_delimiter = ',', default_value = "1", value_name = "N")]
    pub flows: Vec<usize>,
    /// The gateway's engine workers (`interface.workers`); comma-separated for several cases,
    /// e.g. 1,2. Mode off runs its engine on the owner thread whatever this says.
    #[arg(long, value_delimiter = ',', default_value = "1", value_name = "N")]
    pub workers: Vec<usize>,
    /// Bytes per flow (suffixes k, M, G, KiB, MiB, GiB).
    #[arg(long, default_value = "200MB", value_parser = tcpnc_settings::parse_bytes)]
    pub bytes: u64,
    /// The sending TCPs' MSS, bytes (536..=1460; the SYN-ACK's MSS, clamped by the engines,
    /// may lower it).
    #[arg(long, default_value_t = 1360)]
    pub mss: u16,
    /// Unacknowledged bytes per flow at most: the sending TCP's window (it also keeps to the
    /// window the gateway's ACKs advertise). Suffixes as --bytes.
    #[arg(long, default_value = "1MiB", value_parser = tcpnc_settings::parse_bytes)]
    pub inflight: u64,
    /// Rounds: every case once per round, in the same order, so that the cases alternate;
    /// with more than one, a summary of each case's medians follows the table.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub rounds: usize,
    /// Bound on each transfer, seconds.
    #[arg(long, default_value_t = 300.0)]
    pub timeout_s: f64,
    /// A transfer fails after this many seconds without a byte acknowledged or received.
    #[arg(long, default_value_t = 10.0)]
    pub stall_s: f64,
    /// Force a GF(2^8) kernel tier by name (scalar, ssse3, avx2, avx512bw, gfni-avx,
    /// gfni-avx512); the default is the best this CPU supports.
    #[arg(long)]
    pub tier: Option<String>,
    /// The tunnel between the gateway and the driver's peer: insecure (the default here:
    /// CRC-32C, so the figures are the engine's own cost) or secure (fresh keys on both
    /// sides, a Noise handshake, AEAD transport: what a deployment runs; see `--cipher`).
    #[arg(long, value_enum, default_value = "insecure")]
    pub tunnel: TunnelArg,
    /// The cipher with `--tunnel secure`: auto (AES-256-GCM where the CPU has AES
    /// instructions, else ChaCha20-Poly1305), chacha20-poly1305 or aes-256-gcm; docs/gateway.md.
    #[arg(long, value_name = "auto|chacha20-poly1305|aes-256-gcm")]
    pub cipher: Option<CipherSetting>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// One case of a round: the driver's options less the shared ones.
fn cases(a: &GatewayArgs, base: &DriverOptions) -> Vec<DriverOptions> {
    let mut modes = Vec::new();
    if !a.no_off {
        modes.push((CodingMode::Off, base.window, base.redundancy));
    }
    if !a.no_nc {
        for &w in &a.windows {
            modes.extend(a.redundancy.iter().map(|&r| (CodingMode::Nc, w, r)));
        }
    }
    let mut out = Vec::new();
    for &flows in &a.flows {
        for &workers in &a.workers {
            for &(mode, window, redundancy) in &modes {
                out.push(DriverOptions {
                    mode,
                    window,
                    redundancy,
                    flows,
                    workers,
                    ..base.clone()
                });
            }
        }
    }
    out
}

/// `--tunnel` and `--cipher` as the driver takes them (`None`: the integrity envelope).
fn cipher(a: &GatewayArgs) -> Result<Option<CipherSetting>> {
    match a.tunnel {
        TunnelArg::Secure => Ok(Some(a.cipher.unwrap_or_default())),
        TunnelArg::Insecure if a.cipher.is_some() => bail!("--cipher needs --tunnel secure"),
        TunnelArg::Insecure => Ok(None),
    }
}

fn seconds(name: &str, s: f64) -> Result<Duration> {
    ensure!(s.is_finite() && s > 0.0, "--{name} must be above 0");
    Duration::try_from_secs_f64(s).with_context(|| format!("--{name} {s}"))
}

/// Runs `tcpnc bench gateway`.
pub fn run(a: &GatewayArgs) -> Result<()> {
    ensure!((1..=100).contains(&a.rounds), "--rounds must be in 1..=100");
    if let Some(name) = &a.tier {
        crate::bench::force_tier(name)?;
    }
    let base = DriverOptions {
        bytes: a.bytes,
        mss: a.mss,
        inflight: a.inflight,
        timeout: seconds("timeout-s", a.timeout_s)?,
        stall: seconds("stall-s", a.stall_s)?,
        cipher: cipher(a)?,
        ..DriverOptions::default()
    };
    let cases = cases(a, &base);
    if cases.is_empty() {
        bail!("no case to run (--no-off with --no-nc, or an empty list)");
    }
    for case in &cases {
        case.validate()
            .with_context(|| format!("case {}", describe(case)))?;
    }
    let tier = tcpnc_field::selected_tier().name();
    let load_before = tcpnc_lab::speed::load_average();
    if !a.json {
        println!("{}", heading(a, tier, &base.tunnel()));
        println!("{}", row_head());
    }
    let mut results = Vec::new();
    for round in 1..=a.rounds {
        for case in &cases {
            let r = bench_driver::run(case)
                .with_context(|| format!("round {round}, {}", describe(case)))?;
            if !a.json {
                println!("{}", row(round, &r));
            }
            results.push((round, r));
        }
    }
    let load_after = tcpnc_lab::speed::load_average();
    if a.json {
        let report = json_report(a, tier, &base.tunnel(), &results, (load_before, load_after));
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "(rx/call t,u: packets per TUN read and datagrams per UDP receive of the gateway; \
             gw s/GB: CPU seconds of the process less the driver thread per GB delivered)"
        );
        println!("load average {load_before:?} -> {load_after:?}");
        if a.rounds > 1 {
            print!("{}", summary(&results));
        }
    }
    if results.iter().any(|(_, r)| !r.integrity_ok) {
        bail!("integrity check failed (a byte differed, was missing or had a bad checksum)");
    }
    Ok(())
}

/// `nc W12 R1.0, 4 flow(s), --workers 2`.
fn describe(case: &DriverOptions) -> String {
    format!(
        "{}, {} flow(s), --workers {}",
        case.label(),
        case.flows,
        case.workers
    )
}

fn heading(a: &GatewayArgs, tier: &str, tunnel: &str) -> String {
    format!(
        "tcpnc bench gateway: one gateway (fake TUN + fake UDP) against an in-process peer; \
         {} bytes per flow, MSS {}, at most {} bytes in flight per flow; {tunnel} tunnel; \
         GF(2^8) tier {tier}",
        a.bytes, a.mss, a.inflight
    )
}

fn row_head() -> String {
    format!(
        "{:>5} {:>12} {:>5} {:>7} {:>9} {:>9} {:>10} {:>11} {:>10} {:>11} {:>6} {:>4}",
        "round",
        "case",
        "flows",
        "workers",
        "Mbit/s",
        "kseg/s",
        "gw kpkt/s",
        "rx/call t,u",
        "gw s/GB",
        "driver s/GB",
        "drops",
        "ok"
    )
}

fn row(round: usize, r: &DriverReport) -> String {
    format!(
        "{:>5} {:>12} {:>5} {:>7} {:>9.1} {:>9.1} {:>10.1} {:>11} {:>10.2} {:>11.2} {:>6} {:>4}",
        round,
        r.case,
        r.flows,
        r.workers,
        r.goodput_mbit,
        r.segments_per_s / 1e3,
        r.gateway_packets_per_s / 1e3,
        format!("{:.0},{:.0}", r.per_call.tun_rx, r.per_call.udp_rx),
        r.cpu.gateway_s_per_gb,
        r.cpu.driver_s_per_gb,
        r.drops.total(),
        if r.integrity_ok { "yes" } else { "NO" }
    )
}

/// Each case's median goodput and gateway CPU per GB over the rounds.
fn summary(results: &[(usize, DriverReport)]) -> String {
    let mut out = String::from("\nmedians over the rounds:\n");
    out += &format!(
        "{:>12} {:>5} {:>7} {:>9} {:>10} {:>11}\n",
        "case", "flows", "workers", "Mbit/s", "gw s/GB", "driver s/GB"
    );
    let mut seen: Vec<(&str, usize, usize)> = Vec::new();
    for (_, r) in results {
        let key = (r.case.as_str(), r.flows, r.workers_asked);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let same: Vec<&DriverReport> = results
            .iter()
            .map(|(_, x)| x)
            .filter(|x| (x.case.as_str(), x.flows, x.workers_asked) == key)
            .collect();
        let m = |f: fn(&DriverReport) -> f64| median(same.iter().map(|x| f(x)).collect());
        out += &format!(
            "{:>12} {:>5} {:>7} {:>9.1} {:>10.2} {:>11.2}\n",
            r.case,
            r.flows,
            r.workers,
            m(|x| x.goodput_mbit),
            m(|x| x.cpu.gateway_s_per_gb),
            m(|x| x.cpu.driver_s_per_gb)
        );
    }
    out
}

fn json_report(
    a: &GatewayArgs,
    tier: &str,
    tunnel: &str,
    results: &[(usize, DriverReport)],
    (before, after): (Option<[f64; 3]>, Option<[f64; 3]>),
) -> Value {
    let results = tcpnc_lab::speed_summary::with_rounds(results);
    json!({
        "settings": {
            "bytes_per_flow": a.bytes, "mss": a.mss, "inflight": a.inflight,
            "rounds": a.rounds, "field_tier": tier,
            "tunnel": tunnel,
            "driver": "in-process: the sending TCPs, the peer's engine and the receiving TCPs on one thread",
        },
        "load_average_before": before,
        "load_average_after": after,
        "results": results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: GatewayArgs,
    }

    #[test]
    fn cases_alternate_modes_inside_flows_and_workers() {
        let a = Cli::parse_from(["x", "--flows", "1,4", "--workers", "1,2", "--bytes", "1MB"]).args;
        let c = cases(&a, &DriverOptions::default());
        let labels: Vec<String> = c
            .iter()
            .map(|o| format!("{} {} {}", o.label(), o.flows, o.workers))
            .collect();
        assert_eq!(
            labels,
            [
                "off 1 1",
                "nc W12 R1.0 1 1",
                "off 1 2",
                "nc W12 R1.0 1 2",
                "off 4 1",
                "nc W12 R1.0 4 1",
                "off 4 2",
                "nc W12 R1.0 4 2"
            ]
        );
        assert_eq!(a.bytes, 1_000_000);
        assert_eq!(a.inflight, 1 << 20);
        let a = Cli::parse_from(["x", "--no-off", "--windows", "8,16"]).args;
        let c = cases(&a, &DriverOptions::default());
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].label(), "nc W16 R1.0");
    }

    #[test]
    fn tiny_run_prints_a_row_and_json() {
        let a = Cli::parse_from(["x", "--bytes", "300kB", "--flows", "2"]).args;
        let mut results = Vec::new();
        for case in cases(
            &a,
            &DriverOptions {
                bytes: a.bytes,
                ..DriverOptions::default()
            },
        ) {
            results.push((1, bench_driver::run(&case).unwrap()));
        }
        assert!(results.iter().all(|(_, r)| r.integrity_ok));
        assert!(row(1, &results[1].1).contains("nc W12 R1.0"));
        assert!(summary(&results).contains("medians"));
        let v = json_report(&a, "scalar", "insecure", &results, (None, None));
        assert_eq!(v["results"].as_array().unwrap().len(), 2);
        assert_eq!(v["results"][1]["round"], 1);
        assert!(v["results"][1]["cpu"]["gateway_s_per_gb"].is_f64());
        assert!(v["results"][1]["per_call"]["tun_rx"].as_f64().unwrap() >= 1.0);
        assert!(v["results"][1]["nc_data_sent"].as_u64().unwrap() > 0);
    }

    #[test]
    fn tunnel_and_cipher_flags() {
        let parsed = |args: &[&str]| {
            let a = Cli::parse_from(std::iter::once("x").chain(args.iter().copied())).args;
            cipher(&a).map(|c| c.map(|c| c.to_string()))
        };
        assert_eq!(parsed(&[]).unwrap(), None);
        assert_eq!(
            parsed(&["--tunnel", "secure"]).unwrap(),
            Some("auto".into())
        );
        assert_eq!(
            parsed(&["--tunnel", "secure", "--cipher", "aes-256-gcm"]).unwrap(),
            Some("aes-256-gcm".into())
        );
        assert!(parsed(&["--cipher", "aes-256-gcm"]).is_err());
    }
}
