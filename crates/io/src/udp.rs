//! The UDP socket seam: the [`Udp`] trait both loops drive, the real socket [`SysUdp`], and
//! [`wait_readable`], the bounded wait every blocking reader uses to notice shutdown.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use thiserror::Error;

use crate::batch::RecvSlots;
use crate::gso::Sent;

/// Binding a UDP socket failed.
#[derive(Debug, Error)]
pub enum BindError {
    /// The address is taken.
    #[error("UDP address {0} is already in use (another tcpnc or service is bound to it)")]
    AddrInUse(SocketAddr),
    /// Another bind error.
    #[error("cannot bind UDP {addr}: {source}")]
    Other {
        /// Address.
        addr: SocketAddr,
        /// OS error.
        source: io::Error,
    },
}

/// A UDP socket.
pub trait Udp: Send + Sync + 'static {
    /// Receives one datagram into `buf`, waiting at most `timeout`.
    fn recv_from(
        &self,
        buf: &mut [u8],
        timeout: Duration,
    ) -> io::Result<Option<(usize, SocketAddr)>>;
    /// Sends one datagram.
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<()>;
    /// The bound address.
    fn local_addr(&self) -> io::Result<SocketAddr>;

    /// Whether batched sends use UDP GSO ([`crate::gso`]) now. The default: no.
    fn gso(&self) -> bool {
        false
    }

    /// Whether receives may coalesce datagrams (UDP GRO, [`crate::gro`]); only
    /// [`Udp::recv_batch`] cuts them apart again. The default: no.
    fn gro(&self) -> bool {
        false
    }

    /// Receives up to `slots.capacity()` kernel messages, waiting at most `timeout` for the
    /// first; `slots` holds the datagrams that arrived, one by one (nothing on timeout). The
    /// default receives one.
    fn recv_batch(&self, slots: &mut RecvSlots, timeout: Duration) -> io::Result<()> {
        slots.clear();
        if let Some((n, from)) = self.recv_from(slots.slot_mut(0), timeout)? {
            slots.push(n, from);
        }
        Ok(())
    }

    /// Sends datagrams (each to its address) in one call where the socket can: returns how
    /// many were sent (at least one) and in how many kernel messages, an error only when the
    /// first could not be. The default sends one at a time.
    fn send_batch(&self, batch: &[(Vec<u8>, SocketAddr)]) -> io::Result<Sent> {
        for (i, (d, to)) in batch.iter().enumerate() {
            if let Err(e) = self.send_to(d, *to) {
                return if i == 0 {
                    Err(e)
                } else {
                    Ok(Sent {
                        datagrams: i,
                        messages: i,
                    })
                };
            }
        }
        Ok(Sent {
            datagrams: batch.len(),
            messages: batch.len(),
        })
    }
}

