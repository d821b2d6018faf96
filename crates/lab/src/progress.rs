//! The progress bar of long runs (stderr; hidden when stderr is not a terminal or the
//! output is JSON).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A byte-progress bar, or a hidden one.
pub fn bar(visible: bool) -> ProgressBar {
    if !visible || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    let style = ProgressStyle::with_template(
        "{prefix:>24} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} {elapsed}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}
