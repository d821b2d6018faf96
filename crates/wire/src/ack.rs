//! ACK frame: one NC-ACK (Sundararajan et al. §IV "seen" ACK, extended with the NC-ACK fields of
//! Ha & Tsuru Table 1 and the lost-DoF count of Karafillis et al. §II).
//!
//! ```text
//! offset  size  field
//! 0       1     version (1)
//! 1       1     type (0x02 ACK)
//! 2       2     flags: 0x8000 IPV6, 0x0008 UPDATE, 0x0004 PAUSE, 0x0002 DEPENDENT,
//!                      0x0001 REDUNDANT; 0x7FF0 reserved (zero)
//! 4       F     flow identity of the DATA direction (F = 12 IPv4, 36 IPv6)
//! 4+F     4     ack: first byte of the first unseen packet
//! 8+F     4     window: receive window in bytes, unscaled
//! 12+F    4     Pid echo
//! 16+F    4     loss bitmap: bit i set = Pid (echo - 1 - i) not received
//! 20+F    4     dependent_seq (zero unless DEPENDENT)
//! 24+F    2     N_lp: lost degrees of freedom
//! 26+F    2     unordering length, packets
//! 28+F          end (40 bytes IPv4, 64 IPv6; exactly, no trailing bytes)
//! ```

use crate::bytes::{need, put_u16, put_u32, room, u16_at, u32_at};
use crate::flow::{FLOW_OFFSET, IPV6_FLAG, ip_version_of};
use crate::frame::{FrameType, check_preamble, write_preamble};
use crate::{FlowId, IpVersion, Result, WireError};

/// ACK flag bits (bytes 2-3, a big-endian u16).
pub mod flags {
    /// The triggering DATA packet had the REDUNDANT flag (Ha & Tsuru Table 1 "R").
    pub const REDUNDANT: u16 = 0x0001;
    /// The triggering DATA packet was not innovative; `dependent_seq` is meaningful
    /// (Ha & Tsuru Table 1 "D").
    pub const DEPENDENT: u16 = 0x0002;
    /// Pause-ACK: the data sender's gateway may hold this duplicate ACK up to 200 ms and drops
    /// it when a newer ACK arrives (Ha & Tsuru §3.3).
    pub const PAUSE: u16 = 0x0004;
    /// The unordering length changed since the previous ACK (Ha & Tsuru §3.2, "U").
    pub const UPDATE: u16 = 0x0008;
    /// Reserved; must be zero (frames with any of these set are rejected).
    pub const RESERVED: u16 = 0x7FF0;
    /// The flow identity is IPv6 (bit 7 of byte 2, as in DATA).
    pub const IPV6: u16 = (crate::flow::IPV6_FLAG as u16) << 8;
}

mod field {
    pub const FLAGS: usize = 2;
    // Offsets relative to the end of the flow identity.
    pub const ACK: usize = 0;
    pub const WINDOW: usize = 4;
    pub const PID_ECHO: usize = 8;
    pub const LOSS_BITMAP: usize = 12;
    pub const DEPENDENT_SEQ: usize = 16;
    pub const LOST_DOF: usize = 20;
    pub const UNORDERING: usize = 22;
    pub const END: usize = 24;
}

