//! Tunnel framing: the common preamble, the frame-type dispatch and the BYPASS frame.
//!
//! Every UDP datagram between two gateways carries exactly one frame:
//!
//! ```text
//!  0        1        2
//! +--------+--------+------------------------------
//! |version | type   | body (depends on type) ...
//! +--------+--------+------------------------------
//! ```
//!
//! There is no length field: the UDP datagram delimits the frame.

use crate::bytes::{need, room};
use crate::{AckPacket, AckRepr, DataPacket, DataRepr, KeepalivePacket, KeepaliveRepr};
use crate::{PREAMBLE_LEN, Result, VERSION, WireError};

mod field {
    pub const VERSION: usize = 0;
    pub const TYPE: usize = 1;
    pub const BODY: usize = 2;
}

/// Frame type (preamble byte 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FrameType {
    /// A network-coded packet ([`DataRepr`]).
    Data = 0x01,
    /// An NC-ACK ([`AckRepr`]).
    Ack = 0x02,
    /// A whole IP packet carried uncoded ([`BypassRepr`]).
    Bypass = 0x03,
    /// A liveness probe or reply ([`KeepaliveRepr`]).
    Keepalive = 0x04,
}

impl FrameType {
    /// The type for a preamble byte, or `UnknownType`.
    pub const fn from_u8(v: u8) -> Result<FrameType> {
        match v {
            0x01 => Ok(FrameType::Data),
            0x02 => Ok(FrameType::Ack),
            0x03 => Ok(FrameType::Bypass),
            0x04 => Ok(FrameType::Keepalive),
            other => Err(WireError::UnknownType(other)),
        }
    }
}

impl From<FrameType> for u8 {
    fn from(t: FrameType) -> u8 {
        t as u8
    }
}

/// Checks that `b` starts with a valid preamble of type `expected`.
pub(crate) fn check_preamble(b: &[u8], expected: FrameType) -> Result<()> {
    need(PREAMBLE_LEN, b.len())?;
    if b[field::VERSION] != VERSION {
        return Err(WireError::BadVersion(b[field::VERSION]));
    }
    let found = FrameType::from_u8(b[field::TYPE])?;
    if found != expected {
        return Err(WireError::WrongType {
            expected: expected as u8,
            found: found as u8,
        });
    }
    Ok(())
}

/// Writes the preamble for `t` (caller checked the length).
pub(crate) fn write_preamble(b: &mut [u8], t: FrameType) {
    b[field::VERSION] = VERSION;
    b[field::TYPE] = t as u8;
}

/// A zero-copy view of any frame's preamble and body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wraps a buffer without checks; getters panic if it is shorter than 2 bytes.
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Wraps a buffer after checking that it has a preamble of a known version and type.
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let f = Frame::new_unchecked(buffer);
        f.check_len()?;
        let b = f.buffer.as_ref();
        if b[field::VERSION] != VERSION {
            return Err(WireError::BadVersion(b[field::VERSION]));
        }
        FrameType::from_u8(b[field::TYPE])?;
        Ok(f)
    }

    /// `Truncated` unless the buffer holds a whole preamble.
    pub fn check_len(&self) -> Result<()> {
        need(PREAMBLE_LEN, self.buffer.as_ref().len())
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Preamble byte 0: the wire version.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    /// Preamble byte 1: the raw frame type.
    pub fn frame_type_raw(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }

    /// Preamble byte 1 as a [`FrameType`].
    pub fn frame_type(&self) -> Result<FrameType> {
        FrameType::from_u8(self.frame_type_raw())
    }

    /// Everything after the preamble.
    pub fn body(&self) -> &[u8] {
        &self.buffer.as_ref()[field::BODY..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Sets preamble byte 0.
    pub fn set_version(&mut self, v: u8) {
        self.buffer.as_mut()[field::VERSION] = v;
    }

    /// Sets preamble byte 1.
    pub fn set_frame_type(&mut self, t: FrameType) {
        self.buffer.as_mut()[field::TYPE] = t as u8;
    }

    /// Everything after the preamble, mutable.
    pub fn body_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::BODY..]
    }
}

/// A BYPASS frame: one whole IP packet, carried uncoded.
///
/// Used for TCP SYN and RST (which must not wait in a coding buffer; Sundararajan et al. §III-A),
/// for non-TCP traffic, and for everything when coding is off. The wire layer does not parse IP:
/// it only checks that the packet is non-empty and that its first nibble is 4 or 6, so that
/// garbage is rejected early; the gateway parses and validates the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BypassRepr<'a> {
    packet: &'a [u8],
}

