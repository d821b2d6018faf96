//! UDP generic receive offload (Linux `UDP_GRO`, kernel ≥ 5.0; `udp(7)`): with the socket
//! option on, the kernel may hand one receive *message* holding several datagrams of one
//! flow (one source), all of one size but the last (which may be shorter), and says the
//! size in a `SOL_UDP`/`UDP_GRO` control message (an int). Without the control message the
//! message is one datagram, as on a socket without GRO.
//!
//! [`segment_size`] reads the size from a message's control messages and [`segments`] cuts a
//! message back into its datagrams (no I/O, no allocation); [`crate::batch`] uses both to hand
//! every datagram of a batched receive out separately ([`crate::RecvSlots`]).

use nix::sys::socket::ControlMessageOwned;

/// Room for the one control message a GRO receive carries (`SOL_UDP`/`UDP_GRO`, an int).
pub(crate) fn cmsg_buffer() -> Vec<u8> {
    nix::cmsg_space!(libc::c_int)
}

/// The segment size a message's control messages give (`UDP_GRO`), if any (`None`: the
/// message is one datagram). A size of 0 or below is no size.
pub fn segment_size(cmsgs: impl IntoIterator<Item = ControlMessageOwned>) -> Option<usize> {
    cmsgs.into_iter().find_map(|c| match c {
        ControlMessageOwned::UdpGroSegments(n) => usize::try_from(n).ok().filter(|&n| n > 0),
        _ => None,
    })
}

/// The datagrams of a received message of `bytes` bytes, as `(offset, length)` within it:
/// pieces of `seg` bytes, the last shorter when `bytes` is not a multiple of `seg`. Without
/// a segment size, or with one no smaller than the message, the message is one datagram
/// (an empty message is one empty datagram, as a plain receive gives it).
pub fn segments(bytes: usize, seg: Option<usize>) -> Segments {
    let seg = match seg {
        Some(s) if s > 0 && s < bytes => s,
        _ => bytes.max(1),
    };
    Segments {
        at: 0,
        bytes,
        seg,
        empty: bytes == 0,
    }
}

/// The iterator of [`segments`].
#[derive(Debug, Clone)]
pub struct Segments {
    at: usize,
    bytes: usize,
    seg: usize,
    /// An empty message not yet handed out.
    empty: bool,
}

impl Iterator for Segments {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        if self.empty {
            self.empty = false;
            return Some((0, 0));
        }
        if self.at >= self.bytes {
            return None;
        }
        let len = self.seg.min(self.bytes - self.at);
        let piece = (self.at, len);
        self.at += len;
        Some(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(bytes: usize, seg: Option<usize>) -> Vec<(usize, usize)> {
        segments(bytes, seg).collect()
    }

    /// Pieces of the size the control message gives, the last shorter; an exact multiple has
    /// no short piece.
    #[test]
    fn cuts_at_the_segment_size_last_shorter() {
        assert_eq!(
            cut(1200 * 3 + 700, Some(1200)),
            vec![(0, 1200), (1200, 1200), (2400, 1200), (3600, 700)]
        );
        assert_eq!(
            cut(300 * 4, Some(300)),
            vec![(0, 300), (300, 300), (600, 300), (900, 300)]
        );
        assert_eq!(cut(301, Some(300)), vec![(0, 300), (300, 1)]);
    }

    /// A message of exactly one datagram (size = segment size), one shorter than the segment
    /// size, one without a size, and an empty one: one datagram each.
    #[test]
    fn one_datagram_messages_stay_whole() {
        assert_eq!(cut(1200, Some(1200)), vec![(0, 1200)]);
        assert_eq!(cut(500, Some(1200)), vec![(0, 500)]);
        assert_eq!(cut(1200, None), vec![(0, 1200)]);
        assert_eq!(cut(1200, Some(0)), vec![(0, 1200)]);
        assert_eq!(cut(0, None), vec![(0, 0)]);
        assert_eq!(cut(0, Some(100)), vec![(0, 0)]);
    }

    /// The size comes from the `UDP_GRO` control message; others are ignored; none or a
    /// non-positive size is no size.
    #[test]
    fn size_from_the_control_message() {
        use ControlMessageOwned::{RxqOvfl, UdpGroSegments};
        assert_eq!(segment_size([UdpGroSegments(1200)]), Some(1200));
        assert_eq!(segment_size([RxqOvfl(3), UdpGroSegments(88)]), Some(88));
        assert_eq!(segment_size([RxqOvfl(3)]), None);
        assert_eq!(segment_size([UdpGroSegments(0)]), None);
        assert_eq!(segment_size([UdpGroSegments(-5)]), None);
        assert_eq!(segment_size(std::iter::empty()), None);
    }
}
