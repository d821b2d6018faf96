//! The demo's plot: goodput against loss for each variant, with the path's C·(1−p) limit,
//! as PNG (bitmap backend, encoded with `png`) and SVG. Text uses DejaVu Sans embedded in
//! the binary (the `dejavu` crate), so no system font library is needed.

use std::path::{Path, PathBuf};

use tcpnc_plot::plotters::coord::Shift;
use tcpnc_plot::plotters::prelude::*;
use tcpnc_plot::{Figure, write_png_and_svg};

use crate::demo::{Plan, Row, VARIANTS, goodput, label};
use crate::error::{LabError, Result};

const SIZE: (u32, u32) = (960, 600);

/// The demo's figure: its plan and measured rows.
struct DemoFigure<'a> {
    plan: &'a Plan,
    rows: &'a [Row],
}

impl Figure for DemoFigure<'_> {
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
        draw(root, self.plan, self.rows)
    }
}

/// Writes `<stem>.png` and `<stem>.svg` in `dir`; returns their paths.
pub fn write_plots(plan: &Plan, rows: &[Row], dir: &Path, stem: &str) -> Result<Vec<PathBuf>> {
    write_png_and_svg(&DemoFigure { plan, rows }, dir, stem).map_err(|e| LabError::Plot {
        path: e.path,
        detail: e.detail,
    })
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plan: &Plan,
    rows: &[Row],
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let mut losses = plan.losses.clone();
    losses.sort_by(f64::total_cmp);
    let xmax = losses.last().copied().unwrap_or(0.1) * 100.0;
    let pad = (xmax * 0.05).max(0.5);
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!(
                "Kernel TCP goodput vs loss: {} Mbit/s, {} ms one way, {:.1} MB per transfer",
                plan.rate_mbit,
                plan.delay_ms,
                plan.bytes as f64 / 1e6
            ),
            ("sans-serif", 22),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(-pad..xmax + pad, 0f64..plan.rate_mbit * 1.35)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("loss on the data direction (%)")
        .y_desc("goodput (Mbit/s)")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(e)?;
    let limit: Vec<(f64, f64)> = losses
        .iter()
        .map(|p| (p * 100.0, plan.rate_mbit * (1.0 - p)))
        .collect();
    chart
        .draw_series(LineSeries::new(limit, BLACK.stroke_width(1)))
        .map_err(e)?
        .label("path limit C(1-p)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK));
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
    ];
    for (i, (mode, cc)) in VARIANTS.into_iter().enumerate() {
        let color = colors[i % colors.len()];
        let pts: Vec<(f64, f64)> = losses
            .iter()
            .filter_map(|&p| goodput(rows, mode, cc, p).map(|g| (p * 100.0, g)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(3)))
            .map_err(e)?
            .label(label(mode, cc))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(3)));
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 5, color.filled())))
            .map_err(e)?;
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)
}
