//! Plans: a TOML file naming the backend, fixed and swept settings, repetitions and seed,
//! expanded into points (the cartesian product of the swept values, per group).
//!
//! ```toml
//! name = "fig6"                 # output stem (default: the file's stem)
//! title = "Goodput vs R"        # plot caption
//! backend = "sim"               # or "lab"
//! repetitions = 4
//! seed = 1
//! run_seeds = "mixed"           # repetition k's seed: SplitMix64 of seed and k (default),
//!                               # or "consecutive": seed + k, as `tcpnc sim --seed` takes it
//! [fixed]                       # any key of Params
//! loss = 0.1
//! [sweep]                       # key = [values]
//! redundancy = [1.1, 1.2, 1.3]
//! [[group]]                     # optional: a union of sub-sweeps, each with its own
//! fixed = { mode = "plain" }    # fixed and sweep tables over the plan's
//! [[group]]
//! fixed = { mode = "nc" }
//! sweep = { window = [2, 3] }
//! [[variant]]                   # optional: every group is run once per variant, with the
//! repair = "off"                # variant's keys fixed (several keys that change together,
//! [[variant]]                   # e.g. a protocol's policy set, crossed with the groups)
//! repair = "deficit"
//! [plot]
//! x = "redundancy"              # x axis (a numeric key)
//! best_over = ["window"]        # per series and x, keep the best mean over these keys
//! x_scale = 1.0                 # x values are multiplied by this (100 = percent)
//! x_axis = "linear"             # or "log" (file sizes from kB to GB)
//! y_axis = "linear"             # or "log" (latencies from ms to minutes)
//! x_label = "R"
//! y = "fast_retransmits"        # y axis: a numeric result column (default goodput_mbit)
//! also_y = ["goodput_mbit"]     # more plots of the same runs, `<name>-<column>.png`
//! series_y = "decoded_pps"      # time series: a column of the run's series CSV (sim), drawn
//! series_repetition = 0         # over time for this repetition of every point, one figure
//!                               # per x value, `<name>-series-<x>.png`; stream points: the
//!                               # repetition whose frames are drawn (`plan_stream_plot.rs`)
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

use crate::error::{ExperimentError, Result};
use crate::params::{Params, PathMode, STREAM_KEYS, keys};

/// Which backend runs the points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// The deterministic simulator (smoltcp endpoints, virtual time).
    Sim,
    /// The lab: kernel TCP in network namespaces through gateways and the link emulator.
    Lab,
}

impl BackendKind {
    /// `sim` or `lab`.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Sim => "sim",
            BackendKind::Lab => "lab",
        }
    }
}

/// How a repetition's seed is made from the plan's `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunSeeds {
    /// SplitMix64 of the plan seed and the repetition ([`run_seed`]).
    #[default]
    Mixed,
    /// The plan seed plus the repetition: repetition 0 of `seed = 1` is `tcpnc sim --seed 1`.
    Consecutive,
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AxisScale {
    /// Evenly spaced values.
    #[default]
    Linear,
    /// Evenly spaced powers of ten (every x must be > 0).
    Log,
}

/// How the plot is drawn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlotSpec {
    /// The key on the x axis (default: the first numeric key that varies, else `loss`).
    pub x: Option<String>,
    /// Keys maximised over per series and x (e.g. R and W for "best R, W per loss").
    pub best_over: Vec<String>,
    /// Factor applied to x values (100 shows a probability as percent).
    pub x_scale: f64,
    /// Linear or logarithmic x axis (`x_axis = "log"`: Karafillis Table II's sizes).
    pub x_axis: AxisScale,
    /// Linear or logarithmic y axis (`y_axis = "log"`: latencies from milliseconds to
    /// minutes, Parejiya Figs. 2–3).
    pub y_axis: AxisScale,
    /// X axis label (default: the key).
    pub x_label: Option<String>,
    /// The result column on the y axis (a numeric one of `journal::result_columns`;
    /// default `goodput_mbit`).
    pub y: Option<String>,
    /// More result columns, each drawn as its own plot of the same runs.
    pub also_y: Vec<String>,
    /// Y axis label.
    pub y_label: Option<String>,
    /// A column of the runs' time series (`tcpnc sim --series`, e.g. `decoded_pps`, Karafillis
    /// Figs. 2–3): the runner keeps repetition `series_repetition` of every point's series in
    /// `<out>/series/` and draws it over time, one figure per x value (`series_plot.rs`).
    pub series_y: Option<String>,
    /// The repetition whose series is kept (the same seed at every point, so the curves of one
    /// figure ran on the same losses, as the paper's "identical simulation seed").
    pub series_repetition: u32,
    /// Y axis label of the time-series figures (default: the column).
    pub series_y_label: Option<String>,
}

