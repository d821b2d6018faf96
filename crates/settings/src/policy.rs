//! The engine's coding policies as data: coding scheme, coefficient transport, repair and the
//! receiver's ACK rule. Each is one switch, written with the same word in the gateway config
//! (`[coding]`), on the command line (`tcpnc sim`, `tcpnc lab`), in experiment plans and in
//! result JSON.

use tcpnc_wire::CoefficientMode;

use crate::named_enum;

named_enum! {
    /// How the first combination of an arrival is formed.
    pub enum CodingScheme {
        /// Every combination is a random linear combination of the coding window (§II-B).
        Dense = "dense",
        /// The new segment is first sent uncoded (SYSTEMATIC flag); the others are dense.
        Systematic = "systematic",
    }
}

impl Default for CodingScheme {
    /// Dense: the implementation paper's scheme; systematic was not measurably better on the
    /// lab path (docs/lab.md).
    fn default() -> Self {
        CodingScheme::Dense
    }
}

named_enum! {
    /// How the coefficient vector of a dense combination travels.
    pub enum CoefficientTransport {
        /// One byte per combined packet (Sundararajan et al. §III-B, α_i).
        Explicit = "explicit",
        /// A 32-bit seed for the codec's specified generator (Parejiya et al.; docs/prng.md).
        Seeded = "seeded",
    }
}

impl Default for CoefficientTransport {
    /// Seeded: the header does not grow with W, so a wider window costs no payload
    /// (docs/lab.md: MSS 1404 at W 12).
    fn default() -> Self {
        CoefficientTransport::Seeded
    }
}

impl CoefficientTransport {
    /// The wire mode of a dense combination (`docs/wire.md`).
    pub const fn wire_mode(self) -> CoefficientMode {
        match self {
            CoefficientTransport::Explicit => CoefficientMode::Explicit,
            CoefficientTransport::Seeded => CoefficientMode::Seeded,
        }
    }
}

named_enum! {
    /// Combinations sent beyond the redundancy R: which repair the sender runs. The project's
    /// mechanisms that complement a repair (withheld duplicates, bitmap congestion signal,
    /// retransmission absorption, repair probe) are separate switches
    /// ([`crate::Policies::hold_duplicates`] and the next three); they run only with a repair
    /// (`off` turns them off too, as before they were separate).
    pub enum RepairPolicy {
        /// Deficit repair (docs/engine.md): on each NC-ACK, whole-buffer combinations for the
        /// lost degrees of freedom (N_lp) the flight will not cover.
        Deficit = "deficit",
        /// Redundancy R only (the implementation paper's scheme): no repair.
        Off = "off",
        /// Karafillis et al. §II, End of Transmission: on the local TCP's FIN, N_lp (the latest
        /// NC-ACK's lost DoFs) whole-buffer combinations beside the final packet's.
        Eot = "eot",
        /// Karafillis et al. §II, Pseudo-Block without EOT: N_lp whole-buffer combinations after
        /// every `pb_block` non-redundant combinations.
        Pb = "pb",
        /// Karafillis et al. §II, Pseudo-Block as the paper runs it: PB bursts and the EOT burst.
        EotPb = "eot_pb",
    }
}

impl Default for RepairPolicy {
    /// Deficit: the lab's 10 % loss target is met only with it (docs/lab.md).
    fn default() -> Self {
        RepairPolicy::Deficit
    }
}

impl RepairPolicy {
    /// Whether NC-ACKs trigger deficit repairs.
    pub fn repairs_deficit(self) -> bool {
        matches!(self, RepairPolicy::Deficit)
    }

    /// Whether any repair runs (and with it the switches that complement a repair).
    pub fn repairs(self) -> bool {
        !matches!(self, RepairPolicy::Off)
    }

    /// Whether the local TCP's FIN triggers an EOT burst of N_lp repairs (Karafillis §II).
    pub fn burst_on_fin(self) -> bool {
        matches!(self, RepairPolicy::Eot | RepairPolicy::EotPb)
    }

    /// Whether every `pb_block` non-redundant combinations trigger a PB burst of N_lp repairs
    /// (Karafillis §II).
    pub fn burst_per_block(self) -> bool {
        matches!(self, RepairPolicy::Pb | RepairPolicy::EotPb)
    }
}

named_enum! {
    /// Which received combinations the receiver half answers with an NC-ACK.
    ///
    /// * Sundararajan et al. §IV-A: an *innovative* combination is answered with an NC-ACK
    ///   requesting the first byte of the first unseen packet; a non-innovative one "is dropped".
    /// * Mitsuzumi et al. §III: the sender flags combinations beyond the first of an arrival as
    ///   REDUNDANT; the sink never ACKs a *useless redundant* combination (its duplicate ACK
    ///   would trigger a false fast retransmit) but always ACKs a *useless non-redundant* one
    ///   (a TCP retransmission after lost NC-ACKs; not answering it leaves the connection stuck).
    ///
    /// ACKs sent for a non-innovative combination carry the DEPENDENT flag (Ha & Tsuru Table 1).
    pub enum AckPolicy {
        /// The paper's literal rule (§IV-A): ACK innovative combinations only. After a loss of
        /// every NC-ACK of a window the TCP retransmission is never answered.
        InnovativeOnly = "innovative",
        /// Original TCP/NC as measured by Mitsuzumi et al. (Fig. 3): every combination is
        /// answered, useless ones with a duplicate ACK.
        EveryCombination = "every",
        /// Mitsuzumi et al.'s rule: ACK innovative combinations and useless non-redundant ones;
        /// never ACK a useless redundant one.
        SuppressUselessRedundant = "mitsuzumi",
    }
}

