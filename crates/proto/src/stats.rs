//! Counters of the engine and per-flow snapshots.
//!
//! Every per-packet problem (malformed input, a full buffer or queue, an unknown flow) is counted
//! here instead of being returned as an error: `handle_*` never fail.

use std::collections::BTreeMap;

use tcpnc_wire::FlowId;

/// Counters of one flow (both halves), keyed in [`EngineStats::flows`] by the flow's identity
/// in the local → remote direction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Data-bearing segments from the local TCP (payload or FIN).
    pub segments_from_local: u64,
    /// Packets inserted in the coding buffer (after dedupe and split, §III-A).
    pub packets_buffered: u64,
    /// Packets the coding buffer dropped because it was full (§III-D).
    pub coding_buffer_drops: u64,
    /// DATA frames sent (all combinations).
    pub data_sent: u64,
    /// DATA frames sent with the REDUNDANT flag.
    pub redundant_sent: u64,
    /// Of those, deficit repairs (whole-buffer combinations, `repair.rs`).
    pub repairs_sent: u64,
    /// Local TCP retransmissions of buffered bytes not coded again because NC-ACKs were
    /// flowing and the deficit repair covers them (`repair.rs`).
    pub retransmissions_absorbed: u64,
    /// Repair probes: repairs sent because NC-ACKs stopped while DoFs were missing.
    pub repair_probes: u64,
    /// Of the repair probes' repairs, those that left one at a time after the first
    /// (`probe_spread`, `sender/probe.rs`).
    pub spread_repairs: u64,
    /// Tail repairs: repairs sent when the local TCP paused (`tail_repair.rs`).
    pub tail_repairs: u64,
    /// Deficit repairs asked for beyond the mean's count while the local TCP was paused
    /// (`tail_recovery`, `sender/tail.rs`).
    pub pause_repairs: u64,
    /// Repairs sent by tail probes: a round trip after a pause, for a flight whose NC-ACKs
    /// never came (`tail_recovery`, `sender/tail.rs`).
    pub tail_probes: u64,
    /// Of the tail repairs and tail probes' repairs, the extras sized for the path's loss
    /// bursts, beyond the binomial rule's count (`tail_burst`, `tail_repair.rs`).
    pub burst_repairs: u64,
    /// Repairs the deficit asked for and the peer's repair budget refused
    /// (`repair_budget.rs`).
    pub repairs_over_budget: u64,
    /// Deficit repairs sent beyond the repair budget because the local TCP was held by the
    /// peer's window, or resending old segments only, with a whole coding window lost
    /// (`SenderHalf::held_repairs`).
    pub held_repairs: u64,
    /// Duplicate NC-ACKs not given to the local TCP: same loss episode as a signal already
    /// given (`SenderHalf::hold_duplicate`).
    pub dup_acks_held: u64,
    /// Congestion signals given to the local TCP (three duplicate ACKs) because an NC-ACK's
    /// loss bitmap showed more loss than the random floor (`repair.rs`).
    pub congestion_signals: u64,
    /// ACKs that advance withheld from the local TCP in a signal's recovery (each would have
    /// drawn a retransmission; `thin_recovery_acks`, `sender/recovery.rs`).
    pub recovery_acks_withheld: u64,
    /// R in use after the latest NC-ACK, × 1000 (follows the loss estimate with the adaptive
    /// redundancy policy).
    pub redundancy_permille: u64,
    /// NC-ACKs received from the peer for our data.
    pub acks_received: u64,
    /// TCP ACKs synthesised for the local sender and given to it (queued).
    pub tcp_acks_synthesized: u64,
    /// Of those, duplicates (same ack number as the previous one): losses visible to TCP.
    pub dup_acks_synthesized: u64,
    /// TCP ACKs synthesised that took the place of a queued one of the flow that had not left
    /// yet (`coalesce_acks`): each is one fewer ACK for the local TCP.
    pub tcp_acks_coalesced: u64,
    /// Packets in the coding buffer now.
    pub coding_buffer_len: usize,
    /// Latest loss rate estimated from the Pid bitmaps (Ha & Tsuru §3.1).
    pub loss_rate_estimate_ppm: u32,
    /// Mean loss burst length, thousandths of a packet, from the Gilbert fit of the judged
    /// record (`loss_tracker::BurstFit`; 0 until a burst has ended; 1000 = independent loss).
    pub loss_burst_milli: u32,
    /// The coding window the path's loss bursts ask for (`burst_window`: the 99th percentile
    /// of the random record's fitted burst length, plus one); 0 until known.
    pub burst_window: u16,
    /// The share of the random loss rate that R and the deficit repair's flight expectation
    /// cover (`burst_redundancy`: `loss_burst::BurstFit::event_share`), thousandths; 1000 =
    /// all of it (independent loss, or the policy off).
    pub event_share_permille: u32,
    /// The flight cap given to the local TCP (`flight_cap`), segments; 0 while none applies.
    pub flight_cap: u32,
    /// Combinations first reported missing and later received (Ha & Tsuru §3.1: late
    /// arrivals, not losses).
    pub late_arrivals: u64,
    /// Duplicate NC-ACKs flagged PAUSE held from the local TCP (Ha & Tsuru §3.3).
    pub acks_paused: u64,
    /// NC-ACKs older than one already received (reordered on the way back): merged into the
    /// loss record only.
    pub acks_stale: u64,
    /// Latest unordering length reported by the peer, Pids (Ha & Tsuru §3.2).
    pub unordering: u16,
    /// Combinations received after a newer one (receiver half, Ha & Tsuru §3.2).
    pub late_received: u64,
    /// DATA frames received from the peer.
    pub data_received: u64,
    /// Of those, innovative.
    pub innovative: u64,
    /// Of those, not innovative (redundant or stale).
    pub non_innovative: u64,
    /// NC-ACKs sent to the peer (queued).
    pub acks_sent: u64,
    /// NC-ACKs that took the place of a queued one of the flow that had not left yet
    /// (`coalesce_acks`): each is one NC-ACK fewer on the path.
    pub acks_coalesced: u64,
    /// Decoded segments delivered to the local TCP (first deliveries).
    pub segments_delivered: u64,
    /// Payload bytes delivered (first deliveries).
    pub bytes_delivered: u64,
    /// Redeliveries after the redelivery timeout (§IV-C).
    pub redeliveries: u64,
    /// Local pure ACKs suppressed (§IV-A).
    pub pure_acks_suppressed: u64,
}

