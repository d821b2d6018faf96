//! A signal's recovery, few partial ACKs (`thin_recovery_acks`, docs/engine.md "A signal's
//! recovery, few partial ACKs").
//!
//! A congestion signal is three duplicate ACKs (`nc_ack.rs`), and the local TCP, without SACK
//! (the SYN rewrite removes it, `tcp/options.rs`), enters NewReno fast recovery (RFC 6582):
//! until its ack reaches what it had sent when it entered ("recover", §3.2), every ACK that
//! advances is a partial ACK and draws the retransmission of the next segment (§3.2 step 5;
//! Linux marks the head lost on each). The seen-ACK advances one packet per innovative
//! combination, so a signal drew a retransmission for nearly every segment of the window:
//! about 95 a signal for kernel CUBIC, 12–105 for kernel BBR (lab, Gilbert-Elliott 10 % in
//! bursts of 4; docs/lab.md "What a congestion signal costs"). The gateway absorbs them, but
//! each took the place of a new segment in the TCP's window (PRR, RFC 6937) or pacing, and the
//! link ran dry for most of a round trip after every signal.
//!
//! With the rule, from a signal until the TCP's ack reaches its recovery point, the ACKs that
//! advance reach it at most [`RECOVERY_ACKS`] to a round trip, each the newest: the window
//! reduction the signal asks for is the same (PRR counts the bytes an ACK delivers, not the
//! ACKs), and the TCP retransmits [`RECOVERY_ACKS`] segments instead of a window's worth. The
//! recovery point is what the TCP had sent when its fast retransmission arrived (Linux sends
//! up to two new segments on the first duplicates, RFC 3042), what it had sent at the signal
//! until then.

use std::time::Duration;

use super::{AckStamp, SenderHalf};
use crate::context::Context;
use crate::tcp::seq_lt;

/// The most ACKs that advance reach the local TCP in a round trip of a signal's recovery.
pub const RECOVERY_ACKS: u32 = 8;

/// The recovery a congestion signal started in the local TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Recovery {
    /// What the local TCP had sent: its recovery ends once its ack reaches it.
    point: u32,
    /// Whether `point` was taken at the TCP's fast retransmission (else at the signal).
    fixed: bool,
    /// When the last ACK that advanced was given.
    given_at: Duration,
    /// The shortest time between two ACKs that advance: the round trip over [`RECOVERY_ACKS`].
    gap: Duration,
    /// The newest ack number withheld, given at `given_at + gap` with the window the latest
    /// NC-ACK leaves it.
    held: Option<u32>,
}

impl Recovery {
    /// When the next ACK that advances may be given.
    fn next_turn(&self) -> Duration {
        self.given_at + self.gap
    }
}

impl SenderHalf {
    /// A congestion signal was just given: the local TCP's recovery starts (with
    /// `thin_recovery_acks` and a measured round trip).
    pub(super) fn enter_recovery(&mut self, cx: &Context<'_>) {
        if !cx.config.policies.thin_recovery_acks.is_on() {
            return;
        }
        let (Some(point), Some(rtt)) = (self.buffer.next_seq(), self.repair.delay().srtt()) else {
            return;
        };
        // An ACK still withheld from a recovery before stays due (the signal repeated the one
        // before it).
        let held = self.recovery.and_then(|r| r.held);
        self.recovery = Some(Recovery {
            point,
            fixed: false,
            given_at: cx.now,
            gap: rtt / RECOVERY_ACKS,
            held,
        });
    }

    /// A segment the local TCP resent arrived: the first after a signal is its fast
    /// retransmission, and what it had sent then is its recovery point.
    pub(super) fn on_resend(&mut self) {
        let next = self.buffer.next_seq();
        if let Some(r) = self.recovery.as_mut()
            && !r.fixed
        {
            r.point = next.unwrap_or(r.point);
            r.fixed = true;
        }
    }

    /// Whether the ACK of `ack` is withheld: during a signal's recovery an ACK that advances,
    /// below the recovery point, within [`Recovery::gap`] of the last one given. A withheld
    /// ACK replaces the one withheld before it.
    pub(super) fn thins(&mut self, cx: &mut Context<'_>, ack: u32) -> bool {
        let Some(r) = self.recovery.as_mut() else {
            return false;
        };
        if !seq_lt(ack, r.point) {
            self.recovery = None; // a full ACK: the recovery ends
            return false;
        }
        let advances = self.last_tcp_ack.is_none_or(|(last, _)| seq_lt(last, ack));
        if !advances || cx.now >= r.next_turn() {
            return false;
        }
        if r.held.is_none_or(|held| !seq_lt(ack, held)) {
            r.held = Some(ack);
        }
        cx.stats.recovery_acks_withheld += 1;
        true
    }

    /// An ACK that advances to `ack` was given: the next may follow a gap later, and a withheld
    /// one it reaches is spent.
    pub(super) fn gave_advance(&mut self, now: Duration, ack: u32) {
        if let Some(r) = self.recovery.as_mut() {
            r.given_at = now;
            if r.held.is_some_and(|held| !seq_lt(ack, held)) {
                r.held = None;
            }
        }
    }

    /// When a withheld ACK is due.
    pub(super) fn recovery_deadline(&self) -> Option<Duration> {
        let r = self.recovery?;
        r.held.map(|_| r.next_turn())
    }

    /// Gives the local TCP the withheld ACK when its turn has come.
    pub fn release_withheld(&mut self, cx: &mut Context<'_>, stamp: AckStamp) {
        let Some(r) = self.recovery else {
            return;
        };
        if let Some(ack) = r.held
            && cx.now >= r.next_turn()
        {
            let window = self.peer_window_from(ack);
            self.synthesize(cx, ack, window, stamp);
        }
    }
}
