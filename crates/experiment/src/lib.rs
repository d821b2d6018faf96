//! tcpnc experiments: parameter sweeps over the simulator or the lab, resumable, with a
//! CSV row per run, a JSON summary per point and PNG/SVG plots.
//!
//! * [`plan`]: the TOML plan (backend, fixed and swept settings, repetitions, seed) and its
//!   expansion into points; [`params`]: every setting a plan may name.
//! * [`backend`]: the [`Backend`] trait and the simulator backend (the lab backend lives in
//!   the `tcpnc` CLI, which links the lab).
//! * [`journal`]: the results CSV, which is also what a resumed run reads.
//! * [`summary`] and [`plot`]: statistics per point and the curves drawn; [`series_plot`]:
//!   one repetition's time series per point, drawn over time (`[plot] series_y`).
//! * [`runner`]: the loop tying them together.
//! * [`stream_plot`]: the figures of a stream run (latency over time, its CDF, jitter);
//!   [`plan_stream_plot`]: those of a plan's stream points (`workload = "stream"`), one curve
//!   per scheme.
//!
//! ```no_run
//! use tcpnc_experiment::{Plan, RunOptions, SimBackend, run_plan};
//! let plan = Plan::load("experiments/fig6-goodput-vs-r.toml".as_ref()).unwrap();
//! let opts = RunOptions { out_dir: "results/fig6".into(), ..RunOptions::default() };
//! let outcome = run_plan(&plan, &mut SimBackend, &opts).unwrap();
//! println!("{} runs, files {:?}", outcome.ran, outcome.files);
//! ```

pub mod backend;
pub mod demo;
pub mod error;
pub mod journal;
pub mod lab_backend;
pub mod params;
pub mod plan;
pub mod plan_stream_plot;
pub mod plot;
pub mod runner;
pub mod series_plot;
pub mod stream_plot;
pub mod summary;

pub use backend::{Backend, RunRecord, SimBackend};
pub use error::{ExperimentError, Result};
pub use lab_backend::LabBackend;
pub use params::{
    CongestionControl, LossPosition, Params, PathMode, PathOverrides, PathSpec, PolicyOverrides,
    Preset, Workload, keys,
};
pub use plan::{AxisScale, BackendKind, Plan, Point, RunSeeds};
pub use runner::{Outcome, RunOptions, finish, interrupt_flag, run_plan};
pub use summary::{Stats, Summary};
