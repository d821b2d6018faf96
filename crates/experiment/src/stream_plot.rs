//! Figures of a stream run (issue 12; `tcpnc lab stream --plot`, `tcpnc sim --workload stream
//! --plot`): per case, each frame's latency over the stream's time, the latency CDF, and the
//! jitter over time — the mean of the frames' jitter (`tcpnc_stream::metrics`' definition) per
//! one-second bin of sending time, as per-frame values are too noisy to read. Latency and jitter span
//! milliseconds to minutes between plain TCP and TCP/NC on a lossy path, so their axes are
//! logarithmic. PNG and SVG through `tcpnc-plot`, like the sweep plots.

use std::path::{Path, PathBuf};

use tcpnc_plot::plotters::coord::Shift;
use tcpnc_plot::plotters::prelude::*;
use tcpnc_plot::{Figure, write_png_and_svg};
use tcpnc_stream::{FrameRecord, jitters};

use crate::error::{ExperimentError, Result};

/// Smallest value drawn on a logarithmic axis, ms (a jitter of 0 is drawn here).
const FLOOR_MS: f64 = 0.01;

/// Each known case's colour (the same in every figure whichever cases ran), then a palette.
const NAMED: [(&str, RGBColor); 5] = [
    ("plain-reno", RGBColor(127, 127, 127)),
    ("plain-cubic", RGBColor(214, 39, 40)),
    ("plain-bbr", RGBColor(255, 127, 14)),
    ("nc-fixed", RGBColor(31, 119, 180)),
    ("nc-vbnc", RGBColor(44, 160, 44)),
];

const PALETTE: [RGBColor; 3] = [
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
];

fn color(name: &str, i: usize) -> RGBColor {
    NAMED
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(PALETTE[i % PALETTE.len()], |(_, c)| *c)
}

/// Which figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    LatencyOverTime,
    LatencyCdf,
    JitterOverTime,
}

impl Kind {
    fn stem(self) -> &'static str {
        match self {
            Kind::LatencyOverTime => "stream-latency",
            Kind::LatencyCdf => "stream-latency-cdf",
            Kind::JitterOverTime => "stream-jitter",
        }
    }

    /// The points of one case: (x, y).
    fn points(self, records: &[FrameRecord]) -> Vec<(f64, f64)> {
        match self {
            Kind::LatencyOverTime => records
                .iter()
                .filter_map(|r| Some((r.sent_s, r.latency_ms()?.max(FLOOR_MS))))
                .collect(),
            Kind::LatencyCdf => {
                let mut l: Vec<f64> = records.iter().filter_map(|r| r.latency_ms()).collect();
                l.sort_by(f64::total_cmp);
                let n = records.len().max(1) as f64;
                l.iter()
                    .enumerate()
                    .map(|(i, &v)| (v.max(FLOOR_MS), (i + 1) as f64 / n))
                    .collect()
            }
            Kind::JitterOverTime => jitter_bins(records),
        }
    }
}

/// Width of a jitter bin, s: one second, or a two-hundredth of a longer stream.
fn bin_width(records: &[FrameRecord]) -> f64 {
    let span = records.last().map_or(0.0, |r| r.sent_s);
    (span / 200.0).max(1.0)
}

/// Mean jitter of the frames sent in each bin ([`bin_width`]), at the bin's middle; bins
/// without a delivered frame after the first are left out.
fn jitter_bins(records: &[FrameRecord]) -> Vec<(f64, f64)> {
    let w = bin_width(records);
    let mut bins: Vec<(f64, usize)> = Vec::new();
    for (r, j) in records.iter().zip(jitters(records)) {
        let Some(j) = j else { continue };
        let b = (r.sent_s / w) as usize;
        if bins.len() <= b {
            bins.resize(b + 1, (0.0, 0));
        }
        bins[b].0 += j;
        bins[b].1 += 1;
    }
    bins.iter()
        .enumerate()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(i, (sum, n))| ((i as f64 + 0.5) * w, (sum / *n as f64).max(FLOOR_MS)))
        .collect()
}

struct StreamFigure<'a> {
    kind: Kind,
    cases: &'a [(&'a str, &'a [FrameRecord])],
    title: &'a str,
}

impl Figure for StreamFigure<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let series: Vec<(&str, Vec<(f64, f64)>)> = self
            .cases
            .iter()
            .map(|(name, r)| (*name, self.kind.points(r)))
            .collect();
        match self.kind {
            Kind::LatencyCdf => draw_cdf(root, self.title, &series),
            Kind::LatencyOverTime => {
                draw_over_time(root, self.title, "frame latency (ms, log)", &series)
            }
            Kind::JitterOverTime => {
                draw_over_time(root, self.title, "mean jitter per bin (ms, log)", &series)
            }
        }
    }
}

/// Writes the three figures of `cases` (name, every frame) into `dir` as `stream-latency`,
/// `stream-latency-cdf` and `stream-jitter` (PNG and SVG); returns the files.
pub fn write_stream_plots(
    cases: &[(&str, &[FrameRecord])],
    dir: &Path,
    title: &str,
) -> Result<Vec<PathBuf>> {
    write_stream_figures(cases, dir, ("", ""), title)
}

/// [`write_stream_plots`] with each file's stem between `prefix` and `suffix` (an experiment
/// plan's figures: `<name>-stream-latency-<group>`).
pub fn write_stream_figures(
    cases: &[(&str, &[FrameRecord])],
    dir: &Path,
    (prefix, suffix): (&str, &str),
    title: &str,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for kind in [
        Kind::LatencyOverTime,
        Kind::LatencyCdf,
        Kind::JitterOverTime,
    ] {
        let fig = StreamFigure { kind, cases, title };
        let stem = format!("{prefix}{}{suffix}", kind.stem());
        files.extend(
            write_png_and_svg(&fig, dir, &stem).map_err(|e| ExperimentError::Plot {
                path: e.path,
                detail: e.detail,
            })?,
        );
    }
    Ok(files)
}

