//! The outer envelope of every tunnel datagram (`docs/wire.md` §10): one type byte, then either
//! an integrity-checked frame (CRC-32C trailer) or a WireGuard-shaped message (handshake
//! initiation, handshake response, transport data). Only this header is read before a datagram
//! is authenticated (checksum or AEAD tag); nothing here allocates or panics.

use crate::error::Drop;

/// Outer type of an integrity-mode datagram: `[0x11] ++ frame ++ CRC-32C`.
pub const TYPE_INTEGRITY: u8 = 0x11;
/// Outer type of a Noise handshake initiation (message 1 of IKpsk2).
pub const TYPE_INITIATION: u8 = 0x21;
/// Outer type of a Noise handshake response (message 2 of IKpsk2).
pub const TYPE_RESPONSE: u8 = 0x22;
/// Outer type of an AEAD-protected transport datagram.
pub const TYPE_TRANSPORT: u8 = 0x24;

/// Bytes the integrity envelope adds to a frame: type byte + CRC-32C.
pub const INTEGRITY_OVERHEAD: usize = 1 + 4;
/// Bytes of the transport header: type, 3 reserved, receiver index (4), counter (8).
pub const TRANSPORT_HEADER: usize = 16;
/// Bytes of the Poly1305 tag.
pub const TAG_LEN: usize = 16;
/// Bytes the secure envelope adds to a frame: header + tag.
pub const TRANSPORT_OVERHEAD: usize = TRANSPORT_HEADER + TAG_LEN;
/// Bytes of the keyed BLAKE2s MAC closing each handshake message.
pub const MAC_LEN: usize = 16;
/// Bytes of Noise IKpsk2 message 1 with its 20-byte payload (timestamp, boot id):
/// e (32) + s (32+16) + payload (20+16).
pub const NOISE_INIT_LEN: usize = 32 + 48 + 20 + 16;
/// Bytes of Noise IKpsk2 message 2 with its 8-byte payload (boot id): e (32) + payload (8+16).
pub const NOISE_RESP_LEN: usize = 32 + 8 + 16;
/// Whole initiation: type, 3 reserved, sender index, Noise message 1, mac1.
pub const INITIATION_LEN: usize = 8 + NOISE_INIT_LEN + MAC_LEN;
/// Whole response: type, 3 reserved, sender index, receiver index, Noise message 2, mac1.
pub const RESPONSE_LEN: usize = 12 + NOISE_RESP_LEN + MAC_LEN;

/// A datagram classified by its outer header (not yet authenticated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outer<'a> {
    /// Integrity mode: the frame and its checksum, unchecked.
    Integrity {
        /// Type byte + frame: the bytes the checksum covers.
        covered: &'a [u8],
        /// The frame.
        frame: &'a [u8],
        /// The checksum as received.
        crc: u32,
    },
    /// A handshake initiation.
    Initiation(Initiation<'a>),
    /// A handshake response.
    Response(Response<'a>),
    /// A transport datagram.
    Transport(Transport<'a>),
}

/// A handshake initiation's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Initiation<'a> {
    /// The initiator's session index (the responder puts it in its transport headers).
    pub sender: u32,
    /// Noise message 1.
    pub noise: &'a [u8],
    /// Bytes covered by mac1 (everything before it).
    pub covered: &'a [u8],
    /// mac1 as received.
    pub mac1: &'a [u8],
}

/// A handshake response's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response<'a> {
    /// The responder's session index.
    pub sender: u32,
    /// The initiator's index this answers.
    pub receiver: u32,
    /// Noise message 2.
    pub noise: &'a [u8],
    /// Bytes covered by mac1.
    pub covered: &'a [u8],
    /// mac1 as received.
    pub mac1: &'a [u8],
}

/// A transport datagram's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transport<'a> {
    /// The receiver's session index.
    pub receiver: u32,
    /// The 64-bit counter (the AEAD nonce).
    pub counter: u64,
    /// Ciphertext and tag.
    pub sealed: &'a [u8],
}

