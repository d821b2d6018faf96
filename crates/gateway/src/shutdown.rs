//! SIGINT / SIGTERM handling: a flag the loops poll. A second signal exits at once.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

use crate::error::GatewayError;

/// Installs handlers for SIGINT and SIGTERM and returns the flag they set. If the flag is
/// already set when another signal arrives (the user pressed Ctrl-C twice), the process
/// exits with status 130 without cleaning up.
pub fn shutdown_flag() -> Result<Arc<AtomicBool>, GatewayError> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        flag::register_conditional_shutdown(sig, 130, stop.clone())
            .map_err(GatewayError::Signal)?;
        flag::register(sig, stop.clone()).map_err(GatewayError::Signal)?;
    }
    Ok(stop)
}
