//! `tcpnc lab speed`: the gateway data path at full speed (wiring only; see
//! `tcpnc_lab::speed`).

use std::path::PathBuf;

use anyhow::{Context, Result, bail, ensure};
use clap::Args;
use serde_json::{Value, json};
use tcpnc_lab::settings::TransferSettings;
use tcpnc_lab::speed::{self, SpeedCase, SpeedOptions, SpeedResult};
use tcpnc_lab::speed_summary::{self, CaseSummary, Spread};
use tcpnc_lab::{Lab, guard, progress};
use tcpnc_settings::{CodingScheme, CongestionControl, Switch};

/// `tcpnc lab speed`.
#[derive(Debug, Clone, Args)]
pub struct SpeedArgs {
    /// Coding windows of the nc cases (comma-separated), e.g. 8,12,16.
    #[arg(long, value_delimiter = ',', default_value = "12")]
    pub windows: Vec<u16>,
    /// Fixed redundancies of the nc cases (comma-separated), e.g. 1.0,1.1.
    #[arg(long, value_delimiter = ',', default_value = "1.0")]
    pub redundancy: Vec<f64>,
    /// ACK coalescing of the nc cases (`coalesce_acks`, comma-separated), e.g. on,off.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "on",
        value_name = "on|off"
    )]
    pub coalesce_acks: Vec<Switch>,
    /// Coding schemes of the nc cases (`scheme`, comma-separated), e.g. dense,systematic.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "dense",
        value_name = "dense|systematic"
    )]
    pub schemes: Vec<CodingScheme>,
    /// Leave out the `off` case (gateways with coding off).
    #[arg(long)]
    pub no_off: bool,
    /// Leave out the nc cases.
    #[arg(long)]
    pub no_nc: bool,
    /// Bytes per transfer (suffixes k, M, G, KiB, MiB, GiB).
    #[arg(long, default_value = "200MB", value_parser = tcpnc_lab::parse_bytes)]
    pub bytes: u64,
    /// Parallel TCP connections, each sending --bytes.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub flows: usize,
    /// Sender's congestion control.
    #[arg(long, value_enum, default_value_t = CongestionControl::Cubic)]
    pub cc: CongestionControl,
    /// Rounds: every case once per round, in the same order, so that the cases alternate;
    /// a summary follows with each case's median and spread, and each nc case's goodput over
    /// mode `off`'s of the same round (`over_off`).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub rounds: usize,
    /// Bound on each transfer, seconds.
    #[arg(long, default_value_t = 300.0)]
    pub timeout_s: f64,
    /// The gateways' `queue_packets` (default: theirs). A small bound shows the gateways'
    /// own drops in the `drops` columns.
    #[arg(long, value_name = "N")]
    pub queue_packets: Option<usize>,
    /// Also measure each case with iperf3 when it is installed (a second session per case,
    /// same bytes and congestion control; its goodput is the `iperf3` column and key). Without
    /// iperf3 each case says `{"skipped": "iperf3 is not installed"}`; the run goes on.
    #[arg(long)]
    pub iperf3: bool,
    /// Write a `perf` profile of each nc case's sending-side (client) gateway into DIR
    /// (created if needed): a second run of the case's built-in transfer under `perf record -g`
    /// to `DIR/<case>.perf.data`, then `perf report --stdio --no-children` to
    /// `DIR/<case>.perf.txt` (e.g. `nc-w12-r1.0.perf.txt`). The table's figures stay those of
    /// the unprofiled run (perf slows the gateways); the profiled run's goodput is in the JSON.
    /// Without a working `perf` the case says `{"skipped": why}`; the run goes on.
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `tcpnc lab speed` on a fresh lab.
pub fn run(a: SpeedArgs, mut lab: Lab) -> Result<()> {
    guard::require_root()?;
    lab.queue_packets = a.queue_packets;
    let windows = if a.no_nc { &[][..] } else { &a.windows[..] };
    let cases = SpeedCase::set(
        !a.no_off,
        windows,
        &a.redundancy,
        &a.schemes,
        &a.coalesce_acks,
    );
    if cases.is_empty() {
        bail!("no case to run (--no-off with --no-nc)");
    }
    ensure!((1..=100).contains(&a.rounds), "--rounds must be in 1..=100");
    let t = TransferSettings {
        bytes: a.bytes,
        cc: a.cc,
        seed: 1,
        flows: a.flows,
        timeout_s: a.timeout_s,
        series: false,
        warmup_bytes: 0,
    };
    if let Some(dir) = &a.profile {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the profile directory {}", dir.display()))?;
    }
    let opts = SpeedOptions {
        iperf3: a.iperf3,
        profile_dir: a.profile.clone(),
    };
    let bar = progress::bar(!a.json);
    let load_before = speed::load_average();
    let mut rounds = Vec::new();
    for round in 1..=a.rounds {
        let results = speed::run_speed(&mut lab, &cases, &t, &opts, &bar)
            .with_context(|| format!("round {round}"))?;
        rounds.extend(results.into_iter().map(|r| (round, r)));
    }
    bar.finish_and_clear();
    let summary = speed_summary::summarize(&rounds);
    let report = json!({
        "settings": {
            "bytes": t.bytes, "flows": t.flows, "cc": t.cc, "tunnel": lab.tunnel,
            "path": "gateways joined directly (kernel forwarding in the emulator namespace, no relay)",
            "field_tier": tcpnc_field::selected_tier().name(),
            "iperf3": a.iperf3, "profile_dir": a.profile, "rounds": a.rounds,
        },
        "load_average_before": load_before,
        "load_average_after": speed::load_average(),
        "results": speed_summary::with_rounds(&rounds),
        "summary": summary,
    });
    let results: Vec<SpeedResult> = rounds.into_iter().map(|(_, r)| r).collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report, &results);
        if a.rounds > 1 {
            print!("{}", summary_table(&summary));
        }
    }
    let profiled_ok = |r: &SpeedResult| {
        r.profile
            .as_ref()
            .is_none_or(|p| p["integrity_ok"] != false)
    };
    if results.iter().any(|r| !r.integrity_ok || !profiled_ok(r)) {
        bail!("integrity check failed (sha256 or byte count differ)");
    }
    Ok(())
}

