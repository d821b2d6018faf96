//! [`Policies`]: the whole set of coding policies one engine runs with and its base sets;
//! [`PolicyOverrides`] (`policy_overrides.rs`) are the same keys as written in a config file,
//! on a command line or in a plan (absent = the base set's value).
//!
//! Adding a policy means adding a field to both structs (and a `with` line); it then
//! appears as a gateway `[coding]` key, a `tcpnc sim`/`tcpnc lab` flag, an experiment plan key,
//! and in every result's recorded settings.

use serde::{Deserialize, Serialize};

use crate::named_enum;
use crate::policy::{
    AckPolicy, BurstSignal, CodingScheme, CoefficientTransport, CongestionRule, RepairPolicy,
    Switch,
};
use crate::redundancy::RedundancyPolicy;
use crate::window::WindowPolicy;

pub use crate::policy_overrides::PolicyOverrides;

/// Largest coding window: the wire's `n` is one byte (`docs/wire.md`).
pub const MAX_CODING_WINDOW: u16 = 255;

/// The product's coding window W (gateway, lab).
///
/// W = 12: on the lab path (20 Mbit/s, 20 ms, 10 % loss, deficit repair, seeded coefficients,
/// so the header does not grow with W) ten runs gave a median of 16.0 Mbit/s with W = 12
/// against 15.2 with W = 8, whose smaller window lets random-loss excursions stall the NC ack
/// (a TCP window cut each) 4–6 times per 20 MB instead of 2–4; W = 16 hides more queue drops
/// from TCP, which then overfills the queue (docs/lab.md).
pub const PRODUCT_WINDOW: u16 = 12;

/// The simulator's coding window W (`tcpnc sim`): smoltcp sends segments of varying sizes and
/// recovers from loss more slowly than Linux; W = 16 measured best there (docs/sim.md).
pub const SIMULATOR_WINDOW: u16 = 16;

/// The implementation paper's experimental window and redundancy (Sundararajan et al. §VI:
/// W = 3, R = 1.25): the base of experiment plans and of the engine's unit tests.
pub const PAPER_WINDOW: u16 = 3;

/// See [`PAPER_WINDOW`].
pub const PAPER_REDUNDANCY: f64 = 1.25;

/// B of the PB repair: Karafillis et al. §II ("an interval (i.e., block) of 100 packets").
pub const PB_BLOCK: u32 = 100;

