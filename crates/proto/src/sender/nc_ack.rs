//! The sender's answer to NC-ACKs and silence: acknowledged packets leave the coding buffer
//! (§III-D), the loss estimate and R follow the Pid bitmaps (Ha & Tsuru §3.1), deficit repairs
//! and the repair probe (`repair.rs`), congestion signals (`episode.rs`), and the TCP ACK
//! synthesised for the local TCP (§II-C).

use std::time::Duration;

use tcpnc_wire::AckRepr;

use super::{AckStamp, SenderHalf};
use crate::config::{BurstSignal, CongestionRule};
use crate::context::Context;
use crate::event::Event;
use crate::loss_burst::BurstFit;
use crate::output::Queued;
use crate::repair::{MAX_REPAIRS_PER_ACK, congestion_threshold};

/// Longest hold of a paused duplicate ACK (Ha & Tsuru §3.3: "the sending schedule of 200 ms,
/// following the setting of Delay-ACK of the regular TCP").
pub const PAUSE_HOLD: Duration = Duration::from_millis(200);
use crate::tcp::{IpParams, build_ack_into, seq_add, seq_diff, seq_lt};

impl SenderHalf {
    /// Takes one NC-ACK for this direction and gives the local TCP its TCP ACK.
    pub fn on_ack(&mut self, cx: &mut Context<'_>, ack: &AckRepr, stamp: AckStamp) {
        cx.stats.acks_received += 1;
        self.last_ack_at = Some(cx.now);
        // The loss floor as known before this ACK, against which its bitmap is judged.
        let floor = self
            .loss
            .floor_known()
            .then(|| self.loss.random_loss_rate());
        let stale = self.nc_ack.is_some_and(|a| seq_lt(ack.ack, a));
        let delivered = self.absorb_ack(cx, ack);
        if stale && cx.config.policies.unordering.is_on() {
            // Overtaken by a newer NC-ACK on the way back (Ha & Tsuru §3.1): its bitmap is
            // merged, but its ack number would take TCP backwards and its N_lp is outdated.
            cx.stats.acks_stale += 1;
            cx.path.flight_cap.on_arrivals(delivered);
            return;
        }
        // (A congestion signal repeats the last ACK, so this is the same before and after it.)
        // RFC 5681 §2: a duplicate ACK also leaves the window unchanged; an ACK that only opens
        // the window is a window update, never withheld or paused (its sender may have nothing
        // else to send and would wait on a zero window for ever).
        // The DoF ACK (`dof_ack.rs`) may give the local TCP more than the seen ACK: only where
        // the deficit repair answers every DoF it counts that the peer then lacks.
        let policies = &cx.config.policies;
        let dof_ack = policies.dof_ack.is_on() && policies.repair.repairs_deficit();
        let (tcp_ack, peer_window) = self.tcp_ack_for(dof_ack, ack);
        let window = self.tcp_window(cx, tcp_ack, peer_window, stamp);
        let duplicate = self.last_tcp_ack == Some((tcp_ack, window));
        if !duplicate {
            self.paused = None; // a newer ACK erases the paused one (Ha & Tsuru §3.3)
        }
        if cx.config.policies.repair.repairs()
            && self.repair_and_signal(cx, ack, floor, duplicate, stamp, delivered)
        {
            return;
        }
        if duplicate && ack.pause && cx.config.policies.pause_ack.is_on() {
            // Held until a newer ACK erases it or the pause ends (then given to TCP).
            if self.paused.is_none() {
                self.paused = Some((cx.now + PAUSE_HOLD, tcp_ack, peer_window));
            }
            cx.stats.acks_paused += 1;
            return;
        }
        if self.thins(cx, tcp_ack) {
            return; // a signal's recovery: given when its turn comes (`recovery.rs`)
        }
        self.synthesize(cx, tcp_ack, peer_window, stamp);
    }