fn print_table(report: &Value, results: &[SpeedResult]) {
    println!(
        "tcpnc lab speed: {} bytes x {} flow(s), {}, tunnel {}, tier {}; load average {} -> {}",
        report["settings"]["bytes"],
        report["settings"]["flows"],
        report["settings"]["cc"],
        report["settings"]["tunnel"],
        report["settings"]["field_tier"],
        report["load_average_before"],
        report["load_average_after"],
    );
    let iperf3 = report["settings"]["iperf3"] == true;
    let mut head = format!(
        "{:>12} {:>10} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>5} {:>8} {:>4} {:>4}",
        "case",
        "Mbit/s",
        "CPU s/GB",
        "tun rx",
        "tun tx",
        "udp rx",
        "udp tx",
        "tx/msg",
        "rx/msg",
        "drops",
        "ok",
        "offload",
        "gso",
        "gro"
    );
    if iperf3 {
        head.push_str(&format!(" {:>8}", "iperf3"));
    }
    println!("{head}");
    for r in results {
        let p = &r.packets_per_call;
        let d = &r.drops;
        let mut row = format!(
            "{:>12} {:>10.1} {:>9.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>6} {:>5} {:>8} {:>4} {:>4}",
            r.case.label(),
            r.goodput_mbit,
            r.cpu_s_per_gb,
            p.tun_rx,
            p.tun_tx,
            p.udp_rx,
            p.udp_tx,
            p.udp_tx_per_message,
            p.udp_rx_per_message,
            d.total(),
            if r.integrity_ok { "yes" } else { "NO" },
            if r.tun_offload { "on" } else { "off" },
            if r.udp_gso { "on" } else { "off" },
            if r.udp_gro { "on" } else { "off" }
        );
        if iperf3 {
            row.push_str(&format!(" {:>8}", iperf3_cell(r.iperf3.as_ref())));
        }
        println!("{row}");
    }
    println!(
        "(tun/udp columns: packets per system call, both gateways; tx/msg, rx/msg: datagrams \
         per kernel message, above 1 with UDP GSO / when UDP GRO coalesced{})",
        if iperf3 {
            "; iperf3: its goodput in Mbit/s, a second session of the case"
        } else {
            ""
        }
    );
    if let Some(c) = results.iter().find_map(|r| r.cipher) {
        println!("tunnel cipher: {c} (--cipher)");
    }
    for r in results {
        if let Some(why) = r.iperf3.as_ref().and_then(|v| v["skipped"].as_str()) {
            println!("iperf3 {}: skipped ({why})", r.case.label());
        }
        if let Some(p) = &r.profile {
            println!("profile {}: {}", r.case.label(), profile_line(p));
        }
    }
}

