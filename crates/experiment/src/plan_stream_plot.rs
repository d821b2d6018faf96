//! A plan's stream figures (issue 12; Parejiya & Desai Figs. 6–9): the runner keeps repetition
//! `[plot] series_repetition` (default 0, the same seed at every point) of every stream point's
//! frames as `<out>/frames/<point>.csv` (`tcpnc_stream::series_csv`'s columns); here the points
//! that differ only in their scheme — `mode`, `cc`, the nc keys (`window`, `window_policy`,
//! ...) or a `series` name — become the curves of one set of [`crate::stream_plot`] figures,
//! one set per combination of the other keys that vary (e.g. per delay, per preset):
//! `<name>-stream-latency[-<group>]`, `-stream-latency-cdf`, `-stream-jitter`, PNG and SVG.

use std::path::{Path, PathBuf};

use tcpnc_sim::stream_run::scheme_name;
use tcpnc_stream::{FrameRecord, parse_series_csv, series_csv};

use crate::error::{ExperimentError, Result};
use crate::params::{Params, PathMode};
use crate::plan::{Plan, label, nc_only};
use crate::series_plot::slug;
use crate::stream_plot::write_stream_figures;

/// Where the frames of stream runs are kept, inside the output directory.
pub const FRAMES_DIR: &str = "frames";

/// The kept frames of the point labelled `label`.
pub fn frames_file(out_dir: &Path, label: &str) -> PathBuf {
    out_dir
        .join(FRAMES_DIR)
        .join(format!("{}.csv", slug(label)))
}

/// Writes one run's frames for the point labelled `label` (run as `scheme`).
pub fn keep_frames(
    out_dir: &Path,
    label: &str,
    scheme: &str,
    frames: &[FrameRecord],
) -> Result<()> {
    let dir = out_dir.join(FRAMES_DIR);
    std::fs::create_dir_all(&dir).map_err(ExperimentError::file(&dir))?;
    let path = frames_file(out_dir, label);
    std::fs::write(&path, series_csv(scheme, frames, true)).map_err(ExperimentError::file(&path))
}

/// The scheme a stream point runs: `plain-<cc>` or `nc-<window policy>` (as
/// `tcpnc sim --workload stream` and `tcpnc lab stream` name them).
pub fn scheme(p: &Params) -> String {
    let window_policy = (p.mode == PathMode::Nc).then(|| p.policies().window_policy);
    scheme_name(p.cc, window_policy)
}

/// Whether a varying key tells schemes apart (a curve) rather than figures apart.
fn scheme_key(key: &str) -> bool {
    matches!(key, "mode" | "cc" | "series") || nc_only(key)
}

/// A curve's name: the point's `series` name, else its scheme with the other scheme keys that
/// vary (`nc-fixed window=4`).
fn curve_name(p: &Params, curve_keys: &[&str]) -> String {
    if let Some(name) = &p.series {
        return name.clone();
    }
    let rest: Vec<&str> = curve_keys
        .iter()
        .copied()
        .filter(|k| !matches!(*k, "mode" | "cc" | "window_policy"))
        .collect();
    match label(p, &rest) {
        more if more.is_empty() => scheme(p),
        more => format!("{} {more}", scheme(p)),
    }
}

/// One set of figures: its group label and its curves (name, frames).
type FigureSet = (String, Vec<(String, Vec<FrameRecord>)>);

/// The kept frames of `plan`'s stream points, grouped into figure sets (plan order); points
/// without kept frames are left out.
fn figure_sets(plan: &Plan, out_dir: &Path) -> Result<Vec<FigureSet>> {
    let (curve_keys, group_keys): (Vec<&str>, Vec<&str>) =
        plan.varying.iter().copied().partition(|k| scheme_key(k));
    let mut sets: Vec<FigureSet> = Vec::new();
    for pt in plan.points.iter().filter(|p| p.params.is_stream()) {
        let file = frames_file(out_dir, &pt.label);
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let frames = parse_series_csv(&text)
            .map_err(|e| ExperimentError::Plot {
                path: file.clone(),
                detail: e.to_string(),
            })?
            .into_iter()
            .map(|(_, f)| f)
            .collect();
        let group = label(&pt.params, &group_keys);
        let curve = (curve_name(&pt.params, &curve_keys), frames);
        match sets.iter_mut().find(|(g, _)| *g == group) {
            Some((_, curves)) => curves.push(curve),
            None => sets.push((group, vec![curve])),
        }
    }
    Ok(sets)
}

/// Draws the kept frames of `plan`'s stream points: latency over time, its CDF and jitter
/// over time, one curve per scheme, one set of figures per group (module docs). Returns the
/// files written.
pub fn write_plan_stream_plots(plan: &Plan, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for (group, curves) in figure_sets(plan, out_dir)? {
        let cases: Vec<(&str, &[FrameRecord])> = curves
            .iter()
            .map(|(n, f)| (n.as_str(), f.as_slice()))
            .collect();
        let (suffix, title) = match group.as_str() {
            "" => (String::new(), plan.title.clone()),
            g => (format!("-{}", slug(g)), format!("{}: {g}", plan.title)),
        };
        let title = format!("{title}, repetition {}", plan.plot.series_repetition);
        let prefix = format!("{}-", plan.name);
        files.extend(write_stream_figures(
            &cases,
            out_dir,
            (&prefix, &suffix),
            &title,
        )?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{CongestionControl, PolicyOverrides, WindowPolicy};

    #[test]
    fn curves_are_named_by_scheme() {
        let plain = Params {
            mode: PathMode::Plain,
            ..Params::default()
        };
        assert_eq!(scheme(&plain), "plain-reno");
        let vbnc = Params {
            cc: CongestionControl::Cubic,
            coding: PolicyOverrides {
                window_policy: Some(WindowPolicy::Vbnc),
                window: Some(4),
                ..PolicyOverrides::default()
            },
            ..Params::default()
        };
        assert_eq!(scheme(&vbnc), "nc-vbnc");
        let keys = ["mode", "window", "window_policy"];
        assert_eq!(curve_name(&vbnc, &keys), "nc-vbnc window=4");
        assert_eq!(
            curve_name(&plain, &keys),
            "plain-reno",
            "no nc keys for plain"
        );
        let named = Params {
            series: Some("TCP".into()),
            ..plain
        };
        assert_eq!(curve_name(&named, &keys), "TCP");
        assert!(scheme_key("window") && scheme_key("cc") && !scheme_key("delay_ms"));
        assert!(!scheme_key("preset"));
    }
}
