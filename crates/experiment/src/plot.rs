//! Plots of a summary: mean goodput (or the plan's `[plot] y` column) per series against x
//! (linear, or logarithmic with `[plot] x_axis = "log"`), with min–max bars over the
//! repetitions, as PNG (bitmap backend, encoded with `png`) and SVG. Text uses DejaVu Sans
//! embedded in the binary: the plumbing is `tcpnc-plot`'s, shared with the lab's demo.

use std::path::{Path, PathBuf};

use tcpnc_plot::plotters::coord::Shift;
use tcpnc_plot::plotters::coord::ranged1d::ValueFormatter;
use tcpnc_plot::plotters::prelude::*;
use tcpnc_plot::{Figure, write_png_and_svg};

use crate::error::{ExperimentError, Result};
use crate::plan::{AxisScale, Plan};
use crate::summary::{Curve, Summary};

/// A plan's figure: the plan (axes, labels) and its summary.
struct SummaryFigure<'a> {
    plan: &'a Plan,
    summary: &'a Summary,
}

impl Figure for SummaryFigure<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        draw(root, self.plan, self.summary)
    }
}

/// Writes `<stem>.png` and `<stem>.svg` in `dir`; returns their paths.
pub fn write_plots(plan: &Plan, s: &Summary, dir: &Path, stem: &str) -> Result<Vec<PathBuf>> {
    write_png_and_svg(&SummaryFigure { plan, summary: s }, dir, stem).map_err(|e| {
        ExperimentError::Plot {
            path: e.path,
            detail: e.detail,
        }
    })
}

/// The figures' line colours, in order (also `series_plot.rs`).
pub(crate) const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn short(chosen: &str) -> String {
    chosen.replace("redundancy=", "R=").replace("window=", "W=")
}

/// The axes' extent: x from the data, y up to the path rate (when fixed) or the data.
struct Extent {
    xmin: f64,
    xmax: f64,
    pad: f64,
    /// The smallest positive y drawn (a logarithmic y axis starts a decade at or below it).
    ymin_positive: f64,
    ymax: f64,
    /// The path rate, when every point has the same one.
    rate: Option<f64>,
}

fn extent(plan: &Plan, s: &Summary) -> Extent {
    let pts = s.curves.iter().flat_map(|c| c.points.iter());
    let (xmin, xmax) = pts
        .clone()
        .map(|p| p.x)
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    let (xmin, xmax) = if xmin.is_finite() {
        (xmin, xmax)
    } else {
        (0.0, 1.0)
    };
    let rate = (plan.plot.y.is_none() && !plan.varying.contains(&"rate_mbit"))
        .then(|| plan.points[0].params.path().rate_mbit);
    let ymax_data = pts
        .clone()
        .filter_map(|p| p.y.max.is_finite().then_some(p.y.max))
        .fold(0.0f64, f64::max);
    let ymin_positive = pts
        .filter(|p| p.y.n > 0)
        .map(|p| p.y.min)
        .filter(|y| y.is_finite() && *y > 0.0)
        .fold(f64::INFINITY, f64::min);
    Extent {
        xmin,
        xmax,
        pad: ((xmax - xmin) * 0.05).max(xmax.abs() * 0.02).max(1e-3),
        ymin_positive,
        ymax: rate.unwrap_or(0.0).max(ymax_data) * 1.15 + 1e-6,
        rate,
    }
}

type Chart<'a, DB, X, Y> = ChartContext<'a, DB, Cartesian2d<X, Y>>;

