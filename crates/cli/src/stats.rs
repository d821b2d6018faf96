//! `tcpnc stats`: print the snapshot a running (or stopped) gateway wrote, once or as a live
//! table (`--watch`).

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use tcpnc_gateway::stats::{Snapshot, read_snapshot, render};
use tcpnc_gateway::stats_watch::table;

/// Arguments of `tcpnc stats`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatsArgs {
    /// Interface name: reads /run/tcpnc/<IFNAME>.json.
    #[arg(default_value = "tcpnc0", value_name = "IFNAME")]
    pub interface: String,
    /// Read this file instead.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Print the raw JSON.
    #[arg(long, conflicts_with = "watch")]
    pub json: bool,
    /// Live table per peer (goodput, loss, R, W, repairs, drops), refreshed until Ctrl-C.
    #[arg(long)]
    pub watch: bool,
    /// Seconds between refreshes of --watch.
    #[arg(long, default_value_t = 1.0, value_name = "SECS", requires = "watch")]
    pub interval: f64,
    /// Stop --watch after this many refreshes (default: run until interrupted).
    #[arg(long, value_name = "N", requires = "watch")]
    pub count: Option<u64>,
}

fn path(args: &StatsArgs) -> PathBuf {
    args.file
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("/run/tcpnc/{}.json", args.interface)))
}

fn read(args: &StatsArgs) -> Result<Snapshot> {
    read_snapshot(&path(args))
        .with_context(|| format!("no stats for {} (is `tcpnc up` running?)", args.interface))
}

/// Runs `tcpnc stats`.
pub fn run(args: &StatsArgs) -> Result<()> {
    if args.watch {
        return watch(args);
    }
    let snap = read(args)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&snap)?);
    } else {
        print!("{}", render(&snap));
    }
    Ok(())
}

fn watch(args: &StatsArgs) -> Result<()> {
    anyhow::ensure!(
        args.interval.is_finite() && args.interval > 0.0,
        "--interval must be a positive number of seconds"
    );
    let mut prev: Option<Snapshot> = None;
    let mut n = 0u64;
    loop {
        let cur = read(args)?;
        // Clear the screen and home the cursor (ANSI), then the table.
        let mut out = std::io::stdout().lock();
        write!(out, "\x1b[H\x1b[2J{}", table(prev.as_ref(), &cur))?;
        out.flush()?;
        n += 1;
        if args.count.is_some_and(|c| n >= c) {
            return Ok(());
        }
        prev = Some(cur);
        std::thread::sleep(Duration::from_secs_f64(args.interval));
    }
}
