//! `tcpnc link`: the path emulator, a real-time UDP relay between two endpoints through two
//! seeded channel models (`tcpnc-link`), one per direction.
//!
//! * [`args`]: the `tcpnc link` flags ([`RelayArgs`], clap) and their typed argv
//!   ([`RelayArgs::to_args`]), so a driver such as the lab builds relay options as values.
//! * [`spec`]: one direction's `KEY=VALUE` settings and their [`tcpnc_link::LinkConfig`].
//! * [`channel`]: the two link models as one [`tcpnc_proto::seam::Seam`] element.
//! * [`core`]: the sans-IO relay: channel, peers, counters.
//! * [`io_loop`]: the I/O loop over two [`tcpnc_io::Udp`] sockets (real or fake).

pub mod args;
pub mod channel;
pub mod core;
pub mod error;
pub mod io_loop;
pub mod spec;

pub use args::RelayArgs;
pub use channel::Channel;
pub use core::{DirectionCounters, RelayCore, Side};
pub use error::RelayError;
pub use io_loop::{BA_SEED_XOR, Relay, RelayOptions};
