//! One measured transfer with the built-in source and sink across a session's path.
//!
//! Timing (both ends read the same `CLOCK_MONOTONIC`):
//! * `completion_s` = sink's last byte − source's `connect()` return, i.e. from the
//!   established connection to the receiver holding every byte. The handshake is excluded
//!   (a lost SYN costs a 1 s timeout that says nothing about steady-state goodput) and
//!   reported separately as `connect_s`.
//! * `goodput_mbit` = bytes · 8 / `completion_s` / 10^6.
//! * `integrity_ok` = the sink received exactly `bytes` bytes and their sha256 equals the
//!   sha256 of what the source sent.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use serde::Serialize;
use serde_json::Value;

use crate::child::{Child, Line};
use crate::error::{LabError, Result};
use crate::netns::{Proto, in_netns, port_bound};
use crate::netstat;
use crate::session::{Session, wait_ready};
use crate::settings::TransferSettings;
use crate::tcpinfo::TcpInfo;
use crate::traffic::{Event, SinkReport, SourceReport};

/// TCP port of the sink.
pub const SINK_PORT: u16 = 5201;

/// The outcome of one transfer.
#[derive(Debug, Clone, Serialize)]
pub struct TransferResult {
    /// Bytes the source sent.
    pub bytes: u64,
    /// Bytes the sink received.
    pub bytes_received: u64,
    /// Goodput in Mbit/s (see the module docs).
    pub goodput_mbit: f64,
    /// Seconds from the established connection to the last byte at the sink.
    pub completion_s: f64,
    /// Seconds the handshake took.
    pub connect_s: f64,
    /// Byte count and sha256 equal at both ends.
    pub integrity_ok: bool,
    /// sha256 of the data sent.
    pub sha256_sent: String,
    /// sha256 of the data received.
    pub sha256_received: String,
    /// Congestion control the sender's kernel used.
    pub cc: String,
    /// `tcpi_total_retrans` of the sender's socket.
    pub retransmits: u32,
    /// The sender kernel's TCP_INFO summary.
    pub tcp_info: TcpInfo,
    /// The sender namespace's `TcpExt` counters over the transfer ([`crate::netstat`]):
    /// timeouts, fast retransmits, loss probes.
    pub kernel: BTreeMap<String, u64>,
}

fn parse_event(who: &str, line: &str) -> Result<Event> {
    serde_json::from_str(line).map_err(|e| LabError::Report {
        who: who.to_string(),
        detail: format!("{e}: {line}"),
    })
}

/// Runs one transfer; `bar` follows the sink's received bytes.
pub fn run_transfer(
    session: &mut Session<'_>,
    t: &TransferSettings,
    bar: &ProgressBar,
) -> Result<TransferResult> {
    t.validate()?;
    let lab = session.lab();
    let timeout = Duration::from_secs_f64(t.timeout_s);
    let deadline = Instant::now() + timeout;
    let addr = format!("{}:{SINK_PORT}", session.server_ip());
    let secs = format!("{}", t.timeout_s);
    let sink_args: Vec<String> = [
        "lab",
        "sink",
        "--listen",
        &addr,
        "--timeout-s",
        &secs,
        "--progress",
    ]
    .map(String::from)
    .to_vec();
    let mut sink = lab.spawn("sink", &lab.topo.srv, &sink_args)?;
    let srv = lab.topo.srv.clone();
    wait_ready(
        &mut sink,
        "the sink to listen",
        Duration::from_secs(10),
        || in_netns(&srv, || port_bound(Proto::Tcp, SINK_PORT)),
    )?;
    let source_args: Vec<String> = [
        "lab",
        "source",
        "--connect",
        &addr,
        "--bytes",
        &t.bytes.to_string(),
        "--cc",
        t.cc.name(),
        "--seed",
        &t.seed.to_string(),
        "--timeout-s",
        &secs,
    ]
    .map(String::from)
    .to_vec();
    let cli = lab.topo.cli.clone();
    let kernel_before = netstat::snapshot(&cli)?;
    let mut source = lab.spawn("source", &lab.topo.cli, &source_args)?;
    bar.set_length(t.bytes);
    bar.set_position(0);
    let sink_report = follow_sink(session, &mut sink, &mut source, deadline, bar)?;
    let source_report = source_result(&mut source, deadline)?;
    bar.set_position(sink_report.bytes);
    let kernel = netstat::delta(&kernel_before, &netstat::snapshot(&cli)?);
    Ok(assemble(t, &source_report, &sink_report, kernel))
}

