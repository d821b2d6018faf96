//! The handshake: Noise `IKpsk2` (Noise Protocol Framework rev. 34, §7.5 and §9; the pattern
//! WireGuard uses) with Curve25519, ChaCha20-Poly1305 or AES-256-GCM (the initiator's
//! [`Cipher`]) and BLAKE2s from the `snow` crate, two messages, one round trip. The initiator
//! knows the responder's static key in advance (IK); the responder learns the initiator's
//! static key from message 1 and looks it up among its peers;
//! the optional preshared key (all zero when absent) is mixed in at the end of message 2.
//!
//! Message 1 carries a 12-byte TAI64N timestamp (seconds + 2^62, nanoseconds; big-endian) so a
//! responder rejects a replayed initiation (WireGuard §5.1), then the sender's 8-byte *boot id*
//! (random per gateway process); message 2 carries the responder's boot id. A boot id that
//! changes tells the other side that the peer restarted and lost its engine state
//! (`docs/gateway.md`, restarts). Each message ends with `mac1`, a
//! keyed BLAKE2s-128 over the message under `BLAKE2s-256("mac1----" ++ receiver's public key)`:
//! one hash, checked before any Diffie-Hellman, so a sender that does not know the receiver's
//! public key costs almost nothing (WireGuard §5.4.4).

use blake2::digest::{KeyInit, Mac};
use blake2::{Blake2s256, Blake2sMac, Digest};
use snow::{Builder, HandshakeState};

use crate::cipher::Cipher;
use crate::error::{Drop, KeyError};
use crate::keys::Key;
use crate::outer::{
    self, Initiation, MAC_LEN, NOISE_INIT_LEN, NOISE_RESP_LEN, Response, TYPE_INITIATION,
    TYPE_RESPONSE,
};
use crate::transport_keys::TransportKeys;

/// The prologue both sides mix in: a peer speaking another tunnel version fails the handshake.
pub const PROLOGUE: &[u8] = b"tcpnc tunnel v1";
/// Bytes of the TAI64N timestamp in message 1.
pub const TIMESTAMP_LEN: usize = 12;
/// Bytes of the boot id in messages 1 and 2.
pub const BOOT_ID_LEN: usize = 8;

type Mac16 = Blake2sMac<blake2::digest::consts::U16>;

/// The mac1 key of a receiver: `BLAKE2s-256("mac1----" ++ public)`.
pub fn mac1_key(public: &Key) -> [u8; 32] {
    let mut h = Blake2s256::new();
    h.update(b"mac1----");
    h.update(public.0);
    h.finalize().into()
}

/// `mac1` over `covered`.
pub fn mac1(key: &[u8; 32], covered: &[u8]) -> [u8; MAC_LEN] {
    let mut m = <Mac16 as KeyInit>::new_from_slice(key).expect("32-byte key is valid");
    Mac::update(&mut m, covered);
    m.finalize().into_bytes().into()
}

/// Whether `mac` is `mac1` over `covered` (constant time).
pub fn mac1_ok(key: &[u8; 32], covered: &[u8], mac: &[u8]) -> bool {
    let mut m = <Mac16 as KeyInit>::new_from_slice(key).expect("32-byte key is valid");
    Mac::update(&mut m, covered);
    m.verify_slice(mac).is_ok()
}

/// The TAI64N label of a Unix time (seconds since the epoch + nanoseconds).
pub fn tai64n(unix: std::time::Duration) -> [u8; TIMESTAMP_LEN] {
    let mut t = [0u8; TIMESTAMP_LEN];
    t[..8].copy_from_slice(&(0x4000_0000_0000_000a_u64 + unix.as_secs()).to_be_bytes());
    t[8..].copy_from_slice(&unix.subsec_nanos().to_be_bytes());
    t
}

fn noise(e: snow::Error) -> KeyError {
    KeyError::Noise(e.to_string())
}

