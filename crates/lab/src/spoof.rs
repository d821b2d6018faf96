//! `tcpnc lab spoof` (internal): an on-path attacker in the emulator namespace. It captures the
//! tunnel datagrams the relay sends to the server gateway (an `AF_PACKET` socket) and sends,
//! from its own UDP socket, four forgeries of each: the *previous* captured datagram replayed as
//! is, this one with one bit flipped, truncated to half, and garbage of the same shape. (A copy
//! of the datagram just captured could overtake the original on a loaded machine: it would then
//! be the first, authentic arrival of that counter, which WireGuard too accepts, and roaming
//! would follow it; a replay is a copy of something the gateway already has.) It counts what it sent and every datagram anyone sends back to it (there must be
//! none: a gateway never answers unauthenticated input), and prints one JSON line at the end.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use serde::Serialize;

/// What the spoofer did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SpoofReport {
    /// Tunnel datagrams to the target captured on the interface.
    pub captured: u64,
    /// Forged datagrams sent to the target.
    pub sent: u64,
    /// Datagrams received back on the spoofer's socket (must be 0).
    pub answers: u64,
}

/// All protocols: only `ptype_all` taps see the packets this namespace sends.
const ETH_P_ALL: u16 = 0x0003;

/// A packet socket receiving every packet of the namespace, both directions (unbound: the
/// caller keeps IPv4/UDP to its target). Wrapped in a `UdpSocket` only to use its `recv` and read
/// timeout, which are plain recv(2) and SO_RCVTIMEO on any socket.
fn capture_socket() -> io::Result<UdpSocket> {
    // SAFETY: plain socket(2) call; the result is checked before use.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_DGRAM,
            i32::from(ETH_P_ALL.to_be()),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new, valid descriptor; ownership passes to the OwnedFd.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let sock = UdpSocket::from(fd);
    sock.set_read_timeout(Some(Duration::from_millis(20)))?;
    Ok(sock)
}

/// The UDP payload of an IPv4 packet to `target` not sent from source port `own` (our own
/// forgeries are seen too), if it is one.
fn udp_payload_to(packet: &[u8], target: SocketAddrV4, own: u16) -> Option<&[u8]> {
    let ihl = usize::from(packet.first()? & 0x0f) * 4;
    if packet.len() < ihl + 8 || packet[0] >> 4 != 4 || packet[9] != 17 {
        return None;
    }
    let dst = Ipv4Addr::new(packet[16], packet[17], packet[18], packet[19]);
    let sport = u16::from_be_bytes([packet[ihl], packet[ihl + 1]]);
    let port = u16::from_be_bytes([packet[ihl + 2], packet[ihl + 3]]);
    (dst == *target.ip() && port == target.port() && sport != own).then(|| &packet[ihl + 8..])
}

/// The four forgeries of a captured datagram `d` (the `k`-th), `previous` the one before it.
fn forgeries(d: &[u8], previous: &[u8], k: u64) -> [Vec<u8>; 4] {
    let mut flipped = d.to_vec();
    if !flipped.is_empty() {
        let bit = (k as usize * 37) % (flipped.len() * 8);
        flipped[bit / 8] ^= 1 << (bit % 8);
    }
    let garbage = (0..d.len()).map(|i| (i as u64 ^ k) as u8).collect();
    [
        previous.to_vec(),
        flipped,
        d[..d.len() / 2].to_vec(),
        garbage,
    ]
}

/// Runs for `duration` (at most `max_captured` datagrams forged), then reports.
pub fn run(target: SocketAddrV4, duration: Duration, max_captured: u64) -> io::Result<SpoofReport> {
    let cap = capture_socket()?;
    let out = UdpSocket::bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)))?;
    out.set_nonblocking(true)?;
    let own = out.local_addr()?.port();
    let mut report = SpoofReport::default();
    let mut buf = vec![0u8; 65536];
    let mut scratch = [0u8; 2048];
    let mut previous = Vec::new();
    let end = Instant::now() + duration;
    while Instant::now() < end {
        let n = match cap.recv(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                0
            }
            Err(e) => return Err(e),
        };
        if let Some(d) = udp_payload_to(&buf[..n], target, own)
            && report.captured < max_captured
        {
            report.captured += 1;
            for f in forgeries(d, &previous, report.captured) {
                if !f.is_empty() && out.send_to(&f, target).is_ok() {
                    report.sent += 1;
                }
            }
            previous = d.to_vec();
        }
        while out.recv_from(&mut scratch).is_ok() {
            report.answers += 1;
        }
    }
    let settle = Instant::now() + Duration::from_millis(500);
    while Instant::now() < settle {
        match out.recv_from(&mut scratch) {
            Ok(_) => report.answers += 1,
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_udp_payloads_to_the_target_and_forges_four_variants() {
        let mut p = vec![
            0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        p.extend_from_slice(&[0x1b, 0x5a, 0xca, 0x6c, 0, 12, 0, 0, 1, 2, 3, 4]);
        let target = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 51820);
        assert_eq!(udp_payload_to(&p, target, 1), Some(&[1u8, 2, 3, 4][..]));
        assert_eq!(
            udp_payload_to(&p, SocketAddrV4::new(*target.ip(), 1), 1),
            None
        );
        assert_eq!(udp_payload_to(&p, target, 0x1b5a), None, "our own forgery");
        let f = forgeries(&[1, 2, 3, 4], &[9, 9], 1);
        assert_eq!(f[0], vec![9, 9], "the previous datagram, replayed");
        assert_ne!(f[1], vec![1, 2, 3, 4]);
        assert_eq!(f[1].len(), 4);
        assert_eq!(f[2], vec![1, 2]);
        assert_eq!(f[3].len(), 4);
    }
}