    /// Applies an NC-ACK to the coding buffer, the loss estimate, R, the NC ack and the peer's
    /// window; returns how many combinations it newly showed delivered.
    fn absorb_ack(&mut self, cx: &mut Context<'_>, ack: &AckRepr) -> u64 {
        self.buffer.acknowledge(ack.ack);
        let correct = cx.config.policies.unordering.is_on();
        if correct {
            self.unordering = ack.unordering;
        }
        let (received, lost) = (self.loss.received, self.loss.lost);
        let (reorders, jitter) = (self.reorders(), self.jitter());
        self.repair.delay_mut().set_reordering(reorders);
        // Under the queue rule, losses judged with a queue building are congestion's: the
        // random loss floor (R, the repair budget, the bitmap signal's threshold) is sampled
        // between such periods only (docs/engine.md, "The random loss floor").
        let congested = cx.config.policies.congestion == CongestionRule::Queue
            && self.repair.delay().srtt().is_some()
            && self.repair.delay().congested(jitter);
        self.loss.set_sampling(!congested);
        self.loss.on_ack(ack, correct, u32::from(self.unordering));
        let delivered = self.loss.received.saturating_sub(received);
        let lost = self.loss.lost.saturating_sub(lost);
        let overflowed = self.repair.delay().overflowed();
        self.repair.delay_mut().on_judged(jitter, lost, delivered);
        if !overflowed && self.repair.delay().overflowed() && self.repair.delay().shallow() {
            self.loss.forget_floor(); // it sampled the queue's drops as random loss
        }
        let floor = cx.path.loss_floor;
        cx.path.repair_budget.credit(delivered, floor);
        cx.stats.late_arrivals = self.loss.late;
        cx.stats.unordering = self.unordering;
        if self.loss.floor_known() {
            cx.path.loss_floor = Some(self.loss.random_loss_rate());
        }
        if correct {
            cx.path.unordering = self.unordering;
        }
        cx.stats.loss_rate_estimate_ppm = (self.loss.loss_rate() * 1e6) as u32;
        if let Some(fit) = self.loss.burst_fit() {
            cx.stats.loss_burst_milli = (fit.mean_burst() * 1e3).min(f64::from(u32::MAX)) as u32;
        }
        // The random record's fit, read by the burst window and the burst-aware redundancy.
        let random_fit = self.loss.random_burst_fit();
        if cx.config.policies.burst_window.is_on()
            && let Some(fit) = random_fit
        {
            self.burst_window = fit.cover();
            cx.path.burst_window = self.burst_window;
        }
        cx.stats.burst_window = self.burst_window;
        if cx.config.policies.burst_redundancy.is_on() {
            self.follow_event_share(cx, random_fit);
        }
        cx.stats.event_share_permille = (self.event_share * 1000.0).round() as u32;
        self.follow_redundancy(cx);
        cx.stats.redundancy_permille = (self.acc.factor() * 1000.0).round() as u64;
        if self.nc_ack.is_none_or(|a| seq_lt(a, ack.ack)) {
            self.nc_ack = Some(ack.ack);
        }
        self.peer_window = ack.window;
        delivered
    }

    /// Burst-aware redundancy (docs/engine.md "Burst-aware redundancy"): R and the flight's
    /// expected loss cover a burst's first loss only, the share `random_fit` gives; the NC-ACKs
    /// report the rest and the deficit repair answers it. Until the random record's fit is
    /// known, the whole record's stands in while the random loss is most of it
    /// (`LossEstimator::whole_burst_fit`): a flow that keeps a queue standing judges few Pids
    /// quietly and may never know the random fit (lab, Gilbert-Elliott 10 % in bursts of 4: R
    /// stayed at 1.10–1.15 in 1–3 runs of 5). When it no longer may, the flow takes the path's
    /// share (what a new flow starts from, `path_memory`), or 1; only the random fit is the
    /// path's.
    fn follow_event_share(&mut self, cx: &mut Context<'_>, random_fit: Option<BurstFit>) {
        // The whole record is read only while the random fit is unknown (each NC-ACK).
        let share = if let Some(fit) = random_fit {
            cx.path.event_share = Some(fit.event_share());
            fit.event_share()
        } else if let Some(whole) = self.loss.whole_burst_fit() {
            whole.event_share()
        } else if cx.config.policies.path_memory.is_on() {
            cx.path.event_share.unwrap_or(1.0)
        } else {
            1.0
        };
        self.event_share = share;
        self.repair.set_event_share(share);
    }

