//! Simulation configuration ([`SimConfig`]) and errors ([`SimError`]).

use std::time::Duration;

use tcpnc_link::{LinkConfig, LinkError, LossModel, LossPosition, QueueLimit};
use thiserror::Error;

/// TCP congestion control of the smoltcp endpoints: the shared vocabulary's; smoltcp has
/// `reno` (NewReno-like), `cubic` and `none`, not `bbr` ([`SimConfig::validate`]).
pub use tcpnc_proto::settings::CongestionControl;

/// Errors that prevent a simulation from running at all.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    /// A link direction is misconfigured.
    #[error("{direction} link: {source}")]
    Link {
        /// `"forward"` or `"reverse"`.
        direction: &'static str,
        /// The link's complaint.
        #[source]
        source: LinkError,
    },
    /// The IP MTU is too small for TCP or larger than an IPv4 packet.
    #[error("mtu must be in 576..=65535, got {0}")]
    Mtu(usize),
    /// Socket buffers must be non-empty and at most 1 GiB (smoltcp's limit).
    #[error("socket buffer size must be in 1..=1073741824, got {0}")]
    Buffer(usize),
    /// smoltcp has no such congestion control.
    #[error("cc {0}: smoltcp has reno, cubic and none (bbr needs kernel TCP: tcpnc lab)")]
    CongestionControl(CongestionControl),
    /// Zero bytes would make goodput meaningless.
    #[error("bytes to transfer must be > 0")]
    ZeroBytes,
}

/// Everything a bulk-transfer simulation needs. Plain data; build with
/// [`SimConfig::new`] and the `with_*` helpers, or set fields directly.
///
/// The path is: client TCP ⇄ client box ⇄ `forward` / `reverse` link ⇄ server box ⇄
/// server TCP. Data flows client → server over `forward`; ACKs return over `reverse`.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Bytes the client sends.
    pub bytes: u64,
    /// Master seed: link, data, ISN and port randomness are all derived from it.
    pub seed: u64,
    /// Congestion control of both endpoints.
    pub cc: CongestionControl,
    /// IP MTU of both endpoint interfaces (the MSS is MTU − 40).
    pub mtu: usize,
    /// Receive buffer of each socket in bytes (caps the advertised window).
    pub rx_buffer: usize,
    /// Send buffer of each socket in bytes.
    pub tx_buffer: usize,
    /// Delayed-ACK timeout of both sockets (`None` = ACK every segment at once).
    pub ack_delay: Option<Duration>,
    /// Data direction (client → server).
    pub forward: LinkConfig,
    /// ACK direction (server → client).
    pub reverse: LinkConfig,
    /// The run stops with [`crate::SimOutcome::TimeLimit`] past this virtual time.
    pub max_sim_time: Duration,
    /// Record a time series with this interval ([`crate::series::Series`]; `None`: none).
    pub series_interval: Option<Duration>,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl SimConfig {
    /// 2 MB over a symmetric 10 Mbit/s, 10 ms one-way path with a 1000-packet drop-tail
    /// queue, no loss, reno, MTU 1500, 1 MiB socket buffers, 10 ms delayed ACK, 600 s limit.
    ///
    /// The deep queue (Linux's default `txqueuelen`), large enough to hold the whole
    /// 1 MiB window, is deliberate: smoltcp has no SACK, so a slow-start overshoot into a
    /// shallow queue loses many segments of one window and recovers only through
    /// retransmission timeouts (see docs/sim.md).
    pub fn new() -> Self {
        let link = LinkConfig::new()
            .with_rate(10_000_000, 0)
            .with_delay(Duration::from_millis(10))
            .with_queue(QueueLimit::Packets(1000));
        Self {
            bytes: 2_000_000,
            seed: 1,
            cc: CongestionControl::Reno,
            mtu: 1500,
            rx_buffer: 1 << 20,
            tx_buffer: 1 << 20,
            ack_delay: Some(Duration::from_millis(10)),
            forward: link.clone(),
            reverse: link,
            max_sim_time: Duration::from_secs(600),
            series_interval: None,
        }
    }

    /// Sets the number of bytes to transfer.
    pub fn with_bytes(mut self, bytes: u64) -> Self {
        self.bytes = bytes;
        self
    }

    /// Sets the master seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the congestion control.
    pub fn with_cc(mut self, cc: CongestionControl) -> Self {
        self.cc = cc;
        self
    }

    /// Sets the bottleneck rate of both directions (pure serializer, bucket 0).
    pub fn with_rate_bps(mut self, bits_per_sec: u64) -> Self {
        self.forward = self.forward.with_rate(bits_per_sec, 0);
        self.reverse = self.reverse.with_rate(bits_per_sec, 0);
        self
    }

    /// Sets the one-way delay of both directions.
    pub fn with_delay(mut self, one_way: Duration) -> Self {
        self.forward.delay = one_way;
        self.reverse.delay = one_way;
        self
    }

    /// Sets the loss model of the data (forward) direction.
    pub fn with_forward_loss(mut self, loss: LossModel) -> Self {
        self.forward.loss = loss;
        self
    }

    /// Sets the loss model of the ACK (reverse) direction.
    pub fn with_reverse_loss(mut self, loss: LossModel) -> Self {
        self.reverse.loss = loss;
        self
    }

    /// Sets where loss is applied, in both directions.
    pub fn with_loss_position(mut self, pos: LossPosition) -> Self {
        self.forward.loss_position = pos;
        self.reverse.loss_position = pos;
        self
    }

    /// Sets the drop-tail queue limit of both directions.
    pub fn with_queue(mut self, queue: QueueLimit) -> Self {
        self.forward.queue = queue;
        self.reverse.queue = queue;
        self
    }

    /// Sets the virtual time limit.
    pub fn with_max_sim_time(mut self, limit: Duration) -> Self {
        self.max_sim_time = limit;
        self
    }

    /// Checks the configuration (links included).
    pub fn validate(&self) -> Result<(), SimError> {
        self.forward.validate().map_err(|source| SimError::Link {
            direction: "forward",
            source,
        })?;
        self.reverse.validate().map_err(|source| SimError::Link {
            direction: "reverse",
            source,
        })?;
        if !self.cc.in_simulator() {
            return Err(SimError::CongestionControl(self.cc));
        }
        if !(576..=65535).contains(&self.mtu) {
            return Err(SimError::Mtu(self.mtu));
        }
        for b in [self.rx_buffer, self.tx_buffer] {
            if b == 0 || b > 1 << 30 {
                return Err(SimError::Buffer(b));
            }
        }
        if self.bytes == 0 {
            return Err(SimError::ZeroBytes);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_errors_are_typed() {
        assert!(SimConfig::new().validate().is_ok());
        let mut c = SimConfig::new();
        c.mtu = 100;
        assert_eq!(c.validate(), Err(SimError::Mtu(100)));
        let c = SimConfig::new().with_forward_loss(LossModel::bernoulli(2.0));
        assert!(matches!(
            c.validate(),
            Err(SimError::Link {
                direction: "forward",
                ..
            })
        ));
        assert_eq!(
            SimConfig::new().with_bytes(0).validate(),
            Err(SimError::ZeroBytes)
        );
    }
}