/// The summary over the rounds: median (lowest-highest) of each case's goodput and CPU per
/// GB, and of each nc case's goodput over mode `off`'s in the same round.
fn summary_table(summary: &[CaseSummary]) -> String {
    let spread = |s: &Spread, digits: usize| {
        format!("{:.d$} ({:.d$}-{:.d$})", s.median, s.min, s.max, d = digits)
    };
    let mut out = format!(
        "\nmedians over the rounds (lowest-highest):\n{:>12} {:>5} {:>22} {:>18} {:>18}\n",
        "case", "runs", "Mbit/s", "CPU s/GB", "over off"
    );
    for c in summary {
        let over = c.over_off.as_ref().map_or("-".into(), |s| spread(s, 2));
        out += &format!(
            "{:>12} {:>5} {:>22} {:>18} {:>18}\n",
            c.case,
            c.runs,
            spread(&c.goodput_mbit, 1),
            spread(&c.cpu_s_per_gb, 2),
            over
        );
    }
    out += "(over off: an nc run's goodput over the off run of its own round)\n";
    out
}

/// iperf3's goodput, Mbit/s, or `skipped`.
fn iperf3_cell(v: Option<&Value>) -> String {
    match v.and_then(|v| v["goodput_mbit"].as_f64()) {
        Some(g) => format!("{g:.1}"),
        None => "skipped".into(),
    }
}

/// `DIR/x.perf.txt (4K samples): 12.3% sym, ...` (the three costliest), or `skipped (why)`.
fn profile_line(p: &Value) -> String {
    if let Some(why) = p["skipped"].as_str() {
        return format!("skipped ({why})");
    }
    let top: Vec<String> = p["top"]
        .as_array()
        .map(|a| a.iter().take(3).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            let pct = e["percent"].as_f64().unwrap_or(0.0);
            format!("{pct:.1}% {}", e["symbol"].as_str().unwrap_or("?"))
        })
        .collect();
    format!(
        "{} ({}, {:.1} Mbit/s profiled); top: {}",
        p["report"].as_str().unwrap_or("?"),
        p["samples"].as_str().unwrap_or("no samples"),
        p["goodput_mbit"].as_f64().unwrap_or(0.0),
        top.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3_and_profile_cells() {
        assert_eq!(
            iperf3_cell(Some(&json!({"goodput_mbit": 812.345}))),
            "812.3"
        );
        let skipped = json!({"skipped": "iperf3 is not installed"});
        assert_eq!(iperf3_cell(Some(&skipped)), "skipped");
        let p = json!({"skipped": "perf is not installed"});
        assert_eq!(profile_line(&p), "skipped (perf is not installed)");
        let p = json!({
            "report": "/p/nc-w12-r1.0.perf.txt",
            "samples": "4K of event 'cpu-clock:ppp'",
            "top": [{"percent": 12.34, "symbol": "a"}, {"percent": 5.0, "symbol": "b"}],
            "goodput_mbit": 1234.56,
        });
        assert_eq!(
            profile_line(&p),
            "/p/nc-w12-r1.0.perf.txt (4K of event 'cpu-clock:ppp', 1234.6 Mbit/s profiled); \
             top: 12.3% a, 5.0% b"
        );
    }
}
