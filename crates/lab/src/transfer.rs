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
use sha2::{Digest, Sha256};

use crate::child::{Child, Line};
use crate::error::{LabError, Result};
use crate::netstat;
use crate::series::{LabSeries, SinkSample, SourceSample};
use crate::session::{Lab, Session, wait_listening};
use crate::settings::TransferSettings;
use crate::tcpinfo::TcpInfo;
use crate::traffic::{Event, SinkReport, SourceReport};

/// TCP port of the sink.
pub const SINK_PORT: u16 = 5201;

/// Starts a sink (`name`, with `args`) in the server namespace and waits until it listens on
/// [`SINK_PORT`] (the transfer sink and the stream sink).
pub(crate) fn spawn_sink(lab: &Lab, name: &str, args: &[String]) -> Result<Child> {
    let mut sink = lab.spawn(name, &lab.topo.srv, args)?;
    wait_listening(
        &mut sink,
        "the sink to listen",
        &lab.topo.srv,
        SINK_PORT,
        Duration::from_secs(10),
    )?;
    Ok(sink)
}

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
    /// With several flows: each flow's own result (the fields above are then the aggregate:
    /// bytes summed, goodput over the first connect to the last byte, integrity of every
    /// flow, sha256 over the flows' sha256s in order, retransmits summed, `tcp_info` of flow 0).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<TransferResult>,
    /// With several flows: Jain's fairness index of the flows' goodputs,
    /// (Σx)² / (n·Σx²), 1 when all are equal, 1/n when one flow takes everything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jain_index: Option<f64>,
    /// The time series, when the settings asked for it (written as CSV, not in the JSON).
    #[serde(skip)]
    pub series: Option<LabSeries>,
}

/// The series samples both applications printed.
#[derive(Debug, Default)]
struct Samples {
    source: Vec<SourceSample>,
    sink: Vec<SinkSample>,
}

fn parse_event(who: &str, line: &str) -> Result<Event> {
    serde_json::from_str(line).map_err(|e| LabError::Report {
        who: who.to_string(),
        detail: format!("{e}: {line}"),
    })
}

/// The sink's and the source's arguments (`tcpnc lab sink|source ...`) for `t` to `addr`.
fn child_args(t: &TransferSettings, addr: &str) -> (Vec<String>, Vec<String>) {
    let secs = format!("{}", t.timeout_s);
    let flows = t.flows.to_string();
    let mut sink: Vec<String> = [
        "lab",
        "sink",
        "--listen",
        addr,
        "--timeout-s",
        &secs,
        "--progress",
        "--connections",
        &flows,
    ]
    .map(String::from)
    .to_vec();
    let mut source: Vec<String> = [
        "lab",
        "source",
        "--connect",
        addr,
        "--bytes",
        &t.bytes.to_string(),
        "--cc",
        t.cc.name(),
        "--seed",
        &t.seed.to_string(),
        "--timeout-s",
        &secs,
        "--connections",
        &flows,
    ]
    .map(String::from)
    .to_vec();
    if t.series {
        sink.push("--series".into());
        source.push("--series".into());
    }
    (sink, source)
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
    let (sink_args, source_args) = child_args(t, &addr);
    let mut sink = spawn_sink(lab, "sink", &sink_args)?;
    let cli = lab.topo.cli.clone();
    let kernel_before = netstat::snapshot(&cli)?;
    let mut source = lab.spawn("source", &lab.topo.cli, &source_args)?;
    bar.set_length(t.bytes * t.flows as u64);
    bar.set_position(0);
    let mut samples = Samples::default();
    let sinks = follow_sinks(
        session,
        &mut sink,
        &mut source,
        deadline,
        bar,
        t.flows,
        &mut samples,
    )
    .map_err(|e| e.with_timeout(timeout))?;
    let sources = source_results(&mut source, deadline, t.flows, &mut samples)
        .map_err(|e| e.with_timeout(timeout))?;
    bar.set_position(sinks.iter().map(|r| r.bytes).sum());
    let kernel = netstat::delta(&kernel_before, &netstat::snapshot(&cli)?);
    if let ([src], [snk]) = (&sources[..], &sinks[..]) {
        let mut r = assemble(t.bytes, src, snk, kernel);
        r.series = t
            .series
            .then(|| LabSeries::build(src.connect_start_ns, &samples.source, &samples.sink));
        return Ok(r);
    }
    Ok(aggregate(t.bytes, &sources, &sinks, kernel))
}

