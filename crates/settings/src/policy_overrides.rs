//! [`PolicyOverrides`]: the policy keys as a user writes them (a gateway `[coding]` table,
//! `tcpnc sim`/`tcpnc lab` flags, an experiment plan), each optional, applied to a base set of
//! [`Policies`] by [`Policies::with`].

use serde::{Deserialize, Serialize};

use crate::policies::Policies;
use crate::policy::{
    AckPolicy, BurstSignal, CodingScheme, CoefficientTransport, CongestionRule, RepairPolicy,
    Switch,
};
use crate::redundancy::RedundancyPolicy;
use crate::window::WindowPolicy;

/// The policy keys as written by a user: a gateway `[coding]` table, `tcpnc sim`/`tcpnc lab`
/// flags, an experiment plan. Every key is optional; absent keys keep the base set's value
/// ([`Policies::with`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct PolicyOverrides {
    /// Coding window W in packets, 1..=255 (§III-C). Default: the profile's (12 for the
    /// product's, the gateway's and the lab's; 16 for the simulator's; 3 for the experiment's).
    #[cfg_attr(feature = "clap", arg(long, value_name = "W"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u16>,
    /// Redundancy R: coded packets per TCP segment on average (§II-B), a number in [1, 16], or
    /// "auto" (R follows the gateway's own loss estimate, 1/(1-p) + 0.1p, at most 2), or "ra:S"
    /// (Karafillis' R_a for a success rate S of the estimated loss, e.g. ra:0.9). Default: the
    /// profile's (auto for the product's; 1/(1-p) + 0.03 + 0.3p of a known loss p for the
    /// simulator's and the experiment's; R_a for S 0.9 of it in the Karafillis profiles).
    #[cfg_attr(feature = "clap", arg(long, value_name = "R|auto|ra:S"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redundancy: Option<RedundancyPolicy>,
    /// Coding scheme. Default: dense.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<CodingScheme>,
    /// How coefficients travel. Default: seeded.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coefficients: Option<CoefficientTransport>,
    /// Repair beyond R: deficit, off, or Karafillis' eot, pb, eot_pb. Default: deficit (the
    /// paper profiles: off, eot, eot_pb).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairPolicy>,
    /// B, non-redundant combinations between two PB bursts (Karafillis §II). Default: 100.
    #[cfg_attr(feature = "clap", arg(long, value_name = "B"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pb_block: Option<u32>,
    /// With a repair: withhold a loss episode's later duplicate ACKs from TCP. Default: on
    /// (off in the paper profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_duplicates: Option<Switch>,
    /// With a repair: congestion signal to TCP from the NC-ACK loss bitmap. Default: on (off in
    /// the paper profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitmap_signal: Option<Switch>,
    /// With a repair: TCP retransmissions not coded while NC-ACKs flow. Default: on (off in the
    /// paper profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absorb_retransmissions: Option<Switch>,
    /// With a repair: repairs after two round trips without an NC-ACK while packets are
    /// unacknowledged (tail loss too). Default: on (off in the paper profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_probe: Option<Switch>,
    /// The receiver's ACK rule. Default: mitsuzumi.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_rule: Option<AckPolicy>,
    /// Unordering adaptation: late arrivals corrected, the unordering length measured and
    /// coded around (Ha & Tsuru §3.1-3.2). Default: on.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unordering: Option<Switch>,
    /// Pause-ACK: duplicate NC-ACKs explained by reordering held from TCP (Ha & Tsuru §3.3).
    /// Default: on.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_ack: Option<Switch>,
    /// When loss becomes a congestion signal to TCP: "loss" (more than the random floor) or
    /// "queue" (that, with the round trip above its floor and half-way to its recent peak; the
    /// random floor is then measured only while no queue builds). Default: queue.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion: Option<CongestionRule>,
    /// SYN and SYN-ACK sent three times, 10 ms apart (until the peer answers), duplicates
    /// dropped at the peer. Default: on.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect_handshake: Option<Switch>,
    /// New flows start from the path's known loss floor and reordering (the unordering length
    /// the peer reports, the reordering measured on arrivals), and judge queues against the
    /// path's lowest round trip. Default: on.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_memory: Option<Switch>,
    /// Repairs of all flows to a peer share a token bucket filled by the path's deliveries
    /// (a fixed share per delivered combination plus what the random loss floor needs).
    /// Default: on.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_budget: Option<Switch>,
    /// With a repair: repairs when the local TCP pauses, so a frame's or a flight's last
    /// combinations are covered without waiting for the next ones. Default: on (off in the paper
    /// profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_repair: Option<Switch>,
    /// Coding window: "fixed" (always W) or "vbnc" (Parejiya's variable window, at most W:
    /// starts at 1, follows the local TCP's window, halves above a 100 ms round trip).
    /// Default: fixed.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_policy: Option<WindowPolicy>,
    /// A queued NC-ACK or synthesised TCP ACK is replaced by a newer one of the same flow that
    /// covers it (only ACKs that pile up between two polls of the driver: at high rates one
    /// per flush and flow instead of one per combination); duplicates and flagged ACKs are
    /// never replaced. Default: on (off in the paper profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesce_acks: Option<Switch>,
    /// The coding window widens to cover the path's loss bursts (the 99th percentile of the
    /// burst length fitted from the random loss record, plus one, at most 64), so a burst does
    /// not stall the seen-ACK. Default: on (off in the paper profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_window: Option<Switch>,
    /// With a repair: the window given to the local TCP caps its flight at 1.75 × the datagram
    /// arrival rate at the peer (all flows, while the bottleneck is busy, the highest of ten
    /// round trips) × the round-trip floor, over the datagrams sent per segment, so a TCP that
    /// overestimates the path (kernel BBR) cannot overfill its queue. Default: on (off in the
    /// paper profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flight_cap: Option<Switch>,
    /// With the bitmap signal: on a bursty path a loss bitmap is congestion only above what the
    /// fitted Gilbert model of the path's random loss reaches in one bitmap of 10^4 (a loss
    /// burst the random loss explains cuts no window): on, off, or paused (only while the
    /// local TCP is application-limited, e.g. a stream between frames). Default: paused (off
    /// in the paper profiles; docs/engine.md).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_signal: Option<BurstSignal>,
    /// With the tail repair: after a pause of the local TCP, a deficit an NC-ACK reports is
    /// repaired to arrive with probability 0.99 together with what is in flight (not on
    /// average), and a round trip after the pause a flight none of whose NC-ACKs came back is
    /// repaired as lost. Default: on (off in the paper profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_recovery: Option<Switch>,
    /// With the tail repair: a pause's repairs are sized for the path's loss bursts as well
    /// (the fitted Gilbert model of the random loss losing the flight's last combinations and
    /// the repairs together), not only for its mean loss rate. Default: on (off in the paper
    /// profiles).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_burst: Option<Switch>,
    /// With the tail repair: none at a pause whose latest round trip shows a queue at the
    /// bottleneck (many flows through a shallow queue each pause between segments, and the
    /// repairs fed the queue's drops). Default: off (it costs 8 flows over a one-BDP queue at
    /// 10 % 3.5 % of goodput; on for many flows through a shallow queue).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_queue: Option<Switch>,
    /// The TCP ACK given to the local TCP counts every degree of freedom the peer holds (the
    /// NC-ACK's echoed frame, less its N_lp and unordering length), not only its seen prefix;
    /// packets leave the coding buffer only once seen. With it a systematic code masks loss as
    /// a dense one does. Acts only with `repair = deficit`: without a repair that answers N_lp
    /// the local TCP's retransmission is the only repair, and the DoF ACK would stop it.
    /// Default: on (off in the paper profiles; docs/engine.md "DoF ACK").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dof_ack: Option<Switch>,
    /// With the dense scheme: while a flow's record shows no random loss and no reordering (a
    /// clean path), each new packet is sent alone, uncoded, as the systematic scheme sends it;
    /// dense combinations start with the first loss or late arrival. Default: on (off in the
    /// paper profiles; docs/engine.md "Systematic while clean").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub systematic_when_clean: Option<Switch>,
    /// The flight cap (`flight_cap`) shared between the flows of one peer: each flow's cap is
    /// the larger of its equal share among the flows with something in flight and what the
    /// others leave, so many flows together keep within what the path holds. Default: on (off
    /// in the paper profiles; docs/engine.md "Flight cap shared between flows").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flight_share: Option<Switch>,
    /// Under the queue rule, once the queue is seen to overflow: the queue evidence and the
    /// flight cap's room scaled to the deepest queue seen, so that a shallow queue's drops are
    /// congestion, not random loss. Default: on (off in the paper profiles; docs/engine.md "A
    /// shallow queue").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<Switch>,
    /// On a shallow queue (`queue_depth`), DATA datagrams leave at the path's measured rate, in
    /// bursts of no more than three quarters of the queue. Default: on (off in the paper
    /// profiles; docs/engine.md "Pacing").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<Switch>,
    /// R and the deficit repair's expectation of the flight's losses cover only the share of
    /// the random loss that starts a burst (the Gilbert fit's loss-event share: 1 for
    /// independent loss, 0.26 for bursts of 4 at 5 %); the NC-ACKs report the rest of a burst
    /// and the deficit repair answers it. Default: on (off in the paper profiles;
    /// docs/engine.md "Burst-aware redundancy").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_redundancy: Option<Switch>,
    /// Advance cover only while no other flow to the same peer has something in flight.
    /// Several flows through one bottleneck queue take its drops into their loss records, and
    /// cover sized for them went out in the quiet periods between the queue's overflows, where
    /// nothing was missing; beside busy flows an adaptive R is 1, the deficit repair does not
    /// foresee the flight's losses, a pause gets no tail repairs before the TCP's FIN, and the
    /// deficit repair answers the losses reported. Default: on (off in the paper profiles;
    /// docs/engine.md "Advance redundancy for a lone flow").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redundancy_when_alone: Option<Switch>,
    /// With the repair probe, beside busy flows: the probe's repairs leave one at a time,
    /// spread over a round trip. Sent back to back into a queue that the other flows keep
    /// full, all but the first of them were dropped, and a flow whose tail was lost waited for
    /// TCP's backed-off timer (100 flows on the lab). Default: on (off in the paper profiles;
    /// docs/engine.md "A probe's repairs spread out").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_spread: Option<Switch>,
    /// After a congestion signal, until the local TCP's recovery ends, the ACKs that advance
    /// reach it at most eight to a round trip: without SACK each is a NewReno partial ACK that
    /// draws a retransmission, absorbed here but taking the place of a new segment (kernel
    /// BBR over nc took up to 100 a signal). Default: on (off in the paper profiles;
    /// docs/engine.md "A signal's recovery, few partial ACKs").
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thin_recovery_acks: Option<Switch>,
}