/// Per-engine counters plus a snapshot of every live flow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// IP packets given to `handle_local`.
    pub local_packets: u64,
    /// Local packets that were not parseable IP (dropped).
    pub local_malformed: u64,
    /// Local packets forwarded in BYPASS frames.
    pub local_bypassed: u64,
    /// Local data segments taken by a sender half.
    pub local_coded: u64,
    /// Local pure ACKs suppressed (§IV-A).
    pub pure_acks_suppressed: u64,
    /// Local pure ACKs forwarded because they complete a handshake or answer a probe.
    pub pure_acks_forwarded: u64,
    /// SYN segments whose options were rewritten (MSS clamp, SACK/timestamps stripped).
    pub syn_rewritten: u64,
    /// Extra copies of local SYNs and SYN-ACKs sent (handshake protection).
    pub handshake_copies: u64,
    /// Copies of the peer's SYNs and SYN-ACKs dropped (handshake protection).
    pub handshake_duplicates: u64,
    /// Datagrams given to `handle_datagram`.
    pub datagrams_received: u64,
    /// Datagrams that did not parse as a tunnel frame.
    pub datagrams_malformed: u64,
    /// DATA frames received.
    pub data_received: u64,
    /// DATA frames the decoder refused (payload too long, span or row limit).
    pub decode_errors: u64,
    /// NC-ACKs received.
    pub acks_received: u64,
    /// NC-ACKs for a flow the engine does not know (ignored).
    pub acks_unknown_flow: u64,
    /// BYPASS frames received.
    pub bypass_received: u64,
    /// KEEPALIVE probes answered.
    pub keepalive_replies: u64,
    /// KEEPALIVE replies received (for the gateway).
    pub keepalive_replies_received: u64,
    /// Datagrams queued for the peer.
    pub datagrams_sent: u64,
    /// DATA frames sent.
    pub data_sent: u64,
    /// NC-ACKs sent.
    pub acks_sent: u64,
    /// NC-ACKs that took the place of a queued one (`coalesce_acks`): one fewer each.
    pub acks_coalesced: u64,
    /// BYPASS frames sent.
    pub bypass_sent: u64,
    /// Datagrams larger than the tunnel MTU (sent anyway; the path may fragment them).
    pub oversize_datagrams: u64,
    /// IP packets queued for the local TCP.
    pub local_sent: u64,
    /// TCP ACKs synthesised for local senders (queued).
    pub tcp_acks_synthesized: u64,
    /// Of those, duplicates: losses the code could not mask.
    pub dup_acks_synthesized: u64,
    /// TCP ACKs that took the place of a queued one (`coalesce_acks`): one fewer each.
    pub tcp_acks_coalesced: u64,
    /// Decoded segments delivered (first deliveries).
    pub segments_delivered: u64,
    /// Redeliveries (§IV-C).
    pub redeliveries: u64,
    /// Segments given up after `max_redeliveries`.
    pub redeliveries_abandoned: u64,
    /// Decoded symbols that could not be rebuilt into a TCP segment (dropped).
    pub rebuild_errors: u64,
    /// Packets dropped by full coding buffers (§III-D).
    pub coding_buffer_drops: u64,
    /// Repairs refused by the repair budget, all flows (`repair_budget.rs`).
    pub repairs_over_budget: u64,
    /// DATA frames dropped because the decoding buffer was full.
    pub decoding_buffer_drops: u64,
    /// Datagrams dropped because the transmit queue was full.
    pub transmit_queue_drops: u64,
    /// DATA datagrams that waited for the pacer (`pacer.rs`) before they left.
    pub paced_datagrams: u64,
    /// Packets dropped because the local queue was full.
    pub local_queue_drops: u64,
    /// Events dropped because the event queue was full.
    pub event_queue_drops: u64,
    /// New flows refused because the flow table was full (their packets go BYPASS).
    pub flow_table_full: u64,
    /// Connections reset because the peer gateway lost its state (`Engine::reset_flows`).
    pub flows_reset: u64,
    /// RSTs sent to the local TCP for those connections.
    pub resets_sent: u64,
    /// Receiver halves reset because the peer's symbol numbering restarted.
    pub receiver_resets: u64,
    /// Flows created.
    pub flows_opened: u64,
    /// Flows removed (any reason).
    pub flows_closed: u64,
    /// Of those, by idle expiry.
    pub flows_expired: u64,
    /// Live flows now.
    pub flows_active: usize,
    /// Snapshot of every live flow, keyed by its local → remote identity.
    pub flows: BTreeMap<FlowId, FlowStats>,
}