    /// The repair's part of an NC-ACK (`repair.rs`, `episode.rs`), each part behind its switch:
    /// the combination round trip, the arrivals for the flight cap (`flight_cap.rs`), deficit
    /// repairs for the missing DoFs, the probe timer, a congestion signal when the bitmap shows
    /// more than the random `floor`; `true` when the ACK is a duplicate withheld from the local
    /// TCP. `delivered`: combinations the ACK newly showed received.
    fn repair_and_signal(
        &mut self,
        cx: &mut Context<'_>,
        ack: &AckRepr,
        floor: Option<f64>,
        duplicate: bool,
        stamp: AckStamp,
        delivered: u64,
    ) -> bool {
        let covering = !self.sends_systematic(cx);
        self.repair.set_covering(covering);
        let count = self
            .repair
            .on_ack(cx.now, ack, self.next_pid, self.loss.loss_rate());

        if cx.config.policies.path_memory.is_on()
            && let Some(own) = self.repair.delay().rtt_floor()
        {
            let path = cx.path.merge_rtt_floor(cx.now, own);
            self.repair.delay_mut().set_path_floor(Some(path));
        }
        // This NC-ACK's own round-trip sample tells whether a queue stood as it arrived.
        let queued = self.sample_queued();
        cx.path
            .flight_cap
            .on_ack(cx.now, delivered, self.repair.delay().srtt(), queued);
        self.pace(cx);
        cx.stats.flight_cap = self
            .flight_cap_segments(cx)
            .map_or(0, |c| c.min(u64::from(u32::MAX)) as u32);
        if cx.config.policies.repair.repairs_deficit() {
            let paused = self.pause_deficit(cx, u32::from(ack.lost_dof));
            cx.stats.pause_repairs += u64::from(paused.saturating_sub(count));
            let count = count.max(paused);
            let held = self.held_repairs(cx, count, delivered);
            cx.stats.held_repairs += u64::from(held);
            for _ in 0..held + self.within_budget(cx, count - held) {
                self.send_repair(cx);
            }
        }
        // While packets are unacknowledged, an NC-ACK silence of two round trips sends a probe.
        if cx.config.policies.repair_probe.is_on() {
            self.probe = (!self.buffer.is_empty()).then(|| (cx.now + self.probe_interval(0), 0));
        }
        let rtt = self.repair.delay().srtt();
        let queue = match cx.config.policies.congestion {
            CongestionRule::Loss => true,
            CongestionRule::Queue => self.repair.delay().queue_building(),
        };
        if cx.config.policies.bitmap_signal.is_on() {
            let full = match cx.config.policies.congestion {
                CongestionRule::Loss => true,
                CongestionRule::Queue => self.repair.delay().signal_queue(),
            };
            self.bitmap_signal(cx, ack, floor, full, stamp);
        }
        let random = !queue && cx.config.policies.congestion == CongestionRule::Queue;
        if cx.config.policies.hold_duplicates.is_on()
            && self.episodes.hold_duplicate(cx.now, rtt, duplicate, random)
        {
            cx.stats.dup_acks_held += 1;
            return true;
        }
        false
    }

    /// The congestion signal from the loss bitmap (`episode.rs`): judged on the corrected
    /// record (late arrivals are not losses) with unordering adaptation, on the ACK's own
    /// bitmap without it; `queue`: the congestion rule's queue evidence.
    fn bitmap_signal(
        &mut self,
        cx: &mut Context<'_>,
        ack: &AckRepr,
        floor: Option<f64>,
        queue: bool,
        stamp: AckStamp,
    ) {
        let view = match cx.config.policies.unordering.is_on() {
            true => self.loss.judged_bitmap(),
            false => Some((ack.pid_echo, ack.loss_bitmap)),
        };
        let rtt = self.repair.delay().srtt();
        if let Some((echo, bitmap)) = view
            && queue
            && let Some(floor) = floor
            && let threshold = self.signal_threshold(cx, floor)
            && self
                .episodes
                .congested(cx.now, rtt, echo, bitmap, Some(threshold))
        {
            self.episodes.signalled(cx.now, echo);
            self.signal_congestion(cx, stamp);
        }
    }

    /// The fewest losses in an NC-ACK's bitmap that call for a signal: more than the random
    /// loss floor explains ([`congestion_threshold`]), and with `burst_signal` (always, or
    /// while the local TCP is application-limited) more than the path's fitted loss bursts
    /// reach (`loss_burst::BitmapLossBound`).
    fn signal_threshold(&mut self, cx: &Context<'_>, floor: f64) -> f64 {
        let base = congestion_threshold(floor);
        let bursty = match cx.config.policies.burst_signal {
            BurstSignal::On => true,
            BurstSignal::Paused => self.application_limited(cx.now),
            BurstSignal::Off => false,
        };
        match self.loss.random_burst_fit() {
            Some(fit) if bursty => base.max(f64::from(self.bitmap_bound.losses(fit))),
            _ => base,
        }
    }