impl From<Policies> for PolicyOverrides {
    /// Every key given: applied to any base set, gives `p`.
    fn from(p: Policies) -> Self {
        PolicyOverrides {
            window: Some(p.window),
            redundancy: Some(p.redundancy),
            scheme: Some(p.scheme),
            coefficients: Some(p.coefficients),
            repair: Some(p.repair),
            pb_block: Some(p.pb_block),
            hold_duplicates: Some(p.hold_duplicates),
            bitmap_signal: Some(p.bitmap_signal),
            absorb_retransmissions: Some(p.absorb_retransmissions),
            repair_probe: Some(p.repair_probe),
            ack_rule: Some(p.ack_rule),
            unordering: Some(p.unordering),
            pause_ack: Some(p.pause_ack),
            congestion: Some(p.congestion),
            protect_handshake: Some(p.protect_handshake),
            path_memory: Some(p.path_memory),
            repair_budget: Some(p.repair_budget),
            tail_repair: Some(p.tail_repair),
            window_policy: Some(p.window_policy),
            coalesce_acks: Some(p.coalesce_acks),
            burst_window: Some(p.burst_window),
            flight_cap: Some(p.flight_cap),
            burst_signal: Some(p.burst_signal),
            tail_recovery: Some(p.tail_recovery),
            tail_burst: Some(p.tail_burst),
            tail_queue: Some(p.tail_queue),
            dof_ack: Some(p.dof_ack),
            systematic_when_clean: Some(p.systematic_when_clean),
            flight_share: Some(p.flight_share),
            queue_depth: Some(p.queue_depth),
            pacing: Some(p.pacing),
            burst_redundancy: Some(p.burst_redundancy),
            redundancy_when_alone: Some(p.redundancy_when_alone),
            probe_spread: Some(p.probe_spread),
            thin_recovery_acks: Some(p.thin_recovery_acks),
        }
    }
}

impl PolicyOverrides {
    /// The keys, in the order of the struct (plan keys, CSV columns).
    pub const KEYS: [&'static str; 35] = [
        "window",
        "redundancy",
        "scheme",
        "coefficients",
        "repair",
        "pb_block",
        "hold_duplicates",
        "bitmap_signal",
        "absorb_retransmissions",
        "repair_probe",
        "ack_rule",
        "unordering",
        "pause_ack",
        "congestion",
        "protect_handshake",
        "path_memory",
        "repair_budget",
        "tail_repair",
        "window_policy",
        "coalesce_acks",
        "burst_window",
        "flight_cap",
        "burst_signal",
        "tail_recovery",
        "tail_burst",
        "tail_queue",
        "dof_ack",
        "systematic_when_clean",
        "flight_share",
        "queue_depth",
        "pacing",
        "burst_redundancy",
        "redundancy_when_alone",
        "probe_spread",
        "thin_recovery_acks",
    ];
}