/// The flows of a multi-flow transfer (each source paired with the sink report of its
/// connection) and their aggregate.
fn aggregate(
    bytes: u64,
    sources: &[SourceReport],
    sinks: &[SinkReport],
    kernel: BTreeMap<String, u64>,
) -> TransferResult {
    let flows: Vec<TransferResult> = sources
        .iter()
        .map(|src| match sinks.iter().find(|s| s.peer == src.local) {
            Some(snk) => assemble(bytes, src, snk, BTreeMap::new()),
            None => assemble(bytes, src, &SinkReport::missing(src), BTreeMap::new()),
        })
        .collect();
    let first_connect = sources.iter().map(|s| s.connected_ns).min().unwrap_or(0);
    let last_byte = sinks.iter().map(|s| s.last_byte_ns).max().unwrap_or(0);
    let completion_s = last_byte.saturating_sub(first_connect).max(1) as f64 / 1e9;
    let received: u64 = flows.iter().map(|f| f.bytes_received).sum();
    let digest = |f: &dyn Fn(&TransferResult) -> &str| {
        let mut h = Sha256::new();
        for flow in &flows {
            h.update(f(flow).as_bytes());
        }
        h.finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_mbit).collect();
    TransferResult {
        bytes: flows.iter().map(|f| f.bytes).sum(),
        bytes_received: received,
        goodput_mbit: received as f64 * 8.0 / completion_s / 1e6,
        completion_s,
        connect_s: flows.iter().map(|f| f.connect_s).fold(0.0, f64::max),
        integrity_ok: !flows.is_empty() && flows.iter().all(|f| f.integrity_ok),
        sha256_sent: digest(&|f| &f.sha256_sent),
        sha256_received: digest(&|f| &f.sha256_received),
        cc: flows.first().map(|f| f.cc.clone()).unwrap_or_default(),
        retransmits: flows.iter().map(|f| f.retransmits).sum(),
        tcp_info: flows
            .first()
            .map(|f| f.tcp_info.clone())
            .unwrap_or_default(),
        kernel,
        jain_index: Some(jain_index(&goodputs)),
        flows,
        series: None,
    }
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²); 1 for an empty or all-zero set.
pub fn jain_index(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || squares == 0.0 {
        return 1.0;
    }
    sum * sum / (xs.len() as f64 * squares)
}

fn follow_sinks(
    session: &mut Session<'_>,
    sink: &mut Child,
    source: &mut Child,
    deadline: Instant,
    bar: &ProgressBar,
    n: usize,
    samples: &mut Samples,
) -> Result<Vec<SinkReport>> {
    let mut reports = Vec::with_capacity(n);
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
                Event::SinkSample(s) => samples.sink.push(s),
                Event::SinkDone(r) => {
                    reports.push(r);
                    if reports.len() == n {
                        return Ok(reports);
                    }
                }
                Event::Error { message } => {
                    let first = format!("sink: {message}");
                    return Err(fault_report(session, source, "source", first));
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
            return Err(match (session.since_fault(), source_failure(source)) {
                (Some(_), LabError::Transfer(first)) => fault_report(session, sink, "sink", first),
                (_, e) => e,
            });
        }
        session.check_running()?;
    }
}