    /// Makes the local TCP reduce its window once: three duplicates of the last ACK it got (a
    /// fast retransmit; the retransmission is absorbed while NC-ACKs flow).
    fn signal_congestion(&mut self, cx: &mut Context<'_>, stamp: AckStamp) {
        let Some((ack, _)) = self.last_tcp_ack else {
            return;
        };
        if self.buffer.is_empty() {
            return;
        }
        let window = self.peer_window_from(ack);
        for _ in 0..3 {
            self.synthesize(cx, ack, window, stamp);
        }
        cx.stats.congestion_signals += 1;
        self.enter_recovery(cx);
    }

    /// Builds and queues a pure TCP ACK from the remote endpoint to the local TCP: ack = NC
    /// ack, window = NC window >> the remote's window shift, seq = the remote's next sequence
    /// number (§II-C).
    pub(super) fn synthesize(
        &mut self,
        cx: &mut Context<'_>,
        ack: u32,
        window_bytes: u32,
        stamp: AckStamp,
    ) {
        let window = self.tcp_window(cx, ack, window_bytes, stamp);
        self.ip_ident = self.ip_ident.wrapping_add(1);
        let ip = IpParams {
            ident: self.ip_ident,
            ..IpParams::default()
        };
        let seq = stamp.seq.unwrap_or(0);
        let mut packet = cx.out.buffer();
        if build_ack_into(&mut packet, &self.ack_key, seq, ack, window, &ip).is_err() {
            cx.out.recycle(packet);
            return;
        }
        if self.last_tcp_ack == Some((ack, window)) && !self.buffer.is_empty() {
            self.duplicate_at = Some(cx.now);
            cx.stats.dup_acks_synthesized += 1;
            cx.out.stats.dup_acks_synthesized += 1;
            cx.out.event(Event::LossVisible {
                flow: self.data_flow,
                ack,
            });
        }
        // ACK coalescing (`coalesce.rs`): an ACK that advances may replace a queued one.
        let advances = self.last_tcp_ack.is_some_and(|(last, _)| seq_lt(last, ack));
        if advances {
            self.note_idle(cx);
            self.advanced_at = Some(cx.now);
            self.gave_advance(cx.now, ack);
        }
        let replaceable = (cx.config.policies.coalesce_acks.is_on() && advances).then_some(ack);
        self.last_tcp_ack = Some((ack, window));
        self.given_edge = Some(ack.wrapping_add(u32::from(window) << stamp.window_shift));
        self.report_flight(cx);
        if cx.out.deliver_ack(packet, self.data_flow, replaceable) == Queued::Coalesced {
            // It took the place of one counted when queued.
            cx.stats.tcp_acks_coalesced += 1;
            cx.out.stats.tcp_acks_coalesced += 1;
        } else {
            cx.stats.tcp_acks_synthesized += 1;
            cx.out.stats.tcp_acks_synthesized += 1;
        }
    }

    /// The window field of a TCP ACK of `ack` given to the local TCP for a peer window of
    /// `window_bytes`: never more than the coding buffer holds nor, with `flight_cap`, than the
    /// flight cap (or the right edge already given), scaled by the remote's shift.
    fn tcp_window(&self, cx: &Context<'_>, ack: u32, window_bytes: u32, stamp: AckStamp) -> u16 {
        // Bytes the DoF ACK gave the local TCP that the buffer still holds take their room.
        let unseen = self
            .buffer
            .base()
            .map_or(0, |base| seq_diff(ack, base).max(0) as u32);
        let room = self
            .coding_buffer_window()
            .saturating_sub(unseen)
            .min(self.slots_window(ack));
        let mut window_bytes = window_bytes.min(room);
        if let Some(cap) = self.flight_cap_bytes(cx) {
            window_bytes = window_bytes.min(cap.max(self.held_edge(ack)));
        }
        (window_bytes >> stamp.window_shift).min(65_535) as u16
    }

