//! The `tcpnc` binary: wiring only; every capability lives in a library crate.

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

mod assets;
mod bench;
mod bench_gateway;
mod experiment;
mod keys;
mod lab;
mod lab_args;
mod lab_speed;
mod lab_stream;
mod link;
mod logging;
mod sim;
mod stats;
mod up;

/// TCP with network coding (TCP/NC): a coding layer between TCP and IP that repairs random loss
/// without TCP noticing it.
///
/// Two gateways on either side of a lossy path (`tcpnc up`) carry every TCP connection between
/// them as random linear combinations inside UDP. `tcpnc link` emulates the lossy path,
/// `tcpnc sim` runs the protocol in virtual time, `tcpnc bench` measures the coding core and one
/// gateway against an in-process peer.
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
    /// Print a new private key (base64) for `private_key` or `preshared_key`.
    Genkey,
    /// Read a private key on stdin, print its public key (for the peer's `public_key`).
    Pubkey,
    /// Run the path emulator: a UDP relay with loss, delay, jitter, rate and queue per direction.
    Link(Box<link::LinkArgs>),
    /// Show a running gateway's per-peer and per-flow counters.
    Stats(stats::StatsArgs),
    /// Simulate a TCP transfer in virtual time over an emulated path, plain or with TCP/NC.
    Sim(Box<sim::SimArgs>),
    /// Measure the GF(2^8) kernels and the codec, or one gateway against an in-process peer.
    Bench(bench::BenchArgs),
    /// The one-machine testbed: real Linux TCP through two gateways and the path emulator.
    Lab(Box<lab::LabArgs>),
    /// Parameter sweeps on the simulator or the lab: CSV, summary and plots (reproduces the
    /// implementation paper's figures; plans in experiments/).
    Experiment(experiment::ExperimentArgs),
    /// Write man pages and shell completions (for packaging).
    #[command(hide = true)]
    Assets(assets::AssetsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = run(cli.command);
    // A lab interrupted by a signal ends with the signal's code once its cleanup is done,
    // whatever the interrupted work returned (`tcpnc_lab::guard`).
    tcpnc_lab::guard::exit_if_interrupted();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line with the whole chain of causes; never a backtrace for an operator error.
            eprintln!("tcpnc: error: {}", describe(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line. Many library errors already print their source in
/// their own message, so a cause whose text is already there is not repeated.
fn describe(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Up(args) => up::run(&args),
        Command::Genkey => keys::genkey(),
        Command::Pubkey => keys::pubkey(),
        Command::Link(args) => link::run(&args),
        Command::Stats(args) => stats::run(&args),
        Command::Sim(args) => sim::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Lab(args) => lab::run(*args),
        Command::Experiment(args) => experiment::run(args),
        Command::Assets(args) => assets::run(&args, Cli::command()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read config x: {source}")]
    struct ReadError {
        source: std::io::Error,
    }

    #[test]
    fn describe_keeps_every_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = anyhow::Error::new(ReadError { source: io }).context("bad config x");
        assert_eq!(
            describe(&error),
            "bad config x: cannot read config x: no such file"
        );
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(describe(&plain), "outer: inner");
    }
}
