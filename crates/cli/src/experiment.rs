//! `tcpnc experiment`: parameter sweeps from a TOML plan on the simulator or the lab
//! (wiring only; see the `tcpnc-experiment` crate and docs/results.md).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use tcpnc_experiment::backend::{Backend, RunRecord, SimBackend};
use tcpnc_experiment::{
    BackendKind, Cc, ExperimentError, LossPosition, Mode, Params, Plan, RunOptions, Scheme,
};
use tcpnc_lab::settings::{CodingSettings, Mode as LabMode, PathSettings, TransferSettings};
use tcpnc_lab::{Lab, guard, measure, progress};

/// Arguments of `tcpnc experiment`.
#[derive(Debug, Clone, Args)]
pub struct ExperimentArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ExperimentCommand,
}

/// `tcpnc experiment` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum ExperimentCommand {
    /// Run a plan (resuming from the output directory's runs.csv), then summarise and plot.
    Run(RunArgs),
    /// Summarise and plot what a plan's output directory already holds, running nothing.
    Plot(PlotArgs),
}

/// Arguments of `tcpnc experiment run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The plan (TOML; see experiments/).
    pub plan: PathBuf,
    /// Output directory (default: results/<plan name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Discard earlier results in the output directory instead of resuming.
    #[arg(long)]
    pub fresh: bool,
    /// No progress bar or per-run lines.
    #[arg(long)]
    pub quiet: bool,
}

/// Arguments of `tcpnc experiment plot`.
#[derive(Debug, Clone, Args)]
pub struct PlotArgs {
    /// The plan the results belong to.
    pub plan: PathBuf,
    /// Output directory (default: results/<plan name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn out_dir(plan: &Plan, out: &Option<PathBuf>) -> PathBuf {
    out.clone()
        .unwrap_or_else(|| Path::new("results").join(&plan.name))
}

/// Runs `tcpnc experiment`.
pub fn run(args: ExperimentArgs) -> Result<()> {
    match args.command {
        ExperimentCommand::Run(a) => run_plan(&a),
        ExperimentCommand::Plot(a) => {
            let plan = Plan::load(&a.plan)?;
            let dir = out_dir(&plan, &a.out);
            let (summary, files) = tcpnc_experiment::finish(&plan, &dir)?;
            print_curves(&summary);
            for f in files {
                println!("wrote {}", f.display());
            }
            Ok(())
        }
    }
}

fn run_plan(a: &RunArgs) -> Result<()> {
    let plan = Plan::load(&a.plan)?;
    let dir = out_dir(&plan, &a.out);
    let mut backend: Box<dyn Backend> = match plan.backend {
        BackendKind::Sim => Box::new(SimBackend),
        BackendKind::Lab => Box::new(LabBackend::default()),
    };
    // The lab installs its own handler (clean up, then exit) when it creates namespaces;
    // rows already written stay in runs.csv either way.
    let stop = tcpnc_experiment::interrupt_flag()?;
    eprintln!(
        "{}: {} points x {} repetitions on the {} backend -> {}",
        plan.name,
        plan.points.len(),
        plan.repetitions,
        plan.backend.name(),
        dir.display()
    );
    let opts = RunOptions {
        out_dir: dir,
        fresh: a.fresh,
        progress: !a.quiet,
        stop: Some(stop),
    };
    let out = tcpnc_experiment::run_plan(&plan, backend.as_mut(), &opts)?;
    print_curves(&out.summary);
    eprintln!("{} runs now, {} already done", out.ran, out.skipped);
    for f in &out.files {
        println!("wrote {}", f.display());
    }
    if out.interrupted {
        bail!("interrupted: run the same command again to resume");
    }
    Ok(())
}

fn print_curves(s: &tcpnc_experiment::Summary) {
    for c in &s.curves {
        println!(
            "{}",
            if c.series.is_empty() {
                "goodput"
            } else {
                &c.series
            }
        );
        for p in &c.points {
            println!(
                "  x {:>8}  goodput {:>7.3} Mbit/s  min {:>7.3}  max {:>7.3}  n {}  {}",
                p.x, p.goodput.mean, p.goodput.min, p.goodput.max, p.goodput.n, p.chosen
            );
        }
    }
}

