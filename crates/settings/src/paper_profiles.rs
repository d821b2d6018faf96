//! The base sets of the papers' own experiments ([`Policies::paper`],
//! [`Policies::karafillis`], [`Policies::mitsuzumi`]): each paper's rules and nothing the
//! project added, so that its results can be re-run as published (docs/results.md).

use crate::policies::{PAPER_WINDOW, PB_BLOCK, Policies};
use crate::policy::{
    AckPolicy, BurstSignal, CodingScheme, CoefficientTransport, CongestionRule, RepairPolicy,
    Switch,
};
use crate::redundancy::RedundancyPolicy;
use crate::window::WindowPolicy;

/// Karafillis et al.'s coding window: their ns-2 TCP/NC (Sundararajan et al. 2009) codes over
/// every un-ACKed packet, which the 100-packet receive window of their simulations bounds (§II).
pub const KARAFILLIS_WINDOW: u16 = 100;

/// Karafillis et al.'s target success rate S for R_a ("unless stated otherwise ... 90%", §II).
pub const KARAFILLIS_SUCCESS_RATE: f64 = 0.9;

/// Mitsuzumi et al.'s coding window (Table I: W = 5).
pub const MITSUZUMI_WINDOW: u16 = 5;

impl Policies {
    /// The implementation paper's rules only (Sundararajan et al. §III–IV, experiment §VI) on a
    /// path of known loss: W = [`PAPER_WINDOW`], R = [`RedundancyPolicy::for_known_loss`] (as
    /// the `experiment` set, so the two differ only in the mechanisms), dense with explicit
    /// coefficients (§III-B), the literal ACK rule (§IV-A, innovative only), no repair and none
    /// of the mechanisms of later papers or of the project.
    pub fn paper(loss: f64) -> Policies {
        Policies {
            window: PAPER_WINDOW,
            redundancy: RedundancyPolicy::Fixed(RedundancyPolicy::for_known_loss(loss)),
            scheme: CodingScheme::Dense,
            coefficients: CoefficientTransport::Explicit,
            repair: RepairPolicy::Off,
            pb_block: PB_BLOCK,
            hold_duplicates: Switch::Off,
            bitmap_signal: Switch::Off,
            absorb_retransmissions: Switch::Off,
            repair_probe: Switch::Off,
            ack_rule: AckPolicy::InnovativeOnly,
            unordering: Switch::Off,
            pause_ack: Switch::Off,
            congestion: CongestionRule::Loss,
            protect_handshake: Switch::Off,
            path_memory: Switch::Off,
            repair_budget: Switch::Off,
            tail_repair: Switch::Off,
            window_policy: WindowPolicy::Fixed,
            coalesce_acks: Switch::Off,
            burst_window: Switch::Off,
            flight_cap: Switch::Off,
            burst_signal: BurstSignal::Off,
            tail_recovery: Switch::Off,
            tail_burst: Switch::Off,
            tail_queue: Switch::Off,
            dof_ack: Switch::Off,
            systematic_when_clean: Switch::Off,
            flight_share: Switch::Off,
            queue_depth: Switch::Off,
            pacing: Switch::Off,
            burst_redundancy: Switch::Off,
            redundancy_when_alone: Switch::Off,
            probe_spread: Switch::Off,
            thin_recovery_acks: Switch::Off,
        }
    }

    /// Karafillis et al. (§II) on a path of known loss: the paper's rules with the adjusted
    /// redundancy R_a for S = 90 % ([`RedundancyPolicy::for_success_rate`] of the known loss),
    /// W = [`KARAFILLIS_WINDOW`] with seeded coefficients (so the window costs no header), and
    /// `repair` (EOT, or PB with EOT as the paper runs it) every [`PB_BLOCK`] packets.
    pub fn karafillis(loss: f64, repair: RepairPolicy) -> Policies {
        let ra = RedundancyPolicy::for_success_rate(loss, KARAFILLIS_SUCCESS_RATE);
        Policies {
            window: KARAFILLIS_WINDOW,
            redundancy: RedundancyPolicy::Fixed(ra),
            coefficients: CoefficientTransport::Seeded,
            repair,
            ..Policies::paper(loss)
        }
    }

    /// Mitsuzumi et al. (§IV, Table I) on a path of known loss: the paper's rules with
    /// W = [`MITSUZUMI_WINDOW`], the theoretical R = 1/(1 − p) (their sweep's lower end) and
    /// their ACK rule; `ack_rule = every` gives the original TCP/NC they compare with.
    pub fn mitsuzumi(loss: f64) -> Policies {
        let p = loss.clamp(0.0, 0.9);
        Policies {
            window: MITSUZUMI_WINDOW,
            redundancy: RedundancyPolicy::Fixed(1.0 / (1.0 - p)),
            ack_rule: AckPolicy::SuppressUselessRedundant,
            ..Policies::paper(loss)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_sets_switch_every_later_mechanism_off() {
        let p = Policies::paper(0.1);
        assert_eq!(p.repair, RepairPolicy::Off);
        assert_eq!(p.ack_rule, AckPolicy::InnovativeOnly);
        for s in [
            p.hold_duplicates,
            p.bitmap_signal,
            p.absorb_retransmissions,
            p.repair_probe,
            p.unordering,
            p.pause_ack,
            p.protect_handshake,
            p.path_memory,
            p.repair_budget,
            p.tail_repair,
            p.coalesce_acks,
            p.burst_window,
            p.flight_cap,
            p.tail_recovery,
            p.tail_burst,
            p.tail_queue,
            p.dof_ack,
            p.systematic_when_clean,
            p.flight_share,
            p.queue_depth,
            p.pacing,
            p.burst_redundancy,
            p.redundancy_when_alone,
            p.probe_spread,
            p.thin_recovery_acks,
        ] {
            assert_eq!(s, Switch::Off);
        }
        assert_eq!(p.burst_signal, BurstSignal::Off);
        assert_eq!(p.redundancy, Policies::paper_experiment(0.1).redundancy);
        let k = Policies::karafillis(0.1, RepairPolicy::EotPb);
        assert_eq!(k.redundancy, RedundancyPolicy::Fixed(1.16));
        assert_eq!((k.window, k.pb_block), (KARAFILLIS_WINDOW, 100));
        assert_eq!(k.hold_duplicates, Switch::Off);
        let m = Policies::mitsuzumi(0.2);
        assert_eq!(m.window, 5);
        assert_eq!(m.redundancy, RedundancyPolicy::Fixed(1.25));
        assert_eq!(m.ack_rule, AckPolicy::SuppressUselessRedundant);
    }
}
