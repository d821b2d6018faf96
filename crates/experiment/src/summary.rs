//! Statistics per point over its repetitions, and the curves drawn (one per series, with
//! the best point per x when the plan maximises over some keys).

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{ExperimentError, Result};
use crate::journal::{Row, STREAM_COLUMNS};
use crate::params::{Params, keys};
use crate::plan::{Plan, Point, label, matters};

/// Mean, extremes, sample standard deviation and count of some values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// Number of values.
    pub n: usize,
    /// Mean (NaN when empty).
    pub mean: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
    /// Sample standard deviation (0 for one value).
    pub stddev: f64,
}

impl Stats {
    /// Statistics of `xs`.
    pub fn of(xs: &[f64]) -> Stats {
        let n = xs.len();
        if n == 0 {
            return Stats {
                n,
                mean: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
                stddev: f64::NAN,
            };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Stats {
            n,
            mean,
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            stddev: var.sqrt(),
        }
    }
}

/// One point's results.
#[derive(Debug, Clone)]
pub struct PointSummary {
    /// The point's label.
    pub label: String,
    /// Its settings.
    pub params: Params,
    /// Goodput over counted runs, Mbit/s.
    pub goodput: Stats,
    /// Runs recorded but not counted (timeouts, failed integrity, errors).
    pub not_counted: usize,
    /// Mean TCP retransmissions over counted runs.
    pub retransmissions: f64,
    /// Mean Jain's fairness index over counted runs with several flows (NaN: none).
    pub jain_index: f64,
    /// Mean duplicate ACKs at the sending TCP over counted runs (NaN: not measured).
    pub dup_acks: f64,
    /// Mean fast retransmits over counted runs (NaN: not measured).
    pub fast_retransmits: f64,
    /// Mean of the runs' time-averaged flight size, bytes (NaN: not measured).
    pub flight_mean_bytes: f64,
    /// Mean of the runs' decoding-throughput standard deviation, packets/s (NaN: not measured).
    pub decoding_sd_pps: f64,
    /// The plan's y column (`[plot] y`, default goodput) over counted runs.
    pub y: Stats,
    /// A stream point's columns ([`STREAM_COLUMNS`]) over counted runs (empty: a bulk point).
    pub stream: Vec<(&'static str, Stats)>,
}

/// One point of a curve.
#[derive(Debug, Clone)]
pub struct CurvePoint {
    /// X value (already scaled by `x_scale`).
    pub x: f64,
    /// The chosen point's goodput statistics.
    pub goodput: Stats,
    /// The chosen point's y statistics (`[plot] y`; goodput by default).
    pub y: Stats,
    /// The chosen point's `best_over` values (empty without `best_over`).
    pub chosen: String,
}

/// One plotted series.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Series label (values of the varying keys other than x and `best_over`).
    pub series: String,
    /// Points sorted by x.
    pub points: Vec<CurvePoint>,
}

/// Everything summarised.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Per point, in plan order.
    pub points: Vec<PointSummary>,
    /// Per series.
    pub curves: Vec<Curve>,
    /// The keys that name a series.
    pub series_keys: Vec<&'static str>,
}

fn key_index(k: &str) -> usize {
    keys().iter().position(|x| *x == k).unwrap_or(0)
}

