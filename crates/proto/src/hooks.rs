//! Policy hooks for the later issues, each with its base behaviour implemented here.
//!
//! * [`RepairPolicy`]: combinations beyond the redundancy R, sized by the receiver's N_lp:
//!   the deficit repair on every NC-ACK (`repair.rs`, the default), and the hooks for bursts at
//!   the end of transmission (EOT) or every B source packets (PB; Karafillis et al. §II step 3),
//!   which no variant uses yet.
//! * [`AckHoldPolicy`]: holding a duplicate ACK flagged PAUSE up to 200 ms at the sender's
//!   gateway, dropped when a newer ACK arrives (Ha & Tsuru §3.3).
//! * [`WindowPolicy`]: the coding window W per combination (adaptive W: Parejiya et al.; widening
//!   by the unordering length: Ha & Tsuru §3.2).
//!
//! The engine calls every hook at the point where the full policy will act, so adding a variant
//! changes no engine code path.

use std::time::Duration;

use tcpnc_wire::AckRepr;

/// Repair bursts beyond the redundancy accumulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum RepairPolicy {
    /// No repair burst (Sundararajan et al.: redundancy only).
    Off,
    /// Deficit repair (`repair.rs`): on each NC-ACK, whole-buffer combinations for the N_lp
    /// that the combinations in flight will not cover.
    #[default]
    Deficit,
}

impl RepairPolicy {
    /// Extra combinations (FLUSH flag) to send when the local TCP's FIN enters the coding
    /// buffer, given the receiver's latest N_lp.
    pub fn burst_on_fin(&self, _lost_dof: u16) -> u32 {
        match self {
            RepairPolicy::Off | RepairPolicy::Deficit => 0,
        }
    }

    /// Whether NC-ACKs trigger deficit repairs.
    pub fn repairs_deficit(&self) -> bool {
        matches!(self, RepairPolicy::Deficit)
    }

    /// Extra combinations to send after the `sources`-th source packet of a flow.
    pub fn burst_after_source(&self, _sources: u64, _lost_dof: u16) -> u32 {
        match self {
            RepairPolicy::Off | RepairPolicy::Deficit => 0,
        }
    }
}

/// Treatment of NC-ACKs before they become TCP ACKs for the local sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AckHoldPolicy {
    /// Every NC-ACK becomes a TCP ACK at once (Sundararajan et al.).
    #[default]
    Immediate,
}

impl AckHoldPolicy {
    /// `Some(d)`: hold this ACK for up to `d` (dropped if a newer ACK arrives meanwhile);
    /// `None`: deliver it now.
    pub fn hold(&self, _ack: &AckRepr, _duplicate: bool) -> Option<Duration> {
        match self {
            AckHoldPolicy::Immediate => None,
        }
    }
}

/// Inputs an adaptive coding window may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WindowInputs {
    /// Bytes sent and not yet acknowledged.
    pub bytes_in_flight: u64,
    /// The peer's latest advertised window, bytes.
    pub peer_window: u32,
    /// Latest unordering length reported by the peer.
    pub unordering: u16,
}

/// How W is chosen for each combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum WindowPolicy {
    /// The configured W (Sundararajan et al. §III-C).
    #[default]
    Fixed,
}

impl WindowPolicy {
    /// The coding window for the next combination, at most `configured`.
    pub fn window(&self, configured: usize, _inputs: &WindowInputs) -> usize {
        match self {
            WindowPolicy::Fixed => configured,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use tcpnc_wire::FlowId;

    #[test]
    fn base_behaviour() {
        assert_eq!(RepairPolicy::Off.burst_on_fin(7), 0);
        assert_eq!(RepairPolicy::Off.burst_after_source(100, 7), 0);
        let ack = AckRepr {
            flow: FlowId::v4(Ipv4Addr::LOCALHOST, 1, Ipv4Addr::LOCALHOST, 2),
            ack: 1,
            window: 1,
            pid_echo: 1,
            loss_bitmap: 0,
            lost_dof: 0,
            unordering: 0,
            redundant: false,
            dependent: None,
            pause: true,
            update: false,
        };
        assert_eq!(AckHoldPolicy::Immediate.hold(&ack, true), None);
        let inputs = WindowInputs {
            bytes_in_flight: 10_000,
            peer_window: 1,
            unordering: 5,
        };
        assert_eq!(WindowPolicy::Fixed.window(4, &inputs), 4);
    }
}