/// Waits until `fd` is readable or `timeout` passes; `Ok(false)` on timeout or EINTR.
pub fn wait_readable(fd: RawFd, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `pfd` is a valid pollfd for the duration of the call and nfds is 1.
    let r = unsafe { libc::poll(&mut pfd, 1, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(r > 0)
}

/// A bound UDP socket.
#[derive(Debug)]
pub struct SysUdp {
    sock: UdpSocket,
    /// Batched sends use UDP GSO ([`crate::gso`]): set by [`SysUdp::set_gso`], cleared when
    /// the kernel refuses a GSO send.
    gso: AtomicBool,
    /// The socket has `UDP_GRO` on: set by [`SysUdp::set_gro`].
    gro: AtomicBool,
}

/// Kernel buffer asked for on a UDP socket of the gateway or the lab's relay, each direction:
/// about 3000 full datagrams, a few milliseconds at gigabit rates (wireguard-go asks for
/// 7 MiB). The relay needs it as much: with the kernel's default (about 200 kB) its sockets
/// dropped bursts of the client gateway's datagrams before the emulated link saw them (100
/// short flows on the lab: 115–388 datagrams a run; 8 flows through a 10-packet queue:
/// 3.8–4.4 thousand; docs/lab.md "The relay's socket buffers, stop 56").
pub const UDP_BUFFER_BYTES: usize = 4 << 20;

impl SysUdp {
    /// Binds `addr`; [`BindError::AddrInUse`] when taken.
    pub fn bind(addr: SocketAddr) -> Result<SysUdp, BindError> {
        let sock = UdpSocket::bind(addr).map_err(|e| match e.kind() {
            io::ErrorKind::AddrInUse => BindError::AddrInUse(addr),
            _ => BindError::Other { addr, source: e },
        })?;
        Ok(SysUdp::from_socket(sock))
    }

    /// Asks for `bytes` of kernel receive and send buffer: beyond `net.core.rmem_max` /
    /// `wmem_max` where the process may (`SO_RCVBUFFORCE`, CAP_NET_ADMIN), else up to those
    /// limits. A burst the reader thread cannot take at once then waits in the socket
    /// instead of being dropped by the kernel. Returns the sizes the kernel granted
    /// (it doubles the request for its bookkeeping).
    pub fn set_buffers(&self, bytes: usize) -> io::Result<(usize, usize)> {
        use nix::sys::socket::{setsockopt, sockopt};
        if setsockopt(&self.sock, sockopt::RcvBufForce, &bytes).is_err() {
            setsockopt(&self.sock, sockopt::RcvBuf, &bytes)?;
        }
        if setsockopt(&self.sock, sockopt::SndBufForce, &bytes).is_err() {
            setsockopt(&self.sock, sockopt::SndBuf, &bytes)?;
        }
        self.buffers()
    }

    /// The kernel's receive and send buffer sizes of the socket.
    pub fn buffers(&self) -> io::Result<(usize, usize)> {
        use nix::sys::socket::{getsockopt, sockopt};
        Ok((
            getsockopt(&self.sock, sockopt::RcvBuf)?,
            getsockopt(&self.sock, sockopt::SndBuf)?,
        ))
    }

    /// Wraps an already bound socket.
    pub fn from_socket(sock: UdpSocket) -> SysUdp {
        SysUdp {
            sock,
            gso: AtomicBool::new(false),
            gro: AtomicBool::new(false),
        }
    }

    /// Turns UDP GSO for batched sends on or off; on only where the kernel has `UDP_SEGMENT`
    /// (probed by setting the socket's default segment size to 0, i.e. none). Returns whether
    /// it is on. A later send the kernel refuses turns it off again ([`Udp::gso`]).
    pub fn set_gso(&self, on: bool) -> bool {
        use nix::sys::socket::{setsockopt, sockopt};
        let on = on && setsockopt(&self.sock, sockopt::UdpGsoSegment, &0).is_ok();
        self.gso.store(on, Ordering::Relaxed);
        on
    }

    /// Turns UDP GRO on receive on or off (`setsockopt(SOL_UDP, UDP_GRO)`, Linux ≥ 5.0;
    /// [`crate::gro`]); returns whether it is on (off where the kernel refuses the option).
    /// With GRO on one received message may hold several datagrams: read the socket with
    /// [`Udp::recv_batch`] into slots of 64 KiB, which hands them out one by one
    /// ([`Udp::recv_from`] would give a coalesced message as one datagram).
    pub fn set_gro(&self, on: bool) -> bool {
        use nix::sys::socket::{setsockopt, sockopt};
        let took = setsockopt(&self.sock, sockopt::UdpGroSegment, &on).is_ok();
        let on = on && took;
        self.gro.store(on, Ordering::Relaxed);
        on
    }
}

impl Udp for SysUdp {
    fn recv_from(
        &self,
        buf: &mut [u8],
        timeout: Duration,
    ) -> io::Result<Option<(usize, SocketAddr)>> {
        if !wait_readable(self.sock.as_raw_fd(), timeout)? {
            return Ok(None);
        }
        match self.sock.recv_from(buf) {
            Ok(v) => Ok(Some(v)),
            // ICMP port unreachable from an earlier send surfaces here on Linux; not fatal.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::ConnectionRefused
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<()> {
        self.sock.send_to(datagram, to).map(|_| ())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.sock.local_addr()
    }

    fn gso(&self) -> bool {
        self.gso.load(Ordering::Relaxed)
    }

    fn gro(&self) -> bool {
        self.gro.load(Ordering::Relaxed)
    }

    /// One `poll(2)` then one `recvmmsg(2)` for everything queued (up to the slots); with GRO
    /// on, coalesced messages are cut into their datagrams.
    fn recv_batch(&self, slots: &mut RecvSlots, timeout: Duration) -> io::Result<()> {
        slots.clear();
        if !wait_readable(self.sock.as_raw_fd(), timeout)? {
            return Ok(());
        }
        crate::batch::recv_mmsg(self.sock.as_raw_fd(), slots, self.gro())
    }

    /// One `sendmmsg(2)` for up to [`crate::BATCH`] datagrams, or with GSO up to
    /// [`crate::BATCH`] trains of datagrams ([`crate::gso`]). A GSO send the kernel refuses
    /// turns GSO off and goes again without it.
    fn send_batch(&self, batch: &[(Vec<u8>, SocketAddr)]) -> io::Result<Sent> {
        let fd = self.sock.as_raw_fd();
        if self.gso() {
            match crate::gso::send_gso(fd, batch) {
                Err(e) if crate::gso::refuses_gso(e) => {
                    self.gso.store(false, Ordering::Relaxed);
                }
                r => return r.map_err(io::Error::from),
            }
        }
        let n = crate::batch::send_mmsg(fd, batch)?;
        Ok(Sent {
            datagrams: n,
            messages: n,
        })
    }
}
