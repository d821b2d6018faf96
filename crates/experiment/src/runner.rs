//! Running a plan: every point × repetition not already in the results CSV, in repetition
//! order (a partial run covers every point once before repeating any), then the summary and
//! the plots.

use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

use crate::backend::Backend;
use crate::error::{ExperimentError, Result};
use crate::journal::{Journal, Row, read_rows, run_key};
use crate::plan::Plan;
use crate::plan_stream_plot::{keep_frames, scheme, write_plan_stream_plots};
use crate::plot::write_plots;
use crate::series_plot::{keep_series, write_series_plots};
use crate::summary::{Summary, summarize, write_summary};

/// File names inside the output directory.
pub const CSV: &str = "runs.csv";
/// The summary's file name.
pub const SUMMARY: &str = "summary.json";

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Where `runs.csv`, `summary.json`, `<name>.png` and `<name>.svg` go.
    pub out_dir: PathBuf,
    /// Discard earlier results instead of resuming.
    pub fresh: bool,
    /// Show a progress bar (only if stderr is a terminal).
    pub progress: bool,
    /// Set (e.g. by SIGINT) to stop after the run in progress.
    pub stop: Option<Arc<AtomicBool>>,
}

/// What a run of a plan did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Runs performed now.
    pub ran: usize,
    /// Runs found already done in the CSV.
    pub skipped: usize,
    /// Whether it stopped early on request.
    pub interrupted: bool,
    /// Files written: CSV, summary, plots.
    pub files: Vec<PathBuf>,
    /// The summary.
    pub summary: Summary,
}

/// A flag set by the first SIGINT/SIGTERM; a second one exits at once (status 130).
pub fn interrupt_flag() -> Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&flag))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&flag)))
            .map_err(|e| ExperimentError::Backend {
                backend: "runner".into(),
                detail: format!("installing the signal handler: {e}"),
            })?;
    }
    Ok(flag)
}

fn bar(total: usize, visible: bool) -> ProgressBar {
    if !visible || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total as u64);
    let style = ProgressStyle::with_template(
        "{prefix} [{bar:30}] {pos}/{len} runs {elapsed} (eta {eta}) {wide_msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// Runs `plan` on `backend`, resuming from `<out>/runs.csv` unless `fresh`.
pub fn run_plan(plan: &Plan, backend: &mut dyn Backend, opts: &RunOptions) -> Result<Outcome> {
    if backend.name() != plan.backend.name() {
        return Err(ExperimentError::Backend {
            backend: backend.name().into(),
            detail: format!("the plan asks for the {} backend", plan.backend.name()),
        });
    }
    for p in &plan.points {
        backend
            .check(&p.params)
            .map_err(|detail| ExperimentError::Invalid {
                point: p.label.clone(),
                detail,
            })?;
    }
    std::fs::create_dir_all(&opts.out_dir).map_err(ExperimentError::file(&opts.out_dir))?;
    let csv = opts.out_dir.join(CSV);
    let (mut journal, rows) = Journal::open(&csv, opts.fresh)?;
    // Runs that failed with an error (not a slow or lossy transfer) are tried again.
    let done: HashSet<Vec<String>> = rows
        .iter()
        .filter(|r| !r.get("outcome").starts_with("error"))
        .map(Row::key)
        .collect();
    let total = plan.total_runs();
    let pb = bar(total, opts.progress);
    pb.set_prefix(format!("{} ({})", plan.name, plan.backend.name()));
    let (mut ran, mut skipped, mut interrupted) = (0, 0, false);
    'outer: for rep in 0..plan.repetitions {
        let seed = plan.seed_of(rep);
        for pt in &plan.points {
            if done.contains(&run_key(&pt.params, rep, seed)) {
                skipped += 1;
                pb.inc(1);
                continue;
            }
            if opts.stop.as_ref().is_some_and(|f| f.load(Ordering::SeqCst)) {
                interrupted = true;
                break 'outer;
            }
            pb.set_message(format!("rep {rep} {}", pt.label));
            // What the figures draw: one repetition's time series or frames.
            let keep = (plan.plot.series_y.is_some() || pt.params.is_stream())
                && rep == plan.plot.series_repetition;
            let rec = backend.run(&pt.params, seed, keep)?;
            if let Some(csv) = rec.series_csv.as_ref().filter(|_| keep) {
                keep_series(&opts.out_dir, &pt.label, csv)?;
            }
            if let Some(frames) = rec.frames.as_ref().filter(|_| keep) {
                keep_frames(&opts.out_dir, &pt.label, &scheme(&pt.params), frames)?;
            }
            let measured = match &rec.stream {
                Some(s) => format!("p95 {:>9.1} ms", s.latency_p95_ms),
                None => format!("{:>8.3} Mbit/s", rec.goodput_mbit),
            };
            pb.println(format!(
                "rep {rep} {:<40} {measured}  {}",
                pt.label, rec.outcome
            ));
            journal.append(&Row::new(&pt.label, rep, seed, &pt.params, &rec))?;
            ran += 1;
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let (summary, mut files) = finish(plan, &opts.out_dir)?;
    files.insert(0, csv);
    Ok(Outcome {
        ran,
        skipped,
        interrupted,
        files,
        summary,
    })
}

/// Summarises and plots what `<out>/runs.csv` holds for `plan`; returns the summary and the
/// files written (summary, PNG, SVG, a PNG and SVG per `[plot] also_y` column, with
/// `[plot] series_y` one per x value of the kept time series, and the stream figures of the
/// kept frames of stream points).
pub fn finish(plan: &Plan, out_dir: &Path) -> Result<(Summary, Vec<PathBuf>)> {
    let rows = read_rows(&out_dir.join(CSV))?;
    let summary = summarize(plan, &rows);
    let json = out_dir.join(SUMMARY);
    write_summary(plan, &summary, &json)?;
    let mut files = vec![json];
    files.extend(write_plots(plan, &summary, out_dir, &plan.name)?);
    files.extend(write_series_plots(plan, &summary, out_dir)?);
    files.extend(write_plan_stream_plots(plan, out_dir)?);
    // `[plot] also_y`: the same curves with another result column, `<name>-<column>.png`.
    for y in &plan.plot.also_y {
        let mut other = plan.clone();
        other.plot.y = Some(y.clone());
        other.plot.y_label = None;
        other.title = format!("{} [{y}]", plan.title);
        let s = summarize(&other, &rows);
        files.extend(write_plots(
            &other,
            &s,
            out_dir,
            &format!("{}-{y}", plan.name),
        )?);
    }
    Ok((summary, files))
}
