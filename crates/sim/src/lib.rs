//! tcpnc sim layer: deterministic virtual-time bulk transfers between two smoltcp TCP
//! endpoints across a path of boxes ([`tcpnc_proto::seam::Seam`] elements) and
//! [`tcpnc_link::Link`] models.
//!
//! ```text
//! client iface ⇄ client box ⇄ forward link (data) / reverse link (ACKs) ⇄ server box ⇄ server iface
//! ```
//!
//! Everything is driven by a virtual clock starting at zero; all randomness derives from
//! [`SimConfig::seed`], so the same configuration gives an identical [`SimReport`].
//! Nothing here reads a real clock or touches the OS.
//!
//! ```
//! use std::time::Duration;
//! use tcpnc_sim::{SimConfig, SimOutcome, run};
//!
//! let cfg = SimConfig::new()
//!     .with_bytes(200_000)
//!     .with_rate_bps(10_000_000)
//!     .with_delay(Duration::from_millis(5));
//! let report = run(&cfg).unwrap();
//! assert_eq!(report.outcome, SimOutcome::Completed);
//! assert!(report.integrity_ok);
//! ```

pub mod app;
pub mod config;
mod endpoint;
pub mod event_loop;
pub mod nc_box;
pub mod report;
pub mod run_spec;
pub mod series;
pub mod stream;
pub mod stream_run;
pub mod tcp_counters;

pub use config::{CongestionControl, SimConfig, SimError};
pub use event_loop::{counter_map, run, run_with_boxes, run_workload};
pub use nc_box::NcBox;
pub use report::{SimOutcome, SimReport};
pub use tcp_counters::TcpCounters;
pub use tcpnc_link;
pub use tcpnc_proto::seam::{PassThrough, Seam};
