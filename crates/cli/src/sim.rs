//! `tcpnc sim`: one deterministic virtual-time bulk transfer, printed as a summary or JSON
//! (wiring only: the run is `tcpnc_sim::run_spec::RunSpec`).

use std::time::Instant;

use anyhow::Result;
use tcpnc_sim::run_spec::{RunSpec, summary};

/// Arguments of `tcpnc sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// The run: path, TCP, transfer and coding policies.
    #[command(flatten)]
    pub spec: RunSpec,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs `tcpnc sim`.
pub fn run(args: &SimArgs) -> Result<()> {
    let start = Instant::now();
    let report = args.spec.run()?;
    let wall_s = start.elapsed().as_secs_f64();
    if args.json {
        println!("{}", args.spec.result_json(&report, wall_s));
    } else {
        println!("{}", summary(&report, wall_s));
    }
    Ok(())
}
