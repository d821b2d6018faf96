//! The `tcpnc` binary: wiring only; every capability lives in a library crate.

use anyhow::Result;
use clap::{Parser, Subcommand};

mod bench;
mod experiment;
mod lab;
mod link;
mod sim;
mod stats;
mod up;

/// TCP with network coding (TCP/NC): a coding layer between TCP and IP that repairs random loss
/// without TCP noticing it.
///
/// Two gateways on either side of a lossy path (`tcpnc up`) carry every TCP connection between
/// them as random linear combinations inside UDP. `tcpnc link` emulates the lossy path,
/// `tcpnc sim` runs the protocol in virtual time, `tcpnc bench` measures the coding core.
#[derive(Debug, Parser)]
#[command(name = "tcpnc", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a gateway: a TUN device and a UDP socket joined by the TCP/NC engine.
    Up(up::UpArgs),
    /// Run the path emulator: a UDP relay with loss, delay, jitter, rate and queue per direction.
    Link(Box<link::LinkArgs>),
    /// Show a running gateway's per-peer and per-flow counters.
    Stats(stats::StatsArgs),
    /// Simulate a TCP transfer in virtual time over an emulated path, plain or with TCP/NC.
    Sim(Box<sim::SimArgs>),
    /// Measure the GF(2^8) kernels and the codec.
    Bench(bench::BenchArgs),
    /// The one-machine testbed: real Linux TCP through two gateways and the path emulator.
    Lab(lab::LabArgs),
    /// Parameter sweeps on the simulator or the lab: CSV, summary and plots (reproduces the
    /// implementation paper's figures; plans in experiments/).
    Experiment(experiment::ExperimentArgs),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Up(args) => up::run(&args),
        Command::Link(args) => link::run(&args),
        Command::Stats(args) => stats::run(&args),
        Command::Sim(args) => sim::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Lab(args) => lab::run(args),
        Command::Experiment(args) => experiment::run(args),
    }
}
