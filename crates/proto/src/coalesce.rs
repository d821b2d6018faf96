//! ACK coalescing (policy `coalesce_acks`; docs/engine.md, "ACK coalescing").
//!
//! At high rates a driver hands the engine many datagrams before it polls the output queues
//! (the gateway: up to 288 per flush), and the engine answers each DATA frame with an NC-ACK
//! and each NC-ACK with a TCP ACK for the local TCP. Each of those costs the driver a seal or
//! a TUN write and its reader a system call and a pass through its stack, although every ACK
//! of a flow queued before the poll is overtaken by the next one before it leaves. A newer
//! ACK that says everything a queued one says therefore takes its place in the queue: the
//! driver sends one per flow and flush, the peer and the local TCP read the newest state at
//! the same moment they would have read it anyway.
//!
//! "Says everything" is strict, so that nothing a duplicate carries is ever lost:
//! * both ACKs *advance* the acknowledgement (the queued one over its predecessor, the newer
//!   one over the queued one), so the receiver of the pair reads an advance either way, never
//!   a duplicate less (a duplicate is a loss signal to TCP, RFC 5681 §3.2; and to the
//!   coding sender, which repairs on it);
//! * neither carries a flag the newer one cannot (NC-ACK: DEPENDENT, PAUSE, U);
//! * the NC-ACK that leaves reports the fate of every Pid the ones it replaced reported and
//!   that no NC-ACK before them did (Ha & Tsuru §3.1: its echo and, in its loss bitmap, the
//!   32 Pids before it), so the sender's loss record learns the same fates: at most 33 Pids
//!   from the one after the echo of the last NC-ACK sure to leave before it;
//! * anything else of the flow queued after it (a duplicate, a flagged ACK) is a barrier: the
//!   queued ACK is then no longer the flow's last, and is kept.
//!
//! This module only keeps the bookkeeping: where the last replaceable ACK of each flow sits in
//! one queue. Positions count pushes since the queue was made, so popping from the front does
//! not move them.

use std::collections::HashMap;

use tcpnc_wire::{AckRepr, FlowId};

use crate::tcp::seq_lt;

/// Pids an NC-ACK's loss bitmap reports before its echo (`docs/wire.md`, NC-ACK).
const BITMAP_REACH: u32 = AckRepr::BITMAP_PIDS;

/// What a replaceable ACK acknowledges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AckMark {
    /// The acknowledgement number (NC ack or TCP ack).
    pub ack: u32,
    /// An NC-ACK's Pids (`None` for a TCP ACK).
    pub pids: Option<PidSpan>,
}

/// The Pids an NC-ACK in a slot answers for: its echo, and the first Pid after the echo of
/// the flow's NC-ACK before the slot (the last one sure to leave). The ACK that leaves from
/// the slot must report every Pid from `from` on: its echo, and the 32 before it in its loss
/// bitmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PidSpan {
    /// The Pid echo.
    pub echo: u32,
    /// The previous NC-ACK's echo + 1.
    pub from: u32,
}

impl AckMark {
    /// Whether an ACK marked `self` says everything the slot marked `older` says (module
    /// docs); if so, what the slot says afterwards.
    fn covers(&self, older: &AckMark) -> Option<AckMark> {
        if !seq_lt(older.ack, self.ack) {
            return None;
        }
        let pids = match (self.pids, older.pids) {
            (None, None) => None,
            (Some(new), Some(old)) => {
                let newer = (1..=BITMAP_REACH).contains(&new.echo.wrapping_sub(old.echo));
                let reaches = new.echo.wrapping_sub(old.from) <= BITMAP_REACH;
                if !(newer && reaches) {
                    return None;
                }
                Some(PidSpan {
                    echo: new.echo,
                    from: old.from,
                })
            }
            _ => return None,
        };
        Some(AckMark {
            ack: self.ack,
            pids,
        })
    }
}

/// How an entry pushed on a queue takes part in coalescing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Push {
    /// Not an ACK of a flow (a DATA frame, a decoded segment, a BYPASS frame): no effect.
    Other,
    /// An ACK of the flow that a newer one may replace.
    Replaceable(FlowId, AckMark),
    /// An ACK of the flow that must leave as it is; the flow's earlier ones are kept too.
    Barrier(FlowId),
}

/// Where the last replaceable ACK of each flow sits in one output queue.
#[derive(Debug, Default)]
pub(crate) struct AckSlots {
    /// Entries pushed since the queue was made.
    pushed: u64,
    /// Entries popped from its front.
    popped: u64,
    /// Flow → absolute position of its last ACK and what it says, while replaceable.
    last: HashMap<FlowId, (u64, AckMark)>,
}

