//! Curve25519 keys as `tcpnc genkey` / `tcpnc pubkey` print them (standard base64 of 32 bytes,
//! as WireGuard's `wg genkey` / `wg pubkey`), generated and derived with the `snow` crate's
//! Curve25519 (no cryptography is written here).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use snow::params::DHChoice;
use snow::resolvers::{CryptoResolver, DefaultResolver};

use crate::error::KeyError;

/// Bytes of a key (private, public or preshared).
pub const KEY_LEN: usize = 32;

/// 32 key bytes; `Display` is base64, `FromStr` reads it back.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key(pub [u8; KEY_LEN]);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&STANDARD.encode(self.0))
    }
}

impl fmt::Debug for Key {
    /// Keys are never printed in debug output (a config dump must not leak a private key).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(..)")
    }
}

impl std::str::FromStr for Key {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Key, KeyError> {
        let bytes = STANDARD.decode(s.trim()).map_err(|_| KeyError::Format)?;
        let bytes: [u8; KEY_LEN] = bytes.try_into().map_err(|_| KeyError::Format)?;
        Ok(Key(bytes))
    }
}

fn dh() -> Result<Box<dyn snow::types::Dh>, KeyError> {
    DefaultResolver
        .resolve_dh(&DHChoice::Curve25519)
        .ok_or_else(|| KeyError::Noise("no Curve25519 implementation".into()))
}

impl Key {
    /// A fresh private key from the operating system's random source.
    pub fn generate() -> Result<Key, KeyError> {
        let mut rng = DefaultResolver
            .resolve_rng()
            .ok_or_else(|| KeyError::Noise("no random source".into()))?;
        let mut dh = dh()?;
        dh.generate(&mut *rng)
            .map_err(|e| KeyError::Noise(e.to_string()))?;
        let mut k = [0u8; KEY_LEN];
        k.copy_from_slice(dh.privkey());
        Ok(Key(k))
    }

    /// The public key of this private key.
    pub fn public(&self) -> Result<Key, KeyError> {
        let mut dh = dh()?;
        dh.set(&self.0);
        let mut k = [0u8; KEY_LEN];
        k.copy_from_slice(dh.pubkey());
        Ok(Key(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip_and_rfc7748_public_key() {
        // RFC 7748 §6.1: Alice's private key and public key.
        let private = Key(hex32(
            "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
        ));
        let public = private.public().unwrap();
        assert_eq!(
            public.0,
            hex32("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        );
        let text = public.to_string();
        assert_eq!(text.len(), 44);
        assert_eq!(text.parse::<Key>().unwrap(), public);
        assert!("AAAA".parse::<Key>().is_err());
        assert!("not base64!".parse::<Key>().is_err());
        let a = Key::generate().unwrap();
        assert_ne!(a, Key::generate().unwrap());
        assert_eq!(format!("{a:?}"), "Key(..)");
    }

    pub(crate) fn hex32(s: &str) -> [u8; 32] {
        let mut k = [0u8; 32];
        for (i, b) in k.iter_mut().enumerate() {
            *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
        }
        k
    }
}