impl<'a> BypassRepr<'a> {
    /// A BYPASS frame for `packet`; `Truncated` if it is empty, `BadIpVersion` unless its version
    /// nibble is 4 or 6.
    pub fn new(packet: &'a [u8]) -> Result<BypassRepr<'a>> {
        need(1, packet.len()).map_err(|_| WireError::Truncated {
            needed: PREAMBLE_LEN + 1,
            got: PREAMBLE_LEN,
        })?;
        match packet[0] >> 4 {
            4 | 6 => Ok(BypassRepr { packet }),
            v => Err(WireError::BadIpVersion(v)),
        }
    }

    /// Parses a whole BYPASS frame.
    pub fn parse(frame: &'a [u8]) -> Result<BypassRepr<'a>> {
        check_preamble(frame, FrameType::Bypass)?;
        BypassRepr::new(&frame[field::BODY..])
    }

    /// The carried IP packet.
    pub const fn packet(&self) -> &'a [u8] {
        self.packet
    }

    /// Frame length: preamble plus packet.
    pub const fn buffer_len(&self) -> usize {
        PREAMBLE_LEN + self.packet.len()
    }

    /// Writes the frame to the start of `buf`; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        room(len, buf.len())?;
        write_preamble(buf, FrameType::Bypass);
        buf[field::BODY..len].copy_from_slice(self.packet);
        Ok(len)
    }
}

/// Any frame, parsed and validated.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FrameRepr<'a> {
    /// A DATA frame: the header and the coded payload (the rest of the datagram).
    Data {
        /// The NC data header.
        header: DataRepr,
        /// The coded TCP subheader+payload.
        payload: &'a [u8],
    },
    /// An NC-ACK.
    Ack(AckRepr),
    /// An uncoded IP packet.
    Bypass(BypassRepr<'a>),
    /// A liveness probe or reply.
    Keepalive(KeepaliveRepr),
}

impl<'a> FrameRepr<'a> {
    /// Parses one datagram.
    pub fn parse(buf: &'a [u8]) -> Result<FrameRepr<'a>> {
        let frame = Frame::new_checked(buf)?;
        Ok(match frame.frame_type()? {
            FrameType::Data => {
                let p = DataPacket::new_checked(buf)?;
                let header = DataRepr::parse(&p)?;
                FrameRepr::Data {
                    header,
                    payload: &buf[p.header_len()..],
                }
            }
            FrameType::Ack => FrameRepr::Ack(AckRepr::parse(&AckPacket::new_checked(buf)?)?),
            FrameType::Bypass => FrameRepr::Bypass(BypassRepr::parse(buf)?),
            FrameType::Keepalive => {
                FrameRepr::Keepalive(KeepaliveRepr::parse(&KeepalivePacket::new_checked(buf)?)?)
            }
        })
    }

    /// The frame's type.
    pub const fn frame_type(&self) -> FrameType {
        match self {
            FrameRepr::Data { .. } => FrameType::Data,
            FrameRepr::Ack(_) => FrameType::Ack,
            FrameRepr::Bypass(_) => FrameType::Bypass,
            FrameRepr::Keepalive(_) => FrameType::Keepalive,
        }
    }

    /// Bytes `emit` writes (the whole datagram).
    pub fn buffer_len(&self) -> usize {
        match self {
            FrameRepr::Data { header, payload } => header.buffer_len() + payload.len(),
            FrameRepr::Ack(a) => a.buffer_len(),
            FrameRepr::Bypass(b) => b.buffer_len(),
            FrameRepr::Keepalive(k) => k.buffer_len(),
        }
    }

    /// Writes the whole datagram to the start of `buf`; returns its length. Errors if the
    /// representation is not encodable or `buf` is too small; never panics.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        room(len, buf.len())?;
        let buf = &mut buf[..len];
        match self {
            FrameRepr::Data { header, payload } => {
                let mut p = DataPacket::new_unchecked(&mut *buf);
                header.emit(&mut p)?;
                p.payload_mut().copy_from_slice(payload);
            }
            FrameRepr::Ack(a) => a.emit(&mut AckPacket::new_unchecked(buf))?,
            FrameRepr::Bypass(b) => {
                b.emit(buf)?;
            }
            FrameRepr::Keepalive(k) => k.emit(&mut KeepalivePacket::new_unchecked(buf))?,
        }
        Ok(len)
    }

    /// Replaces `out`'s contents with the datagram, reusing its allocation; returns its
    /// length. The same bytes as [`FrameRepr::emit`], but a DATA frame's payload is appended
    /// rather than copied over zeroes, and its ranges are walked once (a sender encodes every
    /// coded packet this way). On error `out` holds unspecified bytes.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<usize> {
        match self {
            FrameRepr::Data { header, payload } => {
                header.encode_header_into(out)?;
                out.extend_from_slice(payload);
            }
            _ => {
                out.clear();
                out.resize(self.buffer_len(), 0);
                self.emit(out)?;
            }
        }
        Ok(out.len())
    }

    /// Convenience: the datagram as a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.encode_into(&mut v)?;
        Ok(v)
    }
}
