//! `tcpnc up`: run a gateway from a config file until SIGINT/SIGTERM.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use tcpnc_gateway::Config;
use tcpnc_gateway::operate::config_path;
use tcpnc_gateway::security::{INSECURE_WARNING, Security};
use tcpnc_gateway::up::{UpOptions, up};

/// Arguments of `tcpnc up`.
#[derive(Debug, Clone, clap::Args)]
pub struct UpArgs {
    /// Configuration: a bare NAME reads /etc/tcpnc/NAME.toml (as `tcpnc@NAME.service` does);
    /// a path (containing `/` or ending in `.toml`) is read as is.
    #[arg(value_name = "NAME|FILE", required_unless_present = "config")]
    pub target: Option<String>,
    /// Gateway configuration file (TOML; see docs/gateway.md).
    #[arg(long, short = 'c', value_name = "FILE", conflicts_with = "target")]
    pub config: Option<PathBuf>,
    /// Stats snapshot file (default: interface.stats_file, or /run/tcpnc/<ifname>.json).
    #[arg(long, value_name = "FILE")]
    pub stats_file: Option<PathBuf>,
    /// Seconds between stats snapshots.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub stats_interval: f64,
    /// Only parse and validate the configuration, then exit.
    #[arg(long)]
    pub check: bool,
}

impl UpArgs {
    /// The configuration file to read.
    pub fn config_file(&self) -> PathBuf {
        match (&self.config, &self.target) {
            (Some(path), _) => path.clone(),
            (None, Some(target)) => config_path(target),
            (None, None) => unreachable!("clap requires NAME|FILE or --config"),
        }
    }
}

/// Runs `tcpnc up`.
pub fn run(args: &UpArgs) -> Result<()> {
    let file = args.config_file();
    let config = Config::load(&file).with_context(|| format!("bad config {}", file.display()))?;
    if args.check {
        if config.security == Security::Insecure {
            eprintln!("tcpnc up: warning: {INSECURE_WARNING}");
        }
        println!(
            "{}: ok ({} peer(s), coding {:?})",
            file.display(),
            config.peers.len(),
            config.coding.mode
        );
        return Ok(());
    }
    crate::logging::init(config.interface.operate.level());
    match config.security {
        // A log line (journal-friendly), not a bare stderr line.
        Security::Insecure => tracing::warn!("{INSECURE_WARNING}"),
        Security::Keys { cipher, .. } => {
            tracing::info!(setting = %cipher, initiates_with = %cipher.resolve(), "tunnel cipher");
        }
    }
    anyhow::ensure!(
        args.stats_interval.is_finite() && args.stats_interval > 0.0,
        "--stats-interval must be a positive number of seconds"
    );
    let stop = tcpnc_gateway::shutdown::shutdown_flag()?;
    let opts = UpOptions {
        stats_file: args.stats_file.clone(),
        stats_interval: Duration::from_secs_f64(args.stats_interval),
    };
    let stats_path = opts
        .stats_file
        .clone()
        .unwrap_or_else(|| config.interface.stats_file.clone());
    tracing::info!(
        "{} {} listening on {}, {} peer(s), stats in {}, config {}",
        config.interface.name,
        config.interface.address,
        config.interface.listen,
        config.peers.len(),
        stats_path.display(),
        file.display()
    );
    let snapshot = up(&config, &opts, stop)?;
    tracing::info!(
        "{} stopped after {:.1} s; tun rx {} tx {} packets, udp rx {} tx {} datagrams",
        snapshot.interface,
        snapshot.uptime_secs,
        snapshot.gateway.tun_rx_packets,
        snapshot.gateway.tun_tx_packets,
        snapshot.gateway.udp_rx_datagrams,
        snapshot.gateway.udp_tx_datagrams
    );
    Ok(())
}