    /// The window that keeps the right edge last given to the local TCP where it was for an
    /// ACK of `ack` (0 past it): the flight cap holds the edge rather than moving it back
    /// (RFC 9293 §3.8.6).
    fn held_edge(&self, ack: u32) -> u32 {
        let Some(edge) = self.given_edge else {
            return 0;
        };
        if seq_lt(edge, ack) {
            0
        } else {
            edge.wrapping_sub(ack)
        }
    }

    /// The most bytes beyond `ack` that the coding buffer's free packet slots take: what it
    /// holds beyond `ack`, and a full segment for each free slot but one (a segment cut short
    /// by the window's edge takes a slot of its own). [`Self::coding_buffer_window`] counts
    /// full-size segments only; a window whose edge moves by less than a segment draws short
    /// ones. With the seen-ACK held behind a loss while the DoF ACK moved the local TCP's ACK
    /// on, 256 slots held 158 segments' worth of bytes, and the 62 segments the full buffer
    /// dropped cost a retransmission timeout (simulator, 20 Mbit/s, 2 % loss, 5 ms of jitter
    /// that reorders: docs/engine.md, "Window given to the local TCP").
    fn slots_window(&self, ack: u32) -> u32 {
        let mss = self.largest_payload.max(536);
        let free = self
            .buffer
            .limits()
            .max_packets
            .saturating_sub(self.buffer.len());
        let free = u32::try_from(free).unwrap_or(u32::MAX);
        let held = self
            .buffer
            .next_seq()
            .map_or(0, |next| seq_diff(next, ack).max(0) as u32);
        held.saturating_add(free.saturating_sub(1).saturating_mul(mss))
    }

    /// The most bytes beyond the ACK that the coding buffer can hold: the window given to the
    /// local TCP never exceeds it.
    ///
    /// §III-D drops the newest segment when the buffer is full, and with the no-gap rule of
    /// the coding buffer every later segment is dropped too until TCP retransmits, so nothing
    /// reaches the receiver and TCP recovers only by a retransmission timeout. Advertising no
    /// more than the buffer holds keeps the local TCP's flight inside it (flow control, like
    /// the receiver-side window of §IV-D), so the buffer overflows only on repacketised or
    /// unusually small segments. Each packet costs its payload plus at most 60 bytes of
    /// subheader; one packet of headroom is kept.
    fn coding_buffer_window(&self) -> u32 {
        let limits = self.buffer.limits();
        let mss = u64::from(self.largest_payload.max(536));
        let by_packets = (limits.max_packets.saturating_sub(1) as u64) * mss;
        let by_bytes = (limits.max_bytes as u64) * mss / (mss + 60);
        by_packets.min(by_bytes).min(u64::from(u32::MAX)) as u32
    }

    /// When [`SenderHalf::on_timeout`] must run: the repair probe's, the paused ACK's, the
    /// tail repair's, a spread repair's or a withheld recovery ACK's deadline.
    pub fn poll_timeout(&self) -> Option<Duration> {
        let probe = self.probe.map(|(deadline, _)| deadline);
        let paused = self.paused.map(|(deadline, _, _)| deadline);
        let tail_probe = self.tail_probes.front().map(|(deadline, _)| *deadline);
        let spread = self.spread.map(|s| s.next);
        let withheld = self.recovery_deadline();
        [probe, paused, self.tail, tail_probe, spread, withheld]
            .into_iter()
            .flatten()
            .min()
    }

    /// Gives the local TCP a paused duplicate ACK whose pause ended without a newer ACK.
    pub fn release_paused(&mut self, cx: &mut Context<'_>, stamp: AckStamp) {
        if let Some((deadline, ack, window)) = self.paused
            && deadline <= cx.now
        {
            self.paused = None;
            self.synthesize(cx, ack, window, stamp);
        }
    }