/// Builds the chart with the plan's x and y scales, then [`draw_on`] it.
macro_rules! draw_with {
    ($builder:expr, $e:expr, $xr:expr, $yr:expr, $plan:expr, $s:expr, $x:expr) => {{
        let chart = $builder.build_cartesian_2d($xr, $yr).map_err($e)?;
        draw_on(chart, $plan, $s, $x)?;
    }};
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plan: &Plan,
    s: &Summary,
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let x = extent(plan, s);
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(&plan.title, ("sans-serif", 20))
        .margin(18)
        .x_label_area_size(48)
        .y_label_area_size(60);
    if plan.plot.x_axis == AxisScale::Log && x.xmin <= 0.0 {
        return Err(format!(
            "[plot] x_axis = \"log\" needs x > 0 (the smallest x is {})",
            x.xmin
        ));
    }
    if plan.plot.y_axis == AxisScale::Log && !x.ymin_positive.is_finite() {
        return Err("[plot] y_axis = \"log\" needs a y > 0".into());
    }
    let x_lin = x.xmin - x.pad..x.xmax + x.pad;
    let x_log = (x.xmin / 1.5..x.xmax * 1.5).log_scale();
    let y_lin = 0f64..x.ymax;
    // From the power of ten at or below the smallest y (plotters labels from the first one).
    let y_log = (10f64.powf(x.ymin_positive.log10().floor())..x.ymax * 1.5).log_scale();
    match (plan.plot.x_axis, plan.plot.y_axis) {
        (AxisScale::Linear, AxisScale::Linear) => {
            draw_with!(builder, e, x_lin, y_lin, plan, s, &x)
        }
        (AxisScale::Log, AxisScale::Linear) => draw_with!(builder, e, x_log, y_lin, plan, s, &x),
        (AxisScale::Linear, AxisScale::Log) => draw_with!(builder, e, x_lin, y_log, plan, s, &x),
        (AxisScale::Log, AxisScale::Log) => draw_with!(builder, e, x_log, y_log, plan, s, &x),
    }
    root.present().map_err(e)
}

/// Draws the mesh, the link limit (x = loss) and every curve on a chart of any scales.
fn draw_on<'a, DB, X, Y>(
    mut chart: Chart<'a, DB, X, Y>,
    plan: &Plan,
    s: &Summary,
    x: &Extent,
) -> std::result::Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let x_desc = plan
        .plot
        .x_label
        .clone()
        .unwrap_or_else(|| plan.x.to_string());
    let y_desc = plan
        .plot
        .y_label
        .clone()
        .unwrap_or_else(|| match &plan.plot.y {
            Some(y) => format!("{y}, mean and min-max"),
            None => "goodput (Mbit/s), mean and min-max".into(),
        });
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", 14))
        .light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(e)?;
    if let (true, Some(rate)) = (plan.x == "loss", x.rate) {
        let limit: Vec<(f64, f64)> = [x.xmin, x.xmax]
            .iter()
            .map(|&v| (v, rate * (1.0 - v / plan.plot.x_scale)))
            .collect();
        chart
            .draw_series(LineSeries::new(limit, BLACK.mix(0.5).stroke_width(1)))
            .map_err(e)?
            .label("link limit C(1-p)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.mix(0.5)));
    }
    let chosen_labels = !plan.plot.best_over.is_empty();
    for (i, c) in s.curves.iter().enumerate() {
        draw_curve(
            &mut chart,
            c,
            COLORS[i % COLORS.len()],
            chosen_labels,
            x.ymax,
        )?;
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    Ok(())
}

/// One series: the line of means, a dot per point, min-max bars over repetitions and, with
/// `best_over`, the chosen values above each point.
fn draw_curve<'a, DB, X, Y>(
    chart: &mut Chart<'a, DB, X, Y>,
    c: &Curve,
    color: RGBColor,
    chosen_labels: bool,
    ymax: f64,
) -> std::result::Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let line: Vec<(f64, f64)> = c
        .points
        .iter()
        .filter(|p| p.y.n > 0)
        .map(|p| (p.x, p.y.mean))
        .collect();
    let name = if c.series.is_empty() {
        "goodput".to_string()
    } else {
        c.series.clone()
    };
    chart
        .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
        .map_err(e)?
        .label(name)
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    chart
        .draw_series(line.iter().map(|&p| Circle::new(p, 4, color.filled())))
        .map_err(e)?;
    chart
        .draw_series(c.points.iter().filter(|p| p.y.n > 1).map(|p| {
            ErrorBar::new_vertical(p.x, p.y.min, p.y.mean, p.y.max, color.stroke_width(1), 8)
        }))
        .map_err(e)?;
    if chosen_labels && c.points.iter().any(|p| !p.chosen.is_empty()) {
        let style = TextStyle::from(("sans-serif", 12).into_font()).color(&color);
        chart
            .draw_series(c.points.iter().filter(|p| p.y.n > 0).map(|p| {
                Text::new(
                    short(&p.chosen),
                    (p.x, p.y.mean + ymax * 0.03),
                    style.clone(),
                )
            }))
            .map_err(e)?;
    }
    Ok(())
}
