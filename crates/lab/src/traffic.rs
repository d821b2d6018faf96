//! The built-in sender and receiver (`tcpnc lab source` / `tcpnc lab sink`), run inside the
//! namespaces. Each prints JSON lines on stdout: progress events, then one final report.
//!
//! The source sends `bytes` of seeded pseudo-random data (SplitMix64) on one kernel TCP
//! connection whose congestion control it sets with `TCP_CONGESTION` (nothing else is
//! changed), half-closes, waits for the sink's close (so every byte is acknowledged), reads
//! `TCP_INFO`, and reports the sha256 of what it sent. The sink accepts one connection,
//! hashes everything until EOF and reports the sha256 of what it received. With
//! `--connections N` both run N connections in parallel (one thread each; connection `i` sends
//! the stream of seed `seed + i`) and print one report per connection.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{LabError, Result};
use crate::series::{SinkSample, SinkSampler, SourceSample, spawn_source_sampler};
use crate::tcpinfo::{self, TcpInfo, mono_ns};

const CHUNK: usize = 64 * 1024;
const PROGRESS_EVERY_NS: u64 = 200_000_000;

/// The data generator: SplitMix64, little-endian words.
#[derive(Debug, Clone)]
pub struct DataGen {
    state: u64,
}

impl DataGen {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        DataGen { state: seed }
    }

    /// Fills `buf` with the next bytes of the stream (`buf.len()` a multiple of 8).
    pub fn fill(&mut self, buf: &mut [u8]) {
        for word in buf.chunks_mut(8) {
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            word.copy_from_slice(&z.to_le_bytes()[..word.len()]);
        }
    }
}

/// One line printed by the source or the sink.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The sink is listening.
    Listening {
        /// Bound address.
        addr: String,
    },
    /// Bytes moved so far.
    Progress {
        /// Bytes.
        bytes: u64,
    },
    /// The source's kernel every 0.1 s (`--series`).
    SourceSample(SourceSample),
    /// The sink's received bytes every 0.1 s (`--series`).
    SinkSample(SinkSample),
    /// The source's final report.
    SourceDone(SourceReport),
    /// The sink's final report.
    SinkDone(SinkReport),
    /// The frame source's final report (`crate::frames`).
    FrameSourceDone(crate::frames::FrameSourceReport),
    /// The frame sink's final report (`crate::frames`).
    FrameSinkDone(crate::frames::FrameSinkReport),
    /// A failure inside the process.
    Error {
        /// Why.
        message: String,
    },
}

/// What the source reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceReport {
    /// Bytes written.
    pub bytes: u64,
    /// sha256 (hex) of the bytes written.
    pub sha256: String,
    /// Congestion control the kernel reports for the socket.
    pub cc: String,
    /// Monotonic ns before `connect`.
    pub connect_start_ns: u64,
    /// Monotonic ns when `connect` returned.
    pub connected_ns: u64,
    /// Monotonic ns when the last byte was handed to the kernel.
    pub last_write_ns: u64,
    /// Monotonic ns when the sink's close arrived (everything acknowledged).
    pub closed_ns: u64,
    /// The connection's local address (what the sink reports as its peer).
    #[serde(default)]
    pub local: String,
    /// The sender kernel's counters, read before closing.
    pub tcp_info: TcpInfo,
}

/// What the sink reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SinkReport {
    /// Bytes received.
    pub bytes: u64,
    /// sha256 (hex) of the bytes received.
    pub sha256: String,
    /// Peer address.
    pub peer: String,
    /// Monotonic ns when the connection was accepted.
    pub accepted_ns: u64,
    /// Monotonic ns of the first byte.
    pub first_byte_ns: u64,
    /// Monotonic ns of the last byte (EOF seen right after).
    pub last_byte_ns: u64,
}

impl SinkReport {
    /// The report of a connection the sink never reported (nothing received).
    pub fn missing(src: &SourceReport) -> SinkReport {
        SinkReport {
            bytes: 0,
            sha256: String::new(),
            peer: src.local.clone(),
            accepted_ns: src.connected_ns,
            first_byte_ns: src.connected_ns,
            last_byte_ns: src.connected_ns,
        }
    }
}

/// Prints one event as a JSON line and flushes.
pub fn emit(event: &Event) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, event);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Lower-case hex of `d` (the sha256 digests the reports carry).
pub(crate) fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Maps an I/O error of `what` to [`LabError::Os`].
pub(crate) fn io_err(what: &str) -> impl FnOnce(std::io::Error) -> LabError + '_ {
    move |source| LabError::Os {
        what: what.to_string(),
        source,
    }
}

