//! Engine configuration and its validation.
//!
//! Every knob of the paper (Sundararajan et al. §III–V: coding window W, redundancy R, buffer
//! sizes) plus the engine's own limits (flows, queues, timers). Every buffer and queue of the
//! engine is bounded by a field of [`Limits`]; every drop is counted in
//! [`EngineStats`](crate::EngineStats).

use std::time::Duration;

use tcpnc_wire::{CoefficientMode, IpVersion, RangeForm};

pub use tcpnc_settings::{
    AckPolicy, BurstSignal, CodingScheme, CoefficientTransport, CongestionRule, Policies,
    RedundancyPolicy, RepairPolicy, Switch, WindowPolicy,
};

/// Largest coding window: the wire's `n` is one byte (`docs/wire.md`).
pub const MAX_CODING_WINDOW: usize = tcpnc_settings::MAX_CODING_WINDOW as usize;

/// Bytes of the TCP subheader assumed when clamping the MSS: a 20-byte TCP header without
/// options, minus the 4 bytes of ports that travel in the flow identity (§III-A).
pub const SUBHEADER_LEN_ASSUMED: usize = 16;

/// Windows of up to this many packets of any lengths always fit the clamped MSS
/// ([`EngineConfig::mss_clamp`]).
pub const CONTIGUOUS_RESERVE: usize = 8;

/// Smallest MSS the engine accepts to derive from the tunnel MTU.
pub const MIN_MSS: usize = 64;

/// Bounds of every buffer and queue of the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Packets per flow in the coding buffer (§III-D; the paper's experiment used 100).
    pub coding_buffer_packets: usize,
    /// Bytes (subheader + payload) per flow in the coding buffer.
    pub coding_buffer_bytes: usize,
    /// Decoding buffer per flow in bytes of sequence space: bounds the advertised window
    /// (§IV-D) and the decoded-but-unconfirmed segments kept for redelivery (§IV-C).
    pub decoding_buffer_bytes: usize,
    /// Undecoded rows and tracked symbols per flow in the decoder (the paper used 100).
    pub decoding_buffer_packets: usize,
    /// Flows tracked at once; beyond it, new connections are forwarded uncoded (BYPASS).
    pub max_flows: usize,
    /// Datagrams waiting for [`Engine::poll_transmit`](crate::Engine::poll_transmit).
    pub transmit_queue: usize,
    /// IP packets waiting for [`Engine::poll_local`](crate::Engine::poll_local).
    pub local_queue: usize,
    /// Events waiting for [`Engine::poll_event`](crate::Engine::poll_event).
    pub event_queue: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            coding_buffer_packets: 256,
            coding_buffer_bytes: 1 << 20,
            decoding_buffer_bytes: 1 << 20,
            decoding_buffer_packets: 1024,
            max_flows: 1024,
            transmit_queue: 4096,
            local_queue: 4096,
            event_queue: 1024,
        }
    }
}

/// Configuration of an [`Engine`](crate::Engine).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// `false`: the baseline — every packet is forwarded uncoded in a BYPASS frame over the same
    /// tunnel, without rewriting.
    pub coding: bool,
    /// The coding policies (the shared vocabulary, `tcpnc_settings::Policies`): W, R, scheme,
    /// coefficients, repair and its switches, the ACK rule, the Ha & Tsuru mechanisms, the
    /// window policy. Recorded with every result as they are.
    pub policies: Policies,
    /// Largest datagram (UDP payload) the tunnel carries; the MSS is clamped from it.
    pub tunnel_mtu: usize,
    /// Buffer and queue bounds.
    pub limits: Limits,
    /// A flow with no packet in either direction for this long is forgotten.
    pub idle_timeout: Duration,
    /// A flow whose both directions finished (FIN acknowledged) is forgotten after this long.
    pub closed_linger: Duration,
    /// A decoded segment delivered to the local TCP and not acknowledged by it within this
    /// time is delivered again (§IV-C "delivery can be confirmed using the receiver TCP's ACKs").
    pub redelivery_timeout: Duration,
    /// Timer-driven redeliveries of one segment (backoff doubling); afterwards only the local
    /// TCP's ack reaching the segment triggers a redelivery (counted when the timer stops).
    pub max_redeliveries: u32,
}

/// Copies of a SYN or SYN-ACK sent with handshake protection: at 10 % independent loss all
/// three are lost once in a thousand handshakes instead of once in ten.
pub const HANDSHAKE_COPIES: usize = 3;

/// Time between a SYN's or SYN-ACK's protection copies (the first goes at once): long enough
/// that each copy meets a drop-tail queue or a loss burst afresh and that a hundred
/// connections' copies drain between waves (one wave of 100 SYNs is 4 ms at 20 Mbit/s), short
/// against TCP's 1 s SYN timeout. `engine/handshake_copies.rs`.
pub const HANDSHAKE_COPY_SPACING: Duration = Duration::from_millis(10);

