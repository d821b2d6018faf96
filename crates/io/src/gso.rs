//! UDP generic segmentation offload for sends (Linux `UDP_SEGMENT`, kernel ≥ 4.18; see
//! `udp(7)` and the kernel's `Documentation/networking/segmentation-offloads.rst`): a train of
//! datagrams to one address, all of one size but the last (which may be shorter), goes to the
//! kernel as one message with a `SOL_UDP`/`UDP_SEGMENT` control message giving the segment
//! size; the kernel (or the device) cuts it back into the same datagrams. One `sendmmsg(2)`
//! carries up to [`BATCH`] such messages that share one segment size.
//!
//! [`trains`] and [`call_trains`] hold the grouping (no I/O); [`send_gso`] makes the call
//! through nix's safe `sendmmsg` and `ControlMessage::UdpGsoSegments` (no `unsafe` here).

use std::io::IoSlice;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use nix::sys::socket::{ControlMessage, MsgFlags, MultiHeaders, SockaddrStorage, sendmmsg};

use crate::batch::BATCH;

/// Most segments the kernel takes in one GSO message (`UDP_MAX_SEGMENTS`: 64 before Linux
/// 6.9, 128 after; the smaller bound works on every kernel).
pub const MAX_SEGMENTS: usize = 64;

/// Most payload bytes in one GSO message: an IPv4 datagram's 65535 bytes less the IP (20) and
/// UDP (8) headers.
pub const MAX_BYTES: usize = 65_507;

/// Datagrams `start..start + count` of a batch, to one address, sent as one message: all
/// `seg` bytes long except the last, which may be shorter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Train {
    /// Index of the first datagram.
    pub start: usize,
    /// Number of datagrams (at least one).
    pub count: usize,
    /// Segment size: the first datagram's length.
    pub seg: usize,
}

/// Groups `batch` into trains: consecutive datagrams to the same address with the first's
/// length (the last may be shorter and ends the train), at most [`MAX_SEGMENTS`] and
/// [`MAX_BYTES`] per train. An empty datagram is a train of its own.
pub fn trains(batch: &[(Vec<u8>, SocketAddr)]) -> Vec<Train> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < batch.len() {
        let (first, to) = (&batch[i].0, batch[i].1);
        let seg = first.len();
        let mut count = 1;
        let mut bytes = seg;
        while seg > 0 && i + count < batch.len() && count < MAX_SEGMENTS {
            let (d, next_to) = (&batch[i + count].0, batch[i + count].1);
            if next_to != to || d.is_empty() || d.len() > seg || bytes + d.len() > MAX_BYTES {
                break;
            }
            count += 1;
            bytes += d.len();
            if d.len() < seg {
                break;
            }
        }
        out.push(Train {
            start: i,
            count,
            seg,
        });
        i += count;
    }
    out
}

/// How many of `trains` (from the first) one `sendmmsg(2)` can carry, and the segment size
/// they share (`None`: no train has more than one datagram, send without `UDP_SEGMENT`).
/// A message of one datagram no longer than the segment size goes out unchanged under it,
/// so single datagrams ride along; a longer one, or a train of another size, ends the call.
/// At most [`BATCH`] messages per call.
pub fn call_trains(trains: &[Train]) -> (usize, Option<usize>) {
    let mut seg: Option<usize> = None;
    let mut longest_single = 0;
    let mut n = 0;
    for t in trains.iter().take(BATCH) {
        if t.count > 1 {
            match seg {
                None if longest_single <= t.seg => seg = Some(t.seg),
                Some(s) if s == t.seg => {}
                _ => break,
            }
        } else {
            if seg.is_some_and(|s| t.seg > s) {
                break;
            }
            longest_single = longest_single.max(t.seg);
        }
        n += 1;
    }
    (n.max(1), seg)
}

/// What one batched send moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    /// Datagrams that left (as the receiver will see them).
    pub datagrams: usize,
    /// Messages the kernel took (one per GSO train or plain datagram).
    pub messages: usize,
}

