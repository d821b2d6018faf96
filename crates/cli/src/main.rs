//! The `tcpnc` binary: wiring only; every capability lives in a library crate.

use anyhow::Result;
use clap::Parser;

/// TCP with network coding.
#[derive(Debug, Parser)]
#[command(name = "tcpnc", version, about)]
struct Cli {}

fn main() -> Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