/// The crypto of `snow`: `ring`'s assembly ChaCha20-Poly1305 and AES-256-GCM where it has
/// them (AES-256-GCM only from `ring`), `snow`'s own implementations (Curve25519, BLAKE2s, and
/// ChaCha20-Poly1305 as fallback) for the rest. Both ChaCha20-Poly1305s implement RFC 8439, so
/// the bytes are the same (the golden vectors check it).
pub(crate) fn resolver() -> snow::resolvers::BoxedCryptoResolver {
    use snow::resolvers::{DefaultResolver, FallbackResolver, RingResolver};
    Box::new(FallbackResolver::new(
        Box::new(RingResolver),
        Box::new(DefaultResolver),
    ))
}

fn builder(local: &Key, cipher: Cipher) -> Result<Builder<'_>, KeyError> {
    let params = cipher.noise_params().parse().map_err(noise)?;
    Builder::with_resolver(params, resolver())
        .local_private_key(&local.0)
        .and_then(|b| b.prologue(PROLOGUE))
        .map_err(noise)
}

/// An initiation in flight: the Noise state waiting for message 2.
pub struct Initiator {
    hs: HandshakeState,
    /// Our session index (the responder's `receiver`).
    pub sender: u32,
    /// The cipher of the handshake and of the session it makes.
    pub cipher: Cipher,
}

/// What an initiation carries besides the keys: our session index, the TAI64N timestamp, our
/// boot id and the cipher.
#[derive(Debug, Clone, Copy)]
pub struct InitiationFields {
    /// Our session index.
    pub sender: u32,
    /// The TAI64N timestamp ([`tai64n`]).
    pub timestamp: [u8; TIMESTAMP_LEN],
    /// Our boot id.
    pub boot_id: u64,
    /// The cipher of the handshake and of its session.
    pub cipher: Cipher,
}

/// Starts a handshake to `remote`: the initiation datagram and the state to finish it.
/// `ephemeral` fixes the ephemeral key (golden vectors only).
pub fn initiate(
    local: &Key,
    remote: &Key,
    psk: &Key,
    f: InitiationFields,
    ephemeral: Option<&Key>,
) -> Result<(Initiator, Vec<u8>), KeyError> {
    let InitiationFields {
        sender,
        timestamp,
        boot_id,
        cipher,
    } = f;
    let mut b = builder(local, cipher)?
        .remote_public_key(&remote.0)
        .and_then(|b| b.psk(2, &psk.0))
        .map_err(noise)?;
    if let Some(e) = ephemeral {
        b = b.fixed_ephemeral_key_for_testing_only(&e.0);
    }
    let mut hs = b.build_initiator().map_err(noise)?;
    let mut msg = outer::handshake_header(TYPE_INITIATION, sender, None);
    let start = msg.len();
    msg.resize(start + NOISE_INIT_LEN, 0);
    let mut payload = [0u8; TIMESTAMP_LEN + BOOT_ID_LEN];
    payload[..TIMESTAMP_LEN].copy_from_slice(&timestamp);
    payload[TIMESTAMP_LEN..].copy_from_slice(&boot_id.to_be_bytes());
    let n = hs
        .write_message(&payload, &mut msg[start..])
        .map_err(noise)?;
    debug_assert_eq!(n, NOISE_INIT_LEN);
    let mac = mac1(&mac1_key(remote), &msg);
    msg.extend_from_slice(&mac);
    Ok((Initiator { hs, sender, cipher }, msg))
}

/// A message 1 that passed Noise: who sent it and when, and the state to answer it.
pub struct Accepted {
    hs: HandshakeState,
    /// The initiator's static public key.
    pub remote: Key,
    /// Its TAI64N timestamp.
    pub timestamp: [u8; TIMESTAMP_LEN],
    /// Its boot id.
    pub boot_id: u64,
    /// The initiator's session index.
    pub sender: u32,
    /// The initiator's cipher, which the response and the session use.
    pub cipher: Cipher,
}

