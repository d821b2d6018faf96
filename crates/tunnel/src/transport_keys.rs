//! A session's two transport keys, sealing and opening datagrams **in place**.
//!
//! The keys are the Noise handshake's `Split()` (Noise Protocol Framework rev. 34, §5.2): the
//! first cipher key encrypts what the initiator sends, the second what the responder sends. The
//! AEAD is the handshake's [`Cipher`] from `ring` (the same code `snow` itself calls through
//! its `ring` resolver), keyed with those raw keys, and each datagram's nonce is its explicit
//! 64-bit counter encoded as Noise says: four zero bytes, then the counter little-endian for
//! `ChaChaPoly` (§12.3) or big-endian for `AESGCM` (§12.4); no associated data (§5.1
//! `EncryptWithAd` with an empty `ad` once the handshake is done). So the datagrams are exactly
//! the bytes `snow`'s stateless transport writes (checked against it by the tests below and by
//! the golden vectors of `tests/golden.rs`), without its two copies: `snow` copies the
//! plaintext into the output (and the ciphertext into the plaintext buffer when opening)
//! before running the AEAD in place. Here the caller's buffer is sealed or opened where it is
//! (docs/speed.md, "The tunnel's AEAD in place").
//!
//! No cryptography is implemented here: the key schedule is `snow`'s, the AEAD is `ring`'s.

use ring::aead::{AES_256_GCM, Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
use snow::HandshakeState;
use zeroize::Zeroize;

use crate::cipher::Cipher;
use crate::outer::TAG_LEN;

/// Why sealing or opening failed (the caller maps it to its own outcome).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AeadRefused;

/// The two directions' keys of one session.
pub struct TransportKeys {
    send: LessSafeKey,
    recv: LessSafeKey,
    cipher: Cipher,
    initiator: bool,
}

impl std::fmt::Debug for TransportKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransportKeys")
            .field("cipher", &self.cipher)
            .field("initiator", &self.initiator)
            .finish_non_exhaustive()
    }
}

impl TransportKeys {
    /// The keys of a finished handshake `hs` under `cipher` (the handshake's own), or `None`
    /// when the handshake is not finished.
    pub fn from_handshake(hs: &mut HandshakeState, cipher: Cipher) -> Option<TransportKeys> {
        if !hs.is_handshake_finished() {
            return None;
        }
        let initiator = hs.is_initiator();
        let (mut first, mut second) = hs.dangerously_get_raw_split();
        let keys = match initiator {
            true => TransportKeys::new(&first, &second, cipher, initiator),
            false => TransportKeys::new(&second, &first, cipher, initiator),
        };
        first.zeroize();
        second.zeroize();
        keys
    }

    fn new(send: &[u8; 32], recv: &[u8; 32], cipher: Cipher, initiator: bool) -> Option<Self> {
        let algorithm = match cipher {
            Cipher::ChaCha20Poly1305 => &CHACHA20_POLY1305,
            Cipher::Aes256Gcm => &AES_256_GCM,
        };
        let key = |k: &[u8; 32]| UnboundKey::new(algorithm, k).ok().map(LessSafeKey::new);
        Some(TransportKeys {
            send: key(send)?,
            recv: key(recv)?,
            cipher,
            initiator,
        })
    }

    /// The cipher the keys are for.
    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    /// Whether these are the initiator's keys.
    pub fn is_initiator(&self) -> bool {
        self.initiator
    }

    /// The Noise nonce of `counter` (rev. 34 §12.3, §12.4); 2^64 − 1 is reserved (§5.1).
    fn nonce(&self, counter: u64) -> Result<Nonce, AeadRefused> {
        if counter == u64::MAX {
            return Err(AeadRefused);
        }
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(&match self.cipher {
            Cipher::ChaCha20Poly1305 => counter.to_le_bytes(),
            Cipher::Aes256Gcm => counter.to_be_bytes(),
        });
        Ok(Nonce::assume_unique_for_key(n))
    }

    /// Encrypts `buf[from..]` in place with `counter`'s nonce and appends the tag.
    pub fn seal_in_place(
        &self,
        counter: u64,
        buf: &mut Vec<u8>,
        from: usize,
    ) -> Result<(), AeadRefused> {
        let nonce = self.nonce(counter)?;
        let plaintext = buf.get_mut(from..).ok_or(AeadRefused)?;
        let tag = self
            .send
            .seal_in_place_separate_tag(nonce, Aad::empty(), plaintext)
            .map_err(|_| AeadRefused)?;
        buf.extend_from_slice(tag.as_ref());
        Ok(())
    }

    /// Opens `sealed` (ciphertext and tag) in place; the plaintext is its first returned
    /// number of bytes. On failure the contents of `sealed` are unspecified.
    pub fn open_in_place(&self, counter: u64, sealed: &mut [u8]) -> Result<usize, AeadRefused> {
        if sealed.len() < TAG_LEN {
            return Err(AeadRefused);
        }
        let nonce = self.nonce(counter)?;
        self.recv
            .open_in_place(nonce, Aad::empty(), sealed)
            .map(|p| p.len())
            .map_err(|_| AeadRefused)
    }
}