/// A complete set of coding policies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policies {
    /// W, the maximum coding window in packets (§III-C), `1..=255`.
    pub window: u16,
    /// R: a fixed factor or `auto` (§II-B, §V-A).
    pub redundancy: RedundancyPolicy,
    /// Dense or systematic.
    pub scheme: CodingScheme,
    /// Explicit coefficients or a seed in the header.
    pub coefficients: CoefficientTransport,
    /// Repair beyond R.
    pub repair: RepairPolicy,
    /// B of the PB repair (Karafillis §II): non-redundant combinations between two bursts.
    pub pb_block: u32,
    /// With a repair: after a stall's third duplicate ACK, duplicates within two round trips are
    /// withheld from TCP (one window cut per loss episode; docs/engine.md, deficit repair part 2).
    pub hold_duplicates: Switch,
    /// With a repair: an NC-ACK loss bitmap above the random floor gives TCP three duplicate ACKs
    /// (a congestion signal; deficit repair part 5).
    pub bitmap_signal: Switch,
    /// With a repair: a TCP retransmission of buffered bytes while NC-ACKs flow is not coded
    /// again (deficit repair part 3).
    pub absorb_retransmissions: Switch,
    /// With a repair: while packets are unacknowledged, max(N_lp, 1) repairs after two round
    /// trips without an NC-ACK — a lost stall's repairs or a tail loss (deficit repair part 4).
    pub repair_probe: Switch,
    /// Which combinations the receiver acknowledges.
    pub ack_rule: AckPolicy,
    /// Unordering adaptation (Ha & Tsuru §3.1-3.2): the sender corrects each Pid's status with later
    /// NC-ACKs (a late arrival is not a loss), the receiver measures the unordering length and
    /// leaves merely late combinations out of N_lp, and the sender widens its coding window by
    /// it.
    pub unordering: Switch,
    /// Pause-ACK (Ha & Tsuru §3.3): the receiver flags a duplicate NC-ACK that reordering
    /// explains and the sender holds it from the local TCP until a newer one arrives (at most
    /// 200 ms).
    pub pause_ack: Switch,
    /// When a loss burst becomes a congestion signal to TCP.
    pub congestion: CongestionRule,
    /// SYN and SYN-ACK sent three times, 10 ms apart (their duplicates dropped by the peer
    /// gateway, the copies not yet sent dropped once the peer answers), so a connection's
    /// start does not wait for TCP's 1 s SYN timeout on a lossy path.
    pub protect_handshake: Switch,
    /// New flows start from what earlier flows to the same peer learned of the path (loss
    /// floor, unordering length) instead of from nothing, and judge queues against the lowest
    /// round trip any of them measured.
    pub path_memory: Switch,
    /// With a repair: the repairs of all flows to one peer share a token bucket filled by what
    /// the path delivers, so many flows cannot flood it with repairs (docs/engine.md, deficit
    /// repair part 6).
    pub repair_budget: Switch,
    /// With a repair: when the local TCP pauses (a frame's end, the last flight before TCP
    /// waits), repairs so that the flight carries every missing DoF with probability 0.99
    /// (docs/engine.md, deficit repair part 7).
    pub tail_repair: Switch,
    /// Fixed W or VBNC's variable window up to W (Parejiya & Desai §II-B).
    pub window_policy: WindowPolicy,
    /// An ACK still queued (not yet polled by the driver) is replaced by a newer one of the
    /// same flow that says everything it says: NC-ACKs to the peer and TCP ACKs to the local
    /// TCP, duplicates and flagged ACKs never (docs/engine.md, "ACK coalescing").
    pub coalesce_acks: Switch,
    /// The coding window covers the path's loss bursts: at least the 99th percentile of the
    /// burst length fitted from the random loss record, plus one (issue 10 mechanism 4; a burst
    /// longer than the window stalls the seen-ACK, docs/engine.md "Burst window").
    pub burst_window: Switch,
    /// With a repair: the window given to the local TCP keeps its flight within 1.75
    /// round-trip-floor BDPs of the datagrams that arrive at the peer, over the datagrams sent
    /// per segment (issue 10 mechanism 7: kernel BBR over nc otherwise overfills the queue,
    /// docs/engine.md "Flight cap").
    pub flight_cap: Switch,
    /// With `bitmap_signal`: on a bursty path the signal also needs more losses in an NC-ACK's
    /// bitmap than the fitted Gilbert model of its random loss reaches in one bitmap of 10^4
    /// (issue 10 mechanism 4: a burst the random-loss model explains is no congestion,
    /// docs/engine.md "Burst-aware signal"); always (`on`) or while the local TCP is
    /// application-limited (`paused`, the product's; off in the paper profiles).
    pub burst_signal: BurstSignal,
    /// With the tail repair: after a pause of the local TCP, a deficit an NC-ACK reports is
    /// repaired to arrive with probability 0.99, not on average, and a round trip after the
    /// pause a flight whose NC-ACKs never came is repaired as lost (docs/engine.md, deficit
    /// repair part 8).
    pub tail_recovery: Switch,
    /// With the tail repair: a pause's repairs are also sized for the path's loss bursts (the
    /// fitted Gilbert model of its random loss losing the flight's last combinations and the
    /// repairs together), not only for its mean loss rate (docs/engine.md, deficit repair
    /// part 9).
    pub tail_burst: Switch,
    /// With the tail repair: none at a pause whose latest round trip shows a queue at the
    /// bottleneck; the queue's drops may be the loss, and repairs would add to them
    /// (docs/engine.md, deficit repair part 10). Off in the product: it costs 8 flows over a
    /// one-BDP queue at 10 % 3.5 % of goodput.
    pub tail_queue: Switch,
    /// The TCP ACK given to the local TCP counts every degree of freedom the peer holds (its
    /// rank), not only its seen prefix; packets leave the coding buffer only once seen, so a
    /// systematic code masks loss as a dense one does. Only with the deficit repair
    /// (docs/engine.md "DoF ACK").
    pub dof_ack: Switch,
    /// With the dense scheme: while a flow's record shows no random loss and no reordering,
    /// an arrival's first combination is the packet alone, as the systematic scheme sends it
    /// (nothing to mask, nothing combined; docs/engine.md "Systematic while clean").
    pub systematic_when_clean: Switch,
    /// The flight cap is shared between the flows of one peer: the path's cap is the largest
    /// of the flows' estimates, and each flow gets the larger of its equal share among the
    /// flows with something in flight and what the others leave (docs/engine.md "Flight cap
    /// shared between flows"). Off: each flow may fill the whole cap of its own estimate.
    pub flight_share: Switch,
    /// Under the queue rule, once the queue is seen to overflow: the queue evidence and the
    /// flight cap's room scaled to the deepest queue the flow has seen, so that a shallow
    /// queue's drops are not taken for random loss (docs/engine.md "A shallow queue").
    pub queue_depth: Switch,
    /// With `queue_depth`, on a shallow queue: the DATA datagrams leave at the path's measured
    /// rate, in bursts of no more than the queue holds (docs/engine.md "Pacing").
    pub pacing: Switch,
    /// R and the deficit repair's expectation of the flight's losses cover only the share of
    /// the random loss that starts a burst (the Gilbert fit's loss-event share); the rest of a
    /// burst is reported by the NC-ACKs and repaired then (docs/engine.md "Burst-aware
    /// redundancy"). Off: they cover the whole random loss rate.
    pub burst_redundancy: Switch,
    /// Advance cover only while no other flow to the same peer has something in flight:
    /// beside busy flows an adaptive R is 1, the deficit repair does not foresee the flight's
    /// losses, and a pause gets no tail repairs before the local TCP's FIN; the deficit repair
    /// answers the losses the NC-ACKs report (docs/engine.md "Advance redundancy for a lone
    /// flow"). Off: every flow covers its own loss floor in advance, busy neighbours or not.
    pub redundancy_when_alone: Switch,
    /// With `repair_probe`, beside busy flows: a probe's repairs leave one at a time, spread
    /// over a round trip, instead of back to back into a queue the other flows keep full, where
    /// all but the first were dropped (docs/engine.md "A probe's repairs spread out"). Off:
    /// they leave together.
    pub probe_spread: Switch,
    /// After a congestion signal, until the local TCP's recovery ends (its ack reaches what it
    /// had sent when signalled), the ACKs that advance reach it at most eight to a round
    /// trip: without SACK every one of them is a NewReno partial ACK and draws a
    /// retransmission, which the gateway absorbs but which takes the place of a new segment
    /// (docs/engine.md "A signal's recovery, few partial ACKs"). Off: every seen-ACK is given.
    pub thin_recovery_acks: Switch,
}

