//! KEEPALIVE frame: peer-liveness probe and reply.
//!
//! ```text
//! offset  size  field
//! 0       1     version (1)
//! 1       1     type (0x04 KEEPALIVE)
//! 2       1     flags: 0x01 REPLY; 0xFE reserved (zero)
//! 3       1     reserved (zero)
//! 4       8     nonce
//! 12            end (exactly 12 bytes)
//! ```
//!
//! A gateway sends a probe with a fresh nonce; the peer answers with a reply carrying the same
//! nonce. The nonce lets the prober match replies to probes (RTT sample, liveness) and ignore
//! stale or spoofed replies.

use crate::bytes::{need, put_u64, room, u64_at};
use crate::frame::{FrameType, check_preamble, write_preamble};
use crate::{Result, WireError};

/// KEEPALIVE flag bits (byte 2).
pub mod flags {
    /// This is a reply to a probe with the same nonce.
    pub const REPLY: u8 = 0x01;
    /// Reserved; must be zero (frames with any of these set are rejected).
    pub const RESERVED: u8 = 0xFE;
}

mod field {
    pub const FLAGS: usize = 2;
    pub const RESERVED: usize = 3;
    pub const NONCE: usize = 4;
    pub const END: usize = 12;
}

/// Length of a KEEPALIVE frame.
const FRAME_LEN: usize = field::END;

/// A zero-copy view of a KEEPALIVE frame (preamble included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepalivePacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> KeepalivePacket<T> {
    /// Wraps a buffer without checks; getters may panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> KeepalivePacket<T> {
        KeepalivePacket { buffer }
    }

    /// Wraps a buffer after checking the preamble (version 2, type KEEPALIVE) and the exact
    /// length.
    pub fn new_checked(buffer: T) -> Result<KeepalivePacket<T>> {
        let p = KeepalivePacket::new_unchecked(buffer);
        check_preamble(p.buffer.as_ref(), FrameType::Keepalive)?;
        p.check_len()?;
        Ok(p)
    }

    /// `Truncated` if shorter than 12 bytes, `BadLength` if longer.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        need(FRAME_LEN, len)?;
        if len != FRAME_LEN {
            return Err(WireError::BadLength {
                expected: FRAME_LEN,
                got: len,
            });
        }
        Ok(())
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Raw flags byte.
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// The reserved byte 3.
    pub fn reserved(&self) -> u8 {
        self.buffer.as_ref()[field::RESERVED]
    }

    /// REPLY flag.
    pub fn reply(&self) -> bool {
        self.flags() & flags::REPLY != 0
    }

    /// The nonce.
    pub fn nonce(&self) -> u64 {
        u64_at(self.buffer.as_ref(), field::NONCE)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> KeepalivePacket<T> {
    /// Sets the raw flags byte.
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }

    /// Sets the reserved byte (emit writes zero).
    pub fn set_reserved(&mut self, v: u8) {
        self.buffer.as_mut()[field::RESERVED] = v;
    }

    /// Sets the nonce.
    pub fn set_nonce(&mut self, v: u64) {
        put_u64(self.buffer.as_mut(), field::NONCE, v);
    }
}

/// A validated KEEPALIVE frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeepaliveRepr {
    /// `false`: a probe; `true`: the reply to the probe with the same nonce.
    pub reply: bool,
    /// Chosen by the prober, echoed by the replier.
    pub nonce: u64,
}

impl KeepaliveRepr {
    /// A probe with `nonce`.
    pub const fn probe(nonce: u64) -> KeepaliveRepr {
        KeepaliveRepr {
            reply: false,
            nonce,
        }
    }

    /// The reply to this probe.
    pub const fn to_reply(&self) -> KeepaliveRepr {
        KeepaliveRepr {
            reply: true,
            nonce: self.nonce,
        }
    }

    /// Parses and validates a KEEPALIVE frame.
    pub fn parse<T: AsRef<[u8]>>(packet: &KeepalivePacket<T>) -> Result<KeepaliveRepr> {
        check_preamble(packet.buffer.as_ref(), FrameType::Keepalive)?;
        packet.check_len()?;
        let reserved =
            u16::from(packet.flags() & flags::RESERVED) | u16::from(packet.reserved()) << 8;
        if reserved != 0 {
            return Err(WireError::ReservedBits(reserved));
        }
        Ok(KeepaliveRepr {
            reply: packet.reply(),
            nonce: packet.nonce(),
        })
    }

    /// Frame length: 12 bytes.
    pub const fn buffer_len(&self) -> usize {
        FRAME_LEN
    }

    /// Writes the frame to the start of `packet`'s buffer (at least 12 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut KeepalivePacket<T>,
    ) -> Result<()> {
        room(FRAME_LEN, packet.buffer.as_ref().len())?;
        write_preamble(packet.buffer.as_mut(), FrameType::Keepalive);
        packet.set_flags(if self.reply { flags::REPLY } else { 0 });
        packet.set_reserved(0);
        packet.set_nonce(self.nonce);
        Ok(())
    }
}