impl Default for PlotSpec {
    fn default() -> Self {
        PlotSpec {
            x: None,
            best_over: Vec::new(),
            x_scale: 1.0,
            x_axis: AxisScale::Linear,
            y_axis: AxisScale::Linear,
            x_label: None,
            y: None,
            also_y: Vec::new(),
            y_label: None,
            series_y: None,
            series_repetition: 0,
            series_y_label: None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    backend: BackendKind,
    #[serde(default = "one")]
    repetitions: u32,
    #[serde(default = "one_u64")]
    seed: u64,
    #[serde(default)]
    run_seeds: RunSeeds,
    #[serde(default)]
    fixed: Table,
    #[serde(default)]
    sweep: Table,
    #[serde(default)]
    group: Vec<GroupFile>,
    #[serde(default)]
    variant: Vec<Table>,
    #[serde(default)]
    plot: PlotSpec,
}

fn one() -> u32 {
    1
}
fn one_u64() -> u64 {
    1
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupFile {
    #[serde(default)]
    fixed: Table,
    #[serde(default)]
    sweep: Table,
}

/// One combination of settings (run `repetitions` times).
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The settings.
    pub params: Params,
    /// `key=value` of the keys that vary across the plan, space separated.
    pub label: String,
}

/// A parsed, expanded plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Output stem.
    pub name: String,
    /// Plot caption.
    pub title: String,
    /// Free text.
    pub description: Option<String>,
    /// Backend.
    pub backend: BackendKind,
    /// Runs per point.
    pub repetitions: u32,
    /// Master seed.
    pub seed: u64,
    /// How each repetition's seed derives from it ([`Plan::seed_of`]).
    pub run_seeds: RunSeeds,
    /// Points in expansion order, without duplicates.
    pub points: Vec<Point>,
    /// Keys whose value differs between points (in [`keys()`] order).
    pub varying: Vec<&'static str>,
    /// Plot settings, with `x` resolved.
    pub plot: PlotSpec,
    /// The x key.
    pub x: &'static str,
    /// The plan file.
    pub source: PathBuf,
}

/// The seed of repetition `rep`: SplitMix64 of the plan seed and `rep`, the same for every
/// point (common random numbers across the points of one repetition).
pub fn run_seed(plan_seed: u64, rep: u32) -> u64 {
    let mut z = plan_seed
        .wrapping_add(u64::from(rep).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Plan {
    /// Reads and expands a plan file.
    pub fn load(path: &Path) -> Result<Plan> {
        let text = std::fs::read_to_string(path).map_err(ExperimentError::file(path))?;
        Plan::parse(&text, path)
    }

    /// Parses and expands plan text; `path` names it in errors and gives the default name.
    pub fn parse(text: &str, path: &Path) -> Result<Plan> {
        let err = |detail: String| ExperimentError::Plan {
            path: path.to_path_buf(),
            detail,
        };
        let file: PlanFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        if file.repetitions == 0 {
            return Err(err("repetitions must be >= 1".into()));
        }
        let mut points = expand(&file).map_err(err)?;
        let varying = varying_keys(&points);
        for p in &mut points {
            p.label = label(&p.params, &varying);
        }
        let x = resolve_x(&file.plot, &varying).map_err(err)?;
        let streams = points.iter().any(|p| p.params.is_stream());
        check_plot(&file.plot, file.repetitions, streams).map_err(err)?;
        let name = file.name.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "experiment".into())
        });
        Ok(Plan {
            title: file.title.unwrap_or_else(|| name.clone()),
            name,
            description: file.description,
            backend: file.backend,
            repetitions: file.repetitions,
            seed: file.seed,
            run_seeds: file.run_seeds,
            points,
            varying,
            plot: file.plot,
            x,
            source: path.to_path_buf(),
        })
    }

    /// Total runs (points × repetitions).
    pub fn total_runs(&self) -> usize {
        self.points.len() * self.repetitions as usize
    }

    /// The seed of repetition `rep` (the same at every point).
    pub fn seed_of(&self, rep: u32) -> u64 {
        match self.run_seeds {
            RunSeeds::Mixed => run_seed(self.seed, rep),
            RunSeeds::Consecutive => self.seed.wrapping_add(u64::from(rep)),
        }
    }
}