/// A TCP connection to `addr` with congestion control `cc` (`TCP_CONGESTION`, read back), the
/// connect bounded by `timeout`.
pub(crate) fn connect(
    addr: SocketAddr,
    cc: &str,
    timeout: Duration,
) -> Result<(TcpStream, String)> {
    let family = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket(2); ownership passes to TcpStream right away.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(LabError::last_os("socket"));
    }
    // SAFETY: fd is a fresh socket we own.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    let cc = tcpinfo::set_congestion(fd, cc)?;
    // A blocking connect obeys SO_SNDTIMEO on Linux; this bounds SYN retries.
    stream
        .set_write_timeout(Some(timeout))
        .map_err(io_err("SO_SNDTIMEO"))?;
    let (sa, len) = sockaddr(addr);
    // SAFETY: sa is a valid sockaddr of len bytes.
    let rc = unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, len) };
    if rc != 0 {
        return Err(LabError::last_os(format!("connect to {addr}")));
    }
    Ok((stream, cc))
}

fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
            let sin = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from(*a.ip()).to_be();
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above, for sockaddr_in6.
            let sin6 = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_scope_id = a.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// Runs the source: connect, send `bytes`, half-close, wait for the sink's close, report.
/// With `series`, a thread emits a [`SourceSample`] every 0.1 s from the connect to the close.
pub fn run_source(
    addr: SocketAddr,
    bytes: u64,
    cc: &str,
    seed: u64,
    timeout: Duration,
    progress: bool,
    series: bool,
) -> Result<SourceReport> {
    let connect_start_ns = mono_ns();
    let (mut stream, cc) = connect(addr, cc, timeout)?;
    let connected_ns = mono_ns();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = series.then(|| {
        spawn_source_sampler(stream.as_raw_fd(), Arc::clone(&stop), |s| {
            emit(&Event::SourceSample(s))
        })
    });
    let sent = send_all(&mut stream, bytes, seed, timeout, progress);
    stop.store(true, Ordering::Relaxed);
    if let Some(t) = sampler {
        let _ = t.join();
    }
    let (sent, sha256, last_write_ns, closed_ns) = sent?;
    let tcp_info = tcpinfo::tcp_info(stream.as_raw_fd())?;
    let local = stream
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    Ok(SourceReport {
        local,
        bytes: sent,
        sha256,
        cc,
        connect_start_ns,
        connected_ns,
        last_write_ns,
        closed_ns,
        tcp_info,
    })
}

/// Sends `bytes` of the stream of `seed`, half-closes and waits for the sink's close; the
/// bytes sent, their sha256 and the last write's and the close's times.
fn send_all(
    stream: &mut TcpStream,
    bytes: u64,
    seed: u64,
    timeout: Duration,
    progress: bool,
) -> Result<(u64, String, u64, u64)> {
    stream
        .set_read_timeout(Some(timeout))
        .map_err(io_err("SO_RCVTIMEO"))?;
    let mut data = DataGen::new(seed);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut sent = 0u64;
    let mut next_progress = mono_ns() + PROGRESS_EVERY_NS;
    while sent < bytes {
        let n = (bytes - sent).min(CHUNK as u64) as usize;
        data.fill(&mut buf);
        hasher.update(&buf[..n]);
        stream.write_all(&buf[..n]).map_err(io_err("sending"))?;
        sent += n as u64;
        if progress && mono_ns() >= next_progress {
            emit(&Event::Progress { bytes: sent });
            next_progress = mono_ns() + PROGRESS_EVERY_NS;
        }
    }
    let last_write_ns = mono_ns();
    stream
        .shutdown(std::net::Shutdown::Write)
        .map_err(io_err("half-close"))?;
    let mut rest = [0u8; 512];
    loop {
        match stream.read(&mut rest) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(io_err("waiting for the sink to close")(e)),
        }
    }
    let closed_ns = mono_ns();
    let sha256 = hex(&hasher.finalize());
    Ok((sent, sha256, last_write_ns, closed_ns))
}

/// Binds the sink's listener and announces it with a `listening` event.
pub fn sink_listen(addr: SocketAddr) -> Result<TcpListener> {
    let listener = TcpListener::bind(addr).map_err(io_err("binding the sink"))?;
    let local = listener.local_addr().map_err(io_err("sink address"))?;
    emit(&Event::Listening {
        addr: local.to_string(),
    });
    Ok(listener)
}

/// Accepts one connection (within `timeout`) and receives until EOF (each read within
/// `timeout`), then reports.
/// With `series`, a [`SinkSample`] at most every 0.1 s.
pub fn run_sink(
    listener: TcpListener,
    timeout: Duration,
    progress: bool,
    series: bool,
) -> Result<SinkReport> {
    let (stream, peer) = wait_accept(&listener, timeout)?;
    let counter = AtomicU64::new(0);
    let sampler = series.then(SinkSampler::default);
    receive(stream, peer, timeout, progress, &counter, sampler)
}