/// A zero-copy view of an ACK frame (preamble included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> AckPacket<T> {
    /// Wraps a buffer without checks; getters may panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> AckPacket<T> {
        AckPacket { buffer }
    }

    /// Wraps a buffer after checking the preamble (version 2, type ACK) and the exact length.
    pub fn new_checked(buffer: T) -> Result<AckPacket<T>> {
        let p = AckPacket::new_unchecked(buffer);
        check_preamble(p.buffer.as_ref(), FrameType::Ack)?;
        p.check_len()?;
        Ok(p)
    }

    /// `Truncated` if the buffer is shorter than the frame its flags describe, `BadLength` if
    /// it is longer.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        need(field::FLAGS + 2, len)?;
        let expected = self.frame_len();
        need(expected, len)?;
        if len != expected {
            return Err(WireError::BadLength { expected, got: len });
        }
        Ok(())
    }

    /// Frame length implied by the IPV6 flag (40 or 64).
    pub fn frame_len(&self) -> usize {
        self.after_flow() + field::END
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn after_flow(&self) -> usize {
        FLOW_OFFSET + self.ip_version().flow_len()
    }

    fn u32_field(&self, f: usize) -> u32 {
        u32_at(self.buffer.as_ref(), self.after_flow() + f)
    }

    fn u16_field(&self, f: usize) -> u16 {
        u16_at(self.buffer.as_ref(), self.after_flow() + f)
    }

    /// Raw 16-bit flags (see [`flags`]).
    pub fn flags(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::FLAGS)
    }

    /// IP version of the flow identity.
    pub fn ip_version(&self) -> IpVersion {
        ip_version_of(self.buffer.as_ref()[field::FLAGS])
    }

    /// The DATA direction's flow identity.
    pub fn flow(&self) -> FlowId {
        FlowId::read(&self.buffer.as_ref()[FLOW_OFFSET..], self.ip_version())
    }

    /// TCP sequence number of the first byte of the first unseen packet.
    pub fn ack(&self) -> u32 {
        self.u32_field(field::ACK)
    }

    /// Receive window in bytes, unscaled.
    pub fn window(&self) -> u32 {
        self.u32_field(field::WINDOW)
    }

    /// Pid of the DATA packet that triggered this ACK.
    pub fn pid_echo(&self) -> u32 {
        self.u32_field(field::PID_ECHO)
    }

    /// Loss bitmap: bit i (value `1 << i`) set = Pid `echo - 1 - i` not received.
    pub fn loss_bitmap(&self) -> u32 {
        self.u32_field(field::LOSS_BITMAP)
    }

    /// Raw dependent-packet sequence number (meaningful with DEPENDENT).
    pub fn dependent_seq(&self) -> u32 {
        self.u32_field(field::DEPENDENT_SEQ)
    }

    /// N_lp: degrees of freedom the receiver lacks.
    pub fn lost_dof(&self) -> u16 {
        self.u16_field(field::LOST_DOF)
    }

    /// Unordering length, in packets.
    pub fn unordering(&self) -> u16 {
        self.u16_field(field::UNORDERING)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> AckPacket<T> {
    fn put32(&mut self, f: usize, v: u32) {
        let o = self.after_flow() + f;
        put_u32(self.buffer.as_mut(), o, v);
    }

    fn put16(&mut self, f: usize, v: u16) {
        let o = self.after_flow() + f;
        put_u16(self.buffer.as_mut(), o, v);
    }

    /// Sets the raw flags. Set them (or the flow) before the fields after the flow identity.
    pub fn set_flags(&mut self, v: u16) {
        put_u16(self.buffer.as_mut(), field::FLAGS, v);
    }

    /// Writes the flow identity and sets or clears the IPV6 flag accordingly.
    pub fn set_flow(&mut self, flow: &FlowId) {
        let b = self.buffer.as_mut();
        if matches!(flow.ip_version(), IpVersion::V6) {
            b[field::FLAGS] |= IPV6_FLAG;
        } else {
            b[field::FLAGS] &= !IPV6_FLAG;
        }
        flow.write(&mut b[FLOW_OFFSET..]);
    }

    /// Sets ack.
    pub fn set_ack(&mut self, v: u32) {
        self.put32(field::ACK, v);
    }

    /// Sets window.
    pub fn set_window(&mut self, v: u32) {
        self.put32(field::WINDOW, v);
    }

    /// Sets Pid echo.
    pub fn set_pid_echo(&mut self, v: u32) {
        self.put32(field::PID_ECHO, v);
    }

    /// Sets the loss bitmap.
    pub fn set_loss_bitmap(&mut self, v: u32) {
        self.put32(field::LOSS_BITMAP, v);
    }

    /// Sets dependent_seq.
    pub fn set_dependent_seq(&mut self, v: u32) {
        self.put32(field::DEPENDENT_SEQ, v);
    }

    /// Sets N_lp.
    pub fn set_lost_dof(&mut self, v: u16) {
        self.put16(field::LOST_DOF, v);
    }

    /// Sets the unordering length.
    pub fn set_unordering(&mut self, v: u16) {
        self.put16(field::UNORDERING, v);
    }
}

/// A validated NC-ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AckRepr {
    /// The DATA direction's flow (the ACK names the tuple of the data it acknowledges).
    pub flow: FlowId,
    /// TCP sequence number of the first byte of the first unseen packet (Sundararajan et al.
    /// §IV: the decoder acknowledges every *seen* packet).
    pub ack: u32,
    /// Receive window in bytes, unscaled: min(receiver TCP's window, decoding-buffer space)
    /// (Sundararajan et al. §IV-D). The data sender's gateway rescales it for its local TCP.
    pub window: u32,
    /// Pid of the DATA packet that triggered this ACK (Ha & Tsuru §3.1 "Pid echo-reply").
    pub pid_echo: u32,
    /// Bit i (value `1 << i`, i = 0..31) set = Pid `pid_echo - 1 - i` (mod 2^32) had not been
    /// received when this ACK was sent (Ha & Tsuru §3.1 "packet loss sequence").
    pub loss_bitmap: u32,
    /// N_lp: largest symbol index in the receiver's coding window minus the seen index, i.e. how
    /// many degrees of freedom it lacks; saturates at 65 535 (Karafillis et al. §II step 1).
    pub lost_dof: u16,
    /// Unordering length estimate, in packets (ceiling of the SMA; Ha & Tsuru §3.2).
    pub unordering: u16,
    /// The triggering DATA packet was REDUNDANT.
    pub redundant: bool,
    /// `Some(seq)`: the triggering packet was not innovative (DEPENDENT), and `seq` is the TCP
    /// sequence number of the first byte of the packet the receiver asks to be retransmitted
    /// (Ha & Tsuru Table 1 "SN of the dependence pkt"). `None`: DEPENDENT clear, field zero.
    pub dependent: Option<u32>,
    /// Pause-ACK (Ha & Tsuru §3.3).
    pub pause: bool,
    /// The unordering length changed (Ha & Tsuru §3.2 "U").
    pub update: bool,
}