/// The statistics of one point over its counted rows (`rows`: the rows of its settings).
fn point_summary(plan: &Plan, rows: &[&Row], pt: &Point) -> PointSummary {
    let mine: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| {
            r.get("rep")
                .parse::<u32>()
                .is_ok_and(|k| k < plan.repetitions)
        })
        .collect();
    let counted: Vec<&Row> = mine.iter().copied().filter(|r| r.counted()).collect();
    let column = |name: &str| -> Vec<f64> {
        counted
            .iter()
            .map(|r| r.num(name))
            .filter(|v| v.is_finite())
            .collect()
    };
    let g: Vec<f64> = counted.iter().map(|r| r.num("goodput_mbit")).collect();
    PointSummary {
        label: pt.label.clone(),
        params: pt.params.clone(),
        goodput: Stats::of(&g),
        not_counted: mine.len() - counted.len(),
        retransmissions: Stats::of(&column("retransmissions")).mean,
        jain_index: Stats::of(&column("jain_index")).mean,
        dup_acks: Stats::of(&column("dup_acks")).mean,
        fast_retransmits: Stats::of(&column("fast_retransmits")).mean,
        flight_mean_bytes: Stats::of(&column("flight_mean_bytes")).mean,
        decoding_sd_pps: Stats::of(&column("decoding_sd_pps")).mean,
        y: Stats::of(&column(plan.plot.y.as_deref().unwrap_or("goodput_mbit"))),
        stream: if pt.params.is_stream() {
            STREAM_COLUMNS
                .iter()
                .map(|c| (*c, Stats::of(&column(c))))
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// Summarises the rows of `plan`'s points (rows of other settings are ignored).
pub fn summarize(plan: &Plan, rows: &[Row]) -> Summary {
    let cells: Vec<Vec<String>> = plan.points.iter().map(|p| p.params.cells()).collect();
    let mut by_settings: HashMap<&[String], Vec<&Row>> = HashMap::new();
    for r in rows {
        by_settings.entry(r.param_cells()).or_default().push(r);
    }
    let points: Vec<PointSummary> = plan
        .points
        .iter()
        .zip(&cells)
        .map(|(pt, c)| {
            let mine = by_settings.get(c.as_slice()).map_or(&[][..], Vec::as_slice);
            point_summary(plan, mine, pt)
        })
        .collect();
    let best_over: Vec<&str> = plan.plot.best_over.iter().map(String::as_str).collect();
    let series_keys = named_series_keys(
        plan.x,
        &cells,
        plan.varying
            .iter()
            .copied()
            .filter(|k| *k != plan.x && !best_over.contains(k))
            .collect(),
    );
    let xi = key_index(plan.x);
    let mut curves: Vec<Curve> = Vec::new();
    for (p, c) in points.iter().zip(&cells) {
        let series = label(&p.params, &series_keys);
        let x = c[xi].parse::<f64>().unwrap_or(f64::NAN) * plan.plot.x_scale;
        let cp = CurvePoint {
            x,
            goodput: p.goodput,
            y: p.y,
            chosen: label(&p.params, &best_over),
        };
        let curve = match curves.iter_mut().find(|c| c.series == series) {
            Some(c) => c,
            None => {
                curves.push(Curve {
                    series,
                    points: Vec::new(),
                });
                curves.last_mut().expect("just pushed")
            }
        };
        match curve.points.iter_mut().find(|q| q.x == x) {
            Some(q) if better(&cp.goodput, &q.goodput) => *q = cp,
            Some(_) => {}
            None => curve.points.push(cp),
        }
    }
    for c in &mut curves {
        c.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    Summary {
        points,
        curves,
        series_keys,
    }
}

fn better(a: &Stats, b: &Stats) -> bool {
    a.n > 0 && (b.n == 0 || a.mean > b.mean)
}

fn finite(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

fn stats_json(s: &Stats) -> Value {
    let f = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
    json!({"n": s.n, "mean": f(s.mean), "min": f(s.min), "max": f(s.max), "stddev": f(s.stddev)})
}

/// One point's summary: the varying keys' values and the statistics of its counted runs
/// (`stream`: a stream point's columns).
fn point_json(plan: &Plan, p: &PointSummary) -> Value {
    let all = p.params.values();
    let params: serde_json::Map<String, Value> = plan
        .varying
        .iter()
        .map(|k| (k.to_string(), all[*k].clone()))
        .collect();
    let stream: serde_json::Map<String, Value> = p
        .stream
        .iter()
        .map(|(c, st)| (c.to_string(), stats_json(st)))
        .collect();
    let mut v = json!({
        "label": p.label,
        "params": params,
        "goodput_mbit": stats_json(&p.goodput),
        "not_counted": p.not_counted,
        "retransmissions_mean": finite(p.retransmissions),
        "jain_index_mean": finite(p.jain_index),
        "dup_acks_mean": finite(p.dup_acks),
        "fast_retransmits_mean": finite(p.fast_retransmits),
        "flight_mean_bytes_mean": finite(p.flight_mean_bytes),
        "decoding_sd_pps_mean": finite(p.decoding_sd_pps),
    });
    if !stream.is_empty() {
        v["stream"] = Value::Object(stream);
    }
    v
}

/// The summary as JSON.
pub fn summary_json(plan: &Plan, s: &Summary) -> Value {
    let points: Vec<Value> = s.points.iter().map(|p| point_json(plan, p)).collect();
    let curves: Vec<Value> = s
        .curves
        .iter()
        .map(|c| {
            json!({
                "series": c.series,
                "points": c.points.iter().map(|p| json!({
                    "x": p.x,
                    "goodput_mbit": stats_json(&p.goodput),
                    "y": stats_json(&p.y),
                    "best": p.chosen,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    // A fixed key's value from the first point where it matters (nc-only keys: an nc point,
    // stream keys: a stream point), else the first point's.
    let fixed: serde_json::Map<String, Value> = keys()
        .iter()
        .filter(|k| !plan.varying.contains(k))
        .map(|k| {
            let p = plan
                .points
                .iter()
                .find(|p| matters(&p.params, k))
                .unwrap_or(&plan.points[0]);
            (k.to_string(), p.params.values()[*k].clone())
        })
        .collect();
    json!({
        "name": plan.name,
        "title": plan.title,
        "backend": plan.backend.name(),
        "repetitions": plan.repetitions,
        "seed": plan.seed,
        "fixed": fixed,
        "varying": plan.varying,
        "x": plan.x,
        "x_scale": plan.plot.x_scale,
        "best_over": plan.plot.best_over,
        "series_keys": s.series_keys,
        "points": points,
        "curves": curves,
    })
}

/// Writes the summary JSON to `path`.
pub fn write_summary(plan: &Plan, s: &Summary, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(&summary_json(plan, s)).unwrap_or_default();
    std::fs::write(path, text + "\n").map_err(ExperimentError::file(path))
}

/// The keys that name a series: without those a `series` name stands for (keys with one value
/// per name and x, e.g. a variant's policy keys, or R set per loss for each name) and those that only relabel x (one value per x and
/// one x per value, e.g. a delay's spread swept together with the delay).
/// `cells`: every point's cells ([`Params::cells`]), `x`: the x key.
fn named_series_keys(x: &str, cells: &[Vec<String>], keys: Vec<&'static str>) -> Vec<&'static str> {
    let named = keys.contains(&"series");
    keys.into_iter()
        .filter(|k| {
            *k == "series"
                || !((named && determines_by(cells, &["series", x], k))
                    || (determines(cells, x, k) && determines(cells, k, x)))
        })
        .collect()
}

/// Whether every point with the same value of key `a` has the same value of key `b`.
fn determines(cells: &[Vec<String>], a: &str, b: &str) -> bool {
    determines_by(cells, &[a], b)
}

/// Whether every point with the same values of keys `a` has the same value of key `b` (e.g.
/// R chosen per loss and per named series, Mitsuzumi et al. Figs. 11–12).
fn determines_by(cells: &[Vec<String>], a: &[&str], b: &str) -> bool {
    let ai: Vec<usize> = a.iter().map(|k| key_index(k)).collect();
    let bi = key_index(b);
    let mut seen: HashMap<Vec<&str>, &str> = HashMap::new();
    cells.iter().all(|c| {
        let id: Vec<&str> = ai.iter().map(|&i| c[i].as_str()).collect();
        match seen.get(&id) {
            Some(v) => *v == c[bi],
            None => {
                seen.insert(id, &c[bi]);
                true
            }
        }
    })
}