impl Default for Policies {
    /// The product's set ([`Policies::product`]).
    fn default() -> Self {
        Policies::product()
    }
}

/// A policy set that cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyError {
    /// W outside `1..=255`.
    #[error("coding window {0} outside 1..={MAX_CODING_WINDOW}")]
    Window(u16),
    /// R not a finite number in `[1, 16]`.
    #[error("redundancy {0} is not a finite number in [1, 16]")]
    Redundancy(f64),
    /// B = 0.
    #[error("pb_block must be at least 1")]
    PbBlock,
}

impl Policies {
    /// The product's set (gateway and lab defaults): W = [`PRODUCT_WINDOW`], R `auto`, dense,
    /// seeded coefficients, deficit repair, Mitsuzumi's ACK rule.
    pub const fn product() -> Policies {
        Policies {
            window: PRODUCT_WINDOW,
            redundancy: RedundancyPolicy::adaptive(),
            scheme: CodingScheme::Dense,
            coefficients: CoefficientTransport::Seeded,
            repair: RepairPolicy::Deficit,
            pb_block: PB_BLOCK,
            hold_duplicates: Switch::On,
            bitmap_signal: Switch::On,
            absorb_retransmissions: Switch::On,
            repair_probe: Switch::On,
            ack_rule: AckPolicy::SuppressUselessRedundant,
            unordering: Switch::On,
            pause_ack: Switch::On,
            congestion: CongestionRule::Queue,
            protect_handshake: Switch::On,
            path_memory: Switch::On,
            repair_budget: Switch::On,
            tail_repair: Switch::On,
            window_policy: WindowPolicy::Fixed,
            coalesce_acks: Switch::On,
            burst_window: Switch::On,
            flight_cap: Switch::On,
            burst_signal: BurstSignal::Paused,
            tail_recovery: Switch::On,
            tail_burst: Switch::On,
            tail_queue: Switch::Off,
            dof_ack: Switch::On,
            systematic_when_clean: Switch::On,
            flight_share: Switch::On,
            queue_depth: Switch::On,
            pacing: Switch::On,
            burst_redundancy: Switch::On,
            redundancy_when_alone: Switch::On,
            probe_spread: Switch::On,
            thin_recovery_acks: Switch::On,
        }
    }