/// After an injected gateway fault, one application failed (`first`): waits up to 15 s for the
/// `other` one's error too and reports both with their times after the kill, e.g. `sink:
/// Connection reset by peer (+1.2 s after the server gateway was killed); source: ... (+1.3 s)`.
fn fault_report(session: &Session<'_>, other: &mut Child, name: &str, first: String) -> LabError {
    let Some((side, at_first)) = session.since_fault() else {
        return LabError::Transfer(first);
    };
    let side = serde_json::to_value(side).ok();
    let side = side.as_ref().and_then(|v| v.as_str()).unwrap_or("?");
    let mut report = format!(
        "{first} (+{:.1} s after the {side} gateway was killed)",
        at_first.as_secs_f64()
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        match other.poll_line(Duration::from_millis(50)) {
            Line::Text(l) => {
                if let Ok(Event::Error { message }) = serde_json::from_str::<Event>(&l) {
                    let at = session.since_fault().map(|(_, d)| d).unwrap_or_default();
                    report.push_str(&format!("; {name}: {message} (+{:.1} s)", at.as_secs_f64()));
                    return LabError::Transfer(report);
                }
            }
            Line::Closed => break,
            Line::Nothing => {}
        }
    }
    report.push_str(&format!("; {name}: no error within 15 s"));
    LabError::Transfer(report)
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

fn source_results(
    source: &mut Child,
    deadline: Instant,
    n: usize,
    samples: &mut Samples,
) -> Result<Vec<SourceReport>> {
    let mut reports = Vec::with_capacity(n);
    loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        match source.poll_line(wait.max(Duration::from_millis(1))) {
            Line::Text(l) => match parse_event("source", &l)? {
                Event::SourceSample(s) => samples.source.push(s),
                Event::SourceDone(r) => {
                    reports.push(r);
                    if reports.len() == n {
                        return Ok(reports);
                    }
                }
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
    bytes: u64,
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
        integrity_ok: src.bytes == bytes && snk.bytes == src.bytes && snk.sha256 == src.sha256,
        sha256_sent: src.sha256.clone(),
        sha256_received: snk.sha256.clone(),
        cc: src.cc.clone(),
        retransmits: src.tcp_info.total_retrans,
        tcp_info: src.tcp_info.clone(),
        kernel,
        flows: Vec::new(),
        jain_index: None,
        series: None,
    }
}

/// A transfer result with the session's counters merged in, as one JSON object.
pub fn with_counters(r: &TransferResult, gateways: Option<Value>, link: Option<Value>) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    v["gateways"] = gateways.unwrap_or(Value::Null);
    v["link"] = link.unwrap_or(Value::Null);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain_index(&[4.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain_index(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
        assert_eq!(jain_index(&[]), 1.0);
    }

    fn source(local: &str, sha: &str, t0: u64) -> SourceReport {
        SourceReport {
            bytes: 1000,
            sha256: sha.into(),
            cc: "cubic".into(),
            connect_start_ns: t0,
            connected_ns: t0 + 10,
            last_write_ns: t0 + 100,
            closed_ns: t0 + 200,
            local: local.into(),
            tcp_info: TcpInfo::default(),
        }
    }

    fn sink(peer: &str, sha: &str, bytes: u64, last: u64) -> SinkReport {
        SinkReport {
            bytes,
            sha256: sha.into(),
            peer: peer.into(),
            accepted_ns: 0,
            first_byte_ns: 20,
            last_byte_ns: last,
        }
    }

    /// Flows are paired by address, whatever order their reports came in; one bad flow fails
    /// the aggregate's integrity.
    #[test]
    fn flows_pair_by_address_and_aggregate() {
        let sources = [source("a:1", "x", 0), source("a:2", "y", 0)];
        let sinks = [
            sink("a:2", "y", 1000, 1_000_010),
            sink("a:1", "x", 1000, 500_010),
        ];
        let r = aggregate(1000, &sources, &sinks, BTreeMap::new());
        assert_eq!(r.flows.len(), 2);
        assert!(r.integrity_ok);
        assert_eq!(r.bytes_received, 2000);
        assert!((r.completion_s - 0.001).abs() < 1e-9);
        assert!((r.flows[0].goodput_mbit / r.flows[1].goodput_mbit - 2.0).abs() < 1e-6);
        assert!(r.jain_index.unwrap() < 1.0);
        let bad = [
            sink("a:2", "y", 1000, 1_000_010),
            sink("a:1", "z", 1000, 500_010),
        ];
        assert!(!aggregate(1000, &sources, &bad, BTreeMap::new()).integrity_ok);
        let missing = [sink("a:2", "y", 1000, 1_000_010)];
        let r = aggregate(1000, &sources, &missing, BTreeMap::new());
        assert!(!r.integrity_ok);
        assert_eq!(r.bytes_received, 1000);
    }
}