/// Receives one accepted connection until EOF; adds what it reads to `received`.
fn receive(
    mut stream: TcpStream,
    peer: SocketAddr,
    timeout: Duration,
    progress: bool,
    received: &AtomicU64,
    mut sampler: Option<SinkSampler>,
) -> Result<SinkReport> {
    let accepted_ns = mono_ns();
    stream
        .set_read_timeout(Some(timeout))
        .map_err(io_err("SO_RCVTIMEO"))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let (mut got, mut first_byte_ns, mut last_byte_ns) = (0u64, 0u64, accepted_ns);
    let mut next_progress = accepted_ns + PROGRESS_EVERY_NS;
    loop {
        let n = stream.read(&mut buf).map_err(io_err("receiving"))?;
        if n == 0 {
            break;
        }
        last_byte_ns = mono_ns();
        if got == 0 {
            first_byte_ns = last_byte_ns;
        }
        hasher.update(&buf[..n]);
        got += n as u64;
        received.fetch_add(n as u64, Ordering::Relaxed);
        if let Some(s) = sampler.as_mut().and_then(|s| s.note(got)) {
            emit(&Event::SinkSample(s));
        }
        if progress && last_byte_ns >= next_progress {
            emit(&Event::Progress { bytes: got });
            next_progress = last_byte_ns + PROGRESS_EVERY_NS;
        }
    }
    if sampler.is_some() {
        emit(&Event::SinkSample(SinkSample {
            t_ns: last_byte_ns,
            bytes: got,
        }));
    }
    Ok(SinkReport {
        bytes: got,
        sha256: hex(&hasher.finalize()),
        peer: peer.to_string(),
        accepted_ns,
        first_byte_ns,
        last_byte_ns,
    })
}

/// Waits up to `timeout` for a connection on `listener`.
pub(crate) fn wait_accept(
    listener: &TcpListener,
    timeout: Duration,
) -> Result<(TcpStream, SocketAddr)> {
    let mut pfd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    if rc <= 0 {
        return Err(LabError::Transfer(format!(
            "sink: no connection within {:.0} s",
            timeout.as_secs_f64()
        )));
    }
    listener.accept().map_err(io_err("accept"))
}

/// Accepts `n` connections and receives on each in its own thread, emitting the total progress
/// (with `progress`) and one `sink_done` event per connection as it ends.
pub fn run_sinks(listener: TcpListener, n: usize, timeout: Duration, progress: bool) -> Result<()> {
    let received = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();
    for _ in 0..n {
        let (stream, peer) = wait_accept(&listener, timeout)?;
        let (tx, received) = (tx.clone(), Arc::clone(&received));
        std::thread::spawn(move || {
            let _ = tx.send(receive(stream, peer, timeout, false, &received, None));
        });
    }
    drop(tx);
    let mut done = 0;
    while done < n {
        match rx.recv_timeout(Duration::from_nanos(PROGRESS_EVERY_NS)) {
            Ok(report) => {
                emit(&Event::SinkDone(report?));
                done += 1;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(LabError::Transfer("sink: a receiver thread died".into()));
            }
        }
        if progress {
            emit(&Event::Progress {
                bytes: received.load(Ordering::Relaxed),
            });
        }
    }
    Ok(())
}

/// Runs `n` sources in parallel (connection `i` sends the stream of `seed + i`), emitting one
/// `source_done` event per connection as it ends.
pub fn run_sources(
    addr: SocketAddr,
    bytes: u64,
    cc: &str,
    seed: u64,
    n: usize,
    timeout: Duration,
) -> Result<()> {
    let (tx, rx) = mpsc::channel();
    for i in 0..n {
        let (tx, cc) = (tx.clone(), cc.to_string());
        std::thread::spawn(move || {
            let seed = seed.wrapping_add(i as u64);
            let _ = tx.send(run_source(addr, bytes, &cc, seed, timeout, false, false));
        });
    }
    drop(tx);
    for report in rx {
        emit(&Event::SourceDone(report?));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_seeded_and_deterministic() {
        let (mut a, mut b, mut c) = (DataGen::new(1), DataGen::new(1), DataGen::new(2));
        let (mut x, mut y, mut z) = ([0u8; 64], [0u8; 64], [0u8; 64]);
        a.fill(&mut x);
        b.fill(&mut y);
        c.fill(&mut z);
        assert_eq!(x, y);
        assert_ne!(x, z);
    }

    #[test]
    fn loopback_transfer_hashes_match() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let t = Duration::from_secs(10);
        let sink = std::thread::spawn(move || run_sink(listener, t, false, false).unwrap());
        let src = run_source(addr, 1_000_003, "reno", 7, t, false, false).unwrap();
        let snk = sink.join().unwrap();
        assert_eq!(src.bytes, 1_000_003);
        assert_eq!(snk.bytes, src.bytes);
        assert_eq!(snk.sha256, src.sha256);
        assert_eq!(src.cc, "reno");
        assert!(snk.last_byte_ns >= src.connected_ns);
    }
}