/// A SYN or SYN-ACK from the peer with the ISN of one delivered less than this long ago is a
/// protection copy (TCP's own retransmission comes after its 1 s SYN timeout).
pub const HANDSHAKE_DEDUPE: Duration = Duration::from_millis(200);

// Every copy of a handshake packet arrives within the dedupe time of the first one delivered
// (with 100 ms to spare for jitter).
const _: () = assert!(
    HANDSHAKE_COPY_SPACING.as_millis() * (HANDSHAKE_COPIES as u128 - 1) + 100
        <= HANDSHAKE_DEDUPE.as_millis()
);

impl Default for EngineConfig {
    /// [`EngineConfig::new`] of the engine's unit-test base set ([`Policies::engine_test`]:
    /// the implementation paper's W = 3, R = 1.25) over a 1472-byte tunnel (a 1500-byte path
    /// less outer IPv4 and UDP).
    fn default() -> Self {
        EngineConfig::new(&Policies::engine_test(), 1472)
    }
}

impl EngineConfig {
    /// An engine that codes with `policies` over a tunnel carrying datagrams of up to
    /// `tunnel_mtu` bytes, with the default limits and timers.
    pub fn new(policies: &Policies, tunnel_mtu: usize) -> Self {
        EngineConfig {
            coding: true,
            policies: *policies,
            tunnel_mtu,
            limits: Limits::default(),
            idle_timeout: Duration::from_secs(300),
            closed_linger: Duration::from_secs(4),
            redelivery_timeout: Duration::from_millis(200),
            max_redeliveries: 8,
        }
    }

