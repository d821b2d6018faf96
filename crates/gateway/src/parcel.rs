//! [`Parcel`]: packets and frames passed between the owner thread and an engine worker
//! ([`crate::workers`]) in one message: their bytes back to back in one buffer, each item naming
//! its peer and side, plus the engines' events. Cleared and reused, so a warm parcel does not
//! allocate.

use tcpnc_proto::Event;

/// Which side of the engine an item belongs to: to a worker, where it came from (the TUN or
/// the peer); from a worker, where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The local side: IP packets of the TUN.
    Local,
    /// The remote side: frames of the peer gateway (opened, or to be sealed).
    Remote,
}

#[derive(Debug, Clone, Copy)]
struct Item {
    peer: usize,
    side: Side,
    /// End of the item's bytes in `data` (it starts where the previous one ended).
    end: usize,
}

/// Items for or from one worker (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Parcel {
    data: Vec<u8>,
    items: Vec<Item>,
    /// Engine events of this round, by peer (from a worker only).
    pub events: Vec<(usize, Event)>,
}

impl Parcel {
    /// Appends a copy of `bytes` for `peer` on `side`.
    pub fn push(&mut self, peer: usize, side: Side, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
        self.items.push(Item {
            peer,
            side,
            end: self.data.len(),
        });
    }

    /// `(peer, side, bytes)` of every item, in the order pushed.
    pub fn items(&self) -> impl Iterator<Item = (usize, Side, &[u8])> {
        let starts = std::iter::once(0).chain(self.items.iter().map(|i| i.end));
        self.items
            .iter()
            .zip(starts)
            .map(|(i, start)| (i.peer, i.side, &self.data[start..i.end]))
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No items and no events.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.events.is_empty()
    }

    /// Empties the parcel, keeping its buffers.
    pub fn clear(&mut self) {
        self.data.clear();
        self.items.clear();
        self.events.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items come out as pushed, also after a clear that kept the buffer.
    #[test]
    fn items_round_trip_and_reuse() {
        let mut p = Parcel::default();
        p.push(0, Side::Local, b"abc");
        p.push(2, Side::Remote, b"");
        p.push(1, Side::Remote, b"defg");
        let got: Vec<_> = p.items().collect();
        assert_eq!(
            got,
            vec![
                (0, Side::Local, &b"abc"[..]),
                (2, Side::Remote, &b""[..]),
                (1, Side::Remote, &b"defg"[..])
            ]
        );
        assert_eq!(p.len(), 3);
        let cap = p.data.capacity();
        p.clear();
        assert!(p.is_empty() && p.items().next().is_none());
        p.push(5, Side::Local, b"xy");
        assert_eq!(
            p.items().collect::<Vec<_>>(),
            vec![(5, Side::Local, &b"xy"[..])]
        );
        assert_eq!(p.data.capacity(), cap);
    }
}
