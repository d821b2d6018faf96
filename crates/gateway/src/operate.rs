//! The operator keys of `[interface]`: where to serve Prometheus metrics (`metrics_listen`)
//! and the log level used when `RUST_LOG` is not set (`log_level`). See `docs/deploy.md`.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::{ConfigError, parse_sockaddr};

/// The conventional port of the metrics server in the examples (`127.0.0.1:9617`).
pub const EXAMPLE_METRICS_PORT: u16 = 9617;

/// Log level of the gateway when neither `RUST_LOG` nor `log_level` is given: one line per
/// notable event (peer up/down, flow opened/closed), nothing per packet.
pub const DEFAULT_LOG_LEVEL: tracing::Level = tracing::Level::INFO;

/// Directory of named configurations: `tcpnc up NAME` reads `CONFIG_DIR/NAME.toml`.
pub const CONFIG_DIR: &str = "/etc/tcpnc";
/// Environment variable that replaces [`CONFIG_DIR`] (tests, non-standard installs).
pub const CONFIG_DIR_ENV: &str = "TCPNC_CONFIG_DIR";

/// The file `tcpnc up ARG` reads: ARG itself when it names a path (contains `/` or ends in
/// `.toml`), else `CONFIG_DIR/ARG.toml` (as `wg-quick up NAME` reads
/// `/etc/wireguard/NAME.conf`). The systemd unit `tcpnc@NAME.service` runs `tcpnc up NAME`.
pub fn config_path(arg: &str) -> PathBuf {
    if arg.contains('/') || arg.ends_with(".toml") {
        return PathBuf::from(arg);
    }
    let dir =
        std::env::var_os(CONFIG_DIR_ENV).map_or_else(|| PathBuf::from(CONFIG_DIR), PathBuf::from);
    dir.join(format!("{arg}.toml"))
}

/// Validated operator keys.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Operate {
    /// `interface.metrics_listen`: serve `/metrics` here (none: no server).
    pub metrics_listen: Option<SocketAddr>,
    /// `interface.log_level`: `error`, `warn`, `info`, `debug` or `trace`.
    pub log_level: Option<tracing::Level>,
}

impl Operate {
    /// Checks the raw keys, naming the key in every error.
    pub fn validate(
        metrics_listen: Option<String>,
        log_level: Option<String>,
    ) -> Result<Operate, ConfigError> {
        let metrics_listen = match metrics_listen {
            None => None,
            Some(s) => {
                let addr = parse_sockaddr("interface.metrics_listen", &s)?;
                if addr.port() == 0 {
                    return Err(ConfigError::invalid(
                        "interface.metrics_listen",
                        format!("'{s}' needs a port, e.g. 127.0.0.1:{EXAMPLE_METRICS_PORT}"),
                    ));
                }
                Some(addr)
            }
        };
        let log_level = match log_level {
            None => None,
            Some(s) => Some(s.trim().parse::<tracing::Level>().map_err(|_| {
                ConfigError::invalid(
                    "interface.log_level",
                    format!("'{s}' is not one of error, warn, info, debug, trace"),
                )
            })?),
        };
        Ok(Operate {
            metrics_listen,
            log_level,
        })
    }

    /// The level to log at: `log_level`, or [`DEFAULT_LOG_LEVEL`].
    pub fn level(&self) -> tracing::Level {
        self.log_level.unwrap_or(DEFAULT_LOG_LEVEL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_resolve_in_the_config_dir() {
        assert_eq!(config_path("./site.toml"), PathBuf::from("./site.toml"));
        assert_eq!(config_path("site.toml"), PathBuf::from("site.toml"));
        assert_eq!(config_path("/x/y"), PathBuf::from("/x/y"));
        if std::env::var_os(CONFIG_DIR_ENV).is_none() {
            assert_eq!(config_path("site"), PathBuf::from("/etc/tcpnc/site.toml"));
        }
    }

    #[test]
    fn accepts_and_rejects_with_the_key() {
        let ok = Operate::validate(Some("127.0.0.1:9617".into()), Some("debug".into())).unwrap();
        assert_eq!(ok.metrics_listen, Some("127.0.0.1:9617".parse().unwrap()));
        assert_eq!(ok.level(), tracing::Level::DEBUG);
        assert_eq!(
            Operate::validate(None, None).unwrap().level(),
            DEFAULT_LOG_LEVEL
        );
        let e = Operate::validate(Some("localhost:9617".into()), None).unwrap_err();
        assert_eq!(e.key(), Some("interface.metrics_listen"));
        let e = Operate::validate(Some("127.0.0.1:0".into()), None).unwrap_err();
        assert_eq!(e.key(), Some("interface.metrics_listen"));
        let e = Operate::validate(None, Some("loud".into())).unwrap_err();
        assert_eq!(e.key(), Some("interface.log_level"));
    }
}