/// Reads message 1 (mac1 already checked by the caller) under each cipher of `ciphers` in
/// turn until one authenticates it (the initiator chooses, [`crate::cipher`]): two DH
/// operations per cipher tried. `ephemeral` fixes the responder's ephemeral key (golden vectors
/// only).
pub fn read_initiation(
    local: &Key,
    m: &Initiation<'_>,
    ciphers: &[Cipher],
    ephemeral: Option<&Key>,
) -> Result<Accepted, Drop> {
    ciphers
        .iter()
        .find_map(|&c| read_initiation_as(local, m, c, ephemeral).ok())
        .ok_or(Drop::HandshakeFailed)
}

fn read_initiation_as(
    local: &Key,
    m: &Initiation<'_>,
    cipher: Cipher,
    ephemeral: Option<&Key>,
) -> Result<Accepted, Drop> {
    let mut b = builder(local, cipher).map_err(|_| Drop::HandshakeFailed)?;
    if let Some(e) = ephemeral {
        b = b.fixed_ephemeral_key_for_testing_only(&e.0);
    }
    let mut hs = b.build_responder().map_err(|_| Drop::HandshakeFailed)?;
    let mut payload = [0u8; 64];
    let n = hs
        .read_message(m.noise, &mut payload)
        .map_err(|_| Drop::HandshakeFailed)?;
    let remote: [u8; 32] = hs
        .get_remote_static()
        .and_then(|r| r.try_into().ok())
        .ok_or(Drop::HandshakeFailed)?;
    if n != TIMESTAMP_LEN + BOOT_ID_LEN {
        return Err(Drop::HandshakeFailed);
    }
    let mut timestamp = [0u8; TIMESTAMP_LEN];
    timestamp.copy_from_slice(&payload[..TIMESTAMP_LEN]);
    let mut boot = [0u8; BOOT_ID_LEN];
    boot.copy_from_slice(&payload[TIMESTAMP_LEN..n]);
    Ok(Accepted {
        hs,
        remote: Key(remote),
        timestamp,
        boot_id: u64::from_be_bytes(boot),
        sender: m.sender,
        cipher,
    })
}

/// Answers an accepted message 1: the response datagram and the session's transport keys.
pub fn respond(
    a: Accepted,
    psk: &Key,
    sender: u32,
    boot_id: u64,
) -> Result<(TransportKeys, Vec<u8>), Drop> {
    let mut hs = a.hs;
    hs.set_psk(2, &psk.0).map_err(|_| Drop::HandshakeFailed)?;
    let mut msg = outer::handshake_header(TYPE_RESPONSE, sender, Some(a.sender));
    let start = msg.len();
    msg.resize(start + NOISE_RESP_LEN, 0);
    hs.write_message(&boot_id.to_be_bytes(), &mut msg[start..])
        .map_err(|_| Drop::HandshakeFailed)?;
    let mac = mac1(&mac1_key(&a.remote), &msg);
    msg.extend_from_slice(&mac);
    let keys = TransportKeys::from_handshake(&mut hs, a.cipher).ok_or(Drop::HandshakeFailed)?;
    Ok((keys, msg))
}

/// Reads message 2 (mac1 already checked) and finishes the initiator's handshake: the
/// session keys and the responder's boot id.
pub fn read_response(i: Initiator, m: &Response<'_>) -> Result<(TransportKeys, u64), Drop> {
    let mut hs = i.hs;
    let mut payload = [0u8; 64];
    let n = hs
        .read_message(m.noise, &mut payload)
        .map_err(|_| Drop::HandshakeFailed)?;
    let boot: [u8; BOOT_ID_LEN] = payload[..n].try_into().map_err(|_| Drop::HandshakeFailed)?;
    let keys = TransportKeys::from_handshake(&mut hs, i.cipher).ok_or(Drop::HandshakeFailed)?;
    Ok((keys, u64::from_be_bytes(boot)))
}
