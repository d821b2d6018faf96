//! [`Cipher`]: the AEAD of a tunnel's handshake and sessions, one of the two cipher functions
//! of the Noise Protocol Framework (rev. 34, §12.3 `ChaChaPoly`, §12.4 `AESGCM`). Both are
//! 256-bit-key AEADs with a 128-bit tag, so the datagram format is the same (docs/wire.md §10);
//! only the protocol name, and so every byte after the header, differs.
//!
//! The initiator chooses: its initiation is sealed under its [`Cipher`], and a responder reads
//! an initiation under either (its own preference first), answering and keeping the session in
//! the initiator's. Two gateways that prefer different ciphers therefore always connect.
//! ChaCha20-Poly1305 is the safe choice everywhere; AES-256-GCM is several times cheaper on a
//! CPU with AES and carry-less multiply instructions (docs/speed.md, "The tunnel's cipher").

use std::fmt;
use std::str::FromStr;

/// The AEAD of a Noise session (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Cipher {
    /// ChaCha20-Poly1305 (RFC 8439); Noise `ChaChaPoly`.
    #[default]
    ChaCha20Poly1305,
    /// AES-256-GCM (NIST SP 800-38D); Noise `AESGCM`.
    Aes256Gcm,
}

impl Cipher {
    /// Every cipher, in the order of their names' documentation.
    pub const ALL: [Cipher; 2] = [Cipher::ChaCha20Poly1305, Cipher::Aes256Gcm];

    /// The Noise protocol name of the tunnel's handshake under this cipher.
    pub fn noise_params(self) -> &'static str {
        match self {
            Cipher::ChaCha20Poly1305 => "Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s",
            Cipher::Aes256Gcm => "Noise_IKpsk2_25519_AESGCM_BLAKE2s",
        }
    }

    /// The configuration and statistics name: `chacha20-poly1305` or `aes-256-gcm`.
    pub fn name(self) -> &'static str {
        match self {
            Cipher::ChaCha20Poly1305 => "chacha20-poly1305",
            Cipher::Aes256Gcm => "aes-256-gcm",
        }
    }

    /// The tunnel counter of the sessions completed under this cipher
    /// ([`crate::TunnelStats`]).
    pub fn sessions_counter(self) -> &'static str {
        match self {
            Cipher::ChaCha20Poly1305 => "sessions_chacha20_poly1305",
            Cipher::Aes256Gcm => "sessions_aes_256_gcm",
        }
    }

    /// This cipher, then the other: the order a responder tries an initiation in.
    pub fn preference(self) -> [Cipher; 2] {
        match self {
            Cipher::ChaCha20Poly1305 => [Cipher::ChaCha20Poly1305, Cipher::Aes256Gcm],
            Cipher::Aes256Gcm => [Cipher::Aes256Gcm, Cipher::ChaCha20Poly1305],
        }
    }
}

impl fmt::Display for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a cipher's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cipher {0:?} (chacha20-poly1305 or aes-256-gcm)")]
pub struct UnknownCipher(pub String);

impl FromStr for Cipher {
    type Err = UnknownCipher;

    fn from_str(s: &str) -> Result<Cipher, UnknownCipher> {
        Cipher::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownCipher(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_refused() {
        for c in Cipher::ALL {
            assert_eq!(c.name().parse::<Cipher>(), Ok(c));
            assert_eq!(c.preference()[0], c);
            assert_ne!(c.preference()[1], c);
        }
        assert!("aes-128-gcm".parse::<Cipher>().is_err());
        assert!("".parse::<Cipher>().is_err());
    }
}
