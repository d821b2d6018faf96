//! The streaming workload's processes (`tcpnc lab stream-source` / `tcpnc lab stream-sink`,
//! run inside the namespaces by [`crate::stream`]; issue 12, Parejiya & Desai §III-B).
//!
//! * The **frame source** connects with the given congestion control (`TCP_CONGESTION`) and
//!   `TCP_NODELAY` (a live streaming application does not let Nagle hold a frame's tail),
//!   takes the stream's start `t0` right after `connect()` returns, and writes frame `i` of the
//!   trace at `t0 + at_i` (sleeping until then; a blocking write that makes later frames late
//!   is what the application would see, and is counted in their latency because each frame's
//!   sending time is its scheduled one). Frame contents are the seeded SplitMix64 stream
//!   ([`DataGen`]). It half-closes after the last frame, waits for the sink's close (every byte
//!   acknowledged), reads `TCP_INFO` and reports each frame's SHA-256 and write time.
//! * The **frame sink** reads continuously and timestamps each frame's last byte with
//!   `CLOCK_MONOTONIC` ([`mono_ns`]) right after the read that completed it; the namespaces
//!   share that clock with the source, so `arrival − (t0 + at_i)` is the frame's one-way latency
//!   (application to application). It reports each frame's SHA-256 of what it read.
//!
//! Both read the frame sizes and times from the same trace file (`tcpnc_stream::Trace` text).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tcpnc_stream::Trace;

use crate::error::{LabError, Result};
use crate::tcpinfo::{self, TcpInfo, mono_ns};
use crate::traffic::{self, DataGen, hex, io_err};

/// What the frame source reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameSourceReport {
    /// Monotonic ns of the stream's start (frame `i` is due at `t0_ns + at_i`).
    pub t0_ns: u64,
    /// Monotonic ns at which each frame's write began (later than due when the process was
    /// late or a previous write blocked).
    pub write_ns: Vec<u64>,
    /// SHA-256 (hex) of each frame as written.
    pub sha256: Vec<String>,
    /// Congestion control the kernel reports for the socket.
    pub cc: String,
    /// Monotonic ns when the sink's close arrived (everything acknowledged).
    pub closed_ns: u64,
    /// The sender kernel's counters, read before closing.
    pub tcp_info: TcpInfo,
}

/// What the frame sink reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameSinkReport {
    /// Monotonic ns at which each frame's last byte was read (frames never completed are
    /// missing from the end).
    pub arrival_ns: Vec<u64>,
    /// SHA-256 (hex) of each completed frame as read.
    pub sha256: Vec<String>,
    /// Bytes read in all.
    pub bytes: u64,
    /// Bytes read beyond the trace's last frame (0 unless the stream was corrupted).
    pub extra_bytes: u64,
}

/// Reads a trace file.
pub fn read_trace(path: &Path) -> Result<Trace> {
    let text = std::fs::read_to_string(path).map_err(|e| LabError::file(path, e))?;
    Trace::parse(&text).map_err(|e| LabError::Invalid(format!("trace {}: {e}", path.display())))
}

/// Sleeps until monotonic time `at_ns`.
fn sleep_until(at_ns: u64) {
    let now = mono_ns();
    if at_ns > now {
        std::thread::sleep(Duration::from_nanos(at_ns - now));
    }
}

/// Runs the frame source (module docs).
pub fn run_frame_source(
    addr: SocketAddr,
    trace: &Trace,
    cc: &str,
    seed: u64,
    timeout: Duration,
) -> Result<FrameSourceReport> {
    let (mut stream, cc) = traffic::connect(addr, cc, timeout)?;
    stream.set_nodelay(true).map_err(io_err("TCP_NODELAY"))?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(io_err("SO_RCVTIMEO"))?;
    let t0_ns = mono_ns();
    let mut data = DataGen::new(seed);
    let n = trace.frames.len();
    let (mut write_ns, mut sha256) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut buf = Vec::new();
    for f in &trace.frames {
        let size = f.size as usize;
        buf.resize(size.next_multiple_of(8), 0);
        data.fill(&mut buf);
        sha256.push(hex(&Sha256::digest(&buf[..size])));
        sleep_until(t0_ns + f.at.as_nanos() as u64);
        write_ns.push(mono_ns());
        stream
            .write_all(&buf[..size])
            .map_err(io_err("writing a frame"))?;
    }
    stream
        .shutdown(std::net::Shutdown::Write)
        .map_err(io_err("half-close"))?;
    let mut rest = [0u8; 512];
    while stream
        .read(&mut rest)
        .map_err(io_err("waiting for the sink to close"))?
        > 0
    {}
    let closed_ns = mono_ns();
    let tcp_info = tcpinfo::tcp_info(stream.as_raw_fd())?;
    Ok(FrameSourceReport {
        t0_ns,
        write_ns,
        sha256,
        cc,
        closed_ns,
        tcp_info,
    })
}

