//! The DoF ACK (`dof_ack`, docs/engine.md "DoF ACK"): the TCP ACK given to the local TCP
//! counts every degree of freedom the peer holds, not only its seen prefix.
//!
//! The seen-ACK (Sundararajan et al. §IV, Definition 1) advances by one packet per innovative
//! combination as long as every combination reaches back to the first unseen packet. A
//! systematic code breaks that: after packet k is lost, the uncoded k + 1, k + 2, … are decoded
//! but none makes k seen, so the local TCP gets duplicate ACKs until a repair arrives
//! (docs/gateway.md "Dense or systematic"). A loss burst longer than the coding window does the
//! same to a dense code. The DoF ACK gives the local TCP an ack of `first unseen + the DoFs
//! held beyond it` packets instead; the coding buffer still frees packets at the peer's seen
//! ACK only, so the packets the local TCP no longer holds stay here until the peer has them,
//! and the deficit repair (driven by N_lp) delivers them.
//!
//! The NC-ACK carries no rank. Its echoed frame did reach the peer, so the peer has heard of
//! every index up to that frame's newest, `last`; of those it misses N_lp, less the ones the
//! unordering mechanism reports late (at most one per Pid of the unordering length). So the
//! peer holds at least `last + 1 − N_lp − unordering` DoFs counted from index 0 (every index
//! below its decoder's base being decoded), a lower bound of its seen-or-decodable prefix
//! size that never exceeds the true one. Nothing on the wire changes.

use tcpnc_wire::AckRepr;

use crate::tcp::{seq_diff, seq_lt};

use super::SenderHalf;

/// Pids remembered with the newest index of their frame: NC-ACKs echoing older Pids (over a
/// long fat path) give the plain seen-ACK.
const REMEMBERED_PIDS: usize = 2048;

/// The newest symbol index of each recently sent frame, by Pid: a ring of (Pid + 1, index),
/// 0 marking an empty slot, allocated with the flow's first frame.
#[derive(Debug, Default)]
pub(super) struct SentIndices {
    slots: Vec<(u64, u64)>,
}

impl SentIndices {
    /// Records that frame `pid` combined packets up to index `last`.
    pub(super) fn record(&mut self, pid: u32, last: u64) {
        if self.slots.is_empty() {
            self.slots = vec![(0, 0); REMEMBERED_PIDS];
        }
        self.slots[pid as usize % REMEMBERED_PIDS] = (u64::from(pid) + 1, last);
    }

    /// The newest index of frame `pid`, if it is still remembered.
    pub(super) fn last_of(&self, pid: u32) -> Option<u64> {
        match self.slots.get(pid as usize % REMEMBERED_PIDS) {
            Some(&(tag, last)) if tag == u64::from(pid) + 1 => Some(last),
            _ => None,
        }
    }
}

/// What is left of a `window` announced from `base` when counted from `ack` (at or after
/// `base`): the same right edge, never wrapping.
fn window_from(window: u32, base: u32, ack: u32) -> u32 {
    window.saturating_sub(seq_diff(ack, base).max(0) as u32)
}

impl SenderHalf {
    /// The newest index the peer has surely heard of: that of the echoed frame, or for a
    /// redundant one (a repair may reach less far than the frames before it) the newest of
    /// every frame its loss bitmap shows received.
    fn heard_of(&self, ack: &AckRepr) -> Option<u64> {
        let echoed = self.sent_indices.last_of(ack.pid_echo)?;
        if !ack.redundant {
            return Some(echoed);
        }
        let received = (0..32u32)
            .filter(|i| ack.loss_bitmap & (1 << i) == 0)
            .filter_map(|i| {
                let pid = ack.pid_echo.wrapping_sub(1).wrapping_sub(i);
                self.sent_indices.last_of(pid)
            });
        Some(received.fold(echoed, u64::max))
    }

    /// The ack number and peer window (bytes) the local TCP is given for `ack`: with the DoF
    /// ACK, the start of the first packet beyond the DoFs the peer is known to hold (never
    /// before the NC-ACK's seen ack nor the last ack given), the window keeping the peer's
    /// right edge; without it, the NC-ACK's own.
    pub(super) fn tcp_ack_for(&self, dof_ack: bool, ack: &AckRepr) -> (u32, u32) {
        let seen = (ack.ack, ack.window);
        if !dof_ack {
            return seen;
        }
        let held = self.dof_index(ack).and_then(|i| match self.buffer.get(i) {
            Some(p) => Some(p.start),
            None => self.buffer.next_seq(),
        });
        let seq = match (held, self.last_tcp_ack) {
            (Some(s), Some((last, _))) if seq_lt(s, last) => last,
            (Some(s), _) => s,
            (None, Some((last, _))) => last,
            (None, None) => return seen,
        };
        if !seq_lt(ack.ack, seq) {
            return seen;
        }
        (seq, window_from(ack.window, ack.ack, seq))
    }

    /// The peer's window as seen from `ack` (an ack given to the local TCP, at or beyond the
    /// NC ack): what is left before the right edge of its latest NC-ACK.
    pub(super) fn peer_window_from(&self, ack: u32) -> u32 {
        match self.nc_ack {
            Some(nc) => window_from(self.peer_window, nc, ack),
            None => self.peer_window,
        }
    }

    /// The index of the first packet the DoF ACK does not count as held by the peer, when it
    /// lies beyond the oldest buffered (unseen) packet.
    fn dof_index(&self, ack: &AckRepr) -> Option<u64> {
        let last = self.heard_of(ack)?;
        let first = self.buffer.first_index()?;
        let missing = u64::from(ack.lost_dof) + u64::from(ack.unordering);
        let held = (last + 1)
            .saturating_sub(missing)
            .min(self.buffer.next_index());
        (held > first).then_some(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_recent_pids_only() {
        let mut s = SentIndices::default();
        assert_eq!(s.last_of(0), None);
        assert_eq!(s.last_of(5), None);
        s.record(5, 40);
        assert_eq!(s.last_of(5), Some(40));
        assert_eq!(s.last_of(0), None, "pid 0 was never sent");
        assert_eq!(s.last_of(5 + REMEMBERED_PIDS as u32), None);
        s.record(5 + REMEMBERED_PIDS as u32, 41);
        assert_eq!(s.last_of(5), None, "overwritten by a newer pid");
        assert_eq!(s.last_of(5 + REMEMBERED_PIDS as u32), Some(41));
        s.record(0, 7);
        assert_eq!(s.last_of(0), Some(7));
        s.record(u32::MAX, 9);
        assert_eq!(s.last_of(u32::MAX), Some(9));
    }
}
