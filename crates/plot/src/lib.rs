//! The plumbing every tcpnc figure shares: the same drawing rendered to a PNG (plotters'
//! bitmap backend, encoded with `png`) and to an SVG, with text in DejaVu Sans embedded in the
//! binary (the `dejavu` crate), so no system font library is needed.
//!
//! A figure implements [`Figure`] once, generically over the drawing backend;
//! [`write_png_and_svg`] renders it twice.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

pub use plotters;

/// The size in pixels (width, height) of a figure that does not choose its own.
pub const FIGURE_SIZE: (u32, u32) = (900, 560);

/// A drawing that can be rendered on any plotters backend.
pub trait Figure {
    /// Size in pixels (width, height); [`FIGURE_SIZE`] unless the figure says otherwise.
    fn size(&self) -> (u32, u32) {
        FIGURE_SIZE
    }
    /// Draws the whole figure on `root`; errors are described in text.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static;
}

/// A figure that could not be written: which file, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError {
    /// The file being written.
    pub path: PathBuf,
    /// What went wrong.
    pub detail: String,
}

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot write plot {}: {}",
            self.path.display(),
            self.detail
        )
    }
}

impl std::error::Error for PlotError {}

static FONT: Once = Once::new();

/// Registers the embedded DejaVu Sans as plotters' "sans-serif" (once per process).
pub fn register_font() {
    FONT.call_once(|| {
        // The embedded font is a valid TTF; a failure would only lose the text.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// Writes `<stem>.png` and `<stem>.svg` of `figure` in `dir`; returns their paths.
pub fn write_png_and_svg(
    figure: &impl Figure,
    dir: &Path,
    stem: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    register_font();
    let size = figure.size();
    let png_path = dir.join(format!("{stem}.png"));
    let svg_path = dir.join(format!("{stem}.svg"));
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |detail: String| PlotError { path, detail }
    };
    let mut rgb = vec![0u8; (size.0 as usize) * (size.1 as usize) * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        figure.draw(&root).map_err(fail(&png_path))?;
    }
    write_png(&png_path, &rgb, size).map_err(fail(&png_path))?;
    {
        let root = SVGBackend::new(&svg_path, size).into_drawing_area();
        figure.draw(&root).map_err(fail(&svg_path))?;
    }
    Ok(vec![png_path, svg_path])
}

fn write_png(path: &Path, rgb: &[u8], size: (u32, u32)) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), size.0, size.1);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Best);
    let mut w = enc.write_header().map_err(|e| e.to_string())?;
    w.write_image_data(rgb).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Square;

    impl Figure for Square {
        fn size(&self) -> (u32, u32) {
            (40, 30)
        }
        fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>
        where
            DB::ErrorType: 'static,
        {
            root.fill(&WHITE).map_err(|e| e.to_string())?;
            root.draw(&Text::new("x", (5, 5), ("sans-serif", 12)))
                .map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())
        }
    }

    #[test]
    fn writes_a_decodable_png_and_an_svg_with_text() {
        let dir = std::env::temp_dir().join(format!("tcpnc-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths = write_png_and_svg(&Square, &dir, "square").unwrap();
        let png_bytes = std::fs::read(&paths[0]).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (40, 30));
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        assert!(svg.contains("<svg") && svg.contains("<text"), "{svg}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_directory_names_the_file() {
        let err = write_png_and_svg(&Square, Path::new("/nonexistent/dir"), "s").unwrap_err();
        assert!(err.path.ends_with("s.png"));
    }
}
