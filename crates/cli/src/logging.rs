//! Log output of `tcpnc up`: `tracing` events on stderr, one line each. Level from `RUST_LOG`
//! (any `tracing_subscriber::EnvFilter` directive) or else the config's `interface.log_level`.
//! Under systemd (`JOURNAL_STREAM` set) lines carry no timestamp and no colour: the journal
//! stamps them itself.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the subscriber; `level` applies when `RUST_LOG` is unset or invalid.
pub fn init(level: tracing::Level) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(level.as_str().to_ascii_lowercase()));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let result = if std::env::var_os("JOURNAL_STREAM").is_some() {
        builder.without_time().with_ansi(false).try_init()
    } else {
        builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init()
    };
    // Already installed (a second call): keep the first.
    let _ = result;
}