    /// The simulator's set on a path whose loss rate is known (`tcpnc sim`):
    /// W = [`SIMULATOR_WINDOW`], R = [`RedundancyPolicy::for_known_loss`], the rest as the
    /// product.
    pub fn simulator(loss: f64) -> Policies {
        Policies {
            window: SIMULATOR_WINDOW,
            redundancy: RedundancyPolicy::Fixed(RedundancyPolicy::for_known_loss(loss)),
            ..Policies::product()
        }
    }

    /// The implementation paper's experiment (§VI) on a path of known loss: W =
    /// [`PAPER_WINDOW`], R = [`RedundancyPolicy::for_known_loss`], the rest as the product (the
    /// experiment plans' base).
    pub fn paper_experiment(loss: f64) -> Policies {
        Policies {
            window: PAPER_WINDOW,
            ..Policies::simulator(loss)
        }
    }

    /// The engine's unit-test base: W = [`PAPER_WINDOW`], R = [`PAPER_REDUNDANCY`], the rest as
    /// the product.
    pub const fn engine_test() -> Policies {
        Policies {
            window: PAPER_WINDOW,
            redundancy: RedundancyPolicy::Fixed(PAPER_REDUNDANCY),
            ..Policies::product()
        }
    }

    /// This set with every key `o` gives replaced.
    pub fn with(self, o: &PolicyOverrides) -> Policies {
        Policies {
            window: o.window.unwrap_or(self.window),
            redundancy: o.redundancy.unwrap_or(self.redundancy),
            scheme: o.scheme.unwrap_or(self.scheme),
            coefficients: o.coefficients.unwrap_or(self.coefficients),
            repair: o.repair.unwrap_or(self.repair),
            pb_block: o.pb_block.unwrap_or(self.pb_block),
            hold_duplicates: o.hold_duplicates.unwrap_or(self.hold_duplicates),
            bitmap_signal: o.bitmap_signal.unwrap_or(self.bitmap_signal),
            absorb_retransmissions: o
                .absorb_retransmissions
                .unwrap_or(self.absorb_retransmissions),
            repair_probe: o.repair_probe.unwrap_or(self.repair_probe),
            ack_rule: o.ack_rule.unwrap_or(self.ack_rule),
            unordering: o.unordering.unwrap_or(self.unordering),
            pause_ack: o.pause_ack.unwrap_or(self.pause_ack),
            congestion: o.congestion.unwrap_or(self.congestion),
            protect_handshake: o.protect_handshake.unwrap_or(self.protect_handshake),
            path_memory: o.path_memory.unwrap_or(self.path_memory),
            repair_budget: o.repair_budget.unwrap_or(self.repair_budget),
            tail_repair: o.tail_repair.unwrap_or(self.tail_repair),
            window_policy: o.window_policy.unwrap_or(self.window_policy),
            coalesce_acks: o.coalesce_acks.unwrap_or(self.coalesce_acks),
            burst_window: o.burst_window.unwrap_or(self.burst_window),
            flight_cap: o.flight_cap.unwrap_or(self.flight_cap),
            burst_signal: o.burst_signal.unwrap_or(self.burst_signal),
            tail_recovery: o.tail_recovery.unwrap_or(self.tail_recovery),
            tail_burst: o.tail_burst.unwrap_or(self.tail_burst),
            tail_queue: o.tail_queue.unwrap_or(self.tail_queue),
            dof_ack: o.dof_ack.unwrap_or(self.dof_ack),
            systematic_when_clean: o
                .systematic_when_clean
                .unwrap_or(self.systematic_when_clean),
            flight_share: o.flight_share.unwrap_or(self.flight_share),
            queue_depth: o.queue_depth.unwrap_or(self.queue_depth),
            pacing: o.pacing.unwrap_or(self.pacing),
            burst_redundancy: o.burst_redundancy.unwrap_or(self.burst_redundancy),
            redundancy_when_alone: o
                .redundancy_when_alone
                .unwrap_or(self.redundancy_when_alone),
            probe_spread: o.probe_spread.unwrap_or(self.probe_spread),
            thin_recovery_acks: o.thin_recovery_acks.unwrap_or(self.thin_recovery_acks),
        }
    }

