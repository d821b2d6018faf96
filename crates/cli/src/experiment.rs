//! `tcpnc experiment`: parameter sweeps from a TOML plan on the simulator or the lab
//! (wiring only; see the `tcpnc-experiment` crate and docs/results.md).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use tcpnc_experiment::{Backend, BackendKind, LabBackend, Plan, RunOptions, SimBackend};

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
            print_curves(&plan, &summary);
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
    print_curves(&plan, &out.summary);
    eprintln!("{} runs now, {} already done", out.ran, out.skipped);
    for f in &out.files {
        println!("wrote {}", f.display());
    }
    if out.interrupted {
        bail!("interrupted: run the same command again to resume");
    }
    Ok(())
}

/// Each curve's points: goodput, or the plotted column (`[plot] y`): mean, extremes, count,
/// and the values chosen by `best_over`.
fn print_curves(plan: &Plan, s: &tcpnc_experiment::Summary) {
    let y = plan.plot.y.as_deref().filter(|y| *y != "goodput_mbit");
    for c in &s.curves {
        let name = match (c.series.as_str(), y) {
            ("", None) => "goodput",
            ("", Some(y)) => y,
            (series, _) => series,
        };
        println!("{name}");
        for p in &c.points {
            match y {
                None => println!(
                    "  x {:>8}  goodput {:>7.3} Mbit/s  min {:>7.3}  max {:>7.3}  n {}  {}",
                    p.x, p.goodput.mean, p.goodput.min, p.goodput.max, p.goodput.n, p.chosen
                ),
                Some(y) => println!(
                    "  x {:>8}  {y} {:>9.3}  min {:>9.3}  max {:>9.3}  n {}  {}",
                    p.x, p.y.mean, p.y.min, p.y.max, p.y.n, p.chosen
                ),
            }
        }
    }
}