/// Every point of every variant and group (the plan's fixed table, then the variant's keys,
/// then the group's fixed and sweep tables), in expansion order, without duplicates.
fn expand(file: &PlanFile) -> std::result::Result<Vec<Point>, String> {
    let groups = if file.group.is_empty() {
        vec![GroupFile::default()]
    } else {
        file.group.clone()
    };
    let variants = if file.variant.is_empty() {
        vec![Table::new()]
    } else {
        file.variant.clone()
    };
    let mut points: Vec<Point> = Vec::new();
    let mut seen = BTreeSet::new();
    for (vi, variant) in variants.iter().enumerate() {
        check_keys(variant, &format!("[[variant]] #{}", vi + 1))?;
        for (gi, g) in groups.iter().enumerate() {
            let mut fixed = file.fixed.clone();
            fixed.extend(variant.clone());
            fixed.extend(g.fixed.clone());
            expand_group(file, g, gi, fixed, &mut points, &mut seen)?;
        }
    }
    Ok(points)
}

/// The points of group `g` (number `gi`) over the `fixed` keys, appended to `points`.
fn expand_group(
    file: &PlanFile,
    g: &GroupFile,
    gi: usize,
    fixed: Table,
    points: &mut Vec<Point>,
    seen: &mut BTreeSet<Vec<String>>,
) -> std::result::Result<(), String> {
    let mut sweep = file.sweep.clone();
    sweep.extend(g.sweep.clone());
    let at = |t: &str| {
        if gi == 0 && g.fixed.is_empty() && g.sweep.is_empty() {
            format!("[{t}]")
        } else {
            format!("[{t}] or [[group]] #{}", gi + 1)
        }
    };
    check_keys(&fixed, &at("fixed"))?;
    let axes = sweep_axes(&sweep, &at("sweep"))?;
    check_keys(&sweep, &at("sweep"))?;
    for combo in cartesian(&axes) {
        let mut t = fixed.clone();
        for (k, v) in combo {
            t.insert(k.to_string(), v);
        }
        let params = Params::deserialize(Value::Table(t)).map_err(|e| e.to_string())?;
        params
            .validate()
            .map_err(|d| format!("{}: {d}", at("sweep")))?;
        if seen.insert(params.cells()) {
            points.push(Point {
                params,
                label: String::new(),
            });
        }
    }
    Ok(())
}

/// The swept keys with their values, in [`keys`] order.
fn sweep_axes(
    sweep: &Table,
    at: &str,
) -> std::result::Result<Vec<(&'static str, Vec<Value>)>, String> {
    let mut axes = Vec::new();
    for &k in keys() {
        let Some(v) = sweep.get(k) else { continue };
        let Value::Array(vals) = v else {
            return Err(format!("{at} key `{k}` must be an array"));
        };
        if vals.is_empty() {
            return Err(format!("{at} key `{k}` is empty"));
        }
        for x in vals {
            check_value(k, x, at)?;
        }
        axes.push((k, vals.clone()));
    }
    Ok(axes)
}

/// `best_over` names keys, `x_scale` is positive, the y columns exist, and `series_y` names a
/// series column; with it or with stream points (`streams`), `series_repetition` is a
/// repetition the plan runs.
fn check_plot(plot: &PlotSpec, repetitions: u32, streams: bool) -> std::result::Result<(), String> {
    for k in &plot.best_over {
        if !keys().contains(&k.as_str()) {
            return Err(format!("[plot] best_over: unknown key `{k}`"));
        }
    }
    if !(plot.x_scale.is_finite() && plot.x_scale > 0.0) {
        return Err("[plot] x_scale must be > 0".into());
    }
    let numeric = crate::journal::numeric_result_columns();
    if let Some(y) = plot
        .y
        .iter()
        .chain(&plot.also_y)
        .find(|y| !numeric.contains(&y.as_str()))
    {
        return Err(format!(
            "[plot] y: `{y}` is not a numeric result column ({})",
            numeric.join(", ")
        ));
    }
    if let Some(c) = &plot.series_y {
        let names = crate::series_plot::series_columns();
        if !names.contains(&c.as_str()) {
            return Err(format!(
                "[plot] series_y: `{c}` is not a series column ({})",
                names.join(", ")
            ));
        }
    }
    if (plot.series_y.is_some() || streams) && plot.series_repetition >= repetitions {
        return Err(format!(
            "[plot] series_repetition = {} but the plan runs repetitions 0..{repetitions}",
            plot.series_repetition
        ));
    }
    Ok(())
}