    /// Checks W and R.
    pub fn validate(&self) -> Result<(), PolicyError> {
        if !(1..=MAX_CODING_WINDOW).contains(&self.window) {
            return Err(PolicyError::Window(self.window));
        }
        if !self.redundancy.is_valid() {
            return Err(PolicyError::Redundancy(self.redundancy.bound()));
        }
        if self.pb_block == 0 {
            return Err(PolicyError::PbBlock);
        }
        Ok(())
    }
}

named_enum! {
    /// A named base set of policies; the keys a user gives ([`PolicyOverrides`]) replace its
    /// values. `tcpnc sim --profile`, `tcpnc lab --profile`, plan key `profile`.
    pub enum Profile {
        /// The product's set (Policies::product), the best measured: what `tcpnc up` and
        /// `tcpnc lab` run.
        Default = "default",
        /// The simulator's set for the path's known loss (Policies::simulator): W 16.
        Simulator = "simulator",
        /// The implementation paper's experiment (§VI) for the path's known loss
        /// (Policies::paper_experiment): W 3, the product's mechanisms on.
        Experiment = "experiment",
        /// The implementation paper's rules only (Policies::paper): W 3, explicit coefficients,
        /// no repair, innovative-only ACKs, every later mechanism off.
        Paper = "paper",
        /// Karafillis et al. EOT (Policies::karafillis): the paper's rules with R_a (S 90 %) and
        /// the EOT burst.
        KarafillisEot = "karafillis-eot",
        /// Karafillis et al. PB (Policies::karafillis): as karafillis-eot with PB bursts every
        /// 100 packets.
        KarafillisPb = "karafillis-pb",
        /// Mitsuzumi et al. (Policies::mitsuzumi): the paper's rules with W 5, R = 1/(1 − p)
        /// and Mitsuzumi's ACK rule.
        Mitsuzumi = "mitsuzumi",
    }
}

impl Profile {
    /// The base set on a path whose loss rate is `loss` (used by the profiles that know it).
    pub fn policies(self, loss: f64) -> Policies {
        match self {
            Profile::Default => Policies::product(),
            Profile::Simulator => Policies::simulator(loss),
            Profile::Experiment => Policies::paper_experiment(loss),
            Profile::Paper => Policies::paper(loss),
            Profile::KarafillisEot => Policies::karafillis(loss, RepairPolicy::Eot),
            Profile::KarafillisPb => Policies::karafillis(loss, RepairPolicy::EotPb),
            Profile::Mitsuzumi => Policies::mitsuzumi(loss),
        }
    }
}

#[cfg(test)]
#[path = "policies_tests.rs"]
mod tests;
