//! `tcpnc lab speed`: the gateway data path at full speed (wiring only; see
//! `tcpnc_lab::speed`).

use anyhow::{Result, bail};
use clap::Args;
use serde_json::json;
use tcpnc_lab::settings::TransferSettings;
use tcpnc_lab::speed::{self, SpeedCase, SpeedResult};
use tcpnc_lab::{Lab, guard, progress};
use tcpnc_settings::{CongestionControl, Switch};

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
    /// Bound on each transfer, seconds.
    #[arg(long, default_value_t = 300.0)]
    pub timeout_s: f64,
    /// The gateways' `queue_packets` (default: theirs). A small bound shows the gateways'
    /// own drops in the `drops` columns.
    #[arg(long, value_name = "N")]
    pub queue_packets: Option<usize>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `tcpnc lab speed` on a fresh lab.
pub fn run(a: SpeedArgs, mut lab: Lab) -> Result<()> {
    guard::require_root()?;
    lab.queue_packets = a.queue_packets;
    let windows = if a.no_nc { &[][..] } else { &a.windows[..] };
    let cases = SpeedCase::set(!a.no_off, windows, &a.redundancy, &a.coalesce_acks);
    if cases.is_empty() {
        bail!("no case to run (--no-off with --no-nc)");
    }
    let t = TransferSettings {
        bytes: a.bytes,
        cc: a.cc,
        seed: 1,
        flows: a.flows,
        timeout_s: a.timeout_s,
        series: false,
        warmup_bytes: 0,
    };
    let bar = progress::bar(!a.json);
    let load_before = speed::load_average();
    let results = speed::run_speed(&mut lab, &cases, &t, &bar)?;
    bar.finish_and_clear();
    let report = json!({
        "settings": {
            "bytes": t.bytes, "flows": t.flows, "cc": t.cc, "tunnel": lab.tunnel,
            "path": "gateways joined directly (kernel forwarding in the emulator namespace, no relay)",
            "field_tier": tcpnc_field::selected_tier().name(),
        },
        "load_average_before": load_before,
        "load_average_after": speed::load_average(),
        "results": results,
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report, &results);
    }
    if results.iter().any(|r| !r.integrity_ok) {
        bail!("integrity check failed (sha256 or byte count differ)");
    }
    Ok(())
}

fn print_table(report: &serde_json::Value, results: &[SpeedResult]) {
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
    println!(
        "{:>12} {:>10} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>5} {:>8} {:>4}",
        "case",
        "Mbit/s",
        "CPU s/GB",
        "tun rx",
        "tun tx",
        "udp rx",
        "udp tx",
        "tx/msg",
        "drops",
        "ok",
        "offload",
        "gso"
    );
    for r in results {
        let p = &r.packets_per_call;
        let d = &r.drops;
        println!(
            "{:>12} {:>10.1} {:>9.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>6} {:>5} {:>8} {:>4}",
            r.case.label(),
            r.goodput_mbit,
            r.cpu_s_per_gb,
            p.tun_rx,
            p.tun_tx,
            p.udp_rx,
            p.udp_tx,
            p.udp_tx_per_message,
            d.queue + d.tun_write_errors + d.tun_read_errors + d.udp_send_errors + d.engine_queue,
            if r.integrity_ok { "yes" } else { "NO" },
            if r.tun_offload { "on" } else { "off" },
            if r.udp_gso { "on" } else { "off" }
        );
    }
    println!(
        "(tun/udp columns: packets per system call, both gateways; tx/msg: datagrams per \
         kernel message, above 1 with UDP GSO)"
    );
}
