//! Socket options the built-in sender needs: `TCP_CONGESTION` (set and read back) and
//! `TCP_INFO` (the kernel's own retransmission and RTT counters), plus the monotonic clock
//! shared by all processes on the machine (namespaces do not change it).

use std::os::fd::RawFd;

use serde::{Deserialize, Serialize};

use crate::error::{LabError, Result};

/// `struct tcp_info` of Linux (uapi/linux/tcp.h) up to `tcpi_reord_seen`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscale: u8,
    flags: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
    dsack_dups: u32,
    reord_seen: u32,
}

/// The sender kernel's view of a connection (from `TCP_INFO`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TcpInfo {
    /// `tcpi_total_retrans`: segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// `tcpi_bytes_retrans`: bytes retransmitted.
    pub bytes_retrans: u64,
    /// `tcpi_data_segs_out`: data segments sent, retransmissions included.
    pub data_segs_out: u32,
    /// `tcpi_bytes_sent`: payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// `tcpi_bytes_acked`.
    pub bytes_acked: u64,
    /// Smoothed RTT in ms.
    pub rtt_ms: f64,
    /// Minimum RTT in ms.
    pub min_rtt_ms: f64,
    /// Congestion window (segments) at the end.
    pub snd_cwnd: u32,
    /// Slow-start threshold at the end (`u32::MAX` = infinite).
    pub snd_ssthresh: u32,
    /// Sender MSS.
    pub snd_mss: u32,
    /// Reordering events seen.
    pub reord_seen: u32,
    /// Duplicate SACK blocks received.
    pub dsack_dups: u32,
    /// `tcpi_unacked`: segments sent and not yet acknowledged.
    #[serde(default)]
    pub unacked: u32,
}

/// Reads `TCP_INFO` of `fd`.
pub fn tcp_info(fd: RawFd) -> Result<TcpInfo> {
    let mut raw = RawTcpInfo::default();
    let mut len = std::mem::size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: raw is a writable buffer of len bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut raw as *mut RawTcpInfo as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return Err(LabError::last_os("getsockopt TCP_INFO"));
    }
    Ok(TcpInfo {
        total_retrans: raw.total_retrans,
        bytes_retrans: raw.bytes_retrans,
        data_segs_out: raw.data_segs_out,
        bytes_sent: raw.bytes_sent,
        bytes_acked: raw.bytes_acked,
        rtt_ms: f64::from(raw.rtt) / 1000.0,
        min_rtt_ms: f64::from(raw.min_rtt) / 1000.0,
        snd_cwnd: raw.snd_cwnd,
        snd_ssthresh: raw.snd_ssthresh,
        snd_mss: raw.snd_mss,
        reord_seen: raw.reord_seen,
        dsack_dups: raw.dsack_dups,
        unacked: raw.unacked,
    })
}

/// Sets `TCP_CONGESTION` on `fd` and returns the name the kernel reports back.
pub fn set_congestion(fd: RawFd, cc: &str) -> Result<String> {
    // SAFETY: cc points at cc.len() readable bytes.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr() as *const libc::c_void,
            cc.len() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(LabError::last_os(format!(
            "setting TCP_CONGESTION to '{cc}' (see net.ipv4.tcp_available_congestion_control)"
        )));
    }
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is writable for len bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return Err(LabError::last_os("getsockopt TCP_CONGESTION"));
    }
    let name = &buf[..len as usize];
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process on the machine, so the
/// sender's and the receiver's timestamps can be subtracted.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