/// One `sendmmsg(2)` of the first [`call_trains`] of `batch`, each train one message, with a
/// `UDP_SEGMENT` control message when they share a segment size. An error only when the
/// first message could not be sent.
pub(crate) fn send_gso(fd: RawFd, batch: &[(Vec<u8>, SocketAddr)]) -> nix::Result<Sent> {
    let all = trains(batch);
    let (n, seg) = call_trains(&all);
    let trains = &all[..n.min(all.len())];
    if trains.is_empty() {
        return Ok(Sent::default());
    }
    let iovs: Vec<Vec<IoSlice<'_>>> = trains
        .iter()
        .map(|t| {
            batch[t.start..t.start + t.count]
                .iter()
                .map(|(d, _)| IoSlice::new(d))
                .collect()
        })
        .collect();
    let addrs: Vec<Option<SockaddrStorage>> = trains
        .iter()
        .map(|t| Some(SockaddrStorage::from(batch[t.start].1)))
        .collect();
    let seg16 = seg.map(|s| u16::try_from(s).unwrap_or(u16::MAX));
    let cmsg: Vec<ControlMessage<'_>> = seg16
        .as_ref()
        .map(ControlMessage::UdpGsoSegments)
        .into_iter()
        .collect();
    let space = seg16.map(|_| nix::cmsg_space!(u16));
    let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(trains.len(), space);
    let sent = sendmmsg(fd, &mut headers, &iovs, addrs, &cmsg, MsgFlags::empty())?.count();
    Ok(Sent {
        datagrams: trains[..sent].iter().map(|t| t.count).sum(),
        messages: sent,
    })
}

/// Whether a send error means the path cannot take GSO (so the socket should stop using it
/// and resend plainly): `EIO` (a device without checksum offload), `EINVAL` (segment size
/// beyond the path MTU, `SO_NO_CHECK`), `ENOPROTOOPT` / `EOPNOTSUPP` (no `UDP_SEGMENT`).
pub(crate) fn refuses_gso(e: nix::Error) -> bool {
    use nix::errno::Errno;
    matches!(
        e,
        Errno::EIO | Errno::EINVAL | Errno::ENOPROTOOPT | Errno::EOPNOTSUPP
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(spec: &[(usize, u16)]) -> Vec<(Vec<u8>, SocketAddr)> {
        spec.iter()
            .map(|&(len, port)| (vec![0; len], SocketAddr::from(([127, 0, 0, 1], port))))
            .collect()
    }

    fn shape(ts: &[Train]) -> Vec<(usize, usize, usize)> {
        ts.iter().map(|t| (t.start, t.count, t.seg)).collect()
    }

    /// Same address and size join; a shorter one ends the train; a longer one, another
    /// address or an empty datagram starts a new one.
    #[test]
    fn trains_split_on_address_and_size() {
        let b = batch(&[
            (100, 1),
            (100, 1),
            (60, 1), // shorter: joins and ends the train
            (100, 1),
            (100, 2), // another address
            (100, 2),
            (120, 2), // longer
            (0, 2),   // empty
            (0, 2),
        ]);
        assert_eq!(
            shape(&trains(&b)),
            vec![
                (0, 3, 100),
                (3, 1, 100),
                (4, 2, 100),
                (6, 1, 120),
                (7, 1, 0),
                (8, 1, 0)
            ]
        );
    }

    /// At most 64 segments and 65507 bytes per train.
    #[test]
    fn trains_bounded_by_segments_and_bytes() {
        let b = batch(&[(10, 1); 130]);
        assert_eq!(
            shape(&trains(&b)),
            vec![(0, 64, 10), (64, 64, 10), (128, 2, 10)]
        );
        // 1400-byte segments: 46 fit in 65507 bytes (46 × 1400 = 64400).
        let b = batch(&[(1400, 1); 50]);
        assert_eq!(shape(&trains(&b)), vec![(0, 46, 1400), (46, 4, 1400)]);
    }

    /// A call shares one segment size: single datagrams no longer than it ride along, a
    /// train of another size or a longer single ends the call; at most BATCH messages.
    #[test]
    fn calls_share_one_segment_size() {
        let t = |count, seg| Train {
            start: 0,
            count,
            seg,
        };
        assert_eq!(
            call_trains(&[t(1, 50), t(3, 100), t(1, 80), t(2, 100)]),
            (4, Some(100))
        );
        assert_eq!(call_trains(&[t(3, 100), t(2, 90)]), (1, Some(100)));
        assert_eq!(call_trains(&[t(3, 100), t(1, 120)]), (1, Some(100)));
        assert_eq!(call_trains(&[t(1, 120), t(3, 100)]), (1, None));
        assert_eq!(call_trains(&[t(1, 120), t(1, 30)]), (2, None));
        assert_eq!(call_trains(&vec![t(2, 10); 40]), (BATCH, Some(10)));
    }
}