/// Kernel TCP through the lab's namespaces, gateways and relay (one topology for the whole
/// plan, created at the first run). Fixed-size transfers only.
#[derive(Default)]
struct LabBackend {
    lab: Option<Lab>,
}

impl Backend for LabBackend {
    fn name(&self) -> &'static str {
        "lab"
    }

    fn check(&self, p: &Params) -> std::result::Result<(), String> {
        if p.cc == Cc::None {
            return Err("cc = none exists only in the sim backend".into());
        }
        if p.loss_position == LossPosition::BeforeQueue {
            return Err(
                "loss_position = before_queue: the lab's relay drops after its queue; set after_queue"
                    .into(),
            );
        }
        if p.duration_s.is_some() {
            return Err("duration_s: the lab measures fixed-size transfers; set bytes".into());
        }
        if p.reverse_loss > 0.0 {
            return Err(
                "reverse_loss: the lab backend applies loss on the data direction only".into(),
            );
        }
        if p.window > usize::from(u16::MAX) {
            return Err(format!("window = {} too large", p.window));
        }
        Ok(())
    }

    fn run(&mut self, p: &Params, seed: u64) -> tcpnc_experiment::Result<RunRecord> {
        let unavailable = |e: &dyn std::fmt::Display| ExperimentError::Backend {
            backend: "lab".into(),
            detail: format!("lab backend unavailable: {e}"),
        };
        if self.lab.is_none() {
            guard::require_root().map_err(|e| unavailable(&e))?;
            let exe = tcpnc_lab::tcpnc_exe().map_err(|e| unavailable(&e))?;
            self.lab = Some(Lab::new(exe).map_err(|e| unavailable(&e))?);
        }
        let lab = self
            .lab
            .as_ref()
            .context("lab")
            .map_err(|e| unavailable(&e))?;
        let path = PathSettings {
            rate_mbit: p.rate_mbit,
            delay_ms: p.delay_ms,
            loss: p.loss,
            queue_packets: Some(p.queue_packets),
            seed,
        };
        let coding = CodingSettings {
            window: p.window as u16,
            redundancy: Some(p.effective_redundancy()),
            scheme: Some(
                match p.scheme {
                    Scheme::Dense => "dense",
                    Scheme::Systematic => "systematic",
                }
                .into(),
            ),
            repair: None,
        };
        let cc = match p.cc {
            Cc::Reno => "reno",
            Cc::Cubic => "cubic",
            Cc::Bbr | Cc::None => "bbr",
        };
        let t = TransferSettings {
            bytes: p.bytes,
            cc: cc.into(),
            seed,
            timeout_s: p.timeout_s,
        };
        let mode = match p.mode {
            Mode::Plain => LabMode::Plain,
            Mode::Nc => LabMode::Nc,
        };
        let start = Instant::now();
        let bar = progress::bar(false);
        match measure::measure(lab, mode, &path, &coding, &t, false, &bar) {
            Ok(m) => Ok(RunRecord {
                outcome: "completed".into(),
                counted: m.transfer.integrity_ok,
                goodput_mbit: m.transfer.goodput_mbit,
                completion_s: m.transfer.completion_s,
                bytes_delivered: m.transfer.bytes_received,
                integrity_ok: m.transfer.integrity_ok,
                retransmissions: u64::from(m.transfer.retransmits),
                wall_s: start.elapsed().as_secs_f64(),
            }),
            Err(e) if guard::interrupted() => Err(unavailable(&e)),
            // A transfer that times out or whose processes fail is recorded (not counted)
            // and tried again on resume, like the paper's neglected iterations.
            Err(e) => Ok(RunRecord {
                outcome: format!("error: {e}"),
                counted: false,
                goodput_mbit: f64::NAN,
                completion_s: f64::NAN,
                bytes_delivered: 0,
                integrity_ok: false,
                retransmissions: 0,
                wall_s: start.elapsed().as_secs_f64(),
            }),
        }
    }
}