    /// W, the maximum coding window in packets (§III-C).
    pub fn coding_window(&self) -> usize {
        usize::from(self.policies.window)
    }
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// W outside `1..=255`.
    #[error("coding window {0} outside 1..={MAX_CODING_WINDOW}")]
    CodingWindow(usize),
    /// R not a finite number in `[1, 16]`.
    #[error("redundancy {0} is not a finite number in [1, 16]")]
    Redundancy(f64),
    /// The tunnel MTU leaves less than [`MIN_MSS`] bytes of TCP payload.
    #[error("tunnel MTU {mtu} leaves an MSS of {mss} bytes (< {MIN_MSS}) at W = {window}")]
    TunnelMtu {
        /// The configured MTU.
        mtu: usize,
        /// The coding window.
        window: usize,
        /// The MSS that would result (may be negative).
        mss: i64,
    },
    /// A limit that must be positive is zero.
    #[error("limit `{0}` must be positive")]
    ZeroLimit(&'static str),
    /// A timer that must be positive is zero.
    #[error("duration `{0}` must be positive")]
    ZeroDuration(&'static str),
}

impl EngineConfig {
    /// Checks every field; [`Engine::new`](crate::Engine::new) calls it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let p = &self.policies;
        if !(1..=MAX_CODING_WINDOW).contains(&self.coding_window()) {
            return Err(ConfigError::CodingWindow(self.coding_window()));
        }
        if !p.redundancy.is_valid() {
            return Err(ConfigError::Redundancy(p.redundancy.bound()));
        }
        if p.pb_block == 0 {
            return Err(ConfigError::ZeroLimit("pb_block"));
        }
        let mss = self.mss_clamp(IpVersion::V6);
        if mss < MIN_MSS as i64 {
            return Err(ConfigError::TunnelMtu {
                mtu: self.tunnel_mtu,
                window: self.coding_window(),
                mss,
            });
        }
        let l = &self.limits;
        for (name, v) in [
            ("coding_buffer_packets", l.coding_buffer_packets),
            ("coding_buffer_bytes", l.coding_buffer_bytes),
            ("decoding_buffer_bytes", l.decoding_buffer_bytes),
            ("decoding_buffer_packets", l.decoding_buffer_packets),
            ("max_flows", l.max_flows),
            ("transmit_queue", l.transmit_queue),
            ("local_queue", l.local_queue),
            ("event_queue", l.event_queue),
        ] {
            if v == 0 {
                return Err(ConfigError::ZeroLimit(name));
            }
        }
        for (name, d) in [
            ("idle_timeout", self.idle_timeout),
            ("closed_linger", self.closed_linger),
            ("redelivery_timeout", self.redelivery_timeout),
        ] {
            if d.is_zero() {
                return Err(ConfigError::ZeroDuration(name));
            }
        }
        Ok(())
    }

    /// The MSS the SYN rewrite clamps to for a flow of IP version `ip`: the tunnel MTU minus the
    /// DATA header at n = W (the largest one, §III-B) minus the TCP subheader
    /// ([`SUBHEADER_LEN_ASSUMED`]). May be negative for an invalid configuration.
    ///
    /// The header is sized so that every window of W packets of equal length (UNIFORM range
    /// form, 8 bytes) fits, and every window of up to [`CONTIGUOUS_RESERVE`] packets of any
    /// lengths (CONTIGUOUS form, 2n + 4 bytes). A bulk TCP sender sends MSS-sized segments, so
    /// its windows are uniform (the newest packet may be shorter) and use the full W; a window
    /// holding a shorter packet earlier is shrunk by the sender until it fits (`sender.rs`),
    /// never below CONTIGUOUS_RESERVE packets. Reserving the contiguous form for all W packets
    /// cost 2W − 4 bytes of every segment; reserving only the uniform one let a sender with
    /// varying segment sizes (smoltcp in the simulator) shrink its windows to two packets, and
    /// goodput at 10 % loss fell from 7.9 to 5.7 Mbit/s (docs/sim.md).
    pub fn mss_clamp(&self, ip: IpVersion) -> i64 {
        let mode = self.policies.coefficients.wire_mode();
        let window = self.coding_window();
        let reserve = window.min(CONTIGUOUS_RESERVE);
        let form_of = |n: usize| match n {
            1 => RangeForm::Gapped,
            2 => RangeForm::Contiguous,
            _ => RangeForm::Uniform,
        };
        let widest = form_of(window);
        let header = tcpnc_wire::data_header_len(window, mode, ip, widest)
            .max(tcpnc_wire::data_header_len(
                reserve,
                mode,
                ip,
                if reserve >= 2 {
                    RangeForm::Contiguous
                } else {
                    RangeForm::Gapped
                },
            ))
            .max(tcpnc_wire::header_overhead(
                1,
                CoefficientMode::Systematic,
                ip,
            ));
        self.tunnel_mtu as i64 - header as i64 - SUBHEADER_LEN_ASSUMED as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid() {
        EngineConfig::default().validate().unwrap();
    }

    #[test]
    fn rejects_bad_fields() {
        let mut c = EngineConfig {
            policies: Policies {
                window: 0,
                ..Policies::engine_test()
            },
            ..EngineConfig::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::CodingWindow(0)));
        c.policies.window = 256;
        assert!(c.validate().is_err());
        c.policies.window = 3;
        c.policies.redundancy = RedundancyPolicy::Fixed(0.5);
        assert!(matches!(c.validate(), Err(ConfigError::Redundancy(_))));
        c.policies.redundancy = RedundancyPolicy::Fixed(f64::NAN);
        assert!(matches!(c.validate(), Err(ConfigError::Redundancy(_))));
        c.policies.redundancy = RedundancyPolicy::Fixed(1.0);
        c.tunnel_mtu = 100;
        assert!(matches!(c.validate(), Err(ConfigError::TunnelMtu { .. })));
        c.tunnel_mtu = 1472;
        c.limits.max_flows = 0;
        assert_eq!(c.validate(), Err(ConfigError::ZeroLimit("max_flows")));
        c.limits.max_flows = 1;
        c.redelivery_timeout = Duration::ZERO;
        assert_eq!(
            c.validate(),
            Err(ConfigError::ZeroDuration("redelivery_timeout"))
        );
    }

    #[test]
    fn mss_clamp_follows_header_overhead() {
        let mut c = EngineConfig {
            policies: Policies {
                window: 4,
                coefficients: CoefficientTransport::Explicit,
                ..Policies::engine_test()
            },
            tunnel_mtu: 1400,
            ..EngineConfig::default()
        };
        // IPv4 explicit, W = 4 within the contiguous reserve: 16 + 12 (flow) + (2n + 4) + n =
        // 44 bytes of DATA header, 16 bytes of subheader; IPv6 flows are 24 bytes longer.
        assert_eq!(c.mss_clamp(IpVersion::V4), 1400 - 44 - 16);
        assert_eq!(c.mss_clamp(IpVersion::V6), 1400 - 68 - 16);
        // Seeded, W = 64: 8 packets in the contiguous form (20 + 4 seed) outweigh 64 in the
        // uniform one (8 + 4).
        c.policies.coefficients = CoefficientTransport::Seeded;
        c.policies.window = 64;
        assert_eq!(c.mss_clamp(IpVersion::V4), 1400 - 52 - 16);
        // Explicit, W = 64: the 64 coefficient bytes of the uniform window dominate.
        c.policies.coefficients = CoefficientTransport::Explicit;
        assert_eq!(c.mss_clamp(IpVersion::V4), 1400 - (28 + 8 + 64) - 16);
        // W = 1: the gapped form of one packet.
        c.policies.coefficients = CoefficientTransport::Seeded;
        c.policies.window = 1;
        assert_eq!(c.mss_clamp(IpVersion::V4), 1400 - 38 - 16);
    }
}
