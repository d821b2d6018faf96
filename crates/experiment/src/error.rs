//! The experiment runner's typed errors.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong while planning, running, summarising or plotting.
#[derive(Debug, Error)]
pub enum ExperimentError {
    /// The plan file is not valid TOML or has a bad or unknown key.
    #[error("plan {path}: {detail}")]
    Plan {
        /// The plan file (or `<inline>`).
        path: PathBuf,
        /// What is wrong, naming the key.
        detail: String,
    },
    /// A combination of settings is out of range or unsupported by the backend.
    #[error("point {point}: {detail}")]
    Invalid {
        /// The swept values of the point.
        point: String,
        /// Why.
        detail: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The results CSV does not match this plan's columns.
    #[error("{path}: {detail} (use --fresh to start over, or another --out)")]
    Journal {
        /// The CSV file.
        path: PathBuf,
        /// What does not match.
        detail: String,
    },
    /// A backend could not run a point at all (not a failed run: those are recorded).
    #[error("{backend} backend: {detail}")]
    Backend {
        /// `sim` or `lab`.
        backend: String,
        /// Why.
        detail: String,
    },
    /// A plot could not be drawn.
    #[error("plot {path}: {detail}")]
    Plot {
        /// The output file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
}

/// Result with [`ExperimentError`].
pub type Result<T> = std::result::Result<T, ExperimentError>;

impl ExperimentError {
    /// A file error for `path`.
    pub fn file(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ExperimentError {
        let path = path.into();
        move |source| ExperimentError::File { path, source }
    }
}
