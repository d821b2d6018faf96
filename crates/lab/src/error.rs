//! The lab's typed errors.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong in the lab.
#[derive(Debug, Error)]
pub enum LabError {
    /// Not running as root.
    #[error("tcpnc lab needs root (network namespaces, veth, TUN); run it with sudo or as root")]
    NotRoot,
    /// A system command could not be started or failed.
    #[error("`{cmd}` failed: {detail}")]
    Command {
        /// The command line.
        cmd: String,
        /// Exit status and stderr, or the spawn error.
        detail: String,
    },
    /// A system call failed.
    #[error("{what}: {source}")]
    Os {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Something did not become ready in time.
    #[error("timed out after {secs:.1} s waiting for {what}{log}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// Seconds waited.
        secs: f64,
        /// Tail of the relevant log, if any (starts with a newline).
        log: String,
    },
    /// A child process exited early or misbehaved.
    #[error("{what}{log}")]
    Child {
        /// What happened.
        what: String,
        /// Tail of its log (starts with a newline).
        log: String,
    },
    /// A child's report could not be understood.
    #[error("cannot parse the report of {who}: {detail}")]
    Report {
        /// Which process.
        who: String,
        /// Why.
        detail: String,
    },
    /// An invalid setting.
    #[error("invalid setting: {0}")]
    Invalid(String),
    /// A transfer failed inside the source or sink.
    #[error("{0}")]
    Transfer(String),
    /// The plot could not be drawn.
    #[error("plot {path}: {detail}")]
    Plot {
        /// Output file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// Interrupted by a signal (cleanup was done).
    #[error("interrupted")]
    Interrupted,
}

impl LabError {
    /// An [`LabError::Os`] from the last OS error.
    pub fn last_os(what: impl Into<String>) -> Self {
        LabError::Os {
            what: what.into(),
            source: std::io::Error::last_os_error(),
        }
    }

    /// A [`LabError::File`].
    pub fn file(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        LabError::File {
            path: path.into(),
            source,
        }
    }
}

/// Result alias of the lab.
pub type Result<T> = std::result::Result<T, LabError>;

impl LabError {
    /// A timeout whose length was not known where it was raised, with `limit` filled in.
    pub fn with_timeout(self, limit: std::time::Duration) -> LabError {
        match self {
            LabError::Timeout {
                what,
                secs: 0.0,
                log,
            } => LabError::Timeout {
                what,
                secs: limit.as_secs_f64(),
                log,
            },
            e => e,
        }
    }
}
