//! tcpnc link layer: seeded channel models driven by a caller-supplied clock.
//!
//! A [`Link`] is one direction of a path. It models, per packet and in this order:
//! duplication, loss before the queue (optional), a drop-tail queue feeding a token-bucket
//! rate limiter, loss after the queue (default), corruption (one flipped bit), and a fixed
//! one-way delay (fixed, or switched every δ as Ha & Tsuru §4.2) plus uniform jitter with or
//! without reordering.
//!
//! The crate is sans-IO: time is a [`std::time::Duration`] from an origin chosen by the
//! driver, passed into every call; randomness comes from a [`rng::Rng`] seeded by the
//! caller. Nothing reads a clock, sleeps, or touches the OS.
//!
//! ```
//! use std::time::Duration;
//! use tcpnc_link::{Link, LinkConfig, LossModel};
//!
//! let cfg = LinkConfig::new()
//!     .with_delay(Duration::from_millis(10))
//!     .with_rate(10_000_000, 0)
//!     .with_loss(LossModel::bernoulli(0.0));
//! let mut link = Link::new(cfg, 42).unwrap();
//! link.send(Duration::ZERO, vec![0u8; 1250]);
//! // 1250 B at 10 Mbit/s = 1 ms serialization, + 10 ms propagation.
//! assert_eq!(link.poll_timeout(), Some(Duration::from_millis(11)));
//! assert!(link.poll_deliver(Duration::from_millis(10)).is_none());
//! assert_eq!(link.poll_deliver(Duration::from_millis(11)).unwrap().len(), 1250);
//! ```

pub mod config;
pub mod delay_switch;
pub mod link;
pub mod loss;
pub mod rng;

pub use config::{
    DelaySwitch, Jitter, LinkConfig, LinkError, LossModel, LossPosition, QueueLimit, RateLimit,
};
pub use link::{Link, LinkStats};
pub use loss::LossProcess;
pub use rng::Rng;