#[cfg(test)]
mod tests {
    use snow::{Builder, StatelessTransportState};

    use super::*;

    /// Both sides of a finished Noise NN handshake under `cipher`: (initiator, responder).
    fn finished(cipher: Cipher) -> (HandshakeState, HandshakeState) {
        let name = cipher.noise_params().replace("IKpsk2", "NN");
        let params: snow::params::NoiseParams = name.parse().unwrap();
        let build = || Builder::with_resolver(params.clone(), crate::handshake::resolver());
        let mut i = build().build_initiator().unwrap();
        let mut r = build().build_responder().unwrap();
        let (mut m, mut p) = ([0u8; 128], [0u8; 128]);
        let n = i.write_message(&[], &mut m).unwrap();
        r.read_message(&m[..n], &mut p).unwrap();
        let n = r.write_message(&[], &mut m).unwrap();
        i.read_message(&m[..n], &mut p).unwrap();
        (i, r)
    }

    /// Our keys and snow's stateless transport, from the same handshakes.
    fn both(cipher: Cipher) -> [(TransportKeys, StatelessTransportState); 2] {
        let (mut i, mut r) = finished(cipher);
        let ki = TransportKeys::from_handshake(&mut i, cipher).unwrap();
        let kr = TransportKeys::from_handshake(&mut r, cipher).unwrap();
        [
            (ki, i.into_stateless_transport_mode().unwrap()),
            (kr, r.into_stateless_transport_mode().unwrap()),
        ]
    }

    /// Sealing in place gives snow's bytes, and each side opens the other's, in both
    /// directions, for both ciphers and counters of every byte width.
    #[test]
    fn in_place_equals_snow_both_ways() {
        for cipher in Cipher::ALL {
            let [(ours_i, snow_i), (ours_r, snow_r)] = both(cipher);
            assert!(ours_i.is_initiator() && !ours_r.is_initiator());
            let sides = [
                (&ours_i, &snow_i, &ours_r, &snow_r),
                (&ours_r, &snow_r, &ours_i, &snow_i),
            ];
            for (ours_tx, snow_tx, ours_rx, snow_rx) in sides {
                for (counter, len) in [(0u64, 0usize), (1, 1), (258, 64), (1 << 40, 1400)] {
                    let plain: Vec<u8> = (0..len).map(|x| (x * 7 + 3) as u8).collect();
                    let mut expected = vec![0u8; len + TAG_LEN];
                    let n = snow_tx
                        .write_message(counter, &plain, &mut expected)
                        .unwrap();
                    assert_eq!(n, len + TAG_LEN);
                    let mut buf = vec![0xee, 0xff];
                    buf.extend_from_slice(&plain);
                    ours_tx.seal_in_place(counter, &mut buf, 2).unwrap();
                    assert_eq!(&buf[2..], &expected[..], "{cipher} counter {counter}");
                    // Our sealed bytes open with snow, and snow's with ours.
                    let mut out = vec![0u8; len];
                    assert_eq!(snow_rx.read_message(counter, &buf[2..], &mut out), Ok(len));
                    assert_eq!(out, plain);
                    let mut sealed = expected.clone();
                    assert_eq!(ours_rx.open_in_place(counter, &mut sealed), Ok(len));
                    assert_eq!(&sealed[..len], &plain[..]);
                }
            }
        }
    }

    /// A wrong counter, a flipped bit, a short datagram and the reserved nonce are refused.
    #[test]
    fn refuses_what_does_not_authenticate() {
        for cipher in Cipher::ALL {
            let [(a, _), (b, _)] = both(cipher);
            let mut d = b"frame".to_vec();
            a.seal_in_place(7, &mut d, 0).unwrap();
            assert_eq!(b.open_in_place(8, &mut d.clone()), Err(AeadRefused));
            assert_eq!(a.open_in_place(7, &mut d.clone()), Err(AeadRefused));
            for bit in 0..d.len() * 8 {
                let mut bad = d.clone();
                bad[bit / 8] ^= 1 << (bit % 8);
                assert_eq!(b.open_in_place(7, &mut bad), Err(AeadRefused));
            }
            assert_eq!(
                b.open_in_place(7, &mut d[..TAG_LEN - 1].to_vec()),
                Err(AeadRefused)
            );
            assert_eq!(a.seal_in_place(u64::MAX, &mut vec![1], 0), Err(AeadRefused));
            assert_eq!(a.seal_in_place(0, &mut vec![1], 2), Err(AeadRefused));
            assert_eq!(b.open_in_place(7, &mut d), Ok(5));
        }
    }

    #[test]
    fn unfinished_handshake_has_no_keys() {
        let params: snow::params::NoiseParams =
            "Noise_NN_25519_ChaChaPoly_BLAKE2s".parse().unwrap();
        let mut i = Builder::new(params).build_initiator().unwrap();
        assert!(TransportKeys::from_handshake(&mut i, Cipher::ChaCha20Poly1305).is_none());
    }
}