fn follow_sink(
    session: &mut Session<'_>,
    sink: &mut Child,
    source: &mut Child,
    deadline: Instant,
    bar: &ProgressBar,
) -> Result<SinkReport> {
    loop {
        if Instant::now() >= deadline {
            return Err(LabError::Timeout {
                what: "the transfer to complete".into(),
                secs: 0.0,
                log: format!("{}{}", source.log_tail(), sink.log_tail()),
            });
        }
        match sink.poll_line(Duration::from_millis(100)) {
            Line::Text(l) => match parse_event("sink", &l)? {
                Event::Progress { bytes } => bar.set_position(bytes),
                Event::SinkDone(r) => return Ok(r),
                Event::Error { message } => {
                    return Err(LabError::Transfer(format!("sink: {message}")));
                }
                _ => {}
            },
            Line::Closed => {
                return Err(LabError::Child {
                    what: "the sink exited without a report".into(),
                    log: sink.log_tail(),
                });
            }
            Line::Nothing => {}
        }
        if source.exited().is_some_and(|s| !s.success()) {
            return Err(source_failure(source));
        }
        session.check_running()?;
    }
}

fn source_failure(source: &mut Child) -> LabError {
    while let Line::Text(l) = source.poll_line(Duration::from_millis(50)) {
        if let Ok(Event::Error { message }) = serde_json::from_str::<Event>(&l) {
            return LabError::Transfer(format!("source: {message}"));
        }
    }
    LabError::Child {
        what: "the source failed".into(),
        log: source.log_tail(),
    }
}

fn source_result(source: &mut Child, deadline: Instant) -> Result<SourceReport> {
    loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        match source.poll_line(wait.max(Duration::from_millis(1))) {
            Line::Text(l) => match parse_event("source", &l)? {
                Event::SourceDone(r) => return Ok(r),
                Event::Error { message } => {
                    return Err(LabError::Transfer(format!("source: {message}")));
                }
                _ => {}
            },
            Line::Closed => return Err(source_failure(source)),
            Line::Nothing => {
                return Err(LabError::Timeout {
                    what: "the source's report".into(),
                    secs: 0.0,
                    log: source.log_tail(),
                });
            }
        }
    }
}

fn assemble(
    t: &TransferSettings,
    src: &SourceReport,
    snk: &SinkReport,
    kernel: BTreeMap<String, u64>,
) -> TransferResult {
    let completion_ns = snk.last_byte_ns.saturating_sub(src.connected_ns).max(1);
    let completion_s = completion_ns as f64 / 1e9;
    TransferResult {
        bytes: src.bytes,
        bytes_received: snk.bytes,
        goodput_mbit: snk.bytes as f64 * 8.0 / completion_s / 1e6,
        completion_s,
        connect_s: src.connected_ns.saturating_sub(src.connect_start_ns) as f64 / 1e9,
        integrity_ok: src.bytes == t.bytes && snk.bytes == src.bytes && snk.sha256 == src.sha256,
        sha256_sent: src.sha256.clone(),
        sha256_received: snk.sha256.clone(),
        cc: src.cc.clone(),
        retransmits: src.tcp_info.total_retrans,
        tcp_info: src.tcp_info.clone(),
        kernel,
    }
}

/// A transfer result with the session's counters merged in, as one JSON object.
pub fn with_counters(r: &TransferResult, gateways: Option<Value>, link: Option<Value>) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    v["gateways"] = gateways.unwrap_or(Value::Null);
    v["link"] = link.unwrap_or(Value::Null);
    v
}