impl Default for AckPolicy {
    /// Mitsuzumi's rule: no false fast retransmits from redundancy, no stuck connection.
    fn default() -> Self {
        AckPolicy::SuppressUselessRedundant
    }
}

/// What to do with one received combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AckDecision {
    /// Send an NC-ACK (the combination was innovative).
    Ack,
    /// Send an NC-ACK with the DEPENDENT flag (a useless combination that must be answered).
    AckDependent,
    /// Send nothing.
    Suppress,
}

impl AckPolicy {
    /// The decision for a combination that was `innovative` or not and carried the REDUNDANT
    /// flag or not.
    pub fn decide(self, innovative: bool, redundant: bool) -> AckDecision {
        if innovative {
            return AckDecision::Ack;
        }
        match self {
            AckPolicy::InnovativeOnly => AckDecision::Suppress,
            AckPolicy::EveryCombination => AckDecision::AckDependent,
            AckPolicy::SuppressUselessRedundant if redundant => AckDecision::Suppress,
            AckPolicy::SuppressUselessRedundant => AckDecision::AckDependent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        for s in CodingScheme::ALL {
            assert_eq!(s.name().parse::<CodingScheme>(), Ok(*s));
        }
        for a in AckPolicy::ALL {
            assert_eq!(a.to_string().parse::<AckPolicy>(), Ok(*a));
        }
        let e = "fancy".parse::<RepairPolicy>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "'fancy' is not one of \"deficit\", \"off\", \"eot\", \"pb\", \"eot_pb\""
        );
        for r in RepairPolicy::ALL {
            assert_eq!(r.name().parse::<RepairPolicy>(), Ok(*r));
        }
    }

    #[test]
    fn serde_uses_the_words() {
        assert_eq!(
            serde_json::to_string(&AckPolicy::SuppressUselessRedundant).unwrap(),
            "\"mitsuzumi\""
        );
        let s: CoefficientTransport = serde_json::from_str("\"explicit\"").unwrap();
        assert_eq!(s, CoefficientTransport::Explicit);
        let e = serde_json::from_str::<CodingScheme>("\"sparse\"").unwrap_err();
        assert!(e.to_string().contains("\"dense\", \"systematic\""), "{e}");
    }

    #[test]
    fn ack_rules() {
        use AckDecision::*;
        for p in AckPolicy::ALL {
            assert_eq!(p.decide(true, true), Ack);
            assert_eq!(p.decide(true, false), Ack);
        }
        assert_eq!(AckPolicy::InnovativeOnly.decide(false, false), Suppress);
        assert_eq!(
            AckPolicy::EveryCombination.decide(false, true),
            AckDependent
        );
        let m = AckPolicy::SuppressUselessRedundant;
        assert_eq!(m.decide(false, true), Suppress);
        assert_eq!(m.decide(false, false), AckDependent);
    }
}

named_enum! {
    /// A mechanism switched on or off (the Ha & Tsuru mechanisms and the project's own,
    /// docs/engine.md).
    pub enum Switch {
        /// The mechanism runs.
        On = "on",
        /// The mechanism is off: the engine behaves as without it.
        Off = "off",
    }
}

impl Switch {
    /// Whether the mechanism runs.
    pub const fn is_on(self) -> bool {
        matches!(self, Switch::On)
    }
}

named_enum! {
    /// When the bitmap congestion signal judges a loss bitmap against the path's fitted loss
    /// bursts instead of the binomial threshold alone (docs/engine.md, "Burst-aware signal").
    pub enum BurstSignal {
        /// Always: a bitmap is congestion only above what the fitted Gilbert model of the
        /// path's random loss reaches in one bitmap of 10^4.
        On = "on",
        /// While the local TCP is application-limited (within the last two round trips it
        /// left an advancing ACK unanswered with room in its window: a stream between frames,
        /// a request-response flow): such a flow keeps no standing queue, so a burst its fit
        /// explains is the path's, not congestion.
        Paused = "paused",
        /// Never: the binomial threshold alone.
        Off = "off",
    }
}

named_enum! {
    /// When the sender tells the local TCP about congestion (three duplicate ACKs) while
    /// repairs keep the NC ack moving (docs/engine.md, "Congestion signal").
    pub enum CongestionRule {
        /// An NC-ACK's loss bitmap shows more losses than the random loss floor explains.
        Loss = "loss",
        /// The same, and the combination round trip is above its floor by 1/8 and by half of
        /// its recent peak (a queue near the height at which it overflows): a burst of random
        /// loss with no such queue behind it is repaired, not signalled; the random loss floor
        /// (R, the repair budget, the signal's threshold) is measured only while no queue builds.
        Queue = "queue",
    }
}

impl Default for CongestionRule {
    /// Queue evidence: Gilbert-Elliott bursts no longer cut TCP's window (docs/lab.md).
    fn default() -> Self {
        CongestionRule::Queue
    }
}
