//! The relay's error type.

use thiserror::Error;

/// Errors from starting or running the relay.
#[derive(Debug, Error)]
pub enum RelayError {
    /// A socket could not be bound.
    #[error(transparent)]
    Bind(#[from] tcpnc_io::BindError),
    /// A direction's link model refused its configuration.
    #[error("{direction} link model: {source}")]
    Model {
        /// `"a->b"` or `"b->a"`.
        direction: &'static str,
        /// The model's complaint.
        source: tcpnc_link::LinkError,
    },
    /// A socket failed while running.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}