fn check_keys(t: &Table, at: &str) -> std::result::Result<(), String> {
    for (k, v) in t {
        if !keys().contains(&k.as_str()) {
            return Err(format!(
                "{at}: unknown key `{k}` (expected one of {})",
                keys().join(", ")
            ));
        }
        if !matches!(v, Value::Array(_)) || !at.starts_with("[sweep]") {
            check_value(k, v, at)?;
        }
    }
    Ok(())
}

/// Checks one key's value alone so that a type error names the key.
fn check_value(k: &str, v: &Value, at: &str) -> std::result::Result<(), String> {
    let mut t = Table::new();
    t.insert(k.to_string(), v.clone());
    Params::deserialize(Value::Table(t))
        .map(|_| ())
        .map_err(|e| format!("{at} key `{k}` = {v}: {}", e.message()))
}

fn cartesian(axes: &[(&'static str, Vec<Value>)]) -> Vec<Vec<(&'static str, Value)>> {
    let mut out = vec![Vec::new()];
    for (k, vals) in axes {
        let mut next = Vec::with_capacity(out.len() * vals.len());
        for prefix in &out {
            for v in vals {
                let mut c = prefix.clone();
                c.push((*k, v.clone()));
                next.push(c);
            }
        }
        out = next;
    }
    out
}

/// Keys whose value differs between the points where the key matters (an nc-only key is
/// compared among nc points only, so plain points do not make the nc policies "vary"; a
/// stream key among stream points only).
fn varying_keys(points: &[Point]) -> Vec<&'static str> {
    let cells: Vec<(&Params, Vec<String>)> = points
        .iter()
        .map(|p| (&p.params, p.params.cells()))
        .collect();
    keys()
        .iter()
        .enumerate()
        .filter(|(i, k)| {
            let mut relevant = cells
                .iter()
                .filter(|(p, _)| matters(p, k))
                .map(|(_, c)| &c[*i]);
            match relevant.next() {
                Some(first) => relevant.any(|c| c != first),
                None => false,
            }
        })
        .map(|(_, k)| *k)
        .collect()
}

/// Keys that only matter in nc mode (left out of a plain point's label).
pub fn nc_only(key: &str) -> bool {
    matches!(key, "buffer_packets" | "profile")
        || crate::params::PolicyOverrides::KEYS.contains(&key)
}

/// Whether `key` matters for point `p`: not an nc-only key of a plain point, nor a stream key
/// of a bulk point, nor `bytes` of a stream point (its trace's).
pub fn matters(p: &Params, key: &str) -> bool {
    let stream_key = STREAM_KEYS.contains(&key);
    (p.mode == PathMode::Nc || !nc_only(key))
        && if p.is_stream() {
            key != "bytes"
        } else {
            !stream_key
        }
}

/// `key=value` of `keys`, space separated (mode and cc bare; keys that do not matter for the
/// point, [`matters`], left out).
pub fn label(p: &Params, shown: &[&str]) -> String {
    let cells = p.cells();
    shown
        .iter()
        .filter(|k| matters(p, k))
        .filter_map(|k| keys().iter().position(|x| x == k).map(|i| (*k, &cells[i])))
        .map(|(k, v)| match k {
            "mode" | "cc" | "series" => v.clone(),
            _ if v.is_empty() => format!("{k}=auto"),
            _ => format!("{k}={v}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

const NUMERIC: [&str; 19] = [
    "loss",
    "reverse_loss",
    "burst",
    "jitter_ms",
    "flows",
    "redundancy",
    "window",
    "buffer_packets",
    "rate_mbit",
    "delay_ms",
    "queue_packets",
    "bytes",
    "duration_s",
    "buffer_kib",
    "ack_delay_ms",
    "mtu",
    "stream_mbit",
    "fps",
    "deadline_ms",
];

fn resolve_x(
    plot: &PlotSpec,
    varying: &[&'static str],
) -> std::result::Result<&'static str, String> {
    match &plot.x {
        Some(x) => NUMERIC
            .iter()
            .find(|k| **k == x.as_str())
            .copied()
            .ok_or_else(|| {
                format!(
                    "[plot] x: `{x}` is not a numeric key ({})",
                    NUMERIC.join(", ")
                )
            }),
        None => varying
            .iter()
            .find(|k| NUMERIC.contains(k))
            .copied()
            // Nothing numeric varies (a single point, or only modes): loss on x.
            .or(Some("loss"))
            .ok_or_else(String::new),
    }
}