/// Splits the byte stream into the trace's frames: digests and completion times.
struct FrameReader<'a> {
    trace: &'a Trace,
    read_in_frame: usize,
    hash: Sha256,
    report: FrameSinkReport,
}

impl FrameReader<'_> {
    /// Takes the next `buf` bytes, read at `now_ns`.
    fn absorb(&mut self, now_ns: u64, mut buf: &[u8]) {
        self.report.bytes += buf.len() as u64;
        while !buf.is_empty() {
            let done = self.report.arrival_ns.len();
            let Some(frame) = self.trace.frames.get(done) else {
                self.report.extra_bytes += buf.len() as u64;
                return;
            };
            let take = (frame.size as usize - self.read_in_frame).min(buf.len());
            self.hash.update(&buf[..take]);
            self.read_in_frame += take;
            buf = &buf[take..];
            if self.read_in_frame == frame.size as usize {
                let digest = std::mem::take(&mut self.hash).finalize();
                self.report.sha256.push(hex(&digest));
                self.report.arrival_ns.push(now_ns);
                self.read_in_frame = 0;
            }
        }
    }
}

/// Runs the frame sink: accepts one connection on `listener` within `timeout`, reads until
/// EOF (each read within `timeout`), reports (module docs).
pub fn run_frame_sink(
    listener: TcpListener,
    trace: &Trace,
    timeout: Duration,
) -> Result<FrameSinkReport> {
    let (mut stream, _) = traffic::wait_accept(&listener, timeout)?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(io_err("SO_RCVTIMEO"))?;
    let n = trace.frames.len();
    let mut reader = FrameReader {
        trace,
        read_in_frame: 0,
        hash: Sha256::new(),
        report: FrameSinkReport {
            arrival_ns: Vec::with_capacity(n),
            sha256: Vec::with_capacity(n),
            bytes: 0,
            extra_bytes: 0,
        },
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let got = stream.read(&mut buf).map_err(io_err("receiving"))?;
        if got == 0 {
            break;
        }
        reader.absorb(mono_ns(), &buf[..got]);
    }
    Ok(reader.report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcpnc_stream::{Preset, TraceModel};

    /// Over loopback: every frame's digest matches, arrivals follow the schedule.
    #[test]
    fn loopback_frames_arrive_intact_in_order() {
        let trace = TraceModel::preset(Preset::Target, 0.3).generate(3).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let t = Duration::from_secs(10);
        let tr = trace.clone();
        let sink = std::thread::spawn(move || run_frame_sink(listener, &tr, t).unwrap());
        let src = run_frame_source(addr, &trace, "reno", 9, t).unwrap();
        let snk = sink.join().unwrap();
        assert_eq!(src.sha256.len(), trace.frames.len());
        assert_eq!(snk.sha256, src.sha256);
        assert_eq!(snk.bytes, trace.bytes());
        assert_eq!(snk.extra_bytes, 0);
        for (i, f) in trace.frames.iter().enumerate() {
            assert!(snk.arrival_ns[i] >= src.t0_ns + f.at.as_nanos() as u64);
        }
    }

    /// A frame with one byte changed has a different digest at the sink.
    #[test]
    fn reader_digests_detect_corruption() {
        let trace = Trace::parse("0,4\n0.1,4\n").unwrap();
        let mut r = FrameReader {
            trace: &trace,
            read_in_frame: 0,
            hash: Sha256::new(),
            report: FrameSinkReport {
                arrival_ns: vec![],
                sha256: vec![],
                bytes: 0,
                extra_bytes: 0,
            },
        };
        r.absorb(5, &[1, 2, 3]);
        r.absorb(7, &[4, 1, 2, 3, 5, 9]);
        assert_eq!(r.report.arrival_ns, vec![7, 7]);
        assert_eq!(r.report.sha256[0], hex(&Sha256::digest([1, 2, 3, 4])));
        assert_ne!(r.report.sha256[1], r.report.sha256[0]);
        assert_eq!((r.report.bytes, r.report.extra_bytes), (9, 1));
    }
}