impl AckRepr {
    /// Pids an NC-ACK reports in its loss bitmap: the 32 before its echo.
    pub const BITMAP_PIDS: u32 = u32::BITS;

    /// The 16-bit flags this ACK encodes to.
    pub fn flags(&self) -> u16 {
        let mut f = 0;
        if self.redundant {
            f |= flags::REDUNDANT;
        }
        if self.dependent.is_some() {
            f |= flags::DEPENDENT;
        }
        if self.pause {
            f |= flags::PAUSE;
        }
        if self.update {
            f |= flags::UPDATE;
        }
        if matches!(self.flow.ip_version(), IpVersion::V6) {
            f |= flags::IPV6;
        }
        f
    }

    /// Whether the ACK reports `pid` as lost: `Some(false)` for the echoed Pid itself,
    /// `Some(bit)` for the 32 Pids before it, `None` outside the bitmap's reach.
    pub fn pid_lost(&self, pid: u32) -> Option<bool> {
        match self.pid_echo.wrapping_sub(pid) {
            0 => Some(false),
            d @ 1..=32 => Some(self.loss_bitmap & (1 << (d - 1)) != 0),
            _ => None,
        }
    }

    /// Parses and validates an ACK frame.
    pub fn parse<T: AsRef<[u8]>>(packet: &AckPacket<T>) -> Result<AckRepr> {
        check_preamble(packet.buffer.as_ref(), FrameType::Ack)?;
        packet.check_len()?;
        let f = packet.flags();
        if f & flags::RESERVED != 0 {
            return Err(WireError::ReservedBits(f & flags::RESERVED));
        }
        let dependent = if f & flags::DEPENDENT != 0 {
            Some(packet.dependent_seq())
        } else if packet.dependent_seq() != 0 {
            return Err(WireError::UnusedFieldNotZero);
        } else {
            None
        };
        Ok(AckRepr {
            flow: packet.flow(),
            ack: packet.ack(),
            window: packet.window(),
            pid_echo: packet.pid_echo(),
            loss_bitmap: packet.loss_bitmap(),
            lost_dof: packet.lost_dof(),
            unordering: packet.unordering(),
            redundant: f & flags::REDUNDANT != 0,
            dependent,
            pause: f & flags::PAUSE != 0,
            update: f & flags::UPDATE != 0,
        })
    }

    /// The longest NC-ACK frame: an IPv6 flow's (64 bytes).
    pub const MAX_LEN: usize = FLOW_OFFSET + IpVersion::V6.flow_len() + field::END;

    /// Frame length: 40 bytes (IPv4 flow) or 64 (IPv6).
    pub const fn buffer_len(&self) -> usize {
        FLOW_OFFSET + self.flow.wire_len() + field::END
    }

    /// Writes the frame to the start of `packet`'s buffer (at least `buffer_len()` bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut AckPacket<T>) -> Result<()> {
        room(self.buffer_len(), packet.buffer.as_ref().len())?;
        write_preamble(packet.buffer.as_mut(), FrameType::Ack);
        packet.set_flags(self.flags());
        packet.set_flow(&self.flow);
        packet.set_ack(self.ack);
        packet.set_window(self.window);
        packet.set_pid_echo(self.pid_echo);
        packet.set_loss_bitmap(self.loss_bitmap);
        packet.set_dependent_seq(self.dependent.unwrap_or(0));
        packet.set_lost_dof(self.lost_dof);
        packet.set_unordering(self.unordering);
        Ok(())
    }
}