fn be32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_be_bytes(a)
}

fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

/// Classifies a datagram by its outer header. Checks lengths and reserved bytes only.
pub fn parse(d: &[u8]) -> Result<Outer<'_>, Drop> {
    let (&ty, _) = d.split_first().ok_or(Drop::Malformed)?;
    let reserved_zero = |d: &[u8]| d.get(1..4) == Some(&[0, 0, 0][..]);
    match ty {
        TYPE_INTEGRITY => {
            if d.len() < INTEGRITY_OVERHEAD {
                return Err(Drop::Malformed);
            }
            let (covered, crc) = d.split_at(d.len() - 4);
            Ok(Outer::Integrity {
                covered,
                frame: &covered[1..],
                crc: be32(crc),
            })
        }
        TYPE_INITIATION if d.len() == INITIATION_LEN && reserved_zero(d) => {
            let (covered, mac1) = d.split_at(INITIATION_LEN - MAC_LEN);
            Ok(Outer::Initiation(Initiation {
                sender: be32(&d[4..]),
                noise: &covered[8..],
                covered,
                mac1,
            }))
        }
        TYPE_RESPONSE if d.len() == RESPONSE_LEN && reserved_zero(d) => {
            let (covered, mac1) = d.split_at(RESPONSE_LEN - MAC_LEN);
            Ok(Outer::Response(Response {
                sender: be32(&d[4..]),
                receiver: be32(&d[8..]),
                noise: &covered[12..],
                covered,
                mac1,
            }))
        }
        TYPE_TRANSPORT if d.len() >= TRANSPORT_OVERHEAD && reserved_zero(d) => {
            Ok(Outer::Transport(Transport {
                receiver: be32(&d[4..]),
                counter: be64(&d[8..]),
                sealed: &d[TRANSPORT_HEADER..],
            }))
        }
        TYPE_INITIATION | TYPE_RESPONSE | TYPE_TRANSPORT => Err(Drop::Malformed),
        _ => Err(Drop::UnknownType),
    }
}

/// The transport header for `receiver` and `counter`.
pub fn transport_header(receiver: u32, counter: u64) -> [u8; TRANSPORT_HEADER] {
    let mut h = [0u8; TRANSPORT_HEADER];
    h[0] = TYPE_TRANSPORT;
    h[4..8].copy_from_slice(&receiver.to_be_bytes());
    h[8..16].copy_from_slice(&counter.to_be_bytes());
    h
}

/// The first bytes of a handshake message: type, 3 reserved, `sender` (and `receiver`).
pub fn handshake_header(ty: u8, sender: u32, receiver: Option<u32>) -> Vec<u8> {
    let mut h = vec![ty, 0, 0, 0];
    h.extend_from_slice(&sender.to_be_bytes());
    if let Some(r) = receiver {
        h.extend_from_slice(&r.to_be_bytes());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_reserved_bytes_are_checked() {
        assert_eq!(parse(&[]), Err(Drop::Malformed));
        assert_eq!(parse(&[0x01, 0x01]), Err(Drop::UnknownType));
        assert_eq!(parse(&[TYPE_INTEGRITY, 1, 2, 3]), Err(Drop::Malformed));
        let mut t = transport_header(7, 9).to_vec();
        assert_eq!(parse(&t), Err(Drop::Malformed), "no tag");
        t.extend_from_slice(&[0; TAG_LEN]);
        match parse(&t) {
            Ok(Outer::Transport(x)) => assert_eq!((x.receiver, x.counter), (7, 9)),
            other => panic!("{other:?}"),
        }
        t[2] = 1;
        assert_eq!(parse(&t), Err(Drop::Malformed), "reserved byte set");
        let mut i = handshake_header(TYPE_INITIATION, 5, None);
        i.resize(INITIATION_LEN, 0);
        assert!(matches!(parse(&i), Ok(Outer::Initiation(x)) if x.sender == 5));
        i.push(0);
        assert_eq!(parse(&i), Err(Drop::Malformed), "initiation has one length");
    }
}