/// The range of `f` over every point, padded; `(1, 10)` when there is none.
fn range(series: &[(&str, Vec<(f64, f64)>)], f: impl Fn(&(f64, f64)) -> f64) -> (f64, f64) {
    let (lo, hi) = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(&f))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if lo.is_finite() && hi > lo {
        (lo, hi)
    } else if lo.is_finite() {
        (lo * 0.5, lo * 2.0 + 1.0)
    } else {
        (1.0, 10.0)
    }
}

fn draw_over_time<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    series: &[(&str, Vec<(f64, f64)>)],
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (x0, x1) = range(series, |p| p.0);
    let (y0, y1) = range(series, |p| p.1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(18)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .build_cartesian_2d(x0.min(0.0)..x1, (decade_below(y0)..y1 * 1.25).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("frame's scheduled write time (s)")
        .y_desc(y_desc)
        .y_labels(20)
        .y_label_formatter(&|v| ms_label(*v))
        .label_style(("sans-serif", 14))
        .light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(e)?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = color(name, i);
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(1)))
            .map_err(e)?
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    legend(&mut chart).map_err(e)?;
    root.present().map_err(e)
}

fn draw_cdf<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    series: &[(&str, Vec<(f64, f64)>)],
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (x0, x1) = range(series, |p| p.0);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(18)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .build_cartesian_2d((decade_below(x0)..x1 * 1.25).log_scale(), 0f64..1.02)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("frame latency (ms, log)")
        .y_desc("fraction of frames delivered within")
        .x_labels(20)
        .x_label_formatter(&|v| ms_label(*v))
        .label_style(("sans-serif", 14))
        .light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(e)?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = color(name, i);
        // A step function: each frame raises the fraction at its latency.
        let steps: Vec<(f64, f64)> = points
            .iter()
            .scan(0.0, |prev, &(x, y)| {
                let s = [(x, *prev), (x, y)];
                *prev = y;
                Some(s)
            })
            .flatten()
            .collect();
        chart
            .draw_series(LineSeries::new(steps, color.stroke_width(2)))
            .map_err(e)?
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    legend(&mut chart).map_err(e)?;
    root.present().map_err(e)
}

/// The power of ten at or below `v`: a logarithmic axis starting there is labelled from its
/// first decade (plotters labels only from the first power of ten inside the range).
fn decade_below(v: f64) -> f64 {
    10f64.powf(v.max(FLOOR_MS).log10().floor())
}

/// A millisecond tick label: whole numbers from 1 ms, two decimals below.
fn ms_label(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn legend<'a, DB: DrawingBackend + 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn rec(i: usize, sent_ms: u64, lat_ms: Option<u64>) -> FrameRecord {
        let sent = Duration::from_millis(sent_ms);
        FrameRecord::new(
            i,
            100,
            sent,
            lat_ms.map(|l| sent + Duration::from_millis(l)),
        )
    }

    #[test]
    fn points_per_kind() {
        let rs = [
            rec(0, 0, Some(40)),
            rec(1, 40, Some(40)),
            rec(2, 80, Some(140)),
            rec(3, 120, None),
        ];
        let lat = Kind::LatencyOverTime.points(&rs);
        assert_eq!(lat.len(), 3);
        assert!((lat[2].1 - 140.0).abs() < 1e-9);
        // The CDF counts the undelivered frame: it ends at 3/4.
        let cdf = Kind::LatencyCdf.points(&rs);
        assert!((cdf.last().unwrap().1 - 0.75).abs() < 1e-12);
        assert!(cdf.windows(2).all(|w| w[0].0 <= w[1].0));
        // Jitter: frame 1 has 0, frame 2 has 100, both in the first one-second bin.
        let j = Kind::JitterOverTime.points(&rs);
        assert_eq!(j, vec![(0.5, 50.0)]);
        let late = [
            rec(0, 0, Some(40)),
            rec(1, 2500, Some(40)),
            rec(2, 2600, None),
        ];
        assert_eq!(Kind::JitterOverTime.points(&late), vec![(2.5, FLOOR_MS)]);
    }

    #[test]
    fn log_axes_start_at_a_decade() {
        assert_eq!(decade_below(17.0), 10.0);
        assert_eq!(decade_below(100.0), 100.0);
        assert_eq!(decade_below(0.0), FLOOR_MS);
        assert_eq!(ms_label(250.0), "250");
        assert_eq!(ms_label(0.05), "0.05");
    }

    #[test]
    fn writes_three_figures() {
        let dir = std::env::temp_dir().join(format!("tcpnc-stream-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rs: Vec<FrameRecord> = (0..50)
            .map(|i| rec(i, i as u64 * 33, Some(30 + (i as u64 % 7) * 10)))
            .collect();
        let cases = [("plain-cubic", &rs[..]), ("nc-vbnc", &rs[..10])];
        let files = write_stream_plots(&cases, &dir, "test").unwrap();
        assert_eq!(files.len(), 6);
        for f in &files {
            assert!(
                std::fs::metadata(f).unwrap().len() > 1000,
                "{}",
                f.display()
            );
        }
        let svg = std::fs::read_to_string(dir.join("stream-latency-cdf.svg")).unwrap();
        assert!(svg.contains("nc-vbnc"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
