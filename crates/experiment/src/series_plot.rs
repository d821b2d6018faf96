//! Time-series figures of a plan (`[plot] series_y`): Karafillis et al. Figs. 2–3 draw the
//! instantaneous decoding throughput (decoded packets per 0.1 s, §II "Collecting Data") of NC,
//! NC + EOT and NC + PB over the transfer, one figure per loss rate, all on the same seed. The
//! runner keeps one repetition's series per point as `<out>/series/<point>.csv` (the columns
//! of `tcpnc sim --series`); here every point of one x value becomes a line of one figure,
//! `<name>-series-<x>.png` and `.svg`, named by its series (the varying keys other than x).

use std::path::{Path, PathBuf};

use tcpnc_plot::plotters::coord::Shift;
use tcpnc_plot::plotters::prelude::*;
use tcpnc_plot::{Figure, write_png_and_svg};
use tcpnc_sim::series::SIM_SERIES_COLUMNS;

use crate::error::{ExperimentError, Result};
use crate::plan::{Plan, label};
use crate::plot::COLORS;
use crate::summary::Summary;

const SIZE: (u32, u32) = (1000, 520);

/// Where the series of runs are kept, inside the output directory.
pub const SERIES_DIR: &str = "series";

/// The series columns a plan may draw (every column of `tcpnc sim --series` but the time).
pub fn series_columns() -> Vec<&'static str> {
    SIM_SERIES_COLUMNS
        .iter()
        .skip(1)
        .map(|c| c.name())
        .collect()
}

/// A file-name form of `s`: letters, digits, `.` and `-` kept, anything else `_`.
pub(crate) fn slug(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' => c,
            _ => '_',
        })
        .collect();
    if out.is_empty() { "point".into() } else { out }
}

/// The kept series of the point labelled `label`.
pub fn series_file(out_dir: &Path, label: &str) -> PathBuf {
    out_dir
        .join(SERIES_DIR)
        .join(format!("{}.csv", slug(label)))
}

/// Writes one run's series CSV for the point labelled `label`.
pub fn keep_series(out_dir: &Path, label: &str, csv: &str) -> Result<()> {
    let path = series_file(out_dir, label);
    let dir = out_dir.join(SERIES_DIR);
    std::fs::create_dir_all(&dir).map_err(ExperimentError::file(&dir))?;
    std::fs::write(&path, csv).map_err(ExperimentError::file(&path))
}

/// (time, value of `column`) of every row of a series CSV; `None` if the column is absent.
fn parse_series(csv: &str, column: &str) -> Option<Vec<(f64, f64)>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next()?.split(',').collect();
    let t = header.iter().position(|h| *h == "t_s")?;
    let c = header.iter().position(|h| *h == column)?;
    Some(
        lines
            .filter_map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                Some((cells.get(t)?.parse().ok()?, cells.get(c)?.parse().ok()?))
            })
            .collect(),
    )
}

/// A named line: (time, value) per interval.
type Line = (String, Vec<(f64, f64)>);

/// One figure: the lines of the points sharing one x value.
struct SeriesFigure<'a> {
    title: String,
    y_desc: &'a str,
    lines: Vec<Line>,
}

impl Figure for SeriesFigure<'_> {
    fn size(&self) -> (u32, u32) {
        SIZE
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let pts = self.lines.iter().flat_map(|(_, p)| p.iter());
        let tmax = pts.clone().map(|p| p.0).fold(0.1f64, f64::max);
        let ymax = pts.map(|p| p.1).fold(1e-6f64, f64::max);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(18)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..tmax * 1.02, 0f64..ymax * 1.12)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("time since connect (s)")
            .y_desc(self.y_desc)
            .label_style(("sans-serif", 14))
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.15))
            .draw()
            .map_err(e)?;
        let n = self.lines.len();
        for (i, (name, points)) in self.lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            // Earlier lines wider, so that where two curves are the same (NC and NC + EOT
            // until the FIN) both stay visible.
            let width = (n - i).clamp(1, 3) as u32;
            // A step per interval: the value holds from the interval's start to its end.
            let dt = points.get(1).map_or(0.1, |p| p.0 - points[0].0);
            let steps: Vec<(f64, f64)> = points
                .iter()
                .flat_map(|&(t, y)| [(t, y), (t + dt, y)])
                .collect();
            chart
                .draw_series(LineSeries::new(steps, color.mix(0.85).stroke_width(width)))
                .map_err(e)?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .label_font(("sans-serif", 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(e)?;
        root.present().map_err(e)
    }
}

/// A compact x value for titles and file names (`5`, `0.25`, `1e+06` style avoided).
fn x_text(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Draws the kept series of `plan` (`[plot] series_y`), one figure per x value of its
/// points; points without a kept series are left out. Returns the files written.
pub fn write_series_plots(plan: &Plan, s: &Summary, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let Some(column) = plan.plot.series_y.as_deref() else {
        return Ok(Vec::new());
    };
    let xi = crate::params::keys()
        .iter()
        .position(|k| *k == plan.x)
        .unwrap_or(0);
    let mut figures: Vec<(f64, Vec<Line>)> = Vec::new();
    for pt in &plan.points {
        let x = pt.params.cells()[xi].parse::<f64>().unwrap_or(f64::NAN) * plan.plot.x_scale;
        let Ok(csv) = std::fs::read_to_string(series_file(out_dir, &pt.label)) else {
            continue;
        };
        let Some(points) = parse_series(&csv, column) else {
            continue;
        };
        let name = match label(&pt.params, &s.series_keys) {
            n if n.is_empty() => pt.label.clone(),
            n => n,
        };
        match figures.iter_mut().find(|(fx, _)| fx.total_cmp(&x).is_eq()) {
            Some((_, lines)) => lines.push((name, points)),
            None => figures.push((x, vec![(name, points)])),
        }
    }
    let x_desc = plan.plot.x_label.as_deref().unwrap_or(plan.x);
    let y_desc = plan.plot.series_y_label.as_deref().unwrap_or(column);
    let mut files = Vec::new();
    for (x, lines) in figures {
        let fig = SeriesFigure {
            title: format!(
                "{}: {x_desc} {}, repetition {}",
                plan.title,
                x_text(x),
                plan.plot.series_repetition
            ),
            y_desc,
            lines,
        };
        let stem = format!("{}-series-{}", plan.name, slug(&x_text(x)));
        files.extend(write_png_and_svg(&fig, out_dir, &stem).map_err(|e| {
            ExperimentError::Plot {
                path: e.path,
                detail: e.detail,
            }
        })?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_csv_parses_by_column() {
        let csv = "t_s,decoded_packets,decoded_pps\n0.000,3,30\n0.100,0,0\nbad\n";
        let v = parse_series(csv, "decoded_pps").unwrap();
        assert_eq!(v, vec![(0.0, 30.0), (0.1, 0.0)]);
        assert!(parse_series(csv, "cwnd").is_none());
        assert_eq!(slug("loss=0.1 NC + PB"), "loss_0.1_NC___PB");
        assert_eq!(x_text(10.0), "10");
        assert_eq!(x_text(0.25), "0.25");
        assert!(series_columns().contains(&"decoded_pps"));
        assert!(!series_columns().contains(&"t_s"));
    }
}
