//! Which received combinations the receiver half answers with an NC-ACK.
//!
//! * Sundararajan et al. §IV-A: every combination is Gaussian-eliminated; an *innovative* one
//!   makes the decoder see a new packet (or at least adds a degree of freedom) and is answered
//!   with an NC-ACK requesting the first byte of the first unseen packet. A non-innovative one
//!   "is dropped".
//! * Mitsuzumi et al. §III: the sender flags combinations sent beyond the first one of an arrival
//!   as REDUNDANT; the sink never ACKs a *useless redundant* combination (its duplicate ACK would
//!   trigger a false fast retransmit) but always ACKs a *useless non-redundant* one: such a
//!   combination comes from a TCP retransmission of data the sink already saw, which happens when
//!   NC-ACKs were lost; not answering it leaves the connection stuck ("non-communication state").
//!
//! ACKs sent for a non-innovative combination carry the DEPENDENT flag (Ha & Tsuru Table 1).

/// The acknowledgement rule of the receiver half.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AckPolicy {
    /// The paper's literal rule (§IV-A): ACK innovative combinations only. Caveat: after a loss of
    /// every NC-ACK of a window, the TCP retransmission is non-innovative and is never answered;
    /// the connection then depends on new data to recover. Kept for reproducing the paper.
    InnovativeOnly,
    /// Original TCP/NC as measured by Mitsuzumi et al. (Fig. 3): every received combination is
    /// answered, useless ones with a duplicate ACK.
    EveryCombination,
    /// Mitsuzumi et al.'s rule, the default: ACK innovative combinations and useless
    /// non-redundant ones; never ACK a useless redundant one.
    #[default]
    SuppressUselessRedundant,
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
    fn innovative_is_always_acked() {
        for p in [
            AckPolicy::InnovativeOnly,
            AckPolicy::EveryCombination,
            AckPolicy::SuppressUselessRedundant,
        ] {
            assert_eq!(p.decide(true, false), AckDecision::Ack);
            assert_eq!(p.decide(true, true), AckDecision::Ack);
        }
    }

    #[test]
    fn useless_combinations() {
        use AckDecision::*;
        assert_eq!(AckPolicy::InnovativeOnly.decide(false, false), Suppress);
        assert_eq!(AckPolicy::InnovativeOnly.decide(false, true), Suppress);
        assert_eq!(
            AckPolicy::EveryCombination.decide(false, true),
            AckDependent
        );
        assert_eq!(
            AckPolicy::EveryCombination.decide(false, false),
            AckDependent
        );
        let m = AckPolicy::SuppressUselessRedundant;
        assert_eq!(m.decide(false, true), Suppress);
        assert_eq!(m.decide(false, false), AckDependent);
        assert_eq!(AckPolicy::default(), m);
    }
}
