//! `tcpnc stats`: print the snapshot a running (or stopped) gateway wrote.

use std::path::PathBuf;

use anyhow::{Context, Result};
use tcpnc_gateway::stats::{read_snapshot, render};

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
    #[arg(long)]
    pub json: bool,
}

/// Runs `tcpnc stats`.
pub fn run(args: &StatsArgs) -> Result<()> {
    let path = args
        .file
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("/run/tcpnc/{}.json", args.interface)));
    let snap = read_snapshot(&path)
        .with_context(|| format!("no stats for {} (is `tcpnc up` running?)", args.interface))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&snap)?);
    } else {
        print!("{}", render(&snap));
    }
    Ok(())
}