/// `vec![("field", value as u64), ...]` for the named fields of a stats struct.
macro_rules! named_counters {
    ($s:expr; $($f:ident),* $(,)?) => {
        vec![$((stringify!($f), $s.$f as u64)),*]
    };
}

impl FlowStats {
    /// Every counter with its field name, in declaration order: the one list that reports
    /// (gateway stats file, simulator) are built from, so they cannot drift from the struct.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        named_counters!(self; segments_from_local, packets_buffered, coding_buffer_drops,
            data_sent, redundant_sent, repairs_sent, repair_probes, spread_repairs, tail_repairs, pause_repairs, tail_probes, burst_repairs, repairs_over_budget, held_repairs, retransmissions_absorbed, dup_acks_held, congestion_signals, recovery_acks_withheld, redundancy_permille, acks_received, tcp_acks_synthesized, dup_acks_synthesized,
            tcp_acks_coalesced, coding_buffer_len, loss_rate_estimate_ppm, loss_burst_milli, burst_window, event_share_permille, flight_cap, late_arrivals, acks_paused, acks_stale,
            unordering,
            late_received, data_received, innovative, non_innovative,
            acks_sent, acks_coalesced, segments_delivered, bytes_delivered, redeliveries, pure_acks_suppressed)
    }
}

impl EngineStats {
    /// Every engine-wide counter with its field name, in declaration order (the per-flow
    /// snapshots are in [`EngineStats::flows`]).
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        named_counters!(self; local_packets, local_malformed, local_bypassed, local_coded,
            pure_acks_suppressed, pure_acks_forwarded, syn_rewritten, handshake_copies,
            handshake_duplicates, datagrams_received,
            datagrams_malformed, data_received, decode_errors, acks_received, acks_unknown_flow,
            bypass_received, keepalive_replies, keepalive_replies_received, datagrams_sent,
            data_sent, acks_sent, acks_coalesced, bypass_sent, oversize_datagrams, local_sent,
            tcp_acks_synthesized, dup_acks_synthesized, tcp_acks_coalesced, segments_delivered, redeliveries,
            redeliveries_abandoned, rebuild_errors, coding_buffer_drops, repairs_over_budget, decoding_buffer_drops,
            transmit_queue_drops, paced_datagrams, local_queue_drops, event_queue_drops, flow_table_full,
            flows_reset, resets_sent, receiver_resets, flows_opened, flows_closed, flows_expired, flows_active)
    }
}