impl AckSlots {
    /// Records one push at the back of the queue.
    pub fn pushed(&mut self, push: Push) {
        let at = self.pushed;
        self.pushed += 1;
        match push {
            Push::Other => {}
            Push::Replaceable(flow, mark) => {
                self.last.insert(flow, (at, mark));
            }
            // (Skipped on an empty map: with coalescing off every ACK is a barrier.)
            Push::Barrier(flow) if !self.last.is_empty() => {
                self.last.remove(&flow);
            }
            Push::Barrier(_) => {}
        }
    }

    /// Records one pop from the front of the queue; an empty queue forgets every flow.
    pub fn popped(&mut self) {
        self.popped += 1;
        if self.popped >= self.pushed {
            self.last.clear();
        }
    }

    /// The queue was filtered (entries removed anywhere): every position is void.
    pub fn reset(&mut self, len: usize) {
        self.popped = self.pushed - len as u64;
        self.last.clear();
    }

    /// The index in the queue of `flow`'s last ACK if an ACK marked `mark` may replace it; the
    /// slot then holds `mark`.
    pub fn replace(&mut self, flow: FlowId, mark: AckMark) -> Option<usize> {
        let (at, old) = self.last.get_mut(&flow)?;
        if *at < self.popped {
            return None;
        }
        *old = mark.covers(old)?;
        Some((*at - self.popped) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn flow(port: u16) -> FlowId {
        FlowId::v4(
            Ipv4Addr::new(10, 0, 0, 1),
            port,
            Ipv4Addr::new(10, 0, 0, 2),
            80,
        )
    }

    fn tcp(ack: u32) -> AckMark {
        AckMark { ack, pids: None }
    }

    fn nc(ack: u32, echo: u32, from: u32) -> AckMark {
        AckMark {
            ack,
            pids: Some(PidSpan { echo, from }),
        }
    }

    #[test]
    fn a_newer_advancing_ack_takes_the_queued_ones_place() {
        let mut s = AckSlots::default();
        s.pushed(Push::Other);
        s.pushed(Push::Replaceable(flow(1), tcp(1000)));
        s.pushed(Push::Other);
        assert_eq!(s.replace(flow(1), tcp(2000)), Some(1));
        // The slot now says 2000: an ACK of 2000 again is not an advance over it.
        assert_eq!(s.replace(flow(1), tcp(2000)), None);
        s.popped();
        assert_eq!(s.replace(flow(1), tcp(3000)), Some(0));
        s.popped();
        assert_eq!(s.replace(flow(1), tcp(4000)), None, "already left");
    }

    #[test]
    fn barriers_flows_and_bitmap_reach_are_respected() {
        let mut s = AckSlots::default();
        s.pushed(Push::Replaceable(flow(1), nc(1000, 7, 6)));
        s.pushed(Push::Replaceable(flow(2), nc(1000, 3, 3)));
        s.pushed(Push::Barrier(flow(2)));
        assert_eq!(
            s.replace(flow(2), nc(2000, 4, 4)),
            None,
            "a barrier came after"
        );
        assert_eq!(s.replace(flow(3), nc(2000, 8, 8)), None, "another flow");
        assert_eq!(s.replace(flow(1), nc(900, 8, 8)), None, "older ack");
        assert_eq!(
            s.replace(flow(1), nc(2000, 6 + 33, 8)),
            None,
            "Pid 6 out of its bitmap"
        );
        assert_eq!(s.replace(flow(1), tcp(2000)), None, "not an NC-ACK");
        assert_eq!(s.replace(flow(1), nc(2000, 20, 8)), Some(0));
        // The slot still answers for Pids from 6: a chain of replacements cannot outrun it.
        assert_eq!(s.replace(flow(1), nc(3000, 6 + 33, 21)), None);
        assert_eq!(s.replace(flow(1), nc(3000, 6 + 32, 21)), Some(0));
        // Seq and Pid arithmetic wrap.
        let mut s = AckSlots::default();
        s.pushed(Push::Replaceable(
            flow(1),
            nc(u32::MAX - 10, u32::MAX, u32::MAX),
        ));
        assert_eq!(s.replace(flow(1), nc(5, 1, 0)), Some(0));
    }

    #[test]
    fn filtering_or_draining_the_queue_forgets_positions() {
        let mut s = AckSlots::default();
        s.pushed(Push::Replaceable(flow(1), tcp(1)));
        s.pushed(Push::Other);
        s.reset(1);
        assert_eq!(s.replace(flow(1), tcp(2)), None);
        s.pushed(Push::Replaceable(flow(1), tcp(3)));
        assert_eq!(s.replace(flow(1), tcp(4)), Some(1));
        s.popped();
        s.popped();
        assert!(s.last.is_empty());
    }
}
