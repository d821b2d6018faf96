//! tcpnc lab: a testbed on one machine.
//!
//! Three network namespaces (client host, emulator, server host) joined by veth pairs with
//! offloads off; the emulator runs the relay (`tcpnc link`), each host runs a gateway
//! (`tcpnc up`); the built-in source and sink (`tcpnc lab source|sink`) move seeded data over
//! kernel TCP with a chosen congestion control and check sha256 end to end. Everything the
//! lab creates is removed on return, on error and on SIGINT/SIGTERM ([`guard`]).
//!
//! * [`topo`]: namespaces and veths; [`session`]: relay + gateways ([`emulator`]: the relay's
//!   arguments from the path settings); [`transfer`]: one
//!   measured transfer; [`measure`]: measurements and `compare` (the demo is an experiment
//!   plan run by `tcpnc-experiment`); [`http`]: a stock HTTP client and server across the tunnel.
//! * [`speed`]: `tcpnc lab speed`, the gateways joined directly at full speed ([`profile`]:
//!   its `perf` profiles).
//! * [`traffic`] and [`tcpinfo`]: the source and sink themselves.
//! * [`stream`] and [`frames`]: `tcpnc lab stream`, frames at their times (issue 12).

pub mod child;
pub mod emulator;
pub mod error;
pub mod fault;
pub mod frames;
pub mod gateway_config;
pub mod guard;
pub mod http;
pub mod iperf;
pub mod measure;
pub mod netns;
pub mod netstat;
pub mod profile;
pub mod progress;
pub mod series;
pub mod session;
pub mod settings;
pub mod speed;
pub mod speed_summary;
pub mod spoof;
pub mod stream;
pub mod tcpinfo;
pub mod topo;
pub mod traffic;
pub mod transfer;
pub mod tunnel_mode;

pub use error::{LabError, Result};
pub use measure::{Comparison, Measurement, compare, measure};
pub use session::{Lab, Session, tcpnc_exe};
pub use settings::{PathMode, PathSettings, PolicyOverrides, TransferSettings};
pub use tcpnc_settings::parse_bytes;

use std::net::SocketAddr;
use std::time::Duration;

use traffic::Event;

/// `tcpnc lab sink`: listens, receives `connections` connections, prints JSON events; exit
/// code.
/// `series` (one connection only): a sample of the bytes received every 0.1 s.
pub fn sink_main(
    listen: SocketAddr,
    connections: usize,
    timeout: Duration,
    progress: bool,
    series: bool,
) -> i32 {
    let listener = match traffic::sink_listen(listen) {
        Ok(l) => l,
        Err(e) => return finish(Err(e)),
    };
    if connections <= 1 {
        return finish(traffic::run_sink(listener, timeout, progress, series).map(Event::SinkDone));
    }
    finish_all(traffic::run_sinks(listener, connections, timeout, progress))
}

/// `tcpnc lab spoof`: forges datagrams at `target` for `duration` (see [`spoof`]), prints its
/// report as one JSON line; exit code.
pub fn spoof_main(target: std::net::SocketAddrV4, duration: Duration, max_captured: u64) -> i32 {
    match spoof::run(target, duration, max_captured) {
        Ok(r) => {
            println!("{}", serde_json::to_string(&r).unwrap_or_default());
            0
        }
        Err(e) => {
            eprintln!("tcpnc lab spoof: {e}");
            1
        }
    }
}

/// `tcpnc lab source`: connects, sends, prints JSON events; exit code. `series` (one
/// connection only): a sample of the sender's kernel every 0.1 s.
#[allow(clippy::too_many_arguments)]
pub fn source_main(
    connect: SocketAddr,
    bytes: u64,
    cc: &str,
    seed: u64,
    connections: usize,
    timeout: Duration,
    progress: bool,
    series: bool,
) -> i32 {
    if connections <= 1 {
        let r = traffic::run_source(connect, bytes, cc, seed, timeout, progress, series);
        return finish(r.map(Event::SourceDone));
    }
    finish_all(traffic::run_sources(
        connect,
        bytes,
        cc,
        seed,
        connections,
        timeout,
    ))
}

/// `tcpnc lab stream-sink`: listens, receives one stream of the trace in `trace`, prints its
/// report as a JSON event; exit code.
pub fn frame_sink_main(listen: SocketAddr, trace: &std::path::Path, timeout: Duration) -> i32 {
    let r = frames::read_trace(trace).and_then(|t| {
        let listener = traffic::sink_listen(listen)?;
        frames::run_frame_sink(listener, &t, timeout)
    });
    finish(r.map(Event::FrameSinkDone))
}

/// `tcpnc lab stream-source`: connects, writes the frames of the trace in `trace` at their
/// times, prints its report as a JSON event; exit code.
pub fn frame_source_main(
    connect: SocketAddr,
    trace: &std::path::Path,
    cc: &str,
    seed: u64,
    timeout: Duration,
) -> i32 {
    let r = frames::read_trace(trace)
        .and_then(|t| frames::run_frame_source(connect, &t, cc, seed, timeout));
    finish(r.map(Event::FrameSourceDone))
}

/// Exit code of a run that emitted its own reports.
fn finish_all(r: Result<()>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            traffic::emit(&Event::Error {
                message: e.to_string(),
            });
            1
        }
    }
}

fn finish(r: Result<Event>) -> i32 {
    match r {
        Ok(ev) => {
            traffic::emit(&ev);
            0
        }
        Err(e) => {
            traffic::emit(&Event::Error {
                message: e.to_string(),
            });
            1
        }
    }
}