    /// Deficit repairs (of `wanted`) that go whatever the repair budget says: while the local
    /// TCP is held by the peer's window ([`SenderHalf::window_held`]) it sends nothing new and,
    /// its ACKs still advancing, retransmits nothing; after its retransmission timeout it sends
    /// nothing new and resends a few old segments per round trip
    /// ([`SenderHalf::resends_only`]), and once it has sent all it had it sends nothing
    /// ([`SenderHalf::sends_nothing_new`]); so with a coding window's worth of
    /// degrees of freedom or more missing (a whole window lost, TCP's retransmission-timeout
    /// case) the repairs are the flow's only way forward. Budget-starved by the peer's other
    /// flows, such a flow advanced one segment per round trip (a 100-flow lab straggler,
    /// docs/lab.md "Real links, stop 16"). Clocked by its NC-ACKs as TCP's slow start is by
    /// its ACKs: two repairs for each combination the ACK showed delivered, so the flow sends
    /// at most twice what reaches the peer. Smaller deficits stay with the budget: applied to
    /// them too, the rule favoured the flows that fill the peer's window fastest (8 flows:
    /// Jain's index 0.95 → 0.92).
    fn held_repairs(&self, cx: &Context<'_>, wanted: u32, delivered: u64) -> u32 {
        // Alone, the flow is the queue and its repairs are clocked by what it delivers: any
        // TCP that sends nothing new gets them. Among other flows only a TCP that resends, and
        // only while no queue builds: on a queue that other flows fill (100 short flows at
        // 10 % loss) the repairs of every flow that has sent all it had would add to what the
        // queue drops.
        let crawling = if cx.out.stats.flows_active <= 1 {
            self.sends_nothing_new(cx)
        } else {
            self.resends_only(cx) && !self.repair.delay().queue_building()
        };
        let held = self.window_held() || crawling;
        if !held || (self.loss.lost_dof as usize) < self.coding_window(cx) {
            return 0;
        }
        let clocked = (2 * delivered).min(u64::from(MAX_REPAIRS_PER_ACK)) as u32;
        wanted.min(clocked)
    }

    /// Whether the local TCP has sent no new packet for a combination round trip: it has sent
    /// all it had and waits (the end of a transfer: smoltcp's Reno after its FIN decoded one
    /// segment per round trip for half a minute on the budget's trickle, docs/engine.md "A
    /// TCP that sends nothing new, alone"), or it resends only
    /// ([`SenderHalf::resends_only`]). Such a TCP's repair probes go beyond the repair budget
    /// ([`SenderHalf::on_timeout`]).
    pub(super) fn sends_nothing_new(&self, cx: &Context<'_>) -> bool {
        let (Some(new), Some(rtt)) = (self.last_new_at, self.repair.delay().srtt()) else {
            return false;
        };
        cx.now.saturating_sub(new) >= rtt
    }

    /// Whether the local TCP resends old segments only: it sends nothing new and has resent
    /// buffered bytes within two combination round trips (the NC-ACK a resent segment draws
    /// comes a round trip after it), as after its retransmission timeout, at a window of a
    /// few segments, each answered once the peer decodes it (kernel BBR over nc crawled at 17
    /// segments a second for half a minute that way, docs/lab.md "Kernel BBR over nc, stop
    /// 17").
    fn resends_only(&self, cx: &Context<'_>) -> bool {
        let (Some(resent), Some(rtt)) = (self.last_resent_at, self.repair.delay().srtt()) else {
            return false;
        };
        self.sends_nothing_new(cx) && cx.now.saturating_sub(resent) < rtt * 2
    }

    /// Whether the peer's window, as the last NC-ACK gave it, leaves the local TCP less than a
    /// segment beyond what it has sent: it can send nothing new until the peer decodes.
    pub(super) fn window_held(&self) -> bool {
        self.sent_up_to(self.nc_ack.map(|ack| seq_add(ack, self.peer_window)))
    }

    /// Whether the local TCP has sent up to the right edge of the window last given to it,
    /// less than a segment short: it can send nothing new before an ACK advances.
    pub(super) fn at_given_edge(&self) -> bool {
        self.sent_up_to(self.given_edge)
    }

    /// Whether what the local TCP has sent ends less than a segment short of `edge`.
    fn sent_up_to(&self, edge: Option<u32>) -> bool {
        let (Some(edge), Some(next)) = (edge, self.buffer.next_seq()) else {
            return false;
        };
        i64::from(seq_diff(edge, next)) < i64::from(self.largest_payload.max(1))
    }

    /// How many of `wanted` repairs the peer's repair budget allows (all of them with
    /// `repair_budget` off); the rest are counted as refused.
    pub(super) fn within_budget(&self, cx: &mut Context<'_>, wanted: u32) -> u32 {
        if !cx.config.policies.repair_budget.is_on() {
            return wanted;
        }
        let granted = cx.path.repair_budget.take(wanted);
        cx.stats.repairs_over_budget += u64::from(wanted - granted);
        cx.out.stats.repairs_over_budget += u64::from(wanted - granted);
        granted
    }
}
