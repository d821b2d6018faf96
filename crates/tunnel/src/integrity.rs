//! Integrity mode (`insecure = true`): every frame travels as `[0x11] ++ frame ++ CRC-32C`
//! (Castagnoli polynomial, RFC 3720 §B.4; big-endian), and the receiver checks the checksum
//! before the frame is parsed, so a corrupted or truncated frame is dropped, never decoded
//! (the implementation paper's §V-E notes TCP/NC has no checksum before its ACK).
//!
//! This detects accidents, not attacks: anyone can compute a CRC. Use keys on any path you do
//! not control.

use std::ops::Range;

use crate::error::Drop;
use crate::outer::{INTEGRITY_OVERHEAD, Outer, TYPE_INTEGRITY, parse};

/// `frame` in the integrity envelope.
pub fn seal(frame: &[u8]) -> Vec<u8> {
    let mut d = Vec::with_capacity(frame.len() + INTEGRITY_OVERHEAD);
    seal_into(frame, &mut d);
    d
}

/// [`seal`] into `out` (replaced; no allocation when its capacity suffices).
pub fn seal_into(frame: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.push(TYPE_INTEGRITY);
    out.extend_from_slice(frame);
    let crc = crc32c::crc32c(out);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// The frame inside an integrity-mode datagram, if its checksum holds.
pub fn open(datagram: &[u8]) -> Result<&[u8], Drop> {
    frame_range(datagram).map(|r| &datagram[r])
}

/// Where the frame is in an integrity-mode datagram, if its checksum holds.
pub fn frame_range(datagram: &[u8]) -> Result<Range<usize>, Drop> {
    match parse(datagram)? {
        Outer::Integrity { covered, crc, .. } if crc32c::crc32c(covered) == crc => {
            Ok(1..covered.len())
        }
        Outer::Integrity { .. } => Err(Drop::BadChecksum),
        _ => Err(Drop::WrongMode),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn crc32c_check_value() {
        // RFC 3720 §B.4 / the CRC catalogue's check value for "123456789".
        assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    }

    proptest! {
        #[test]
        fn round_trip_and_every_bit_flip_is_caught(frame in proptest::collection::vec(any::<u8>(), 0..200), bit in any::<usize>()) {
            let d = seal(&frame);
            prop_assert_eq!(open(&d).unwrap(), &frame[..]);
            let mut reused = vec![0xaa; 300];
            seal_into(&frame, &mut reused);
            prop_assert_eq!(&reused, &d);
            let mut bad = d.clone();
            let bit = bit % (bad.len() * 8);
            bad[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(open(&bad).is_err());
            for cut in 0..d.len() {
                prop_assert!(open(&d[..cut]).is_err());
            }
        }
    }
}
